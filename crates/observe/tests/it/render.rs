//! The main screens, drawn on ratatui's test backend and compared with snapshots.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use std::time::Duration;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use serde_json::{Value, json};
use volley_observe::App;
use volley_observe::connection::Update;
use volley_observe::state::Envelope;
use volley_protocol::ObserverEvent;

fn event(kind: &str, flow: Option<&str>, exec: &str, seq: u64, payload: Value) -> Update {
    Update::Event(Envelope {
        kind: kind.to_owned(),
        ts: 1_700_000_000_000 + seq * 1_000,
        run_id: Some(format!("run_{exec}")),
        session_id: None,
        flow_id: flow.map(str::to_owned),
        req_exec_id: Some(exec.to_owned()),
        seq: Some(seq),
        event: ObserverEvent::from_owned_parts(kind, payload).ok(),
    })
}

fn execution(app: &mut App, flow: &str, exec: &str, seq: u64, url: &str, status: u16, checks: (u64, u64)) {
    let (total, failed) = checks;
    let assertions = (total > 0).then(|| json!({"passed": failed == 0, "total": total, "failed": failed}));
    for update in [
        event("requestQueued", Some(flow), exec, seq, json!({"reqLabel": exec})),
        event("fetchStarted", Some(flow), exec, seq + 1, json!({"method": "GET", "url": url})),
        event(
            "executionFinished",
            Some(flow),
            exec,
            seq + 2,
            json!({"status": status, "durationMs": 12.5, "assertions": assertions}),
        ),
    ] {
        app.update(update, 0);
    }
}

/// An app with a flow of three executions (one failing), a failure outside any flow,
/// and a WebSocket session with two messages.
fn busy() -> App {
    let mut app = App::new("http://127.0.0.1:4097", "everything");
    app.update(Update::Connected, 0);
    app.update(event("flowStarted", Some("flow_1"), "", 1, json!({"label": "checkout"})), 0);
    execution(&mut app, "flow_1", "exec_login", 2, "http://api.test/login", 200, (1, 0));
    execution(&mut app, "flow_1", "exec_cart", 5, "http://api.test/cart?id=7", 404, (2, 1));
    execution(&mut app, "flow_1", "exec_pay", 8, "http://api.test/pay", 201, (0, 0));
    app.update(
        event(
            "executionFailed",
            None,
            "exec_down",
            1,
            json!({"stage": "fetch", "message": "connection refused by 127.0.0.1:9"}),
        ),
        0,
    );
    app.update(
        event(
            "wsSessionOpened",
            Some("flow_1"),
            "exec_ws",
            11,
            json!({"wsSessionId": "ws_1", "upstreamUrl": "ws://api.test/chat"}),
        ),
        0,
    );
    for (seq, direction, preview) in [(12, "outbound", r#"{"hi":"there"}"#), (13, "inbound", "welcome")] {
        let payload_type = if preview.starts_with('{') { "json" } else { "text" };
        app.update(
            event(
                "wsSessionMessage",
                Some("flow_1"),
                "exec_ws",
                seq,
                json!({"wsSessionId": "ws_1", "direction": direction, "wsSeq": seq, "payloadType": payload_type,
                       "byteLength": preview.len(), "preview": preview, "truncated": false}),
            ),
            0,
        );
    }
    app
}

fn draw(app: &mut App, now: u64) -> String {
    let mut terminal = Terminal::new(TestBackend::new(110, 24)).unwrap();
    terminal.draw(|frame| volley_observe::view::render(frame, app, now)).unwrap();
    terminal.backend().to_string()
}

fn key(app: &mut App, code: KeyCode) {
    app.on_key(KeyEvent::from(code));
}

#[test]
fn empty() {
    let mut app = App::new("http://127.0.0.1:4097", "flow flow_1");
    insta::assert_snapshot!(draw(&mut app, 0));
}

#[test]
fn executions_with_a_failure() {
    let mut app = busy();
    insta::assert_snapshot!(draw(&mut app, 0));
}

#[test]
fn execution_detail_from_the_store() {
    let mut app = busy();
    draw(&mut app, 0);
    key(&mut app, KeyCode::Up);
    key(&mut app, KeyCode::Up);
    let fetch = app.on_key(KeyEvent::from(KeyCode::Enter));
    assert_eq!(fetch, volley_observe::app::Action::Fetch("exec_cart".into(), "flow_1".into(), "exec_cart".into()));
    let stored = json!({
        "reqExecId": "exec_cart", "flowId": "flow_1", "method": "GET",
        "urlTemplate": "{{api}}/cart?id=7", "urlResolved": "http://api.test/cart?id=7",
        "headers": [{"name": "accept", "value": "application/json"}, {"name": "authorization", "value": "[REDACTED]"}],
        "timing": {"startTime": 1, "endTime": 13, "durationMs": 12.5, "ttfb": 9.0},
        "response": {"status": 404, "statusText": "Not Found", "headers": [{"name": "content-type", "value": "application/json"}],
                     "body": "{\"error\":\"no cart\",\"id\":7}", "encoding": "utf-8", "truncated": false, "bodyBytes": 25},
        "assertions": {"passed": false, "total": 2, "failed": 1, "checks": [
            {"expression": "status == 200", "outcome": "failed", "expected": "200", "actual": "404"},
            {"expression": "header content-type contains json", "outcome": "passed"}]},
        "status": "failed"
    });
    app.update(Update::Detail { key: "exec_cart".into(), result: Ok(stored) }, 0);
    insta::assert_snapshot!(draw(&mut app, 0));
}

/// A stored execution with script results: `client.test` passed and failed, a handler
/// that threw, and the scripts' log lines.
#[test]
fn execution_detail_with_script_results() {
    let mut app = busy();
    draw(&mut app, 0);
    key(&mut app, KeyCode::Up);
    key(&mut app, KeyCode::Up);
    app.on_key(KeyEvent::from(KeyCode::Enter));
    let stored = json!({
        "reqExecId": "exec_cart", "flowId": "flow_1", "method": "GET",
        "urlTemplate": "http://api.test/cart?id=7", "urlResolved": "http://api.test/cart?id=7",
        "headers": [],
        "timing": {"startTime": 1, "endTime": 13, "durationMs": 12.5, "ttfb": 9.0},
        "response": {"status": 200, "statusText": "OK", "headers": [], "encoding": "utf-8", "truncated": false, "bodyBytes": 0},
        "assertions": {"passed": false, "total": 3, "failed": 2, "checks": [
            {"expression": "cart found", "outcome": "passed"},
            {"expression": "seven items", "outcome": "failed", "message": "AssertionError: 3 items"},
            {"expression": "response handler", "outcome": "invalid", "message": "TypeError: cannot read property 'x' of undefined",
             "hint": "JavaScript stack:\n    at <eval> (volley-script:4)"}]},
        "logs": ["cart 7 has 3 items", "token [REDACTED]"],
        "logsTruncated": true,
        "status": "failed"
    });
    app.update(Update::Detail { key: "exec_cart".into(), result: Ok(stored) }, 0);
    insta::assert_snapshot!(draw(&mut app, 0));
}

#[test]
fn websocket_session() {
    let mut app = busy();
    key(&mut app, KeyCode::Tab);
    key(&mut app, KeyCode::Tab);
    key(&mut app, KeyCode::Enter);
    insta::assert_snapshot!(draw(&mut app, 0));
}

#[test]
fn disconnected() {
    let mut app = busy();
    app.update(Update::Disconnected { reason: "connection refused".into(), retry_in: Duration::from_secs(2) }, 500);
    app.update(
        Update::Notice(
            "reconnected: events of runs outside flows, and of flows that started while disconnected, may be missing"
                .into(),
        ),
        500,
    );
    insta::assert_snapshot!(draw(&mut app, 1_000));
}

#[test]
fn filter_active() {
    let mut app = busy();
    key(&mut app, KeyCode::Char('/'));
    for character in "cart".chars() {
        key(&mut app, KeyCode::Char(character));
    }
    insta::assert_snapshot!(draw(&mut app, 0));
}

#[test]
fn ten_thousand_executions_draw_only_what_fits() {
    let mut app = App::new("http://127.0.0.1:4097", "everything");
    for n in 0..10_000u64 {
        let url = format!("http://api.test/items/{n}");
        execution(
            &mut app,
            "flow_big",
            &format!("exec_{n:05}"),
            n * 3 + 1,
            &url,
            if n % 2 == 0 { 200 } else { 500 },
            (0, 0),
        );
    }
    let screen = draw(&mut app, 0);
    assert!(screen.contains("items/9999"), "following: the newest is in view");
    assert!(screen.contains("10000 of 10000 executions, 5000 failed"), "{screen}");
    key(&mut app, KeyCode::Home);
    let screen = draw(&mut app, 0);
    assert!(screen.contains("items/0 "), "{screen}");
    assert!(!screen.contains("items/9999"));
}

#[test]
fn tiny_terminals_draw_without_panicking() {
    for (width, height) in [(1, 1), (10, 3), (20, 5), (40, 8), (300, 2)] {
        for detail in [false, true] {
            let mut app = busy();
            if detail {
                key(&mut app, KeyCode::Enter);
            }
            let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
            terminal.draw(|frame| volley_observe::view::render(frame, &mut app, 0)).unwrap();
        }
    }
}
