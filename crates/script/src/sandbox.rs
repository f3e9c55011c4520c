//! The sandbox scripts run in: a realm, that is a QuickJS runtime with a memory limit,
//! a stack limit and a deadline per script, and one context with the standard
//! built-ins only (no file system, network, process or timers: QuickJS's own `std` and
//! `os` modules are not part of rquickjs) and the API of `api.js` loaded. Each script
//! runs as the body of a function, then its tests run, then the global object is put
//! back as the realm made it, so that the next script of the same client can use the
//! realm again (see `Realms` in `mod.rs`).

use std::sync::Arc;
use std::time::Duration;

use rquickjs::context::EvalOptions;
use rquickjs::{Context, Ctx, Function, Module, Object, Runtime, Value, WriteOptions};
use serde::Deserialize;
use serde_json::Map;

use super::clock::Clock;
use super::failure::{Failure, FailureKind};
use super::failure::{classify, describe};

/// The API installed before every script (a module).
const API: &str = include_str!("api.js");

/// The name the API module is compiled under.
const API_NAME: &str = "volley-api";

/// The API compiled to QuickJS bytecode, once per process: loading it into a context
/// costs a third of compiling its text there.
static API_BYTECODE: std::sync::OnceLock<Result<Box<[u8]>, String>> = std::sync::OnceLock::new();

/// [`API_BYTECODE`], compiled on first use.
fn api_bytecode() -> Result<&'static [u8], String> {
    let compiled = API_BYTECODE.get_or_init(|| {
        let runtime = Runtime::new().map_err(|error| error.to_string())?;
        let context = Context::full(&runtime).map_err(|error| error.to_string())?;
        context.with(|ctx| {
            let module = Module::declare(ctx.clone(), API_NAME, API).map_err(|error| error.to_string())?;
            let bytes = module.write(WriteOptions::default()).map_err(|error| error.to_string())?;
            Ok(bytes.into_boxed_slice())
        })
    });
    compiled.as_deref().map_err(Clone::clone)
}

/// The API module's namespace in `ctx`, from its bytecode.
fn load_api<'js>(ctx: &Ctx<'js>) -> Result<Object<'js>, Failure> {
    let bytes = api_bytecode()
        .map_err(|message| Failure::thrown(format!("the script API could not be compiled: {message}")))?;
    // SAFETY: the bytes are what `Module::write` made of `api.js` in this process, with
    // this same QuickJS: valid bytecode, never read from outside. They are `'static`,
    // as reading with QuickJS's ROM-data flag requires.
    #[allow(unsafe_code)]
    let module = unsafe { Module::load(ctx.clone(), bytes) }.map_err(|_| thrown(ctx))?;
    let (module, _evaluated) = module.eval().map_err(|_| thrown(ctx))?;
    module.namespace().map_err(|_| thrown(ctx))
}

/// How many scripts a realm runs before it is made anew, so that whatever scripts
/// leave behind in it (atoms, shapes, what they hung on the built-ins) never adds up.
const REALM_REUSE: usize = 1_000;

/// A QuickJS runtime and its one context, with the API loaded and, for a realm that
/// runs more than one script, the global object's own properties as they were made
/// recorded (`api.js`'s `baseline`).
pub struct Realm {
    context: Context,
    clock: Arc<Clock>,
    used: usize,
    /// Whether the realm may run more than one script.
    shared: bool,
    // Dropped after the context.
    runtime: Runtime,
}

impl std::fmt::Debug for Realm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Realm").field("used", &self.used).finish_non_exhaustive()
    }
}

impl Realm {
    /// A new realm for any number of scripts: runtime, context, the API loaded and the
    /// global object recorded.
    pub fn shared() -> Result<Self, Failure> {
        Self::new(true)
    }

    /// A new realm for one script: nothing recorded, nothing put back after it.
    pub fn single() -> Result<Self, Failure> {
        Self::new(false)
    }

    fn new(shared: bool) -> Result<Self, Failure> {
        let runtime =
            Runtime::new().map_err(|_| Failure::thrown("the JavaScript runtime could not be created".to_owned()))?;
        runtime.set_max_stack_size(MAX_STACK_BYTES);
        let clock = Clock::install(&runtime);
        let context = Context::full(&runtime)
            .map_err(|_| Failure::thrown("the JavaScript context could not be created".to_owned()))?;
        let realm = Self { context, clock, used: 0, shared, runtime };
        realm.arm(Limits { timeout: Duration::from_secs(5), memory: 64 << 20 });
        realm.context.with(|ctx| {
            let api = load_api(&ctx)?;
            if shared {
                let baseline: Function<'_> = api.get("baseline").map_err(|_| thrown(&ctx))?;
                baseline.call::<_, ()>(()).map_err(|_| thrown(&ctx))?;
            }
            ctx.store_userdata(api).map_err(|_| Failure::thrown("the script API could not be kept".to_owned()))?;
            Ok::<_, Failure>(())
        })?;
        Ok(realm)
    }

    /// Sets the limits of the next script and starts its clock.
    fn arm(&self, limits: Limits) {
        self.runtime.set_memory_limit(limits.memory);
        self.clock.start(limits.timeout);
    }

    /// Runs `code` with the API over `input` (the JSON `api.js` reads) and `body` (the
    /// response body as text, empty before a request). The answer says too whether the
    /// realm may run another script: never a single one's; a shared one not after a
    /// limit was hit or the global object could not be put back, nor with work left
    /// queued, nor after 1,000 scripts.
    pub fn run(&mut self, script: Script<'_>, input: &str, body: &str, limits: Limits) -> (Run, bool) {
        self.used += 1;
        self.arm(limits);
        let shared = self.shared;
        let run = self.context.with(|ctx| evaluate(&ctx, script, input, body, shared));
        let (run, restored) = match run {
            Ok((mut run, restored)) => {
                if let Some(failure) = &mut run.failure {
                    classify(failure, &self.clock.interrupted, limits);
                }
                (run, restored)
            }
            Err(mut failure) => {
                classify(&mut failure, &self.clock.interrupted, limits);
                (Run { output: Output::default(), failure: Some(failure) }, false)
            }
        };
        let limited = run.failure.as_ref().is_some_and(|failure| failure.kind != FailureKind::Thrown);
        let reusable = restored && !limited && !self.runtime.is_job_pending() && self.used < REALM_REUSE;
        (run, reusable)
    }
}

/// Runs `code` in a realm of its own.
#[cfg(test)]
pub(crate) fn run(code: &str, input: &str, body: &str, limits: Limits) -> Run {
    match Realm::single() {
        Ok(mut realm) => realm.run(Script { code, asynchronous: false }, input, body, limits).0,
        Err(failure) => Run { output: Output::default(), failure: Some(failure) },
    }
}

/// A script's code, and how it runs: as the body of a function (the JetBrains API), or
/// of an `async` function whose promise is settled before the script's results are
/// read (httpyac's `await`).
#[derive(Debug, Clone, Copy)]
pub struct Script<'a> {
    pub code: &'a str,
    pub asynchronous: bool,
}

/// The file name scripts are evaluated under; `api.js` finds a script's frames by it.
pub(super) const SCRIPT_NAME: &str = "volley-script";

/// The stack a script may use: deep enough for any real handler, far below the
/// thread's, so that runaway recursion is an error and not a crash.
pub(super) const MAX_STACK_BYTES: usize = 512 * 1024;

/// How much a script may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The time the script and its tests may take together.
    pub timeout: Duration,
    /// The memory its runtime may allocate, in bytes.
    pub memory: usize,
}

/// What a script did: its output when it got that far, and its error if it failed.
#[derive(Debug, Default)]
pub struct Run {
    pub output: Output,
    pub failure: Option<Failure>,
}

/// What `finish` answers (see `api.js`).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// `client.global` changes, in order: name, value, cleared.
    pub globals: Vec<(String, serde_json::Value, bool)>,
    /// Whether `client.global.clearAll()` ran (before the changes listed).
    pub clear_all: bool,
    /// `request.variables.set` values.
    pub variables: Map<String, serde_json::Value>,
    /// `client.test` results, in the order the tests were registered.
    pub tests: Vec<TestOutcome>,
    /// `client.log` lines.
    pub logs: Vec<String>,
    /// httpyac's `sleep`: the milliseconds the script asked to wait, in all.
    #[serde(default)]
    pub slept: f64,
}

/// One `client.test`.
#[derive(Debug, Deserialize)]
pub struct TestOutcome {
    pub name: String,
    pub passed: bool,
    #[serde(default)]
    pub message: Option<String>,
    /// 1-based line and column of the `client.test` call in the script.
    pub place: Option<(u32, u32)>,
}

/// Installs the API, evaluates the script, runs its tests and, in a `shared` realm,
/// puts the global object back (the flag: whether the realm is as it was made). `Err`
/// when the API could not be installed or its output read (the limits hit outside the
/// script, mostly).
fn evaluate<'js>(
    ctx: &Ctx<'js>,
    script: Script<'_>,
    input: &str,
    body: &str,
    shared: bool,
) -> Result<(Run, bool), Failure> {
    let code = script.code;
    let api = ctx
        .userdata::<Object<'_>>()
        .map(|api| api.clone())
        .ok_or_else(|| Failure::thrown("the script API is missing".to_owned()))?;
    let install: Function<'_> = api.get("install").map_err(|_| thrown(ctx))?;
    let installed: Object<'_> = install.call((input, body)).map_err(|_| thrown(ctx))?;
    let finish: Function<'_> = installed.get("finish").map_err(|_| thrown(ctx))?;
    let is_exit: Function<'_> = installed.get("isExit").map_err(|_| thrown(ctx))?;
    let mut failure = None;
    let asynchronous = if script.asynchronous { "async " } else { "" };
    let wrapped = format!("({asynchronous}function () {{\n{code}\n}}).call(globalThis);");
    let lines = u32::try_from(code.split('\n').count()).unwrap_or(u32::MAX);
    let mut failed = |exception: Value<'js>| {
        if !is_exit.call::<_, bool>((exception.clone(),)).unwrap_or(false) {
            failure = Some(describe(&exception, lines));
        }
    };
    match ctx.eval_with_options::<Value<'_>, _>(wrapped, options(SCRIPT_NAME)) {
        Err(_) => failed(ctx.catch()),
        Ok(value) => {
            if let Some(promise) = value.as_promise() {
                // What the script awaits runs now; the time limit still applies.
                while ctx.execute_pending_job() {}
                match promise.state() {
                    rquickjs::promise::PromiseState::Rejected => {
                        let rejection = match promise.result::<Value<'_>>() {
                            Some(Ok(value)) => value,
                            _ => ctx.catch(),
                        };
                        failed(rejection);
                    }
                    rquickjs::promise::PromiseState::Pending => {
                        failure = Some(Failure::thrown(
                            "the script awaits something that never settles (Volley's sandbox has no timers, \
                             network or files)"
                                .to_owned(),
                        ));
                    }
                    rquickjs::promise::PromiseState::Resolved => {}
                }
            }
        }
    }
    // The tests run after the script (and after `client.exit()`); a script that
    // failed still sets what it set before failing.
    let answer: String = finish.call(()).map_err(|_| thrown(ctx))?;
    let output = serde_json::from_str(&answer)
        .map_err(|error| Failure::thrown(format!("the script's results cannot be read: {error}")))?;
    let restored = shared
        && api.get::<_, Function<'_>>("restore").and_then(|restore| restore.call::<_, bool>(())).unwrap_or(false);
    Ok((Run { output, failure }, restored))
}

fn options(file: &str) -> EvalOptions {
    let mut options = EvalOptions::default();
    options.global = true;
    options.strict = false;
    options.filename = Some(file.to_owned());
    options
}

/// The pending exception of `ctx` (thrown outside any script), described.
fn thrown(ctx: &Ctx<'_>) -> Failure {
    describe(&ctx.catch(), 0)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{FailureKind, Limits, Realm, run};

    const LIMITS: Limits = Limits { timeout: Duration::from_secs(2), memory: 32 << 20 };

    fn input(response: bool) -> String {
        let response = if response {
            r#","response":{"status":200,"headers":[["Content-Type","application/json"]],"mimeType":"application/json","charset":"utf-8"}"#
        } else {
            ""
        };
        format!(
            r#"{{"globals":{{"kept":"yes"}},"variables":{{"host":"h"}},"environment":{{"env":"dev"}},"request":{{"method":"GET","url":"https://{{{{host}}}}/","headers":[]}}{response}}}"#
        )
    }

    #[test]
    fn a_handler_sets_globals_from_the_json_body() {
        let code = "client.global.set('token', response.body.token);\nclient.log('got', response.status);";
        let run = run(code, &input(true), r#"{"token":"abc"}"#, LIMITS);
        assert_eq!(run.failure, None);
        assert_eq!(run.output.globals, vec![("token".to_owned(), serde_json::json!("abc"), false)]);
        assert_eq!(run.output.logs, vec!["got 200".to_owned()]);
    }

    #[test]
    fn tests_run_after_the_script_with_their_places() {
        let code = "client.test('ok', () => client.assert(true));\nclient.test('no', function () {\n  client.assert(response.status === 201, 'want 201');\n});";
        let run = run(code, &input(true), "{}", LIMITS);
        let tests: Vec<_> = run
            .output
            .tests
            .iter()
            .map(|test| (test.name.as_str(), test.passed, test.place.map(|place| place.0)))
            .collect();
        assert_eq!(tests, vec![("ok", true, Some(1)), ("no", false, Some(2))]);
        assert_eq!(run.output.tests[1].message.as_deref(), Some("AssertionError: want 201"));
    }

    #[test]
    fn a_thrown_error_has_its_place_and_stack() {
        let run = run("let a = 1;\n\nnull.token;", &input(false), "", LIMITS);
        let failure = run.failure.expect("it throws");
        assert_eq!((failure.kind, failure.place.map(|place| place.0)), (FailureKind::Thrown, Some(3)));
        assert!(failure.message.starts_with("TypeError: "), "{}", failure.message);
        assert!(failure.stack.contains("script:3:"), "{}", failure.stack);
    }

    /// An httpyac script is the body of an async function: what it awaits settles before
    /// its results are read, a rejection fails it at its line, and a promise that never
    /// settles (no timers here) is a failure that says so.
    #[test]
    fn an_async_script_settles_before_its_results_are_read() {
        let mut realm = Realm::single().unwrap();
        let code = "await Promise.resolve();\nclient.global.set('after', 'await');\nclient.log('done');";
        let (run, _) = realm.run(super::Script { code, asynchronous: true }, &input(false), "", LIMITS);
        assert_eq!(run.failure, None);
        assert_eq!(run.output.logs, ["done"]);
        assert_eq!(run.output.globals[0].0, "after");
        let mut realm = Realm::single().unwrap();
        let code = "let a = 1;\nawait null;\nnull.token;";
        let (run, _) = realm.run(super::Script { code, asynchronous: true }, &input(false), "", LIMITS);
        let failure = run.failure.expect("it rejects");
        assert!(failure.message.starts_with("TypeError: "), "{}", failure.message);
        assert_eq!(failure.place.map(|place| place.0), Some(3));
        let mut realm = Realm::single().unwrap();
        let code = "await new Promise(() => {});";
        let (run, _) = realm.run(super::Script { code, asynchronous: true }, &input(false), "", LIMITS);
        assert!(run.failure.expect("it never settles").message.contains("never settles"));
    }

    /// Runs `code` in `realm`, which must stay usable.
    fn again(realm: &mut Realm, code: &str, response: bool) -> Vec<String> {
        let (run, reusable) =
            realm.run(super::Script { code, asynchronous: false }, &input(response), r#"{"token":"abc"}"#, LIMITS);
        assert_eq!(run.failure, None, "{code}");
        assert!(reusable, "{code}: the realm can be used again");
        run.output.logs
    }

    /// In a realm used again, a script's declarations are its own and what it did to
    /// the global object is undone: the next script sees the realm as it was made.
    #[test]
    fn scripts_of_one_realm_keep_their_names_apart() {
        let mut realm = Realm::shared().unwrap();
        again(
            &mut realm,
            "const data = 1; var v = 2; function f() {}\nleaked = 3; globalThis.also = 4; this.more = 5;",
            true,
        );
        again(&mut realm, "JSON = null; Math = 1; delete globalThis.Array; globalThis.client = 6;", true);
        let logs = again(
            &mut realm,
            "const data = 7;\nclient.log(typeof v, typeof f, typeof leaked, typeof also, typeof more, data);\nclient.log(typeof JSON.parse, typeof Math.max, typeof Array.isArray, typeof response);",
            false,
        );
        assert_eq!(
            logs,
            vec!["undefined undefined undefined undefined undefined 7", "function function function undefined"]
        );
    }

    /// What a script changes in the built-ins themselves stays for the scripts after it
    /// in the same realm, as documented for `scripts.realm: "client"`; the API's
    /// answers do not depend on it.
    #[test]
    fn changes_to_the_built_ins_stay_in_the_realm() {
        let mut realm = Realm::shared().unwrap();
        let code = "Array.prototype.last = function () { return this[this.length - 1]; };\nJSON.parse = () => 3; JSON.stringify = () => 'x'; Object.keys = () => [];";
        again(&mut realm, code, false);
        let code = "client.global.set('t', response.body.token);\nclient.log([1, 2].last());";
        let (run, reusable) =
            realm.run(super::Script { code, asynchronous: false }, &input(true), r#"{"token":"abc"}"#, LIMITS);
        assert!(reusable && run.failure.is_none(), "{:?}", run.failure);
        assert_eq!(run.output.logs, vec!["2".to_owned()]);
        assert_eq!(run.output.globals, vec![("t".to_owned(), serde_json::json!("abc"), false)]);
    }

    /// A realm is left behind after a script hit a limit, left work queued or made the
    /// global object impossible to put back; a script that merely threw leaves it usable.
    #[test]
    fn a_realm_is_used_again_only_when_it_is_as_it_was() {
        let mut realm = Realm::shared().unwrap();
        let (run, reusable) =
            realm.run(super::Script { code: "null.x;", asynchronous: false }, &input(false), "", LIMITS);
        assert!(run.failure.is_some() && reusable);
        for code in [
            "Promise.resolve().then(() => {});",
            "Object.defineProperty(globalThis, 'fixed', { value: 1, configurable: false });",
            "Object.preventExtensions(globalThis);",
        ] {
            let mut realm = Realm::shared().unwrap();
            let (run, reusable) = realm.run(super::Script { code, asynchronous: false }, &input(false), "", LIMITS);
            assert!(run.failure.is_none() && !reusable, "{code}");
        }
        let mut realm = Realm::shared().unwrap();
        let limits = Limits { timeout: Duration::from_millis(50), ..LIMITS };
        let (run, reusable) =
            realm.run(super::Script { code: "while (true) {}", asynchronous: false }, &input(false), "", limits);
        assert!(run.failure.is_some_and(|failure| failure.kind == FailureKind::Timeout) && !reusable);
    }

    /// Places and stacks count lines in the script, not in the function it runs as.
    #[test]
    fn a_stack_counts_the_lines_of_the_script() {
        let code = "function inner() {\n  throw new Error('deep');\n}\ninner();";
        let failure = run(code, &input(false), "", LIMITS).failure.expect("it throws");
        assert_eq!(failure.place, Some((2, 13)));
        let frames: Vec<&str> = failure.stack.lines().collect();
        assert_eq!(frames.len(), 2, "{}", failure.stack);
        assert!(frames[0].contains("inner") && frames[0].contains("script:2:13"), "{}", failure.stack);
        assert!(frames[1].contains("script:4:"), "{}", failure.stack);
    }

    /// A realm of its own for each script (`scripts.realm: "script"`): nothing of the
    /// scripts before it, not even changes to the built-ins.
    #[test]
    fn a_script_sees_nothing_of_the_scripts_before_it() {
        let first =
            run("globalThis.leak = 1; Array.prototype.leaked = 2; JSON.parse = () => 3;", &input(false), "", LIMITS);
        assert_eq!(first.failure, None);
        let second = run("client.log(typeof leak, typeof [].leaked, JSON.parse('4'));", &input(false), "", LIMITS);
        assert_eq!(second.output.logs, vec!["undefined undefined 4".to_owned()]);
    }

    #[test]
    fn exit_ends_the_script_without_an_error() {
        let run =
            run("client.global.set('a', 1); client.exit(); client.global.set('b', 2);", &input(false), "", LIMITS);
        assert_eq!(run.failure, None);
        assert_eq!(run.output.globals.len(), 1);
    }

    #[test]
    fn an_endless_loop_stops_at_the_deadline() {
        let limits = Limits { timeout: Duration::from_millis(100), ..LIMITS };
        let run = run("while (true) {}", &input(false), "", limits);
        assert_eq!(run.failure.map(|failure| failure.kind), Some(FailureKind::Timeout));
    }

    #[test]
    fn an_allocation_bomb_stops_at_the_memory_limit() {
        let code = "let a = []; while (true) a.push('x'.repeat(1e6) + a.length);";
        let run = run(code, &input(false), "", LIMITS);
        assert_eq!(run.failure.map(|failure| failure.kind), Some(FailureKind::Memory));
    }

    #[test]
    fn request_variables_and_the_environment() {
        let logged = run("console.log('a', 1); console.error({ b: 2 });", &input(false), "", LIMITS);
        assert_eq!(logged.output.logs, vec!["a 1".to_owned(), r#"{"b":2}"#.to_owned()]);
        let code = "request.variables.set('ts', 42);\nclient.log(request.environment.get('env'), request.url.tryGetSubstituted(), request.variables.get('ts'), client.global.get('kept'));";
        let run = run(code, &input(false), "", LIMITS);
        assert_eq!(run.failure, None);
        assert_eq!(run.output.variables.get("ts"), Some(&serde_json::json!(42)));
        assert_eq!(run.output.logs, vec!["dev https://h/ 42 yes".to_owned()]);
    }

    #[test]
    fn nothing_outside_the_context_is_reachable() {
        let code = "client.log([typeof require, typeof fetch, typeof std, typeof os, typeof process, typeof setTimeout, typeof XMLHttpRequest, typeof import_meta].join());";
        let reached = run(code, &input(false), "", LIMITS);
        assert_eq!(
            reached.output.logs,
            vec!["undefined,undefined,undefined,undefined,undefined,undefined,undefined,undefined".to_owned()]
        );
        let module = run("import('fs').then(() => client.log('imported'))", &input(false), "", LIMITS);
        assert!(module.output.logs.is_empty());
    }

    /// The only names a script can reach are ECMAScript's built-ins and the API: no
    /// file system, network, process, timers or module loading, whatever it tries.
    #[test]
    fn a_script_reaches_nothing_but_the_language_and_the_api() {
        let code = "client.log(Object.getOwnPropertyNames(globalThis).sort().join(' '));";
        let globals = run(code, &input(true), "{}", LIMITS).output.logs.join("");
        let names: Vec<&str> = globals.split(' ').collect();
        let unexpected: Vec<&&str> = names.iter().filter(|name| !ECMASCRIPT_AND_API.contains(name)).collect();
        assert!(unexpected.is_empty(), "unexpected globals: {unexpected:?}");
        for attempt in [
            "require('fs').readFileSync('/etc/passwd')",
            "fetch('http://127.0.0.1:1/')",
            "new XMLHttpRequest()",
            "std.loadFile('/etc/passwd')",
            "os.exec(['true'])",
            "process.exit(1)",
            "setTimeout(() => {}, 1)",
            "Deno.readTextFileSync('/etc/passwd')",
            "new WebSocket('ws://127.0.0.1:1/')",
            "globalThis.constructor.constructor('return this')().require('fs')",
        ] {
            let failure = run(attempt, &input(false), "", LIMITS).failure.expect(attempt);
            assert!(
                failure.message.starts_with("ReferenceError: ") || failure.message.starts_with("TypeError: "),
                "{attempt}: {}",
                failure.message
            );
        }
        let imported = run("import('fs').then(() => client.global.set('reached', true))", &input(false), "", LIMITS);
        assert!(imported.output.globals.is_empty(), "a module was loaded");
    }

    /// ECMAScript's global names (as QuickJS provides them, with its `atob`, `btoa`,
    /// `queueMicrotask`, `performance.now()` and `DOMException`) and the script API's.
    const ECMASCRIPT_AND_API: &[&str] = &[
        "AsyncDisposableStack",
        "DOMException",
        "DisposableStack",
        "InternalError",
        "SuppressedError",
        "atob",
        "btoa",
        "performance",
        "queueMicrotask",
        "AggregateError",
        "Array",
        "ArrayBuffer",
        "Atomics",
        "BigInt",
        "BigInt64Array",
        "BigUint64Array",
        "Boolean",
        "DataView",
        "Date",
        "Error",
        "EvalError",
        "FinalizationRegistry",
        "Float16Array",
        "Float32Array",
        "Float64Array",
        "Function",
        "Infinity",
        "Int16Array",
        "Int32Array",
        "Int8Array",
        "Iterator",
        "JSON",
        "Map",
        "Math",
        "NaN",
        "Number",
        "Object",
        "Promise",
        "Proxy",
        "RangeError",
        "ReferenceError",
        "Reflect",
        "RegExp",
        "Set",
        "SharedArrayBuffer",
        "String",
        "Symbol",
        "SyntaxError",
        "TypeError",
        "URIError",
        "Uint16Array",
        "Uint32Array",
        "Uint8Array",
        "Uint8ClampedArray",
        "WeakMap",
        "WeakRef",
        "WeakSet",
        "decodeURI",
        "decodeURIComponent",
        "encodeURI",
        "encodeURIComponent",
        "escape",
        "eval",
        "globalThis",
        "isFinite",
        "isNaN",
        "parseFloat",
        "parseInt",
        "undefined",
        "unescape",
        "client",
        "request",
        "response",
        "console",
    ];

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, ..Default::default() })]

        /// Whatever name a script reaches for and whatever it calls on it with a path or
        /// a URL, no file appears and no connection arrives: it reaches neither the file
        /// system nor the network.
        #[test]
        fn a_script_never_reaches_files_or_the_network(
            owner in proptest::sample::select(vec![
                "globalThis", "require('fs')", "require('net')", "require('child_process')", "process", "std", "os",
                "Deno", "Bun", "navigator", "window", "self", "import.meta", "this", "Function('return this')()",
            ]),
            member in proptest::sample::select(vec![
                "writeFileSync", "writeFile", "open", "openSync", "fetch", "connect", "createConnection", "exec",
                "spawn", "system", "send", "loadFile", "writeTextFile", "sendBeacon", "import",
            ]),
            target in proptest::sample::select(vec![0_usize, 1]),
        ) {
            let directory = std::env::temp_dir().join(format!("volley-sandbox-{}", std::process::id()));
            std::fs::create_dir_all(&directory).unwrap();
            let file = directory.join("reached");
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            listener.set_nonblocking(true).unwrap();
            let url = format!("http://{}/", listener.local_addr().unwrap());
            let argument = if target == 0 { file.display().to_string() } else { url.clone() };
            let code = format!(
                "try {{ const o = {owner}; o[{member:?}]({argument:?}, 'x'); }} catch (e) {{ client.log(String(e)); }}\n\
                 try {{ {member}({argument:?}); }} catch (e) {{ client.log(String(e)); }}\n\
                 try {{ import({argument:?}).catch(() => {{}}); }} catch (e) {{}}"
            );
            let run = run(&code, &input(false), "", LIMITS);
            proptest::prop_assert!(!file.exists(), "{code}: a file was written");
            proptest::prop_assert!(listener.accept().is_err(), "{code}: a connection arrived");
            let reached = run.output.logs.iter().all(|line| line.contains("Error"));
            proptest::prop_assert!(reached, "{code}: every attempt fails with an error: {:?}", run.output.logs);
        }
    }
}
