//! Each type round-trips the JSON of docs/protocol.md, byte for byte: a typed value writes
//! its fields in the order of its declaration (the server sorts them, see `hub.rs`).

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::*;

/// `text` reads as a value that writes `text` again.
fn round_trip<T: Serialize + DeserializeOwned + std::fmt::Debug + PartialEq>(text: &str) -> T {
    let value: T = serde_json::from_str(text).expect("reads");
    assert_eq!(serde_json::to_string(&value).expect("writes"), text);
    value
}

#[test]
fn envelopes_of_an_execution() {
    let queued: ObserverEnvelope = round_trip(
        r#"{"type":"requestQueued","ts":1700000000000,"seq":2,"payload":{"reqLabel":"login"},"runId":"run_1","sessionId":"ses_1","flowId":"flow_1","reqExecId":"exec_1"}"#,
    );
    assert_eq!(queued.event, ObserverEvent::RequestQueued(RequestQueued { req_label: Some("login".to_owned()) }));
    assert_eq!(queued.stream(), Some("flow_1"));
    let started: ObserverEnvelope =
        round_trip(r#"{"type":"parseStarted","ts":1,"seq":3,"payload":{"source":"path"},"runId":"run_1"}"#);
    assert_eq!(started.event, ObserverEvent::ParseStarted(ParseStarted { source: ParseSource::Path }));
    assert_eq!(started.stream(), Some("run_1"));
    let parsed: ObserverEnvelope = round_trip(
        r#"{"type":"parseFinished","ts":1,"seq":4,"payload":{"requestCount":2,"index":1,"name":"login","description":null},"runId":"run_1"}"#,
    );
    assert!(matches!(parsed.event, ObserverEvent::ParseFinished(ParseFinished { index: 1, description: None, .. })));
    let _: ObserverEnvelope =
        round_trip(r#"{"type":"interpolateStarted","ts":1,"seq":5,"payload":{},"runId":"run_1"}"#);
    let fetched: ObserverEnvelope = round_trip(
        r#"{"type":"fetchFinished","ts":1,"seq":9,"payload":{"method":"GET","url":"http://api/items","status":404,"ttfb":2.5},"runId":"run_1"}"#,
    );
    assert!(matches!(fetched.event, ObserverEvent::FetchFinished(FetchFinished { status: 404, .. })));
    let finished: ObserverEnvelope = round_trip(
        r#"{"type":"executionFinished","ts":1,"seq":11,"payload":{"status":200,"durationMs":12.345,"assertions":{"passed":false,"total":2,"failed":1}},"runId":"run_1"}"#,
    );
    let ObserverEvent::ExecutionFinished(finished) = finished.event else { panic!("executionFinished") };
    assert_eq!(finished.assertions, Some(AssertionSummary { passed: false, total: 2, failed: 1 }));
    let _: ObserverEnvelope = round_trip(
        r#"{"type":"executionFinished","ts":1,"seq":11,"payload":{"status":200,"durationMs":3.0,"assertions":null,"events":4},"runId":"run_1"}"#,
    );
    // The scripts' log lines as a count only: events stay small.
    let logged: ObserverEnvelope = round_trip(
        r#"{"type":"executionFinished","ts":1,"seq":11,"payload":{"status":200,"durationMs":3.0,"assertions":{"passed":true,"total":1,"failed":0},"logs":2},"runId":"run_1"}"#,
    );
    let ObserverEvent::ExecutionFinished(logged) = logged.event else { panic!("executionFinished") };
    assert_eq!(logged.logs, Some(2));
    let failed: ObserverEnvelope = round_trip(
        r#"{"type":"executionFailed","ts":1,"seq":5,"payload":{"stage":"interpolate","message":"undefined variable `host`","code":"VALIDATION_ERROR","kind":"undefined-variable"},"runId":"run_1"}"#,
    );
    assert_eq!(
        failed.event,
        ObserverEvent::ExecutionFailed(ExecutionFailed {
            stage: Stage::Interpolate,
            message: "undefined variable `host`".to_owned(),
            code: ErrorCode::ValidationError,
            kind: Some("undefined-variable".to_owned()),
        })
    );
}

#[test]
fn assertion_reports() {
    let report: ObserverEnvelope = round_trip(
        r#"{"type":"assertionReport","ts":1,"seq":10,"payload":{"passed":false,"total":2,"failed":1,"checks":[{"expression":"status == 200","outcome":"passed","span":{"start":20,"end":42,"line":2,"column":11}},{"expression":"body.id == 3","outcome":"failed","expected":"3","actual":"4","span":{"start":50,"end":70,"line":3,"column":11}}]},"runId":"run_1"}"#,
    );
    let ObserverEvent::AssertionReport(report) = report.event else { panic!("assertionReport") };
    assert_eq!(report.checks[1].outcome, CheckOutcome::Failed);
    assert_eq!(report.checks[0].span, SpanInfo { start: 20, end: 42, line: 2, column: 11 });
    let invalid: Check = round_trip(
        r#"{"expression":"nope(body)","outcome":"invalid","message":"unknown function","hint":"did you mean `not`?","span":{"start":0,"end":10,"line":1,"column":1}}"#,
    );
    assert_eq!(invalid.outcome, CheckOutcome::Invalid);
}

#[test]
fn envelopes_of_sessions_and_flows() {
    let _: ObserverEnvelope = round_trip(
        r#"{"type":"sessionUpdated","ts":1,"seq":12,"payload":{"variablesChanged":false,"cookiesChanged":true},"runId":"run_1","sessionId":"ses_1"}"#,
    );
    let update: ObserverEnvelope = round_trip(
        r#"{"type":"sessionUpdated","ts":1,"seq":1,"payload":{"variablesChanged":true,"cookiesChanged":false,"snapshotVersion":3},"sessionId":"ses_1"}"#,
    );
    assert_eq!(update.run_id, None);
    let started: ObserverEnvelope = round_trip(
        r#"{"type":"flowStarted","ts":1,"seq":1,"payload":{"label":"checkout","meta":{"build":42,"ci":"true"}},"flowId":"flow_1"}"#,
    );
    let ObserverEvent::FlowStarted(started) = started.event else { panic!("flowStarted") };
    assert_eq!(started.meta.expect("meta")["build"], 42);
    let _: ObserverEnvelope =
        round_trip(r#"{"type":"flowStarted","ts":1,"seq":1,"payload":{"label":null,"meta":null},"flowId":"flow_1"}"#);
    let _: ObserverEnvelope = round_trip(
        r#"{"type":"flowFinished","ts":1,"seq":40,"payload":{"total":3,"succeeded":2,"failed":1,"durationMs":812},"flowId":"flow_1"}"#,
    );
}

#[test]
fn envelopes_of_websocket_sessions() {
    let opened: ObserverEnvelope = round_trip(
        r#"{"type":"wsSessionOpened","ts":1,"seq":13,"payload":{"upstreamUrl":"ws://127.0.0.1:9000/chat","subprotocol":"chat.v1","wsSessionId":"ws_8f0c"},"runId":"run_1","flowId":"flow_1","reqExecId":"exec_1"}"#,
    );
    assert!(matches!(opened.event, ObserverEvent::WsSessionOpened(WsSessionOpened { subprotocol: Some(_), .. })));
    let _: ObserverEnvelope = round_trip(
        r#"{"type":"wsSessionOpened","ts":1,"seq":13,"payload":{"upstreamUrl":"ws://up/chat","wsSessionId":"ws_1"},"runId":"run_1"}"#,
    );
    let message: ObserverEnvelope = round_trip(
        r#"{"type":"wsSessionMessage","ts":1,"seq":14,"payload":{"wsSessionId":"ws_1","direction":"inbound","wsSeq":2,"payloadType":"json","byteLength":11,"preview":"{\"a\":1.50}","truncated":false},"runId":"run_1"}"#,
    );
    let ObserverEvent::WsSessionMessage(message) = message.event else { panic!("wsSessionMessage") };
    assert_eq!((message.direction, message.payload_type), (Direction::Inbound, PayloadType::Json));
    let _: ObserverEnvelope = round_trip(
        r#"{"type":"wsSessionClosed","ts":1,"seq":15,"payload":{"wsSessionId":"ws_1","code":1000,"reason":"bye","wasClean":true},"runId":"run_1"}"#,
    );
}

#[test]
fn every_event_name_is_read_and_unknown_ones_are_refused() {
    for name in ObserverEvent::NAMES {
        // Every payload but the assertion report's reads with nothing in it.
        let payload = if *name == "assertionReport" {
            serde_json::json!({"passed": true, "total": 0, "failed": 0, "checks": []})
        } else {
            serde_json::Value::Null
        };
        let event = ObserverEvent::from_parts(name, &payload).expect(name);
        assert_eq!(event.name(), *name);
    }
    assert!(ObserverEvent::from_parts("somethingNew", &serde_json::json!({})).is_err());
    assert!(serde_json::from_str::<ObserverEnvelope>(r#"{"type":"x","seq":1}"#).is_err());
    // A payload with less than this version sends reads with defaults.
    let event: ObserverEvent =
        serde_json::from_str(r#"{"type":"executionFailed","payload":{"stage":"fetch"}}"#).expect("reads");
    assert_eq!(
        event,
        ObserverEvent::ExecutionFailed(ExecutionFailed { stage: Stage::Fetch, ..ExecutionFailed::default() })
    );
    assert_eq!(
        serde_json::to_string(&event).expect("writes"),
        r#"{"type":"executionFailed","payload":{"stage":"fetch","message":"","code":"INTERNAL_ERROR"}}"#
    );
}

#[test]
fn execute_answers() {
    // The answer of docs/protocol.md, every field present.
    let answer: ExecuteResponse = round_trip(concat!(
        r#"{"runId":"run_1","reqExecId":"exec_1","flowId":"flow_1","session":{"sessionId":"ses_1","snapshotVersion":2},"#,
        r#""request":{"index":0,"name":"login","method":"POST","url":"{{base}}/login","urlResolved":"http://127.0.0.1:5555/login"},"#,
        r#""resolved":{"workspaceRoot":"/srv/api","basePath":"/srv/api/auth","httpFilePath":"/srv/api/auth/login.http","configPath":"/srv/api/volley.jsonc"},"#,
        r#""response":{"status":200,"statusText":"OK","headers":[{"name":"content-type","value":"application/json"}],"bodyMode":"buffered","body":"{\"ok\":true}","encoding":"utf-8","truncated":false,"bodyBytes":11,"url":"http://127.0.0.1:5555/login","redirected":false,"httpVersion":"HTTP/1.1"},"#,
        r#""limits":{"maxBodyBytes":10485760},"#,
        r#""timing":{"startTime":1795322237559,"endTime":1795322237570,"durationMs":11.084,"ttfb":8.913},"#,
        r#""assertions":{"passed":false,"total":2,"failed":1,"checks":[{"expression":"status == 200","outcome":"passed","span":{"start":10,"end":23,"line":1,"column":11}},{"expression":"header content-type contains xml","outcome":"failed","expected":"contains \"xml\"","actual":"application/json","span":{"start":30,"end":62,"line":2,"column":11}}]},"#,
        r#""logs":["logged in as ada","token [REDACTED]"]}"#,
    ));
    assert_eq!(answer.session, Some(SessionRef { session_id: "ses_1".to_owned(), snapshot_version: 2 }));
    assert_eq!(
        answer.response.headers,
        [Header { name: "content-type".to_owned(), value: "application/json".to_owned() }]
    );
    assert_eq!(answer.timing.ttfb, Some(8.913));
    assert_eq!(answer.assertions.expect("assertions").checks[1].outcome, CheckOutcome::Failed);
    assert_eq!(answer.logs, ["logged in as ada", "token [REDACTED]"]);

    // Without a flow, a session, a body or assertions: the optional fields are left out.
    let bare: ExecuteResponse = round_trip(concat!(
        r#"{"runId":"run_2","reqExecId":"exec_2","#,
        r#""request":{"index":1,"method":"GET","url":"http://x/","urlResolved":"http://x/"},"#,
        r#""resolved":{"workspaceRoot":"/w","basePath":"/w"},"#,
        r#""response":{"status":204,"statusText":"No Content","headers":[],"bodyMode":"none","encoding":"utf-8","truncated":false,"bodyBytes":0,"url":"http://x/","redirected":false,"httpVersion":"HTTP/2.0"},"#,
        r#""limits":{"maxBodyBytes":1024},"timing":{"startTime":1}}"#,
    ));
    assert_eq!((bare.flow_id, bare.response.body), (None, None));
    assert!(bare.logs.is_empty());
    let base64: ResponseInfo = round_trip(
        r#"{"status":200,"statusText":"OK","headers":[],"bodyMode":"buffered","body":"AP8=","encoding":"base64","truncated":true,"bodyBytes":2,"url":"http://x/","redirected":true,"httpVersion":"HTTP/1.1"}"#,
    );
    assert_eq!((base64.encoding, base64.truncated), ("base64", true));
}

#[test]
fn partial_answers_read_with_defaults() {
    let answer: ExecuteResponse =
        serde_json::from_str(r#"{"response":{"status":200,"body":"hi","encoding":"utf8"}}"#).expect("reads");
    assert_eq!((answer.response.body_mode, answer.response.encoding), ("buffered", "utf-8"));
    assert_eq!(answer.request, RequestInfo::default());
    assert_eq!(answer.timing, TimingInfo::default());
    assert!(answer.response.headers.is_empty() && answer.assertions.is_none());
    // The one part an answer needs, and words the protocol does not know, are refused.
    assert!(serde_json::from_str::<ExecuteResponse>(r#"{"runId":"run_1"}"#).is_err());
    let error = serde_json::from_str::<ResponseInfo>(r#"{"status":200,"encoding":"utf-16"}"#).expect_err("refused");
    assert!(error.to_string().contains("unknown body encoding `utf-16`"), "{error}");
    assert!(serde_json::from_str::<ResponseInfo>(r#"{"status":200,"bodyMode":"chunked"}"#).is_err());

    // A check with values that are not strings, an outcome of a later version, no span.
    let report: AssertionReport = serde_json::from_str(
        r#"{"checks":[{"expression":"status == 201","outcome":"failed","expected":201,"actual":null},{"expression":"x","outcome":"skipped"}]}"#,
    )
    .expect("reads");
    assert_eq!((report.passed, report.total, report.failed), (false, 0, 0));
    assert_eq!((report.checks[0].expected.as_deref(), report.checks[0].actual.as_deref()), (Some("201"), None));
    assert_eq!((report.checks[1].outcome, report.checks[1].span), (CheckOutcome::Invalid, SpanInfo::default()));
}

#[test]
fn execute_ws_answers() {
    // The answer of docs/protocol.md ("WebSocket sessions"), its `…` filled in.
    let answer: ExecuteWsResponse = round_trip(concat!(
        r#"{"runId":"run_1","flowId":"flow_1","reqExecId":"exec_1","#,
        r#""request":{"index":0,"name":"chat","method":"GET","url":"{{ws}}/chat","urlResolved":"ws://127.0.0.1:9000/chat"},"#,
        r#""resolved":{"workspaceRoot":"/srv/api","basePath":"/srv/api"},"#,
        r#""ws":{"wsSessionId":"ws_8f0c","downstreamPath":"/ws/session/ws_8f0c","upstreamUrl":"ws://127.0.0.1:9000/chat","subprotocol":"chat.v1","replayBufferSize":500,"lastSeq":1},"#,
        r#""assertions":{"passed":true,"total":1,"failed":0,"checks":[{"expression":"status == 101","outcome":"passed","span":{"start":10,"end":23,"line":1,"column":11}}]},"#,
        r#""logs":["connecting"]}"#,
    ));
    assert_eq!(answer.logs, ["connecting"]);
    assert_eq!(answer.ws.subprotocol.as_deref(), Some("chat.v1"));
    assert_eq!((answer.ws.replay_buffer_size, answer.ws.last_seq), (500, 1));
    assert_eq!(answer.request.url_resolved, "ws://127.0.0.1:9000/chat");

    // Without a flow, a subprotocol or assertions: left out.
    let bare: ExecuteWsResponse = round_trip(concat!(
        r#"{"runId":"run_2","reqExecId":"exec_2","#,
        r#""request":{"index":1,"method":"GET","url":"ws://up/","urlResolved":"ws://up/"},"#,
        r#""resolved":{"workspaceRoot":"/w","basePath":"/w"},"#,
        r#""ws":{"wsSessionId":"ws_2","downstreamPath":"/ws/session/ws_2","upstreamUrl":"ws://up/","replayBufferSize":1,"lastSeq":1}}"#,
    ));
    assert_eq!((bare.flow_id, bare.ws.subprotocol, bare.assertions), (None, None, None));

    // Read leniently: `runId` and the session's id are all an answer needs.
    let least: ExecuteWsResponse =
        serde_json::from_str(r#"{"runId":"run_3","ws":{"wsSessionId":"ws_3"}}"#).expect("reads");
    assert_eq!((least.req_exec_id.as_str(), least.ws.downstream_path.as_str()), ("", ""));
    assert_eq!(least.request, RequestInfo::default());
    assert!(serde_json::from_str::<ExecuteWsResponse>(r#"{"ws":{"wsSessionId":"ws_3"}}"#).is_err());
    assert!(serde_json::from_str::<ExecuteWsResponse>(r#"{"runId":"run_3"}"#).is_err());
}

#[test]
fn stored_executions() {
    // GET /flows/{flowId}/executions/{reqExecId} of docs/protocol.md, every field present.
    let stored: StoredExecution = round_trip(concat!(
        r#"{"reqExecId":"exec_1","flowId":"flow_1","sessionId":"ses_1","reqLabel":"login","#,
        r#""method":"POST","urlTemplate":"{{base}}/login","urlResolved":"http://127.0.0.1:5555/login","#,
        r#""headers":[{"name":"content-type","value":"application/json"},{"name":"authorization","value":"[REDACTED]"}],"#,
        r#""bodyPreview":"{\"user\":\"ada\"}","#,
        r#""timing":{"startTime":1795322237559,"endTime":1795322237570,"durationMs":11.084,"ttfb":8.913},"#,
        r#""response":{"status":401,"statusText":"Unauthorized","headers":[],"body":"{\"error\":\"no\"}","encoding":"utf-8","truncated":false,"bodyBytes":14},"#,
        r#""assertions":{"passed":false,"total":1,"failed":1,"checks":[{"expression":"status == 200","outcome":"failed","expected":"200","actual":"401","span":{"start":10,"end":23,"line":1,"column":11}}]},"#,
        r#""logs":["status 401"],"logsTruncated":true,"status":"failed"}"#,
    ));
    assert_eq!(stored.status, ExecutionStatus::Failed);
    assert_eq!((stored.logs.as_slice(), stored.logs_truncated), (["status 401".to_owned()].as_slice(), true));
    assert_eq!(stored.response.expect("a response").status, 401);

    // One that failed before an answer: no response, the stage and message instead.
    let failed: StoredExecution = round_trip(concat!(
        r#"{"reqExecId":"exec_2","flowId":"flow_1","method":"GET","urlTemplate":"{{host}}/","urlResolved":"","headers":[],"#,
        r#""timing":{"startTime":1},"status":"failed","error":{"stage":"interpolate","message":"undefined variable `host`"}}"#,
    ));
    assert_eq!(
        failed.error,
        Some(StageError { stage: Stage::Interpolate, message: "undefined variable `host`".to_owned(), kind: None })
    );
    let binary: StoredResponse = round_trip(
        r#"{"status":200,"statusText":"OK","headers":[],"body":"AP8=","encoding":"base64","truncated":true,"bodyBytes":9000}"#,
    );
    assert_eq!(binary.encoding, "base64");

    // Read leniently: a partial execution takes defaults; a response needs its status.
    let pending: StoredExecution = serde_json::from_str(r#"{"status":"pending"}"#).expect("reads");
    assert_eq!(pending, StoredExecution { status: ExecutionStatus::Pending, ..StoredExecution::default() });
    let response: StoredResponse = serde_json::from_str(r#"{"status":204}"#).expect("reads");
    assert_eq!((response.encoding, response.body_bytes), ("utf-8", 0));
    assert!(serde_json::from_str::<StoredResponse>(r#"{"statusText":"OK"}"#).is_err());
    assert!(serde_json::from_str::<StoredResponse>(r#"{"status":200,"encoding":"utf-16"}"#).is_err());
}

#[test]
fn an_owned_payload_reads_as_a_borrowed_one() {
    let payload = serde_json::json!({"wsSessionId": "ws_1", "direction": "inbound", "preview": "hi"});
    let owned = ObserverEvent::from_owned_parts("wsSessionMessage", payload.clone()).expect("reads");
    assert_eq!(owned, ObserverEvent::from_parts("wsSessionMessage", &payload).expect("reads"));
    let ObserverEvent::WsSessionMessage(message) = owned else { panic!("wsSessionMessage") };
    assert_eq!((message.direction, message.preview.as_str()), (Direction::Inbound, "hi"));
    assert_eq!(
        ObserverEvent::from_owned_parts("interpolateStarted", serde_json::Value::Null).expect("reads"),
        ObserverEvent::InterpolateStarted(Empty {})
    );
    assert!(ObserverEvent::from_owned_parts("somethingNew", serde_json::json!({})).is_err());
}
