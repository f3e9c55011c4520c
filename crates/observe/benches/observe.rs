//! The observer with many executions: how fast events are reduced, and how long one
//! frame takes with 10,000 executions kept (only the rows in view are built).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;
use volley_observe::App;
use volley_observe::connection::Update;
use volley_observe::state::{Envelope, State};
use volley_protocol::ObserverEvent;

/// The four events of each of `count` executions in one flow.
fn events(count: u64) -> Vec<Envelope> {
    let mut seq = 0;
    let mut events = Vec::new();
    for n in 0..count {
        for (kind, payload) in [
            ("requestQueued", json!({"reqLabel": format!("request {n}")})),
            ("fetchStarted", json!({"method": "GET", "url": format!("http://127.0.0.1:8080/items/{n}?page=2")})),
            ("fetchFinished", json!({"status": if n % 10 == 0 { 500 } else { 200 }, "ttfb": 2.5})),
            (
                "executionFinished",
                json!({"status": if n % 10 == 0 { 500 } else { 200 }, "durationMs": 3.2,
                "assertions": {"passed": true, "total": 2, "failed": 0}}),
            ),
        ] {
            seq += 1;
            events.push(Envelope {
                kind: kind.to_owned(),
                ts: 1_700_000_000_000 + seq,
                run_id: Some(format!("run_{n}")),
                session_id: None,
                flow_id: Some("flow_bench".to_owned()),
                req_exec_id: Some(format!("exec_{n}")),
                seq: Some(seq),
                event: ObserverEvent::from_owned_parts(kind, payload).ok(),
            });
        }
    }
    events
}

fn reduce(c: &mut Criterion) {
    let events = events(10_000);
    let mut group = c.benchmark_group("observe");
    group.throughput(Throughput::Elements(events.len() as u64));
    group.bench_function("reduce 40,000 events (10,000 executions)", |b| {
        b.iter(|| {
            let mut state = State::default();
            for event in &events {
                state.apply(event);
            }
            state
        });
    });
    group.finish();
}

fn frame(c: &mut Criterion) {
    let mut app = App::new("http://127.0.0.1:4097", "everything");
    for event in events(10_000) {
        app.update(Update::Event(event), 0);
    }
    app.update(Update::Connected, 0);
    let mut terminal = Terminal::new(TestBackend::new(200, 50)).expect("terminal");
    let mut group = c.benchmark_group("observe");
    group.bench_function("draw a 200x50 frame, 10,000 executions", |b| {
        b.iter(|| terminal.draw(|frame| volley_observe::view::render(frame, &mut app, 0)).map(|_| ()));
    });
    group.bench_function("filter `500` and draw a frame, 10,000 executions", |b| {
        b.iter(|| {
            // The filter runs over every execution kept, as after each keystroke.
            app.set_filter("500");
            terminal.draw(|frame| volley_observe::view::render(frame, &mut app, 0)).map(|_| ())
        });
    });
    group.finish();
}

criterion_group!(benches, reduce, frame);
criterion_main!(benches);
