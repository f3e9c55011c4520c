//! Responses that stay open: the events of a Server-Sent Events response and the
//! messages of a WebSocket connection, printed as they arrive.

use std::fmt::Write as _;
use std::io::IsTerminal as _;
use std::time::{Duration, Instant};

use anstyle::{AnsiColor, Style};
use futures_util::StreamExt as _;
use serde::Serialize;
use tokio::io::AsyncBufReadExt as _;
use volley_engine::Response;
use volley_engine::sse::SseEvent;
use volley_engine::websocket::{WsMessage, WsSender};

use super::Mode;

const DIM: Style = Style::new().dimmed();
const BOLD: Style = Style::new().bold();
const CYAN: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Cyan)));
const GREEN: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Green)));
const RED: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Red)));

/// When a stream is ended by Volley rather than by the server.
#[derive(Debug, Clone, Default)]
pub(crate) struct Limits {
    /// Cancelled by Ctrl-C.
    pub(crate) interrupt: volley_engine::CancellationToken,
    /// `--max-events`: events (SSE) or received messages (WebSocket).
    pub(crate) max_events: Option<usize>,
    /// `--max-time`.
    pub(crate) max_time: Option<Duration>,
    /// `--wait`: with piped stdin, how long a WebSocket stays open without traffic
    /// after the last line was sent.
    pub(crate) wait: Duration,
}

/// What came of a stream.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct StreamSummary {
    /// `events` or `websocket`.
    pub(crate) kind: &'static str,
    /// Events or messages received.
    pub(crate) received: usize,
    /// WebSocket messages sent.
    pub(crate) sent: usize,
    /// Why it ended: `server_closed`, `max_events`, `max_time`, `interrupted`, `idle`,
    /// `client_closed` or `error`.
    pub(crate) ended: &'static str,
    /// The close frame of a WebSocket connection, when one arrived.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) close: Option<Close>,
    /// Problems on the way (a binary frame, a broken connection).
    pub(crate) errors: Vec<String>,
    #[serde(rename = "duration_ms")]
    pub(crate) duration: f64,
}

/// A close code and reason.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Close {
    pub(crate) code: u16,
    pub(crate) reason: String,
}

impl StreamSummary {
    fn new(kind: &'static str) -> Self {
        Self { kind, received: 0, sent: 0, ended: "server_closed", close: None, errors: Vec::new(), duration: 0.0 }
    }

    /// `12 events in 1.2 s, server closed`.
    pub(crate) fn describe(&self) -> String {
        let noun = match (self.kind, self.received) {
            ("events", 1) => "event",
            ("events", _) => "events",
            (_, 1) => "message received",
            _ => "messages received",
        };
        let mut text = format!("{} {noun}", self.received);
        if self.kind == "websocket" {
            let _ = write!(text, ", {} sent", self.sent);
        }
        let ended = match self.ended {
            "server_closed" if self.kind == "events" => "the server ended the stream".to_owned(),
            "server_closed" => match &self.close {
                Some(close) if close.reason.is_empty() => format!("the server closed with {}", close.code),
                Some(close) => format!("the server closed with {} ({})", close.code, close.reason),
                None => "the server closed the connection".to_owned(),
            },
            "max_events" => "--max-events reached".to_owned(),
            "max_time" => "--max-time reached".to_owned(),
            "interrupted" => "interrupted".to_owned(),
            "idle" => "no more messages (--wait)".to_owned(),
            "client_closed" => "closed".to_owned(),
            _ => "failed".to_owned(),
        };
        format!("{text} in {}, {ended}", super::human::duration(Duration::from_secs_f64(self.duration / 1000.0)))
    }
}

/// A line of `--json` output for one event or message.
#[derive(Serialize)]
struct Line<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    file: &'a str,
    index: usize,
    #[serde(flatten)]
    item: Item<'a>,
    elapsed_ms: f64,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Item<'a> {
    Event {
        event: &'a str,
        data: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        retry_ms: Option<u128>,
    },
    Message {
        direction: &'static str,
        /// `text`, `json`, `ping`, `pong`, `close` or `error`.
        message: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        data: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        code: Option<u16>,
    },
}

/// Where a stream's items go.
pub(crate) struct Printer<'a> {
    pub(crate) mode: Mode,
    pub(crate) file: &'a str,
    pub(crate) index: usize,
    pub(crate) started: Instant,
    pub(crate) response: &'a Response,
}

impl Printer<'_> {
    fn elapsed(&self) -> f64 {
        (self.started.elapsed().as_secs_f64() * 1_000_000.0).round() / 1000.0
    }

    fn json(&self, kind: &'static str, item: Item<'_>) {
        let line = Line { kind, file: self.file, index: self.index, item, elapsed_ms: self.elapsed() };
        if let Ok(text) = serde_json::to_string(&line) {
            crate::output::line(&self.response.redact(&text));
        }
    }

    fn stamp(&self) -> String {
        format!("{DIM}[+{}]{DIM:#}", super::human::duration(self.started.elapsed()))
    }

    fn event(&self, event: &SseEvent) {
        match self.mode {
            Mode::Json => self.json(
                "event",
                Item::Event {
                    event: &event.event,
                    data: &event.data,
                    id: event.id.as_deref(),
                    retry_ms: event.retry.map(|retry| retry.as_millis()),
                },
            ),
            Mode::Quiet | Mode::Test | Mode::Part(_) => {}
            Mode::Normal | Mode::Verbose => {
                let mut head = format!("{} {BOLD}{}{BOLD:#}", self.stamp(), event.event);
                if let Some(id) = &event.id {
                    let _ = write!(head, " {DIM}id {id}{DIM:#}");
                }
                if let Some(retry) = event.retry {
                    let _ = write!(head, " {DIM}retry {} ms{DIM:#}", retry.as_millis());
                }
                let data = self.response.redact(&event.data);
                let body = crate::pretty::json(&data).unwrap_or(data);
                crate::output::line(&format!("{head}\n{body}"));
            }
        }
    }

    fn message(&self, direction: &'static str, kind: &'static str, data: Option<&str>, code: Option<u16>) {
        match self.mode {
            Mode::Json => self.json("message", Item::Message { direction, message: kind, data, code }),
            Mode::Quiet | Mode::Test | Mode::Part(_) => {}
            Mode::Normal | Mode::Verbose => {
                let arrow =
                    if direction == "out" { format!("{GREEN}→{GREEN:#}") } else { format!("{CYAN}←{CYAN:#}") };
                let text = match (kind, data, code) {
                    ("close", reason, Some(code)) => {
                        format!(
                            "{DIM}close {code}{}{DIM:#}",
                            reason.filter(|r| !r.is_empty()).map(|r| format!(" {r}")).unwrap_or_default()
                        )
                    }
                    ("close", _, None) => format!("{DIM}close{DIM:#}"),
                    ("ping" | "pong", data, _) => format!(
                        "{DIM}{kind}{}{DIM:#}",
                        data.filter(|d| !d.is_empty()).map(|d| format!(" {d}")).unwrap_or_default()
                    ),
                    ("error", data, _) => format!("{RED}{}{RED:#}", data.unwrap_or_default()),
                    (_, Some(data), _) => {
                        let data = self.response.redact(data);
                        crate::pretty::json(&data).unwrap_or(data)
                    }
                    _ => String::new(),
                };
                crate::output::line(&format!("{} {arrow} {text}", self.stamp()));
            }
        }
    }
}

/// Reads the events of an SSE response until the server ends the stream or a limit,
/// Ctrl-C or an error does.
pub(crate) async fn events(printer: &Printer<'_>, limits: &Limits) -> StreamSummary {
    let mut summary = StreamSummary::new("events");
    let mut events = match printer.response.events() {
        Ok(events) => events,
        Err(error) => {
            summary.ended = "error";
            summary.errors.push(printer.response.redact(&error.to_string()));
            return summary;
        }
    };
    let deadline = limits.max_time.map(|max| tokio::time::Instant::now() + max);
    loop {
        if limits.max_events.is_some_and(|max| summary.received >= max) {
            summary.ended = "max_events";
            break;
        }
        let next = tokio::select! {
            next = events.next() => next,
            () = sleep_until(deadline) => { summary.ended = "max_time"; break; }
            () = limits.interrupt.cancelled() => { summary.ended = "interrupted"; break; }
        };
        match next {
            // The run's cancellation (Ctrl-C) also ends the body stream itself.
            None if limits.interrupt.is_cancelled() => {
                summary.ended = "interrupted";
                break;
            }
            None => break,
            Some(Ok(event)) => {
                summary.received += 1;
                printer.event(&event);
            }
            Some(Err(error)) => {
                summary.ended = "error";
                summary.errors.push(printer.response.redact(&error.to_string()));
                break;
            }
        }
    }
    summary.duration = printer.elapsed();
    summary
}

/// Runs a WebSocket connection: interactive when stdin is a terminal (each line is
/// sent; `/close`, `/ping`, `/json`), else each line of stdin is sent and the
/// connection stays open until `--wait` passes without traffic.
pub(crate) async fn websocket(printer: &Printer<'_>, limits: &Limits) -> StreamSummary {
    let mut summary = StreamSummary::new("websocket");
    let Some(socket) = printer.response.websocket() else {
        summary.ended = "error";
        summary.errors.push("the response holds no WebSocket connection".to_owned());
        return summary;
    };
    let interactive = std::io::stdin().is_terminal();
    let (sender, mut receiver) = socket.split();
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let mut stdin_open = true;
    let deadline = limits.max_time.map(|max| tokio::time::Instant::now() + max);
    let mut idle_since = tokio::time::Instant::now();
    if interactive && printer.mode != Mode::Json {
        crate::output::error_line(&format!(
            "{DIM}connected; type a message and Enter to send it; /json VALUE, /ping, /close [CODE [REASON]]; Ctrl-D closes{DIM:#}"
        ));
    }
    loop {
        if limits.max_events.is_some_and(|max| summary.received >= max) {
            summary.ended = "max_events";
            close(&sender, printer, &mut summary).await;
            break;
        }
        // Piped input: once it is all sent, the connection lives on while messages come.
        let idle = (!stdin_open && !interactive).then(|| idle_since + limits.wait);
        // Input first: lines that are there are all sent before replies are shown, so
        // piped conversations print in the same order every time.
        tokio::select! {
            biased;
            line = lines.next_line(), if stdin_open => {
                idle_since = tokio::time::Instant::now();
                if let Ok(Some(line)) = line {
                    if !command(&line, &sender, printer, &mut summary).await {
                        // `/close`: the server's close frame follows; read it below.
                        summary.ended = "client_closed";
                        stdin_open = false;
                    }
                } else {
                    // End of input: interactively (Ctrl-D) that closes the connection.
                    stdin_open = false;
                    if interactive {
                        close(&sender, printer, &mut summary).await;
                        summary.ended = "client_closed";
                    }
                }
            },
            message = receiver.next() => {
                idle_since = tokio::time::Instant::now();
                match message {
                    None => break,
                    Some(Ok(WsMessage::Text(text))) => {
                        summary.received += 1;
                        let kind = if serde_json::from_str::<serde::de::IgnoredAny>(&text).is_ok() { "json" } else { "text" };
                        printer.message("in", kind, Some(&text), None);
                    }
                    Some(Ok(WsMessage::Pong(payload))) => {
                        printer.message("in", "pong", Some(&String::from_utf8_lossy(&payload)), None);
                    }
                    Some(Ok(WsMessage::Sent(text))) => {
                        // A message of the definition, sent in its turn.
                        summary.sent += 1;
                        let kind = if serde_json::from_str::<serde::de::IgnoredAny>(&text).is_ok() { "json" } else { "text" };
                        printer.message("out", kind, Some(&text), None);
                    }
                    Some(Ok(WsMessage::Close(frame))) => {
                        if summary.ended != "client_closed" {
                            summary.ended = "server_closed";
                        }
                        let (code, reason) = frame.map(|frame| (frame.code, frame.reason)).unzip();
                        printer.message("in", "close", reason.as_deref(), code);
                        summary.close = code.map(|code| Close { code, reason: reason.unwrap_or_default() });
                        break;
                    }
                    Some(Err(error)) => {
                        let text = printer.response.redact(&error.to_string());
                        printer.message("in", "error", Some(&text), None);
                        summary.errors.push(text);
                        if !matches!(error, volley_engine::websocket::WsError::Binary { .. }) {
                            summary.ended = "error";
                            break;
                        }
                    }
                }
            }
            () = sleep_until(idle), if idle.is_some() => {
                close(&sender, printer, &mut summary).await;
                summary.ended = "idle";
                // Wait (briefly) for the server's close frame.
                drain_close(&mut receiver, printer, &mut summary).await;
                break;
            }
            () = sleep_until(deadline) => {
                close(&sender, printer, &mut summary).await;
                summary.ended = "max_time";
                drain_close(&mut receiver, printer, &mut summary).await;
                break;
            }
            () = limits.interrupt.cancelled() => {
                close(&sender, printer, &mut summary).await;
                summary.ended = "interrupted";
                break;
            }
        }
    }
    summary.duration = printer.elapsed();
    summary
}

/// Sends what a line of input says; `false` after `/close`.
async fn command(line: &str, sender: &WsSender, printer: &Printer<'_>, summary: &mut StreamSummary) -> bool {
    let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
    let result = match word {
        "/close" => {
            let mut parts = rest.trim().splitn(2, ' ');
            let code = parts.next().and_then(|code| code.parse::<u16>().ok()).unwrap_or(1000);
            let reason = parts.next().unwrap_or_default();
            printer.message("out", "close", Some(reason), Some(code));
            let _ = sender.close(code, reason).await;
            return false;
        }
        "/ping" => {
            printer.message("out", "ping", Some(rest), None);
            sender.ping(rest.as_bytes().to_vec()).await
        }
        "/json" => match serde_json::from_str::<serde_json::Value>(rest) {
            Ok(value) => {
                let text = value.to_string();
                summary.sent += 1;
                printer.message("out", "json", Some(&text), None);
                sender.send_text(text).await
            }
            Err(error) => {
                let text = format!("not sent: not JSON ({error})");
                printer.message("out", "error", Some(&text), None);
                summary.errors.push(text);
                return true;
            }
        },
        _ => {
            // `//text` sends `/text`.
            let text = line.strip_prefix('/').filter(|rest| rest.starts_with('/')).unwrap_or(line);
            summary.sent += 1;
            printer.message("out", "text", Some(text), None);
            sender.send_text(text).await
        }
    };
    if let Err(error) = result {
        let text = printer.response.redact(&error.to_string());
        printer.message("out", "error", Some(&text), None);
        summary.errors.push(text);
    }
    true
}

async fn close(sender: &WsSender, printer: &Printer<'_>, summary: &mut StreamSummary) {
    printer.message("out", "close", None, Some(1000));
    if let Err(error) = sender.close(1000, "").await {
        summary.errors.push(printer.response.redact(&error.to_string()));
    }
}

/// After our close: the server's close frame, for up to a second.
async fn drain_close(
    receiver: &mut volley_engine::websocket::WsReceiver,
    printer: &Printer<'_>,
    summary: &mut StreamSummary,
) {
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        while let Some(message) = receiver.next().await {
            if let Ok(WsMessage::Close(frame)) = message {
                let (code, reason) = frame.map(|frame| (frame.code, frame.reason)).unzip();
                printer.message("in", "close", reason.as_deref(), code);
                summary.close = code.map(|code| Close { code, reason: reason.unwrap_or_default() });
                break;
            }
        }
    })
    .await;
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}
