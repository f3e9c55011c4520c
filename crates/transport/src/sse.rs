//! Server-Sent Events: the event stream format of the WHATWG HTML standard
//! ("Interpreting an event stream"), parsed incrementally from body chunks.
//!
//! Lines end with CRLF, LF or CR (a CR at the end of one chunk and the LF at the start
//! of the next are one line end). A line starting with `:` is a comment. `field: value`
//! loses one space after the colon; a line without a colon is a field with an empty
//! value. `data` lines are joined with LF; an empty line dispatches the event unless it
//! has no data; `id` sets the last event id (kept for later events, ignored when it
//! holds NUL); `retry` sets the reconnection time when it is all digits; other fields
//! are ignored. A UTF-8 BOM at the start is skipped; invalid UTF-8 becomes U+FFFD. At the
//! end of the stream an event that was not dispatched is discarded.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::Stream;
use serde::de::DeserializeOwned;

use crate::error::TransportError;
use crate::exchange::BodyStream;

/// One event of a stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The event type: the `event` field, `message` when there is none.
    pub event: String,
    /// The `data` lines joined with `\n`.
    pub data: String,
    /// The last event id at this event (set by this event's `id` field or an earlier
    /// one); `None` when no event has set one.
    pub id: Option<String>,
    /// The reconnection time a `retry` field set since the previous event.
    pub retry: Option<Duration>,
}

impl SseEvent {
    /// The data parsed as JSON into `T`.
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(&self.data)
    }
}

/// The incremental parser: feed it chunks, take the events out.
#[derive(Debug, Default)]
pub struct SseParser {
    /// The bytes of a line that has not ended yet.
    partial: Vec<u8>,
    /// The previous chunk ended with CR: a leading LF of the next one belongs to it.
    after_cr: bool,
    /// The start of the stream has been seen (and its BOM skipped).
    started: bool,
    data: String,
    /// `data` has had at least one line (`data:` with an empty value counts).
    has_data: bool,
    event: String,
    last_id: Option<String>,
    retry: Option<Duration>,
    /// The reconnection time the stream asked for last.
    reconnection: Option<Duration>,
    ready: VecDeque<SseEvent>,
}

impl SseParser {
    /// A parser at the start of a stream.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses a chunk; the events it completes are queued for [`SseParser::next_event`].
    pub fn feed(&mut self, chunk: &[u8]) {
        let mut chunk = chunk;
        if !self.started {
            // The BOM may be split across the first chunks: wait for three bytes.
            self.partial.extend_from_slice(chunk);
            if self.partial.len() < 3 && b"\xEF\xBB\xBF".starts_with(&self.partial) {
                return;
            }
            self.started = true;
            let mut pending = std::mem::take(&mut self.partial);
            let skip = if pending.starts_with(b"\xEF\xBB\xBF") { 3 } else { 0 };
            pending.drain(..skip);
            self.feed_lines(&pending);
            return;
        }
        if self.after_cr {
            self.after_cr = false;
            if chunk.first() == Some(&b'\n') {
                chunk = &chunk[1..];
            }
        }
        self.feed_lines(chunk);
    }

    fn feed_lines(&mut self, chunk: &[u8]) {
        let mut rest = chunk;
        while let Some(end) = memchr::memchr2(b'\n', b'\r', rest) {
            let line_end = rest[end];
            if self.partial.is_empty() {
                self.line(&rest[..end]);
            } else {
                self.partial.extend_from_slice(&rest[..end]);
                let line = std::mem::take(&mut self.partial);
                self.line(&line);
                self.partial = line;
                self.partial.clear();
            }
            rest = &rest[end + 1..];
            if line_end == b'\r' {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
        }
        self.partial.extend_from_slice(rest);
    }

    /// The stream ended: a pending line is processed, an event that was not
    /// dispatched is discarded.
    pub fn finish(&mut self) {
        if !self.started {
            self.started = true;
            let pending = std::mem::take(&mut self.partial);
            let skip = if pending.starts_with(b"\xEF\xBB\xBF") { 3 } else { 0 };
            self.partial.extend_from_slice(&pending[skip..]);
        }
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.line(&line);
        }
        self.data.clear();
        self.has_data = false;
        self.event.clear();
        self.retry = None;
    }

    /// The next complete event, if any.
    pub fn next_event(&mut self) -> Option<SseEvent> {
        self.ready.pop_front()
    }

    /// The reconnection time the stream's latest `retry` field set.
    #[must_use]
    pub fn reconnection_time(&self) -> Option<Duration> {
        self.reconnection
    }

    fn line(&mut self, line: &[u8]) {
        if line.is_empty() {
            self.dispatch();
            return;
        }
        if line[0] == b':' {
            return;
        }
        let (field, value) = match memchr::memchr(b':', line) {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.has_data = true;
                self.data.push_str(&String::from_utf8_lossy(value));
            }
            b"event" => {
                self.event.clear();
                self.event.push_str(&String::from_utf8_lossy(value));
            }
            b"id" if !value.contains(&0) => {
                self.last_id = Some(String::from_utf8_lossy(value).into_owned());
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                // Digits only; absurdly long values saturate instead of failing.
                let millis =
                    std::str::from_utf8(value).ok().and_then(|text| text.parse::<u64>().ok()).unwrap_or(u64::MAX);
                let retry = Duration::from_millis(millis);
                self.retry = Some(retry);
                self.reconnection = Some(retry);
            }
            _ => {}
        }
    }

    fn dispatch(&mut self) {
        if !self.has_data {
            self.event.clear();
            return;
        }
        let event = if self.event.is_empty() { "message".to_owned() } else { std::mem::take(&mut self.event) };
        self.ready.push_back(SseEvent {
            event,
            data: std::mem::take(&mut self.data),
            id: self.last_id.clone().filter(|id| !id.is_empty()),
            retry: self.retry.take(),
        });
        self.has_data = false;
    }
}

/// The events of a response body, as they arrive. Ends when the server ends the
/// stream, or when the run's cancellation token is cancelled.
pub struct EventStream {
    body: Option<BodyStream>,
    parser: SseParser,
}

impl std::fmt::Debug for EventStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventStream").field("parser", &self.parser).finish_non_exhaustive()
    }
}

impl EventStream {
    #[must_use]
    pub fn new(body: BodyStream) -> Self {
        Self { body: Some(body), parser: SseParser::new() }
    }

    /// The events of a body that has been read whole.
    #[must_use]
    pub fn from_bytes(bytes: &[u8]) -> Self {
        let mut parser = SseParser::new();
        parser.feed(bytes);
        parser.finish();
        Self { body: None, parser }
    }

    /// The reconnection time the stream's latest `retry` field set.
    #[must_use]
    pub fn reconnection_time(&self) -> Option<Duration> {
        self.parser.reconnection_time()
    }
}

impl Stream for EventStream {
    type Item = Result<SseEvent, TransportError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            if let Some(event) = self.parser.next_event() {
                return Poll::Ready(Some(Ok(event)));
            }
            let Some(body) = self.body.as_mut() else { return Poll::Ready(None) };
            match body.as_mut().poll_next(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Ok(chunk))) => self.parser.feed(&chunk),
                Poll::Ready(Some(Err(error))) => {
                    self.body = None;
                    return Poll::Ready(Some(Err(error)));
                }
                Poll::Ready(None) => {
                    self.body = None;
                    self.parser.finish();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_chunks(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut parser = SseParser::new();
        let mut events = Vec::new();
        for chunk in chunks {
            parser.feed(chunk);
            while let Some(event) = parser.next_event() {
                events.push(event);
            }
        }
        parser.finish();
        while let Some(event) = parser.next_event() {
            events.push(event);
        }
        events
    }

    fn event(event: &str, data: &str, id: Option<&str>) -> SseEvent {
        SseEvent { event: event.to_owned(), data: data.to_owned(), id: id.map(str::to_owned), retry: None }
    }

    #[test]
    fn follows_the_whatwg_rules() {
        let stream = b": comment\nretry: 3000\n\nid: 1\ndata: first\n\nevent: update\nid: 2\ndata: {\"n\": 2}\n\n\
                       data: line one\ndata: line two\n\ndata:no space\r\n\r\nevent: update\rid: 5\rdata:  two spaces\r\r\
                       data\n\nid\ndata: after empty id\n\nid: a\0b\ndata: nul id ignored\n\nevent: x\nretry: 12a\n\n\
                       data: discarded at the end";
        let events = parse_chunks(&[stream]);
        let mut first = event("message", "first", Some("1"));
        first.retry = Some(Duration::from_secs(3));
        let expected = vec![
            first,
            event("update", "{\"n\": 2}", Some("2")),
            event("message", "line one\nline two", Some("2")),
            event("message", "no space", Some("2")),
            event("update", " two spaces", Some("5")),
            event("message", "", Some("5")),
            event("message", "after empty id", None),
            event("message", "nul id ignored", None),
        ];
        assert_eq!(events, expected);
    }

    #[test]
    fn retry_belongs_to_the_next_event_and_is_remembered() {
        let mut parser = SseParser::new();
        parser.feed(b"retry: 3000\n\ndata: a\n\nretry: x\ndata: b\nretry: 10\n\n");
        let first = parser.next_event().unwrap();
        assert_eq!(first.retry, Some(Duration::from_secs(3)), "a retry before an empty line waits for the next event");
        let second = parser.next_event().unwrap();
        assert_eq!(second.retry, Some(Duration::from_millis(10)));
        assert_eq!(parser.reconnection_time(), Some(Duration::from_millis(10)));
    }

    #[test]
    fn any_split_of_the_bytes_gives_the_same_events() {
        let stream: &[u8] =
            "\u{feff}id: 1\r\ndata: é\r\n\r\ndata: two\rdata: lines\r\revent: e\ndata: x\n\n".as_bytes();
        let whole = parse_chunks(&[stream]);
        assert_eq!(whole.len(), 3);
        assert_eq!(whole[0], event("message", "é", Some("1")));
        assert_eq!(whole[1], event("message", "two\nlines", Some("1")));
        for first in 0..stream.len() {
            for second in first..stream.len() {
                let split = parse_chunks(&[&stream[..first], &stream[first..second], &stream[second..]]);
                assert_eq!(split, whole, "split at {first} and {second}");
            }
        }
    }

    #[test]
    fn invalid_utf8_is_replaced_and_a_bom_only_counts_at_the_start() {
        let events = parse_chunks(&[b"data: \xff\n\n", "data: \u{feff}x\n\n".as_bytes()]);
        assert_eq!(events[0].data, "\u{fffd}");
        assert_eq!(events[1].data, "\u{feff}x");
        assert_eq!(parse_chunks(&[b"\xEF\xBB"]), vec![]);
    }
}
