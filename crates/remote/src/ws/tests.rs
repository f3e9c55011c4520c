//! The session types against the JSON the server sends.

use std::time::Duration;

use serde_json::json;

use super::super::request::{Defaults, ExecuteBody};
use super::*;
use crate::websocket::WsClose;
use volley_model::RunOptions;

#[test]
fn envelopes_of_every_type() {
    let opened = WsEnvelope::parse(
        r#"{"type":"session.opened","ts":1700000000000,"seq":1,"wsSessionId":"ws_1","flowId":"f_1",
            "reqExecId":"x_1","payload":{"upstreamUrl":"ws://up/echo","subprotocol":"json"}}"#,
    )
    .expect("an envelope");
    assert_eq!(opened.kind, WsEnvelopeKind::Opened);
    assert_eq!((opened.ts, opened.seq), (1_700_000_000_000, 1));
    assert_eq!(opened.ws_session_id, "ws_1");
    assert_eq!((opened.flow_id.as_deref(), opened.req_exec_id.as_deref()), (Some("f_1"), Some("x_1")));
    assert_eq!(opened.payload.as_ref().expect("a payload")["subprotocol"], "json");
    assert_eq!(opened.closed(), None);

    let text = WsEnvelope::parse(
        r#"{"type":"session.inbound","ts":1,"seq":2,"wsSessionId":"ws_1","payloadType":"text",
            "encoding":"utf-8","byteLength":5,"payload":"hello"}"#,
    )
    .expect("an envelope");
    assert_eq!(text.kind, WsEnvelopeKind::Inbound);
    assert_eq!((text.payload_type.as_deref(), text.encoding.as_deref()), (Some("text"), Some("utf-8")));
    assert_eq!(text.byte_length, Some(5));
    assert_eq!(text.text().as_deref(), Some("hello"));

    let json = WsEnvelope::parse(
        r#"{"type":"session.outbound","ts":1,"seq":3,"wsSessionId":"ws_1","payloadType":"json",
            "encoding":"utf-8","byteLength":23,"payload":{"b":"x", "a":[1.50,2]}}"#,
    )
    .expect("an envelope");
    assert_eq!(json.kind, WsEnvelopeKind::Outbound);
    // The message's own text: keys in their order, numbers and spaces as written.
    assert_eq!(json.text().as_deref(), Some(r#"{"b":"x", "a":[1.50,2]}"#));
    assert_eq!(json.payload, Some(json!({"a": [1.5, 2], "b": "x"})));

    let closed = WsEnvelope::parse(
        r#"{"type":"session.closed","ts":1,"seq":4,"wsSessionId":"ws_1",
            "payload":{"code":4000,"reason":"asked to","wasClean":true}}"#,
    )
    .expect("an envelope");
    assert_eq!(closed.closed(), Some(WsClose { code: 4000, reason: "asked to".to_owned() }));
    let bare = WsEnvelope::parse(r#"{"type":"session.closed","seq":4}"#).expect("an envelope");
    assert_eq!(bare.closed(), Some(WsClose { code: 1005, reason: String::new() }));

    let error = WsEnvelope::parse(
        r#"{"type":"session.error","ts":1,"seq":4,"wsSessionId":"ws_1",
            "error":{"code":"WS_REPLAY_GAP","message":"gone"},"payload":{"afterSeq":0,"oldestAvailableSeq":9}}"#,
    )
    .expect("an envelope");
    assert_eq!(error.kind, WsEnvelopeKind::Error);
    assert_eq!(error.error, Some(WsEnvelopeError { code: "WS_REPLAY_GAP".to_owned(), message: "gone".to_owned() }));

    let end = WsEnvelope::parse(
        r#"{"type":"session.replay.end","ts":1,"seq":4,"wsSessionId":"ws_1",
            "payload":{"afterSeq":2,"replayed":2,"gap":false}}"#,
    )
    .expect("an envelope");
    assert_eq!(end.kind, WsEnvelopeKind::ReplayEnd);
    assert_eq!(end.kind.to_string(), "session.replay.end");

    let unknown = WsEnvelope::parse(r#"{"type":"session.later","seq":9,"extra":true}"#).expect("additive");
    assert_eq!(unknown.kind, WsEnvelopeKind::Other("session.later".to_owned()));
    assert_eq!(unknown.kind.as_str(), "session.later");
    assert_eq!(unknown.text(), None);
}

#[test]
fn envelopes_without_the_shape_are_errors() {
    for bad in ["", "[]", r#"{"seq":1}"#, r#"{"type":"session.inbound"}"#, r#"{"type":1,"seq":1}"#] {
        assert!(WsEnvelope::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn only_retained_envelopes_count_for_replay() {
    use WsEnvelopeKind as Kind;
    for kind in [Kind::Opened, Kind::Inbound, Kind::Outbound, Kind::Closed] {
        assert!(kind.is_retained(), "{kind}");
    }
    for kind in [Kind::Error, Kind::ReplayEnd, Kind::Other("x".to_owned())] {
        assert!(!kind.is_retained(), "{kind}");
    }
}

#[test]
fn answers() {
    let answer = json!({
        "runId": "run_1", "flowId": "flow_1", "reqExecId": "exec_1",
        "request": {"index": 0, "method": "GET", "url": "{{ws}}/echo", "urlResolved": "ws://up/echo"},
        "resolved": {"workspaceRoot": "/w", "basePath": "/w"},
        "ws": {"wsSessionId": "ws_1", "downstreamPath": "/ws/session/ws_1", "upstreamUrl": "ws://up/echo",
               "subprotocol": "json", "replayBufferSize": 500, "lastSeq": 1},
    });
    let (info, opening) = session_from_answer(answer.to_string().as_bytes(), None).expect("an answer");
    assert!(opening.assertions.is_empty() && opening.logs.is_empty());
    assert_eq!(info.run_id, "run_1");
    assert_eq!((info.flow_id.as_deref(), info.req_exec_id.as_deref()), (Some("flow_1"), Some("exec_1")));
    assert_eq!(info.request["urlResolved"], "ws://up/echo");
    assert_eq!(info.resolved["basePath"], "/w");
    assert_eq!(info.ws_session_id, "ws_1");
    assert_eq!(info.downstream_path, "/ws/session/ws_1");
    assert_eq!(info.upstream_url, "ws://up/echo");
    assert_eq!(info.subprotocol.as_deref(), Some("json"));
    assert_eq!((info.replay_buffer_size, info.last_seq), (500, 1));

    // The least an answer can be; assertions when the server reports them.
    let content = "# @assert status == 101\nGET ws://up/echo\n";
    let answer = json!({
        "runId": "run_2", "ws": {"wsSessionId": "ws_2"},
        "assertions": {"passed": true, "total": 1, "failed": 0, "checks": [
            {"expression": "status == 101", "outcome": "passed", "span": {"start": 10, "end": 23, "line": 1, "column": 11}}]},
        "logs": ["connecting to chat"],
    });
    let (info, opening) = session_from_answer(answer.to_string().as_bytes(), Some(content)).expect("an answer");
    assert_eq!(info.downstream_path, "/ws/session/ws_2");
    assert_eq!(info.subprotocol, None);
    assert_eq!(opening.assertions.len(), 1);
    assert_eq!(opening.assertions[0].span.text(content), "status == 101");
    assert_eq!(opening.logs, ["connecting to chat"]);

    assert!(session_from_answer(b"{}", None).is_err());
    assert!(session_from_answer(br#"{"runId": "r", "ws": {"wsSessionId": ""}}"#, None).is_err());
}

#[test]
fn control_urls() {
    let base = url::Url::parse("http://127.0.0.1:4097").expect("a URL");
    assert_eq!(
        control_url(&base, "/ws/session/ws_1", None).expect("a URL").as_str(),
        "ws://127.0.0.1:4097/ws/session/ws_1"
    );
    assert_eq!(
        control_url(&base, "/ws/session/ws_1", Some(7)).expect("a URL").as_str(),
        "ws://127.0.0.1:4097/ws/session/ws_1?afterSeq=7"
    );
    let prefixed = url::Url::parse("https://host/volley/").expect("a URL");
    assert_eq!(
        control_url(&prefixed, "/ws/session/ws_1", Some(0)).expect("a URL").as_str(),
        "wss://host/volley/ws/session/ws_1?afterSeq=0"
    );
}

#[test]
fn session_options_in_the_body() {
    let options = RunOptions::default();
    let defaults = Defaults { profile: None, timeout: None };
    let mut body = ExecuteBody::new("GET ws://up/\n", None, &options, defaults, ("s", "f"));
    WsSessionOptions::default()
        .connect_timeout(Duration::from_secs(2))
        .idle_timeout(Duration::from_secs(60))
        .replay_buffer_size(50)
        .apply(&mut body);
    assert_eq!(
        serde_json::to_value(&body).expect("serializes"),
        json!({"content": "GET ws://up/\n", "sessionId": "s", "flowId": "f",
               "connectTimeoutMs": 2000, "idleTimeoutMs": 60000, "replayBufferSize": 50})
    );
}
