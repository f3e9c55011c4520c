//! Sending the planned requests: one unit after the other through the run's client,
//! or (`--jobs`) a unit per file through forks of it, several at a time, their output
//! kept and written in file order; each unit's requests in order, with `--retry`,
//! `--delay`, `--fail-fast` and Ctrl-C; `ahead` sends a request the moment the
//! response before it is read.

mod ahead;

use std::collections::HashMap;
use std::io::IsTerminal as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use futures_util::StreamExt as _;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{Map, Value};
use volley_engine::{CancellationToken, Client, CookieJar, Execute, RunOptions};

use super::outcome::{self, Missing, Outcome, RequestResult, Skip, Tally};
use super::{Mode, RunArgs, confirm, human, record, refusal, select, stream};
use crate::exit::Exit;
use crate::output;

/// Sends the planned requests: with one job, in order through one client; with more,
/// each file (of each `--repeat` run) through a client of its own, that many files at
/// a time, each file's output kept and written when the files before it are done.
pub(super) async fn send(
    args: &RunArgs,
    client: &dyn Execute,
    local: Option<&Client>,
    files: &[select::File],
    plan: &[select::Step],
    mode: Mode,
    jobs: usize,
) -> anyhow::Result<Sent> {
    // A prompt's answer is the variable named as its label, below `--var`.
    let overrides: Map<String, Value> = args
        .prompts
        .iter()
        .chain(&args.vars)
        .map(|(name, value)| (name.clone(), Value::String(value.clone())))
        .collect();
    // The requests of each file by index (`Document::request` walks the blocks).
    let requests: Vec<Vec<&volley_syntax::Request>> =
        files.iter().map(|file| file.document.requests().collect()).collect();
    let parallel = jobs > 1;
    // Streams print as they go: a progress bar would be redrawn between their lines.
    let streams = plan.iter().any(|step| {
        requests[step.file].get(step.request).is_some_and(|request| request.protocol != volley_syntax::Protocol::Http)
    });
    // A question on the terminal (`# @note`) would be overdrawn by a progress bar too;
    // files running at the same time cannot take turns asking.
    let asks = !args.yes && !parallel && confirm::can_ask();
    let questions = asks
        && plan.iter().any(|step| requests[step.file].get(step.request).is_some_and(|request| request.note.is_some()));
    let repeat = usize::try_from(args.repeat).unwrap_or(1).max(1);
    let total = plan.len() * repeat;
    let progress = if streams || questions { ProgressBar::hidden() } else { progress_bar(total, mode) };
    // Ctrl-C: the request or stream under way ends, the rest are skipped, the reports
    // are written; a second Ctrl-C exits at once.
    let interrupt = CancellationToken::new();
    let watcher = interrupt.clone();
    let signals = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            watcher.cancel();
            if tokio::signal::ctrl_c().await.is_ok() {
                std::process::exit(i32::from(Exit::INTERRUPTED));
            }
        }
    });
    let limits = stream::Limits {
        interrupt: interrupt.clone(),
        max_events: args.max_events.and_then(|max| usize::try_from(max).ok()),
        max_time: args.max_time.map(Duration::from_millis),
        wait: Duration::from_millis(args.wait),
    };
    let stop = AtomicBool::new(false);
    // A report and `-o` read the results after the run, `--test` lists them; else only
    // their tally is kept once they are printed, so that a long run's memory does not
    // grow with the number of requests it sends.
    let keep = if !args.report.is_empty() || matches!(mode, Mode::Part(_)) {
        Keep::Whole
    } else if mode == Mode::Test {
        Keep::Failures
    } else {
        Keep::Summary
    };
    let turn = Turn {
        args,
        keep,
        client,
        local,
        overrides: &overrides,
        limits: &limits,
        progress: &progress,
        mode,
        several: total > 1,
        asks,
        stop: &stop,
        jobs: parallel.then_some(jobs),
    };
    // Made as they are reached: `--repeat 10000` does not hold 10,000 units.
    let units = units(plan, repeat, parallel.then_some(files.len()));
    let mut results: Vec<(usize, RequestResult)> = Vec::new();
    let mut tally = Tally::default();
    if parallel {
        // A client per file, forked from the run's: the configuration found, no
        // variables or responses of other files; the run's cookie jar when one is kept
        // in a file (`--cookie-jar`, volley.jsonc), else a jar of its own.
        let mut done = futures_util::stream::iter(units.map(|unit| {
            let forked = local.map(|local| {
                let jar =
                    local.cookie_jar().map(|jar| if jar.path().is_some() { jar.clone() } else { CookieJar::new() });
                volley_engine::stages::fork(local, Map::new(), jar)
            });
            let turn = &turn;
            let requests = &requests;
            async move {
                let client: &dyn Execute = match &forked {
                    Some(forked) => forked,
                    None => turn.client,
                };
                let unit_turn = Turn { client, local: forked.as_ref().or(turn.local), ..turn.clone() };
                output::captured(unit_turn.run_unit(files, requests, &unit)).await
            }
        }))
        .buffered(jobs);
        while let Some((finished, lines)) = done.next().await {
            progress.suspend(|| output::replay(lines));
            let (kept, counted) = finished?;
            results.extend(kept);
            tally = tally.add(counted);
        }
    } else {
        for unit in units {
            let (kept, counted) = turn.run_unit(files, &requests, &unit).await?;
            results.extend(kept);
            tally = tally.add(counted);
        }
    }
    progress.finish_and_clear();
    signals.abort();
    // Stable: a `@loop`'s iterations share their step's place.
    results.sort_by_key(|(position, _)| *position);
    let results = results.into_iter().map(|(_, result)| result).collect();
    Ok(Sent { results, tally, interrupted: interrupt.is_cancelled() })
}

/// Requests that run in order, one after the other, through one client: with one job,
/// the whole plan (once per `--repeat` run); with more, one file's part of it.
#[derive(Debug)]
struct Unit {
    /// Each step with the place of its result in the run's results.
    steps: Vec<(usize, select::Step)>,
    /// The `--repeat` run, from 1, when there are several.
    repetition: Option<u32>,
}

/// The units of a run: the plan `repeat` times, each time whole or (with `files`, the
/// number of files, for parallel runs) split by file, in file order; made one by one.
fn units(plan: &[select::Step], repeat: usize, files: Option<usize>) -> impl Iterator<Item = Unit> + '_ {
    (0..repeat).flat_map(move |round| {
        let repetition = (repeat > 1).then(|| u32::try_from(round + 1).unwrap_or(u32::MAX));
        let offset = round * plan.len();
        let numbered = move || plan.iter().enumerate().map(move |(index, step)| (offset + index, step.clone()));
        let parts: Box<dyn Iterator<Item = Unit>> = match files {
            None => Box::new(std::iter::once(Unit { steps: numbered().collect(), repetition })),
            Some(count) => Box::new((0..count).filter_map(move |file| {
                let steps: Vec<_> = numbered().filter(|(_, step)| step.origin == file).collect();
                (!steps.is_empty()).then_some(Unit { steps, repetition })
            })),
        };
        parts
    })
}

/// What a run keeps of a response once it is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keep {
    /// All of it: a report or `-o` reads it after the run.
    Whole,
    /// All of a failed request's (`--test` prints failures in full at the end), the
    /// status, timing and assertion results of the others (its list of requests).
    Failures,
    /// Only the run's [`Tally`].
    Summary,
}

/// What each turn of the run needs beside its request.
#[derive(Clone)]
struct Turn<'a> {
    args: &'a RunArgs,
    /// What is kept of each response once it is printed.
    keep: Keep,
    client: &'a dyn Execute,
    /// The run's own client, when requests are sent here (not through `--server`).
    local: Option<&'a Client>,
    overrides: &'a Map<String, Value>,
    limits: &'a stream::Limits,
    progress: &'a ProgressBar,
    mode: Mode,
    /// More than one request runs: each gets a title line.
    several: bool,
    /// A `# @note` is asked about on the terminal.
    asks: bool,
    /// Set by `--fail-fast` at the first failure: the requests after it are skipped.
    stop: &'a AtomicBool,
    /// Files run apart, this many at a time (`--jobs` above 1); `None`: one client.
    jobs: Option<usize>,
}

impl Turn<'_> {
    /// Runs the requests of `unit` in order, printing each as it ends (`--json`: its
    /// record); the results kept (see [`Keep`]) with their places in the run's results,
    /// and the tally of all.
    ///
    /// With the run's own client and no `--retry`, `--delay` or `--fail-fast` (whose
    /// decisions wait for a response's checks) or `--history`, a request is sent as soon
    /// as the response before it is read, prepared while that one was under way; that
    /// response is checked and shown while this one is. A request whose preparation
    /// could act or read what the one before it leaves (see
    /// [`volley_engine::stages::prepare_ahead`]) waits for it to be finished and is
    /// prepared in its turn; a large response is checked and shown
    /// before the next request goes.
    async fn run_unit(
        &self,
        files: &[select::File],
        requests: &[Vec<&volley_syntax::Request>],
        unit: &Unit,
    ) -> anyhow::Result<(Vec<(usize, RequestResult)>, Tally)> {
        let args = self.args;
        let interrupt = &self.limits.interrupt;
        // The named requests this unit did not send or got no response for, and why: a
        // later request that needs their response says so.
        let mut book = Book {
            results: Vec::new(),
            tally: Tally::default(),
            missing: self.apart(files, requests, unit),
            writes: 0,
        };
        // `--history` writes a file for each response: not while another is under way.
        let overlap =
            self.local.filter(|_| args.retry == 0 && args.delay.is_none() && !args.fail_fast && !args.history);
        let mut pipeline = ahead::Pipeline::default();
        let step_of =
            |number: usize| -> anyhow::Result<Option<(&select::File, &volley_syntax::Request, &select::Step)>> {
                let Some((_, step)) = unit.steps.get(number) else { return Ok(None) };
                let request = *requests[step.file].get(step.request).context("planned request exists")?;
                Ok(Some((&files[step.file], request, step)))
            };
        for (number, (position, step)) in unit.steps.iter().enumerate() {
            let Some((file, request, _)) = step_of(number)? else { continue };
            let stopped = self.stop.load(Ordering::Relaxed) || interrupt.is_cancelled();
            // A request prepared ahead was found plain when it was.
            let plain = || pipeline.prepared(number) || self.plain(file, request);
            if let Some(client) = overlap.filter(|_| !stopped && plain()) {
                let this = ahead::Planned { number, position: *position, file, request, step };
                let next = step_of(number + 1)?;
                Box::pin(self.send_ahead(client, &mut pipeline, &mut book, unit, this, next)).await?;
                continue;
            }
            Box::pin(self.finish_under_way(&mut pipeline, unit, &mut book)).await?;
            if let Some(delay) = args.delay.filter(|_| number > 0 && !stopped) {
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(delay)) => {}
                    () = interrupt.cancelled() => {}
                }
            }
            let produced = if stopped || interrupt.is_cancelled() {
                vec![RequestResult::skipped(file, request, Skip::Stopped)]
            } else if request.disabled {
                vec![RequestResult::skipped(file, request, Skip::Disabled)]
            } else if let Some(refusal) = refusal::of(&file.document, request) {
                vec![RequestResult::refused(file, request, refusal)]
            } else if let Some(unsent) = self.confirm(file, request).await {
                vec![unsent]
            } else if request.repeat().is_some() {
                Box::pin(self.looped(file, request, step.variables.as_deref(), &book.missing)).await
            } else {
                vec![Box::pin(self.exchange(file, request, step.variables.as_deref(), None, &book.missing)).await]
            };
            for result in produced {
                self.account(result, *position, unit, file, &mut book)?;
            }
        }
        Box::pin(self.finish_under_way(&mut pipeline, unit, &mut book)).await?;
        Ok((book.results, book.tally))
    }

    /// Counts `result` of the request at `position` of the run: its name's response
    /// known or missing, `--fail-fast`, its `--json` record, its history entry, the
    /// tally, and what is kept of it.
    fn account(
        &self,
        mut result: RequestResult,
        position: usize,
        unit: &Unit,
        file: &select::File,
        book: &mut Book,
    ) -> anyhow::Result<()> {
        let (args, mode, progress) = (self.args, self.mode, self.progress);
        result.repetition = unit.repetition;
        if !matches!(result.outcome, Outcome::Response { .. } | Outcome::Error(_)) {
            progress.suspend(|| human::print(&result, file, mode, self.several));
        }
        if !matches!(result.outcome, Outcome::Skipped(Skip::Stopped)) {
            progress.inc(1);
        }
        if let Some(name) = &result.name {
            match result.missing_reason() {
                Some(why) => book.missing.insert(name.clone(), Missing::NoResponse(why)),
                None => book.missing.remove(name),
            };
        }
        if args.fail_fast && !result.passed() {
            self.stop.store(true, Ordering::Relaxed);
        }
        if mode == Mode::Json {
            let line = serde_json::to_string(&record::record(&result, file))?;
            progress.suspend(|| output::line(&line));
        }
        if args.history {
            super::history::record(&result, file);
        }
        book.tally.count(&result);
        match self.keep {
            Keep::Whole => book.results.push((position, result)),
            Keep::Failures => {
                if result.passed() {
                    result.release_payload();
                }
                book.results.push((position, result));
            }
            Keep::Summary => {}
        }
        Ok(())
    }

    /// With files running apart (`--jobs` above 1): the named requests of the other
    /// files of the run that this unit's file does not name itself, so that a request
    /// that needs one says where it is and how to run them together.
    fn apart(
        &self,
        files: &[select::File],
        requests: &[Vec<&volley_syntax::Request>],
        unit: &Unit,
    ) -> HashMap<String, Missing> {
        let mut apart = HashMap::new();
        let Some(jobs) = self.jobs.filter(|jobs| *jobs > 1) else { return apart };
        let Some(own) = unit.steps.first().map(|(_, step)| step.origin) else { return apart };
        let named =
            |file: usize| requests[file].iter().filter_map(|request| request.name.as_ref().map(|name| &name.value));
        let own_names: std::collections::HashSet<&String> = named(own).collect();
        for (index, file) in files.iter().enumerate().filter(|(index, _)| *index != own) {
            for name in named(index).filter(|name| !own_names.contains(name)) {
                apart.entry(name.clone()).or_insert_with(|| Missing::Apart { file: file.shown.clone(), jobs });
            }
        }
        apart
    }

    /// `None` when `request` may be sent: it has no `# @note`, `--yes` confirmed it or
    /// the answer was yes. Else what came of it: declined, interrupted, or refused
    /// because nobody can be asked.
    async fn confirm(&self, file: &select::File, request: &volley_syntax::Request) -> Option<RequestResult> {
        let note = request.note.as_ref()?;
        if self.args.yes {
            return None;
        }
        if !self.asks {
            let refusal = refusal::Refusal::Unconfirmed { note: note.span };
            return Some(RequestResult::refused(file, request, refusal));
        }
        let title = outcome::title(file, request);
        match confirm::ask(file, request, &title, &self.limits.interrupt).await {
            confirm::Answer::Yes => None,
            confirm::Answer::No => Some(RequestResult::skipped(file, request, Skip::Declined)),
            confirm::Answer::Interrupted => Some(RequestResult::skipped(file, request, Skip::Stopped)),
        }
    }

    /// httpyac's `# @loop`: the request once per iteration, each with its variables
    /// (`$index`, the element) over the `run` line's, its response kept under its name
    /// and the name with the index (`login0`). The iterations are found by the run's own
    /// client (not through `--server`).
    async fn looped(
        &self,
        file: &select::File,
        request: &volley_syntax::Request,
        variables: Option<&Map<String, Value>>,
        missing: &HashMap<String, Missing>,
    ) -> Vec<RequestResult> {
        let found = match self.local {
            Some(client) => {
                let options = RunOptions::default()
                    .overrides(self.overrides.clone())
                    .command_variables(variables.cloned().unwrap_or_default());
                volley_engine::stages::loop_iterations(client, &file.document, request, Some(&file.path), &options)
                    .await
            }
            None => Err(volley_engine::Error::Build(volley_engine::BuildError::Interpolation {
                message:
                    "`@loop` runs in a local run: its list is evaluated here, and --server sends one request at a \
                          time"
                        .to_owned(),
                span: request.line_span,
            })),
        };
        let iterations = match found {
            Ok(iterations) => iterations.unwrap_or_default(),
            Err(error) => {
                let result = RequestResult::new(file, request, Err(error)).await;
                self.progress.suspend(|| human::print(&result, file, self.mode, self.several));
                return vec![result];
            }
        };
        let mut results = Vec::with_capacity(iterations.len());
        for iteration in iterations {
            if self.limits.interrupt.is_cancelled() || self.stop.load(Ordering::Relaxed) {
                break;
            }
            let index = iteration.get("$index").and_then(Value::as_u64).unwrap_or_default();
            let mut merged = variables.cloned().unwrap_or_default();
            merged.extend(iteration);
            let also = request.name.as_ref().map(|name| format!("{}{index}", name.value));
            results.push(self.exchange(file, request, Some(&merged), Some((index, also)), missing).await);
        }
        results
    }

    /// Sends `request`, prints what came of it, and follows its stream.
    async fn exchange(
        &self,
        file: &select::File,
        request: &volley_syntax::Request,
        variables: Option<&Map<String, Value>>,
        iteration: Option<(u64, Option<String>)>,
        missing: &HashMap<String, Missing>,
    ) -> RequestResult {
        let (args, mode) = (self.args, self.mode);
        // The title is made for a bar that shows it only (`-q` and pipes have none).
        if !self.progress.is_hidden() {
            self.progress.set_message(outcome::title(file, request));
        }
        let mut options = self.options(variables, iteration.as_ref().and_then(|(_, name)| name.clone()));
        // A gRPC stream's messages print as they come (the title first), as events do.
        let streamed = std::sync::Arc::new(AtomicBool::new(false));
        if matches!(mode, Mode::Normal | Mode::Verbose) && matches!(request.protocol, volley_syntax::Protocol::Grpc(_))
        {
            let description = request.description.as_ref().map(|description| description.value.as_str());
            let at = request.line_span.start_position.line;
            let title =
                self.several.then(|| human::title_line(&outcome::title(file, request), description, file, at, None));
            let (live, began) = (std::sync::Arc::clone(&streamed), Instant::now());
            options = options.on_grpc_message(move |number, message| {
                let first = !live.swap(true, Ordering::Relaxed);
                human::live_message(first.then_some(title.as_deref()).flatten(), number, &message, began.elapsed());
            });
        }
        let attempts = args.retry.saturating_add(1);
        let mut attempt = 1;
        let (mut result, started) = loop {
            let started = Instant::now();
            // The last attempt takes the options; the others a copy.
            let this = if attempt < attempts { options.clone() } else { std::mem::take(&mut options) };
            let response = self.client.run_parsed(&file.text, &file.document, request, Some(&file.path), this).await;
            let result = RequestResult::new(file, request, response).await;
            if attempt >= attempts || !result.retryable() || self.limits.interrupt.is_cancelled() {
                break (result, started);
            }
            self.progress.suspend(|| human::retrying(&result, file, attempt, attempts, args.retry_interval));
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(args.retry_interval)) => {}
                () = self.limits.interrupt.cancelled() => break (result, started),
            }
            attempt += 1;
        };
        result.attempts = attempt;
        if let Some((index, _)) = iteration {
            result.title = format!("{} [{index}]", result.title);
        }
        result.live = streamed.load(Ordering::Relaxed);
        self.shown(&mut result, file, request, started, missing).await;
        result
    }

    /// The options of a run of one request: the run's variables, redirects, TLS,
    /// secrets, cancellation and timeout; a `run` line's or `@loop` iteration's
    /// `variables`, the iteration's name.
    fn options(&self, variables: Option<&Map<String, Value>>, also_named: Option<String>) -> RunOptions {
        let args = self.args;
        let mut options = RunOptions::default()
            .overrides(self.overrides.clone())
            // Through a server the client's defaults are not there: each run says them.
            .follow_redirects(args.no_redirect.then_some(false))
            .validate_ssl(args.insecure.then_some(false))
            .show_secrets(args.show_secrets)
            // The run's token itself: nothing cancels one request alone, and a child token
            // would be linked into the run's and out again for every request.
            .cancel(self.limits.interrupt.clone());
        if let Some(variables) = variables {
            options = options.command_variables(variables.clone());
        }
        if let Some(name) = also_named {
            options = options.also_named(name);
        }
        if let Some(timeout) = args.timeout {
            options = options.timeout(Duration::from_millis(timeout));
        }
        options
    }

    /// Shows `result` of `request` (sent at `started`): why a response it needed is
    /// missing, the result, then its stream followed to its end.
    async fn shown(
        &self,
        result: &mut RequestResult,
        file: &select::File,
        request: &volley_syntax::Request,
        started: Instant,
        missing: &HashMap<String, Missing>,
    ) {
        let mode = self.mode;
        result.missing = result
            .needed_response()
            .and_then(|name| missing.get_key_value(name))
            .map(|(name, why)| (name.clone(), why.clone()));
        self.progress.suspend(|| human::print(result, file, mode, self.several));
        if let Outcome::Response { response, .. } = &result.outcome
            && (response.is_streaming() || response.is_websocket())
        {
            let printer =
                stream::Printer { mode, file: &file.shown, index: request.index, started, response: response.as_ref() };
            let summary = if response.is_websocket() {
                stream::websocket(&printer, self.limits).await
            } else {
                stream::events(&printer, self.limits).await
            };
            human::stream_end(&summary, mode);
            result.stream = Some(summary);
        }
    }
}

/// What a unit's results come to as they are counted: those kept with their places,
/// the tally, and the named requests with no response (see [`Missing`]).
struct Book {
    results: Vec<(usize, RequestResult)>,
    tally: Tally,
    missing: HashMap<String, Missing>,
    /// How many of the responses finished so far wrote variables or files
    /// ([`volley_engine::stages::Exchanged::finish_writes`]): a request prepared ahead
    /// before one of them is prepared again.
    writes: usize,
}

/// The results of the requests sent (those kept, see [`Keep`]), the tally of all, and
/// whether Ctrl-C stopped the run.
pub(super) struct Sent {
    pub(super) results: Vec<RequestResult>,
    pub(super) tally: Tally,
    pub(super) interrupted: bool,
}

fn progress_bar(total: usize, mode: Mode) -> ProgressBar {
    if total < 2 || mode == Mode::Quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{spinner} [{pos}/{len}] {wide_msg} {elapsed}") {
        bar.set_style(style);
    }
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}
