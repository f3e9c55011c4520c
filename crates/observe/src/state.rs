//! What the observer knows: observer envelopes reduced into flows, executions and
//! WebSocket sessions. Pure: no clock, no IO; the connection feeds it, the view reads it.

use std::collections::{HashMap, HashSet, VecDeque};

use volley_protocol::{Direction as Wire, ExecutionFailed, ExecutionFinished, ObserverEvent, PayloadType};

pub use crate::envelope::Envelope;
pub use crate::records::{Checks, Direction, Execution, Flow, MAX_MESSAGES, Message, Outcome, WsSession};

/// Executions kept; older ones are dropped (and counted in [`State::dropped`]).
pub const MAX_EXECUTIONS: usize = 20_000;
/// Sequence numbers remembered per stream (a flow, or a run outside flows) to drop repeats.
const SEEN_PER_STREAM: usize = 4_096;
/// Streams whose sequence numbers are remembered; the oldest are forgotten first.
const MAX_STREAMS: usize = 4_096;

/// Sequence numbers seen on one stream, bounded.
#[derive(Debug, Default)]
struct Seen {
    set: HashSet<u64>,
    order: VecDeque<u64>,
}

/// Everything the observer shows.
#[derive(Debug, Default)]
pub struct State {
    flows: Vec<Flow>,
    flow_index: HashMap<String, usize>,
    executions: HashMap<String, Execution>,
    /// Execution keys, oldest first.
    order: VecDeque<String>,
    /// Executions dropped to keep [`MAX_EXECUTIONS`].
    pub dropped: u64,
    sessions: Vec<WsSession>,
    session_index: HashMap<String, usize>,
    seen: HashMap<String, Seen>,
    seen_order: VecDeque<String>,
    /// Events applied (repeats and unknown kinds excluded).
    pub applied: u64,
}

impl State {
    /// Takes an event in; false when it was a repeat or of a kind the view ignores.
    pub fn apply(&mut self, event: &Envelope) -> bool {
        if !self.first_sight(event) {
            return false;
        }
        // A type this observer does not know, or a payload of another shape: ignored.
        let Some(typed) = event.event.clone() else { return false };
        let applied = match typed {
            ObserverEvent::FlowStarted(started) => event.flow_id.as_deref().is_some_and(|id| {
                self.flow(id).label = started.label.unwrap_or_default();
                true
            }),
            ObserverEvent::FlowFinished(summary) => event.flow_id.as_deref().is_some_and(|id| {
                let flow = self.flow(id);
                flow.finished = true;
                #[allow(clippy::cast_precision_loss)] // Milliseconds of a flow fit an f64 exactly.
                let duration = summary.duration_ms as f64;
                flow.duration_ms = Some(duration);
                flow.total = summary.total;
                flow.succeeded = summary.succeeded;
                flow.failed = summary.failed;
                true
            }),
            ObserverEvent::RequestQueued(queued) => self.execution(event).is_some_and(|execution| {
                execution.label = queued.req_label.unwrap_or_default();
                true
            }),
            ObserverEvent::ParseFinished(parsed) => self.execution(event).is_some_and(|execution| {
                execution.description = parsed.description.unwrap_or_default();
                !execution.description.is_empty()
            }),
            ObserverEvent::CompileFinished(line) | ObserverEvent::FetchStarted(line) => {
                self.execution(event).is_some_and(|execution| {
                    if !line.method.is_empty() {
                        execution.method = line.method;
                    }
                    if !line.url.is_empty() {
                        execution.url = line.url;
                    }
                    if execution.outcome == Outcome::Pending {
                        execution.outcome = Outcome::Running;
                    }
                    true
                })
            }
            ObserverEvent::AuthDeviceCode(code) => self.execution(event).is_some_and(|execution| {
                let page = code.verification_uri_complete.unwrap_or(code.verification_uri);
                execution.sign_in = Some(format!("to sign in, open {page} and enter the code {}", code.user_code));
                true
            }),
            ObserverEvent::GrpcMessage(message) => self.execution(event).is_some_and(|execution| {
                execution.grpc_messages = Some((message.number, message.preview));
                true
            }),
            ObserverEvent::FetchFinished(fetched) => self.execution(event).is_some_and(|execution| {
                execution.sign_in = None;
                execution.status = status(fetched.status).or(execution.status);
                true
            }),
            ObserverEvent::ExecutionFinished(finished) => self.finish(event, &finished),
            ObserverEvent::ExecutionFailed(failed) => self.fail(event, failed),
            ObserverEvent::WsSessionOpened(opened) => {
                self.session(event, &opened.ws_session_id).is_some_and(|session| {
                    session.upstream_url = opened.upstream_url;
                    true
                })
            }
            ObserverEvent::WsSessionMessage(message) => {
                self.session(event, &message.ws_session_id).is_some_and(|session| {
                    session.messages.push_back(Message {
                        direction: match message.direction {
                            Wire::Inbound => Direction::Inbound,
                            Wire::Outbound => Direction::Outbound,
                        },
                        ts: event.ts,
                        json: message.payload_type == PayloadType::Json,
                        byte_length: message.byte_length as u64,
                        preview: message.preview,
                        truncated: message.truncated,
                    });
                    if session.messages.len() > MAX_MESSAGES {
                        session.messages.pop_front();
                        session.dropped += 1;
                    }
                    true
                })
            }
            ObserverEvent::WsSessionClosed(closed) => {
                self.session(event, &closed.ws_session_id).is_some_and(|session| {
                    session.closed = Some((u64::from(closed.code), closed.reason));
                    true
                })
            }
            // Stages the view does not show, and what it reads elsewhere (the execution store).
            ObserverEvent::ParseStarted(_)
            | ObserverEvent::InterpolateStarted(_)
            | ObserverEvent::InterpolateFinished(_)
            | ObserverEvent::CompileStarted(_)
            | ObserverEvent::AssertionReport(_)
            | ObserverEvent::SessionUpdated(_)
            | ObserverEvent::WorkspaceFileChanged(_) => false,
        };
        self.applied += u64::from(applied);
        applied
    }

    /// Marks a WebSocket session the server no longer has; closed and unknown ones stay as they are.
    pub fn session_gone(&mut self, id: &str) {
        if let Some(&index) = self.session_index.get(id)
            && self.sessions[index].closed.is_none()
        {
            self.sessions[index].gone = true;
        }
    }

    /// Marks a flow the server no longer knows (after a reconnection); unknown ids are ignored.
    pub fn flow_gone(&mut self, id: &str) {
        if let Some(&index) = self.flow_index.get(id) {
            self.flows[index].gone = true;
        }
    }

    /// The flows, in the order they were first seen.
    #[must_use]
    pub fn flows(&self) -> &[Flow] {
        &self.flows
    }

    /// The WebSocket sessions, in the order they were first seen.
    #[must_use]
    pub fn sessions(&self) -> &[WsSession] {
        &self.sessions
    }

    /// An execution by key.
    #[must_use]
    pub fn execution_by_key(&self, key: &str) -> Option<&Execution> {
        self.executions.get(key)
    }

    /// How many executions are kept.
    #[must_use]
    pub fn execution_count(&self) -> usize {
        self.order.len()
    }

    /// The keys of the executions that match `filter` (whitespace-separated words, all
    /// required, case-insensitive) and `flow` (when given), oldest first.
    #[must_use]
    pub fn visible(&self, filter: &str, flow: Option<&str>) -> Vec<&str> {
        let words: Vec<String> = filter.split_whitespace().map(str::to_lowercase).collect();
        self.order
            .iter()
            .filter(|key| {
                let Some(execution) = self.executions.get(key.as_str()) else { return false };
                if flow.is_some_and(|flow| execution.flow_id.as_deref() != Some(flow)) {
                    return false;
                }
                if words.is_empty() {
                    return true;
                }
                let haystack = execution.haystack();
                words.iter().all(|word| haystack.contains(word.as_str()))
            })
            .map(String::as_str)
            .collect()
    }

    /// The highest `seq` applied for `flow` (among the last ones remembered to drop
    /// repeats); 0 for a flow not seen.
    #[must_use]
    pub fn last_seq(&self, flow: &str) -> u64 {
        self.seen.get(flow).and_then(|seen| seen.order.iter().max().copied()).unwrap_or_default()
    }

    fn first_sight(&mut self, event: &Envelope) -> bool {
        let (Some(stream), Some(seq)) = (event.stream(), event.seq) else { return true };
        if !self.seen.contains_key(stream) {
            self.seen_order.push_back(stream.to_owned());
            if self.seen_order.len() > MAX_STREAMS
                && let Some(oldest) = self.seen_order.pop_front()
            {
                self.seen.remove(&oldest);
            }
        }
        let seen = self.seen.entry(stream.to_owned()).or_default();
        if !seen.set.insert(seq) {
            return false;
        }
        seen.order.push_back(seq);
        if seen.order.len() > SEEN_PER_STREAM
            && let Some(oldest) = seen.order.pop_front()
        {
            seen.set.remove(&oldest);
        }
        true
    }

    fn flow(&mut self, id: &str) -> &mut Flow {
        let index = if let Some(&index) = self.flow_index.get(id) {
            index
        } else {
            self.flows.push(Flow { id: id.to_owned(), ..Flow::default() });
            self.flow_index.insert(id.to_owned(), self.flows.len() - 1);
            self.flows.len() - 1
        };
        &mut self.flows[index]
    }

    fn execution(&mut self, event: &Envelope) -> Option<&mut Execution> {
        let key = event.req_exec_id.as_deref().or(event.run_id.as_deref())?.to_owned();
        if !self.executions.contains_key(&key) {
            if let Some(flow) = &event.flow_id {
                self.flow(flow).total += 1;
            }
            self.order.push_back(key.clone());
            if self.order.len() > MAX_EXECUTIONS
                && let Some(oldest) = self.order.pop_front()
            {
                self.executions.remove(&oldest);
                self.dropped += 1;
            }
            self.executions.insert(
                key.clone(),
                Execution {
                    key: key.clone(),
                    flow_id: event.flow_id.clone(),
                    req_exec_id: event.req_exec_id.clone(),
                    label: String::new(),
                    description: String::new(),
                    sign_in: None,
                    grpc_messages: None,
                    method: String::new(),
                    url: String::new(),
                    status: None,
                    duration_ms: None,
                    checks: None,
                    error: None,
                    outcome: Outcome::Pending,
                    ts: event.ts,
                },
            );
        }
        self.executions.get_mut(&key)
    }

    fn finish(&mut self, event: &Envelope, finished: &ExecutionFinished) -> bool {
        let Some(execution) = self.execution(event) else { return false };
        execution.status = status(finished.status).or(execution.status);
        execution.duration_ms = Some(finished.duration_ms);
        execution.checks = finished.assertions.map(|report| {
            let (total, failed) = (report.total as u64, report.failed as u64);
            Checks { passed: total.saturating_sub(failed), total }
        });
        let failed = execution.checks.is_some_and(|checks| checks.passed < checks.total)
            || execution.status.is_some_and(|status| status >= 400);
        execution.outcome = if failed { Outcome::Failed } else { Outcome::Succeeded };
        if let Some(flow) = execution.flow_id.clone() {
            let flow = self.flow(&flow);
            if failed {
                flow.failed += 1;
            } else {
                flow.succeeded += 1;
            }
        }
        true
    }

    fn fail(&mut self, event: &Envelope, failed: ExecutionFailed) -> bool {
        let Some(execution) = self.execution(event) else { return false };
        // What ended it, in a word (`connection_refused` → `refused`), else the stage.
        let what = match failed.kind.as_deref() {
            Some("connection_refused") => "refused".to_owned(),
            Some(kind) if kind != "other" => kind.replace('_', "-"),
            _ => failed.stage.as_str().to_owned(),
        };
        execution.error = Some((what, failed.message));
        execution.outcome = Outcome::Failed;
        if let Some(flow) = execution.flow_id.clone() {
            self.flow(&flow).failed += 1;
        }
        true
    }

    fn session(&mut self, event: &Envelope, id: &str) -> Option<&mut WsSession> {
        if id.is_empty() {
            return None;
        }
        let index = if let Some(&index) = self.session_index.get(id) {
            index
        } else {
            self.sessions.push(WsSession {
                id: id.to_owned(),
                flow_id: event.flow_id.clone(),
                upstream_url: String::new(),
                closed: None,
                gone: false,
                messages: VecDeque::new(),
                dropped: 0,
            });
            self.session_index.insert(id.to_owned(), self.sessions.len() - 1);
            self.sessions.len() - 1
        };
        self.sessions.get_mut(index)
    }
}

/// A status an event carries (0: none).
fn status(status: u16) -> Option<u16> {
    (status != 0).then_some(status)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn event(kind: &str, flow: Option<&str>, exec: &str, seq: u64, payload: Value) -> Envelope {
        Envelope {
            kind: kind.to_owned(),
            ts: 1_700_000_000_000 + seq,
            run_id: Some(format!("run_{exec}")),
            session_id: None,
            flow_id: flow.map(str::to_owned),
            req_exec_id: Some(exec.to_owned()),
            seq: Some(seq),
            event: ObserverEvent::from_owned_parts(kind, payload).ok(),
        }
    }

    /// The events of one execution, from `seq` on.
    fn run(flow: Option<&str>, exec: &str, seq: u64, status: u16, assertions: Option<(u64, u64)>) -> Vec<Envelope> {
        let checks = assertions.map(|(total, failed)| json!({"passed": failed == 0, "total": total, "failed": failed}));
        vec![
            event("requestQueued", flow, exec, seq, json!({"reqLabel": "login"})),
            event("fetchStarted", flow, exec, seq + 1, json!({"method": "POST", "url": "http://api/login"})),
            event("fetchFinished", flow, exec, seq + 2, json!({"status": status, "ttfb": 3.0})),
            event(
                "executionFinished",
                flow,
                exec,
                seq + 3,
                json!({"status": status, "durationMs": 12.5, "assertions": checks}),
            ),
        ]
    }

    fn apply_all(state: &mut State, events: &[Envelope]) {
        for event in events {
            state.apply(event);
        }
    }

    #[test]
    fn an_execution_keeps_the_description_of_its_request() {
        let mut state = State::default();
        let parsed = json!({"requestCount": 1, "index": 0, "name": "login", "description": "Logs in as Ada"});
        apply_all(&mut state, &[event("parseFinished", Some("f1"), "e1", 2, parsed)]);
        let execution = state.execution_by_key("e1").expect("e1");
        assert_eq!(execution.description, "Logs in as Ada");
        assert_eq!(state.visible("logs ADA", None), ["e1"]);
    }

    #[test]
    fn a_device_code_is_shown_until_the_request_is_answered() {
        let mut state = State::default();
        let code = json!({"userCode": "WDJB-MJHT", "verificationUri": "https://id.example/device", "expiresIn": 600});
        apply_all(&mut state, &[event("authDeviceCode", Some("f1"), "e1", 2, code)]);
        let execution = state.execution_by_key("e1").expect("e1");
        assert_eq!(
            execution.sign_in.as_deref(),
            Some("to sign in, open https://id.example/device and enter the code WDJB-MJHT")
        );
        apply_all(&mut state, &[event("fetchFinished", Some("f1"), "e1", 3, json!({"status": 200}))]);
        assert_eq!(state.execution_by_key("e1").expect("e1").sign_in, None);
    }

    #[test]
    fn an_execution_is_built_from_its_events() {
        let mut state = State::default();
        apply_all(&mut state, &[event("flowStarted", Some("f1"), "", 1, json!({"label": "checkout"}))]);
        apply_all(&mut state, &run(Some("f1"), "e1", 2, 200, Some((2, 0))));
        let execution = state.execution_by_key("e1").expect("e1");
        assert_eq!((execution.method.as_str(), execution.url.as_str()), ("POST", "http://api/login"));
        assert_eq!(execution.status, Some(200));
        assert_eq!(execution.duration_ms, Some(12.5));
        assert_eq!(execution.checks, Some(Checks { passed: 2, total: 2 }));
        assert_eq!(execution.outcome, Outcome::Succeeded);
        assert_eq!(execution.label, "login");
        let flow = &state.flows()[0];
        assert_eq!((flow.label.as_str(), flow.total, flow.succeeded, flow.failed), ("checkout", 1, 1, 0));
        assert_eq!(state.last_seq("f1"), 5);
    }

    #[test]
    fn failures_are_errors_bad_statuses_and_failed_checks() {
        let mut state = State::default();
        apply_all(&mut state, &run(Some("f"), "status", 1, 404, None));
        apply_all(&mut state, &run(Some("f"), "check", 10, 200, Some((2, 1))));
        state.apply(&event("executionFailed", Some("f"), "error", 20, json!({"stage": "fetch", "message": "refused"})));
        for key in ["status", "check", "error"] {
            assert!(state.execution_by_key(key).expect(key).failed(), "{key}");
        }
        let error = state.execution_by_key("error").expect("error");
        assert_eq!(error.error, Some(("fetch".to_owned(), "refused".to_owned())));
        assert_eq!(state.flows()[0].failed, 3);
    }

    #[test]
    fn repeats_from_a_replay_are_dropped() {
        let mut state = State::default();
        let events = run(Some("f"), "e", 1, 200, None);
        apply_all(&mut state, &events);
        let applied = state.applied;
        // A reconnection replays from an older afterSeq: nothing counts twice.
        for event in &events {
            assert!(!state.apply(event));
        }
        assert_eq!(state.applied, applied);
        assert_eq!(state.flows()[0].succeeded, 1);
        assert_eq!(state.execution_count(), 1);
        // Runs outside flows are numbered per run: the same seq elsewhere is new.
        apply_all(&mut state, &run(None, "outside", 1, 200, None));
        assert_eq!(state.execution_count(), 2);
    }

    #[test]
    fn after_a_server_restart_new_ids_start_over_at_seq_one() {
        let mut state = State::default();
        apply_all(&mut state, &run(Some("old"), "e1", 1, 200, None));
        apply_all(&mut state, &run(Some("new"), "e2", 1, 201, None));
        assert_eq!(state.execution_count(), 2);
        assert_eq!(state.execution_by_key("e2").expect("e2").status, Some(201));
    }

    #[test]
    fn a_flow_the_server_forgot_is_marked_gone() {
        let mut state = State::default();
        apply_all(&mut state, &run(Some("old"), "e1", 1, 200, None));
        state.flow_gone("old");
        state.flow_gone("never seen");
        assert!(state.flows()[0].gone);
        assert_eq!(state.flows().len(), 1, "an unknown id adds no flow");
        assert_eq!(state.execution_count(), 1, "what was seen stays shown");
    }

    #[test]
    fn events_out_of_order_still_land() {
        let mut state = State::default();
        let mut events = run(Some("f"), "e", 1, 500, None);
        events.reverse();
        apply_all(&mut state, &events);
        let execution = state.execution_by_key("e").expect("e");
        assert_eq!(execution.status, Some(500));
        assert_eq!(execution.method, "POST");
        assert!(execution.failed());
    }

    #[test]
    fn unknown_kinds_and_events_without_ids_are_ignored() {
        let mut state = State::default();
        assert!(!state.apply(&event("somethingNew", Some("f"), "e", 1, json!({}))));
        let mut orphan = event("fetchStarted", None, "e", 2, json!({}));
        orphan.req_exec_id = None;
        orphan.run_id = None;
        assert!(!state.apply(&orphan));
        assert_eq!(state.execution_count(), 0);
    }

    #[test]
    fn executions_are_capped_oldest_first() {
        let mut state = State::default();
        for n in 0..(MAX_EXECUTIONS as u64 + 3) {
            state.apply(&event("fetchStarted", None, &format!("e{n}"), 1, json!({"method": "GET", "url": "/"})));
        }
        assert_eq!(state.execution_count(), MAX_EXECUTIONS);
        assert_eq!(state.dropped, 3);
        assert!(state.execution_by_key("e0").is_none());
        assert!(state.execution_by_key("e3").is_some());
    }

    #[test]
    fn websocket_sessions_keep_their_last_messages() {
        let mut state = State::default();
        state.apply(&event(
            "wsSessionOpened",
            Some("f"),
            "e",
            1,
            json!({"wsSessionId": "ws_1", "upstreamUrl": "ws://up/chat"}),
        ));
        for n in 0..(MAX_MESSAGES as u64 + 2) {
            let direction = if n % 2 == 0 { "outbound" } else { "inbound" };
            state.apply(&event(
                "wsSessionMessage",
                Some("f"),
                "e",
                n + 2,
                json!({"wsSessionId": "ws_1", "direction": direction, "wsSeq": n + 2, "payloadType": "text",
                       "byteLength": 5, "preview": format!("m{n}"), "truncated": false}),
            ));
        }
        state.apply(&event(
            "wsSessionClosed",
            Some("f"),
            "e",
            5000,
            json!({"wsSessionId": "ws_1", "code": 1000, "reason": "bye"}),
        ));
        let session = &state.sessions()[0];
        assert_eq!(session.upstream_url, "ws://up/chat");
        assert_eq!(session.messages.len(), MAX_MESSAGES);
        assert_eq!(session.dropped, 2);
        assert_eq!(session.messages[0].preview, "m2");
        assert_eq!(session.messages[0].direction, Direction::Outbound);
        assert_eq!(session.closed, Some((1000, "bye".to_owned())));
    }

    #[test]
    fn only_open_sessions_can_be_gone() {
        let mut state = State::default();
        for (seq, id) in [(1, "ws_open"), (2, "ws_closed")] {
            state.apply(&event("wsSessionOpened", Some("f"), "e", seq, json!({"wsSessionId": id})));
        }
        state.apply(&event("wsSessionClosed", Some("f"), "e", 3, json!({"wsSessionId": "ws_closed", "code": 1000})));
        state.session_gone("ws_open");
        state.session_gone("ws_closed");
        state.session_gone("ws_never_seen");
        let gone: Vec<bool> = state.sessions().iter().map(|session| session.gone).collect();
        assert_eq!(gone, [true, false]);
        assert_eq!(state.sessions().len(), 2);
    }

    #[test]
    fn the_filter_matches_every_word_and_the_flow() {
        let mut state = State::default();
        apply_all(&mut state, &run(Some("a"), "e1", 1, 200, None));
        apply_all(&mut state, &run(Some("b"), "e2", 1, 404, None));
        assert_eq!(state.visible("", None), ["e1", "e2"]);
        assert_eq!(state.visible("404", None), ["e2"]);
        assert_eq!(state.visible("post LOGIN 200", None), ["e1"]);
        assert_eq!(state.visible("", Some("b")), ["e2"]);
        assert!(state.visible("nothing", None).is_empty());
    }
}
