//! Why a script stopped, as Volley reports it: the thrown value described (`Name:
//! message`), the frames of its JavaScript stack that are in the script's own code
//! with their lines counted in that code, and the failures the limits caused named.

use std::sync::atomic::{AtomicBool, Ordering};

use rquickjs::{Exception, Value};

use super::sandbox::{Limits, SCRIPT_NAME};

/// Why a script stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub kind: FailureKind,
    /// `TypeError: cannot read property 'token' of undefined`.
    pub message: String,
    /// The script's frames of the JavaScript stack, innermost first, one per line.
    pub stack: String,
    /// 1-based line and column in the script of the innermost frame.
    pub place: Option<(u32, u32)>,
}

/// The kinds of [`Failure`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// The script threw (or does not parse).
    Thrown,
    /// It ran past [`Limits::timeout`].
    Timeout,
    /// It tried to allocate past [`Limits::memory`].
    Memory,
}

/// A thrown value as a failure: `Name: message`, the frames of its stack in the
/// script's code (of `lines` lines, run as the body of a function that starts one line
/// before it) and the innermost one's place.
pub(super) fn describe(value: &Value<'_>, lines: u32) -> Failure {
    let exception = value.as_object().and_then(|object| Exception::from_object(object.clone()));
    let (message, stack) = if let Some(exception) = exception {
        let name: Option<String> = exception.get("name").ok();
        let message = exception.message().unwrap_or_default();
        let message = match name.as_deref() {
            Some(name) if !name.is_empty() && name != "Error" => format!("{name}: {message}"),
            _ => message,
        };
        (message, exception.stack().unwrap_or_default())
    } else {
        let text = value
            .as_string()
            .and_then(|text| text.to_string().ok())
            .or_else(|| value.as_number().map(|number| number.to_string()))
            .or_else(|| value.as_bool().map(|flag| flag.to_string()))
            .unwrap_or_else(|| format!("a {} was thrown", value.type_name()));
        (format!("uncaught {text}"), String::new())
    };
    let frames: Vec<(String, (u32, u32))> =
        stack.lines().filter_map(|frame| script_frame(frame.trim(), lines)).collect();
    let place = frames.first().map(|(_, place)| *place);
    let stack = frames.into_iter().map(|(frame, _)| frame).collect::<Vec<_>>().join("\n");
    Failure { kind: FailureKind::Thrown, message, stack, place }
}

/// A frame of the script's code as shown (`at f (script:3:14)`, lines counted in the
/// code) with its place; `None` for a frame elsewhere, the wrapping function's included.
fn script_frame(frame: &str, lines: u32) -> Option<(String, (u32, u32))> {
    let (line, column) = frame_place(frame, SCRIPT_NAME)?;
    let line = line.checked_sub(1).filter(|line| (1..=lines).contains(line))?;
    let at = frame.find(SCRIPT_NAME)?;
    let after = &frame[at + SCRIPT_NAME.len()..];
    let rest = after.trim_start_matches(|c: char| c == ':' || c.is_ascii_digit());
    let shown = format!("{}script:{line}:{column}{rest}", &frame[..at]);
    Some((shown, (line, column)))
}

impl Failure {
    /// A failure of the machinery around a script, with no place in it.
    pub(super) fn thrown(message: String) -> Self {
        Self { kind: FailureKind::Thrown, message, stack: String::new(), place: None }
    }
}

/// The place in the code named `name` of a stack frame: `at f (volley-script:3:14)` or
/// `at volley-script:1:9` is line 3, column 14.
pub(super) fn frame_place(frame: &str, name: &str) -> Option<(u32, u32)> {
    let after = &frame[frame.find(name)? + name.len()..];
    let mut numbers = after.strip_prefix(':')?.split(|c: char| !c.is_ascii_digit());
    let line = numbers.next()?.parse().ok()?;
    let column = numbers.next().and_then(|column| column.parse().ok()).unwrap_or(1);
    Some((line, column))
}

/// Names a failure the limits caused.
pub(super) fn classify(failure: &mut Failure, interrupted: &AtomicBool, limits: Limits) {
    if interrupted.load(Ordering::Relaxed) {
        failure.kind = FailureKind::Timeout;
        failure.message = format!("the script ran for longer than its limit of {} ms", limits.timeout.as_millis());
    } else if failure.message.contains("out of memory") {
        failure.kind = FailureKind::Memory;
        failure.message = format!("the script used more than its memory limit of {} MiB", limits.memory >> 20);
    }
}
