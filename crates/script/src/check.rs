//! Syntax checks of scripts without running them, for `volley check` and the editors:
//! the code compiled as the body of a function by one QuickJS context kept per thread.

use std::cell::{Cell, RefCell};
use std::sync::Arc;
use std::time::Duration;

use rquickjs::{Context, Ctx, Exception, Function, Runtime, Value};

use super::clock::Clock;
use super::failure::frame_place;
use super::sandbox::MAX_STACK_BYTES;

/// The syntax error of `code`, if it has one: the message and the 1-based line and
/// column in `code`. The code is compiled as the body of a function (`Function(code)`,
/// the text passed as a value, so nothing in it can run), never called. One checker
/// per thread is kept: an editor checks every script of a file on each change.
#[must_use]
pub fn syntax_error(code: &str, asynchronous: bool) -> Option<SyntaxError> {
    CHECKER.with(|checker| {
        let mut checker = checker.borrow_mut();
        if checker.is_none() {
            *checker = Checker::new();
        }
        let result = checker.as_ref().map_or(Checked::Failed, |checker| checker.check(code, asynchronous));
        // Made anew after a failed check, and now and then, so that what compiling
        // leaves behind never adds up.
        if matches!(result, Checked::Failed)
            || checker.as_ref().is_some_and(|checker| checker.used.get() > CHECKER_REUSE)
        {
            *checker = None;
        }
        match result {
            Checked::Error(error) => Some(error),
            Checked::Clean | Checked::Failed => None,
        }
    })
}

/// A syntax error: the message, and the 1-based line and column in the code.
pub type SyntaxError = (String, Option<(u32, u32)>);

/// How many scripts one checker compiles before it is made anew.
const CHECKER_REUSE: usize = 1_000;

thread_local! {
    static CHECKER: RefCell<Option<Checker>> = const { RefCell::new(None) };
}

/// A runtime and context kept for syntax checks, with a deadline per check.
struct Checker {
    context: Context,
    clock: Arc<Clock>,
    used: Cell<usize>,
    // Dropped after the context.
    _runtime: Runtime,
}

impl Checker {
    fn new() -> Option<Self> {
        let runtime = Runtime::new().ok()?;
        runtime.set_memory_limit(64 << 20);
        runtime.set_max_stack_size(MAX_STACK_BYTES);
        let clock = Clock::install(&runtime);
        let context = Context::full(&runtime).ok()?;
        Some(Self { context, clock, used: Cell::new(0), _runtime: runtime })
    }

    fn check(&self, code: &str, asynchronous: bool) -> Checked {
        self.used.set(self.used.get() + 1);
        self.clock.start(Duration::from_secs(2));
        self.context.with(|ctx| Self::compile(&ctx, code, asynchronous).unwrap_or(Checked::Failed))
    }

    /// `None` when the check itself failed.
    fn compile(ctx: &Ctx<'_>, code: &str, asynchronous: bool) -> Option<Checked> {
        {
            // httpyac's scripts may `await`: the body of an async function.
            let compile: Function<'_> = if asynchronous {
                ctx.eval("Object.getPrototypeOf(async function () {}).constructor").ok()?
            } else {
                ctx.globals().get("Function").ok()?
            };
            let source = rquickjs::String::from_str(ctx.clone(), code).ok()?;
            if compile.call::<_, Value<'_>>((source,)).is_ok() {
                return Some(Checked::Clean);
            }
            let exception = ctx.catch();
            let exception = Exception::from_object(exception.as_object()?.clone())?;
            let message = exception.message().unwrap_or_default();
            // QuickJS names the compiled text `<input>`; its body starts on line 3.
            let place = exception.stack().and_then(|stack| {
                let (line, column) = stack.lines().find_map(|frame| frame_place(frame, "<input>"))?;
                Some((line.checked_sub(FUNCTION_BODY_LINE - 1).filter(|line| *line > 0)?, column))
            });
            Some(Checked::Error((message, place)))
        }
    }
}

/// What came of a check.
enum Checked {
    Clean,
    Error(SyntaxError),
    /// The check itself failed (the checker is then made anew).
    Failed,
}

/// The line of the text `Function(code)` compiles on which `code` starts.
const FUNCTION_BODY_LINE: u32 = 3;

#[cfg(test)]
mod tests {
    #[test]
    fn a_syntax_error_is_found_without_running_anything() {
        let (message, place) = super::syntax_error("let a = 1;\nclient.log(a;\n", false).expect("a syntax error");
        assert!(message.contains("';'") || message.contains("expecting"), "{message}");
        assert_eq!(place.map(|place| place.0), Some(2));
        assert_eq!(super::syntax_error("client.test('a', () => {});\n", false), None);
        assert!(super::syntax_error("await sleep(1);\n", false).is_some(), "no `await` in a JetBrains script");
        assert_eq!(super::syntax_error("await sleep(1);\n", true), None, "httpyac's scripts may `await`");
        let (_, place) = super::syntax_error("let a = 1;\nawait (;\n", true).expect("a syntax error");
        assert_eq!(place.map(|place| place.0), Some(2));
        assert!(
            super::syntax_error("}); while (true) {} (function () {", false).is_some(),
            "the text cannot close the function"
        );
    }
}
