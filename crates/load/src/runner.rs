//! Sending the load: virtual users (the closed model) or requests due at a constant
//! rate (the open model), each request prepared (variables and resolvers evaluated
//! anew: a `{{$uuid}}` differs each time) and sent through the engine's client, the
//! one executor of every front end; the figures go into one [`Tally`].

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;
use volley_engine::{Client, CookieJar, Error, Response, RunOptions, stages};
use volley_syntax::{Document, Request};

use crate::report::{KIND, LoadReport, ModelInfo, Target};
use crate::tally::{End, Ended, Tally};

/// What to send: requests of a parsed file.
#[derive(Debug)]
pub struct Work<'a> {
    /// The file's text, parsed.
    pub document: &'a Document,
    /// The file's text (for the requests' lines in the report).
    pub text: &'a str,
    /// Where the file is (relative paths, configuration).
    pub source: &'a Path,
    /// The requests, by index in the document (0-based), with their weights.
    pub picks: Vec<(usize, u32)>,
    /// Every request of the file, in order, per unit of work (a scenario), instead of
    /// one request picked by weight.
    pub scenario: bool,
}

/// How to send it.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The model.
    pub load: Load,
    /// When to stop.
    pub stop: Stop,
    /// Sent first and not counted.
    pub warmup: Duration,
    /// The options of every request's run (profile, `--var`, timeout).
    pub options: RunOptions,
    /// `k/n` when this run is a shard of a larger load (already divided).
    pub shard: Option<String>,
}

/// The load model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Load {
    /// Virtual users, each sending its next request when its last is answered.
    Closed {
        /// How many.
        connections: usize,
    },
    /// Requests due at a constant rate; latency from the time each was due, so that a
    /// slow server cannot hide its slowness by slowing the sender (coordinated
    /// omission).
    Open {
        /// Requests per second.
        rate: f64,
        /// The most under way at once; more wait, their latency still counted from
        /// when they were due.
        max_in_flight: usize,
    },
}

/// When a run stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// After this long (the warm-up not counted).
    Duration(Duration),
    /// After this many requests (the warm-up's not counted).
    Requests(u64),
}

/// The run so far, for a progress line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    /// Since the measured time started (zero while warming up).
    pub elapsed: Duration,
    /// Still warming up.
    pub warming_up: bool,
    /// Requests counted.
    pub requests: u64,
    /// Of them, failed.
    pub errors: u64,
    /// Median latency so far, in microseconds.
    pub p50: u64,
    /// 99th percentile so far, in microseconds.
    pub p99: u64,
}

/// Why a load could not start.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A request the load cannot send (a stream, a prompt).
    #[error("request {index} (line {line}): {reason}")]
    Unsupported {
        /// Its index (1-based).
        index: usize,
        /// Its line (1-based).
        line: usize,
        /// Its request line in the text.
        span: volley_syntax::Span,
        /// Why.
        reason: String,
    },
    /// The first try of a request failed before sending: the load would only count
    /// that error.
    #[error("request {index} (line {line}) cannot be built: {source}")]
    Build {
        /// Its index (1-based).
        index: usize,
        /// Its line (1-based).
        line: usize,
        /// Its request line in the text.
        span: volley_syntax::Span,
        /// The engine's error.
        source: Error,
    },
}

/// Checks that every request of the work can be sent under load, and runs what their
/// `@ref` directives name once (a login whose token the load's requests read).
///
/// # Errors
/// A request the load cannot send: another protocol than HTTP (gRPC, WebSocket), a
/// `run` line or `# @loop`, a prompt without an answer (`--var`), or one that cannot be
/// built.
pub async fn prepare(client: &Client, work: &Work<'_>, options: &RunOptions) -> Result<(), LoadError> {
    for request in requests(work) {
        let unsupported = |reason: String| LoadError::Unsupported {
            index: request.index + 1,
            line: line_of(work.text, request.line_span.start),
            span: request.line_span,
            reason,
        };
        let protocol = match request.protocol {
            volley_syntax::Protocol::Http => None,
            volley_syntax::Protocol::Sse(_) => Some("Server-Sent Events"),
            volley_syntax::Protocol::WebSocket(_) => Some("WebSocket"),
            volley_syntax::Protocol::Grpc(_) => Some("gRPC"),
        };
        if let Some(protocol) = protocol {
            return Err(unsupported(format!(
                "a {protocol} request is not sent under load (only HTTP requests are); select others with --name or --index"
            )));
        }
        if !stages::run_steps(client, work.document, Some(work.source), request.block).unwrap_or_default().is_empty() {
            return Err(unsupported(
                "its `run` lines are not sent under load; select the requests with --name".to_owned(),
            ));
        }
        if request.directives.iter().any(|directive| directive.name.value == "loop") {
            return Err(unsupported("`# @loop` is not sent under load; select the requests with --name".to_owned()));
        }
        stages::run_references(client, work.document, request, Some(work.source), options)
            .await
            .map_err(|source| build_error(work, request, source))?;
        match stages::prepare_request(client, work.document, request, Some(work.source), options).await {
            Ok(_) => {}
            // A scenario's later request reads an earlier one's response, not run yet.
            Err(Error::Build(error)) if work.scenario && error.code() == "request-variable" => {}
            Err(source) => return Err(build_error(work, request, source)),
        }
    }
    Ok(())
}

/// The thresholds of the `# @load` directives of the requests the work sends, in file
/// order, each with the span of its directive's value (an unreadable one as its error).
#[must_use]
pub fn file_thresholds(work: &Work<'_>) -> Vec<(volley_syntax::Span, Result<crate::Threshold, crate::ThresholdError>)> {
    let mut found = Vec::new();
    for request in requests(work) {
        for directive in &request.directives {
            if directive.kind != volley_syntax::DirectiveKind::Load {
                continue;
            }
            let Some(value) = &directive.value else { continue };
            for threshold in volley_syntax::threshold::of_directive(&value.to_source()) {
                found.push((value.span, threshold));
            }
        }
    }
    found
}

fn build_error(work: &Work<'_>, request: &Request, source: Error) -> LoadError {
    LoadError::Build {
        index: request.index + 1,
        line: line_of(work.text, request.line_span.start),
        span: request.line_span,
        source,
    }
}

fn requests<'a>(work: &'a Work<'_>) -> impl Iterator<Item = &'a Request> {
    let all: Vec<&Request> = work.document.requests().collect();
    let picked: Vec<&Request> =
        if work.scenario { all } else { work.picks.iter().filter_map(|(index, _)| all.get(*index).copied()).collect() };
    picked.into_iter()
}

fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes().iter().take(offset).filter(|byte| **byte == b'\n').count() + 1
}

/// The state shared by the virtual users of a run.
struct Shared<'a> {
    work: &'a Work<'a>,
    /// The requests by index, in file order.
    requests: Vec<&'a Request>,
    plan: &'a Plan,
    tally: Mutex<Tally>,
    /// When the measured time starts: the end of the warm-up.
    measured_from: Instant,
    /// When no more requests start (a duration run).
    deadline: Option<Instant>,
    /// Requests started in the measured time (against `Stop::Requests`).
    tickets: AtomicU64,
    cancel: CancellationToken,
    /// Smooth weighted round robin over the picks: deterministic, no random numbers.
    turn: Mutex<Vec<i64>>,
}

impl Shared<'_> {
    /// May another request start (now)? Takes a ticket of a counted run.
    fn may_start(&self, now: Instant) -> bool {
        if self.cancel.is_cancelled() || self.deadline.is_some_and(|deadline| now >= deadline) {
            return false;
        }
        if now < self.measured_from {
            return true;
        }
        match self.plan.stop {
            Stop::Requests(total) => self.tickets.fetch_add(1, Ordering::AcqRel) < total,
            Stop::Duration(_) => true,
        }
    }

    /// The next request of a mix, by weight.
    fn pick(&self) -> usize {
        let picks = &self.work.picks;
        if picks.len() == 1 {
            return picks[0].0;
        }
        let mut current = self.turn.lock();
        let total: i64 = picks.iter().map(|(_, weight)| i64::from(*weight)).sum();
        let mut best = 0;
        for (slot, (_, weight)) in picks.iter().enumerate() {
            current[slot] += i64::from(*weight);
            if current[slot] > current[best] {
                best = slot;
            }
        }
        current[best] -= total;
        picks[best].0
    }

    /// Sends one request and counts it when it started (or was due) in the measured
    /// time. The latency runs from `due` (the open model) or from the send.
    async fn send(&self, client: &Client, index: usize, began: Instant, due: Option<Instant>) {
        let request = self.requests[index];
        let counted = began >= self.measured_from;
        let start = Instant::now();
        let prepared =
            stages::prepare_request(client, self.work.document, request, Some(self.work.source), &self.plan.options)
                .await;
        let built = Instant::now();
        let (end, received, sent) = match prepared {
            Err(error) => (End::Error { kind: kind_of(&error), message: error.to_string() }, 0, 0),
            Ok(prepared) => {
                let sent = prepared.body.len() as u64;
                match stages::send(client, prepared, Some(&self.cancel)).await {
                    Err(error) => (End::Error { kind: kind_of(&error), message: error.to_string() }, 0, sent),
                    Ok(response) => {
                        let received = read_body(&response).await;
                        (judge(&response), received, sent)
                    }
                }
            }
        };
        let finished = Instant::now();
        // Ctrl-C cut it: not the server's doing.
        let cut = matches!(&end, End::Error { kind, .. } if kind == "cancelled");
        if !counted || cut {
            return;
        }
        let ended = Ended {
            end,
            latency: finished.saturating_duration_since(due.unwrap_or(built)),
            build: built.saturating_duration_since(start),
            received,
            sent,
            at: finished.saturating_duration_since(self.measured_from),
        };
        self.tally.lock().record(&ended);
    }

    /// The requests of one unit of work: one picked by weight, or the whole file.
    fn unit(&self) -> Vec<usize> {
        if self.work.scenario { (0..self.requests.len()).collect() } else { vec![self.pick()] }
    }

    /// A client for one unit: the run's, or a fork of it (variables, responses and
    /// cookies of its own) for a scenario, whose requests chain.
    fn client_for(&self, client: &Client) -> Option<Client> {
        self.work.scenario.then(|| stages::fork(client, serde_json::Map::new(), Some(CookieJar::new())))
    }
}

/// The body's bytes, the stream read to its end for an event stream.
async fn read_body(response: &Response) -> u64 {
    if response.is_streaming() {
        let mut stream = std::pin::pin!(response.body_stream());
        let mut total = 0u64;
        while let Some(Ok(chunk)) = stream.next().await {
            total += chunk.len() as u64;
        }
        total
    } else {
        response.body_bytes().len() as u64
    }
}

/// A request passed when its assertions did, or, without any, when its status is
/// below 400.
fn judge(response: &Response) -> End {
    let status = response.status();
    if !response.assertions().is_empty() {
        if response.assertions_passed() { End::Passed { status } } else { End::Failed { status, kind: "assertion" } }
    } else if status >= 400 {
        End::Failed { status, kind: "status" }
    } else {
        End::Passed { status }
    }
}

fn kind_of(error: &Error) -> String {
    match error {
        Error::Transport(transport) => transport.kind().to_owned(),
        Error::Cancelled => "cancelled".to_owned(),
        _ => "build".to_owned(),
    }
}

/// Runs the load and reports it. `progress` is called about every 250 ms, and once at
/// the end.
pub async fn run(
    client: &Client,
    work: &Work<'_>,
    plan: &Plan,
    cancel: CancellationToken,
    mut progress: impl FnMut(Progress),
) -> LoadReport {
    let started_at = now_rfc3339(plan.warmup);
    let begin = Instant::now();
    let measured_from = begin + plan.warmup;
    let shared = Shared {
        work,
        requests: work.document.requests().collect(),
        plan,
        tally: Mutex::new(Tally::new()),
        measured_from,
        deadline: match plan.stop {
            Stop::Duration(duration) => Some(measured_from + duration),
            Stop::Requests(_) => None,
        },
        tickets: AtomicU64::new(0),
        cancel,
        turn: Mutex::new(vec![0; work.picks.len().max(1)]),
    };
    let load = async {
        match plan.load {
            Load::Closed { connections } => closed(client, &shared, connections).await,
            Load::Open { rate, max_in_flight } => open(client, &shared, rate, max_in_flight).await,
        }
    };
    let tell = |progress: &mut dyn FnMut(Progress)| {
        let now = Instant::now();
        let tally = shared.tally.lock();
        progress(Progress {
            elapsed: now.saturating_duration_since(measured_from),
            warming_up: now < measured_from,
            requests: tally.requests,
            errors: tally.error_count,
            p50: tally.latency.percentile(50.0),
            p99: tally.latency.percentile(99.0),
        });
    };
    let clock = async {
        let mut tick = tokio::time::interval(Duration::from_millis(250));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await;
        loop {
            tick.tick().await;
            tell(&mut progress);
        }
    };
    tokio::select! {
        () = load => {}
        () = clock => {}
    }
    tell(&mut progress);
    let ended = Instant::now();
    let tally = std::mem::replace(&mut *shared.tally.lock(), Tally::new());
    report(work, plan, started_at, ended.saturating_duration_since(measured_from), tally)
}

/// The closed model: `connections` virtual users, each sending its next request when
/// its last one is answered.
async fn closed(client: &Client, shared: &Shared<'_>, connections: usize) {
    let users = (0..connections.max(1)).map(|_| async {
        let own = shared.client_for(client);
        let client = own.as_ref().unwrap_or(client);
        'user: loop {
            for index in shared.unit() {
                let start = Instant::now();
                if !shared.may_start(start) {
                    break 'user;
                }
                shared.send(client, index, start, None).await;
            }
        }
    });
    futures_util::future::join_all(users).await;
}

/// The open model: a unit of work due every `1/rate` seconds, at most `max_in_flight`
/// under way; one due while that many are under way waits, its latency counted from
/// when it was due.
async fn open(client: &Client, shared: &Shared<'_>, rate: f64, max_in_flight: usize) {
    let interval = Duration::from_secs_f64(1.0 / rate.max(1e-6));
    let begin = Instant::now();
    let mut under_way = futures_util::stream::FuturesUnordered::new();
    let mut sent: u32 = 0;
    loop {
        let due = begin + interval.saturating_mul(sent);
        // Finish what ended while waiting for the next due time.
        let wait = tokio::time::sleep_until(due.into());
        tokio::pin!(wait);
        loop {
            tokio::select! {
                biased;
                () = &mut wait => break,
                Some(()) = under_way.next(), if !under_way.is_empty() => {}
            }
        }
        while under_way.len() >= max_in_flight.max(1) {
            under_way.next().await;
        }
        if !shared.may_start(due) {
            break;
        }
        sent = sent.saturating_add(1);
        under_way.push(async move {
            let own = shared.client_for(client);
            let client = own.as_ref().unwrap_or(client);
            for (position, index) in shared.unit().into_iter().enumerate() {
                let start = Instant::now();
                if position > 0 && !shared.may_start(start) {
                    break;
                }
                // The unit's first request is due; the others follow its answer.
                let due = (position == 0).then_some(due);
                shared.send(client, index, due.unwrap_or(start), due).await;
            }
        });
    }
    while under_way.next().await.is_some() {}
}

fn report(work: &Work<'_>, plan: &Plan, started_at: String, measured: Duration, tally: Tally) -> LoadReport {
    let all: Vec<&Request> = work.document.requests().collect();
    let targets: Vec<(usize, u32)> =
        if work.scenario { (0..all.len()).map(|index| (index, 1)).collect() } else { work.picks.clone() };
    let requests_sent = targets
        .into_iter()
        .filter_map(|(index, weight)| {
            let request = all.get(index)?;
            let line =
                work.text.get(request.line_span.start..request.line_span.end).unwrap_or_default().trim().to_owned();
            Some(Target { index: index + 1, name: request.name.as_ref().map(|name| name.value.clone()), line, weight })
        })
        .collect();
    let model = match (plan.load, work.scenario) {
        (Load::Closed { connections }, true) => ModelInfo::Scenario { connections },
        (Load::Closed { connections }, false) => ModelInfo::Closed { connections },
        (Load::Open { rate, max_in_flight }, _) => ModelInfo::Open { rate, max_in_flight },
    };
    LoadReport {
        kind: KIND.to_owned(),
        tool: format!("volley {}", env!("CARGO_PKG_VERSION")),
        started_at,
        file: work.source.display().to_string(),
        requests_sent,
        model,
        shard: plan.shard.clone(),
        runs: 1,
        duration_ms: measured.as_secs_f64() * 1000.0,
        warmup_ms: plan.warmup.as_secs_f64() * 1000.0,
        requests: tally.requests,
        errors: tally.errors,
        samples: tally.samples,
        statuses: tally.statuses,
        bytes_received: tally.bytes_received,
        bytes_sent: tally.bytes_sent,
        latency: tally.latency,
        build: tally.build,
        timeline_step: tally.step,
        timeline: tally.timeline,
        thresholds: Vec::new(),
    }
}

/// The time the measured part starts (after `warmup`), RFC 3339 in UTC.
fn now_rfc3339(warmup: Duration) -> String {
    let at = time::OffsetDateTime::now_utc() + warmup;
    at.format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
}
