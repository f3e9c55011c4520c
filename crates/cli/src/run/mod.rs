//! `volley run`: sends the requests of `.http` files, checks their `@assert`s, prints
//! the exchanges and writes reports.

mod confirm;
mod human;
mod outcome;
mod record;
mod refusal;
mod report;
mod select;
mod stream;

use std::collections::HashMap;
use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{Map, Value};
use volley_engine::{
    CancellationToken, Client, ClientConfig, CookieJar, Execute, RemoteClient, RemoteConfig, RequestDefaults,
    RunOptions,
};

use crate::exit::Exit;
use crate::render;
use outcome::{Outcome, RequestResult, Skip};

/// Arguments of `volley run`.
#[derive(Debug, clap::Args)]
#[command(after_long_help = RUN_EXAMPLES)]
#[allow(clippy::struct_excessive_bools)] // Command-line switches.
pub(crate) struct RunArgs {
    /// The `.http` files to run, in order; a directory runs the `.http` and `.rest`
    /// files below it.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,

    /// Run only the request with this name (`# @name` or the `###` text). Repeat to run
    /// several, in the order given.
    #[arg(long = "name", short = 'n', value_name = "NAME")]
    names: Vec<String>,

    /// Run only the request at this position of each file (0 is the first).
    #[arg(long, value_name = "N", conflicts_with = "names")]
    index: Option<usize>,

    /// Set a variable for this run: `--var token=abc`. Repeatable; beats every other
    /// source (file, config, profile).
    #[arg(long = "var", value_name = "NAME=VALUE", value_parser = parse_var)]
    vars: Vec<(String, String)>,

    /// Use this profile of volley.jsonc (or environment of http-client.env.json).
    #[arg(long, short = 'p', value_name = "NAME", env = "VOLLEY_PROFILE")]
    profile: Option<String>,

    /// Timeout of each request in milliseconds (connection, headers and body), for
    /// requests without their own `# @timeout`. Default: the config's, else 30000.
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    timeout: Option<u64>,

    /// Do not follow redirects (as `# @no-redirect` on every request).
    #[arg(long)]
    no_redirect: bool,

    /// Do not check TLS certificates (self-signed development servers).
    #[arg(long, short = 'k')]
    insecure: bool,

    /// Keep cookies in this file: read before the run, saved after each request.
    /// Without it cookies live for the run only (or where volley.jsonc `cookies` says).
    #[arg(long, value_name = "FILE")]
    cookie_jar: Option<PathBuf>,

    /// Stop at the first request that fails (an assertion, or an error).
    #[arg(long)]
    fail_fast: bool,

    /// Send nothing when a request to run has errors, or its file has errors outside
    /// any request. Without it, each request with errors is refused and reported, and
    /// the others run.
    #[arg(long)]
    strict: bool,

    /// Send the requests that have a `# @note` without asking. Without it, each one is
    /// shown and `send? [y/N]` is asked on the terminal; when stdin is not a terminal,
    /// it is refused.
    #[arg(long, short = 'y')]
    yes: bool,

    /// Print one JSON document per request (NDJSON) instead of text.
    #[arg(long, conflicts_with_all = ["verbose", "quiet"])]
    json: bool,

    /// Write a report after the run: `junit=report.xml` or `json=report.json`.
    /// Repeatable.
    #[arg(long, value_name = "FORMAT=PATH", value_parser = parse_report)]
    report: Vec<(ReportFormat, PathBuf)>,

    /// Also print each request as sent (method, URL, headers, body), secrets redacted.
    #[arg(long, short = 'v')]
    verbose: bool,

    /// Show secrets in clear in every output of this run (text, --verbose, --json,
    /// reports, error messages): `$secret` values, the values of sensitive variables,
    /// credential headers. For debugging on your own terminal, never in CI logs; with
    /// --server the server's redaction stands.
    #[arg(long)]
    show_secrets: bool,

    /// Print only failures and errors: no responses, no summary.
    #[arg(long, short = 'q', conflicts_with = "verbose")]
    quiet: bool,

    /// End an event stream after this many events (a WebSocket after this many
    /// messages received).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_events: Option<u64>,

    /// End an event stream or a WebSocket connection after this many milliseconds.
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    max_time: Option<u64>,

    /// WebSocket with piped stdin: after the last line is sent, close once no message
    /// has come for this many milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 2000)]
    wait: u64,

    /// Send the requests through the execution server at this URL (`volley serve`)
    /// instead of from here: one server session and flow for the run, visible to its
    /// observers. Files are sent as text; `< file` references and volley.jsonc are
    /// read on the server, relative to its workspace.
    #[arg(long, value_name = "URL", env = "VOLLEY_SERVER", conflicts_with = "cookie_jar")]
    server: Option<String>,

    /// The bearer token of the execution server (with --server).
    #[arg(long, value_name = "TOKEN", env = "VOLLEY_TOKEN", hide_env_values = true, requires = "server")]
    token: Option<String>,
}

const RUN_EXAMPLES: &str = "\
Examples:
  volley run api.http                        run every request of the file, in order
  volley run api.http --name login --name me run two requests, in that order
  volley run api.http --index 2              run the third request
  volley run api.http -p staging --var id=7  with a profile and one more variable
  volley run tests/ --report junit=out.xml   a directory, with a JUnit report for CI
  volley run api.http --json | jq .response.status
  volley run events.http --max-events 10       an event stream, ended after 10 events
  printf 'hi\\n' | volley run chat.http          a WebSocket: send stdin's lines, print replies
  volley run api.http --server http://127.0.0.1:4097   through a running `volley serve`

Requests run in file order, so a later request can use an earlier one's response:
{{login.response.body.$.token}}. `# @assert` lines check each response:
  # @assert status == 200
  # @assert header Content-Type contains json
  # @assert jsonpath $.items[0].id exists

A request with errors is refused and reported, and the others run (--strict sends
nothing instead). `# @disabled` skips a request; `# @note` asks before sending it.

Exit codes:
  0  every request ran and every assertion passed
  1  an assertion failed or is invalid
  2  usage error (bad arguments, unreadable file, no such request)
  3  a request was refused (it has errors, or its `# @note` could not be
     confirmed), a file has errors outside any request, or a request could
     not be built (undefined variable, missing file, unknown resolver)
  4  a transport failure (connection refused, DNS, TLS, timeout, a refused
     WebSocket handshake, a stream that broke)
  130 interrupted with Ctrl-C (the reports are still written)
With several failures the code is the first of 3, 4, 1.";

/// A report format of `--report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReportFormat {
    Junit,
    Json,
}

pub(crate) fn parse_var(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => Ok((name.trim().to_owned(), value.to_owned())),
        _ => Err(format!("expected NAME=VALUE, got `{text}`")),
    }
}

fn parse_report(text: &str) -> Result<(ReportFormat, PathBuf), String> {
    let (format, path) =
        text.split_once('=').ok_or_else(|| format!("expected junit=PATH or json=PATH, got `{text}`"))?;
    let format = match format {
        "junit" => ReportFormat::Junit,
        "json" => ReportFormat::Json,
        other => return Err(format!("unknown report format `{other}` (junit or json)")),
    };
    if path.is_empty() {
        return Err("the report needs a path: junit=PATH or json=PATH".to_owned());
    }
    Ok((format, PathBuf::from(path)))
}

/// How the run shows things.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Normal,
    Verbose,
    Quiet,
    Json,
}

pub(crate) fn run(args: &RunArgs) -> anyhow::Result<Exit> {
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().context("cannot start the async runtime")?;
    runtime.block_on(execute(args))
}

async fn execute(args: &RunArgs) -> anyhow::Result<Exit> {
    let started = Instant::now();
    let files = match select::load(&args.files) {
        Ok(files) => files,
        Err(problem) => return Ok(problem.print()),
    };
    let plan = match select::plan(&files, &args.names, args.index) {
        Ok(plan) => plan,
        Err(problem) => return Ok(problem.print()),
    };
    let mode = if args.json {
        Mode::Json
    } else if args.quiet {
        Mode::Quiet
    } else if args.verbose {
        Mode::Verbose
    } else {
        Mode::Normal
    };
    // A report that cannot be written fails the run before anything is sent.
    for (_, path) in &args.report {
        if let Err(error) = std::fs::File::create(path) {
            let message = format!("cannot write the report `{}`: {error}", path.display());
            return Ok(select::Problem::usage(message, Some("check that its directory exists")).print());
        }
    }
    let found = select::diagnostics(&files, &plan, mode, args.strict);
    let blocked = args.strict && found.errors > 0;
    let mut interrupted = false;
    let results = if blocked {
        // Nothing is sent; the records and reports still say why, request by request.
        let mut results = Vec::with_capacity(plan.len());
        for step in &plan {
            let file = &files[step.file];
            let result = RequestResult::not_sent(file, step.request).context("planned request exists")?;
            if mode == Mode::Json {
                crate::output::line(&serde_json::to_string(&record::record(&result, file))?);
            }
            results.push(result);
        }
        results
    } else {
        let executor = match &args.server {
            Some(url) => remote(args, url).map(|remote| Box::new(remote) as Box<dyn Execute>),
            None => client(args, &files).map(|client| Box::new(client) as Box<dyn Execute>),
        };
        match executor {
            Ok(executor) => {
                let sent = send(args, &*executor, &files, &plan, mode).await?;
                // A remote client's flow is finished; nothing to do for a local one.
                if let Err(error) = executor.close().await {
                    anstream::eprintln!(
                        "{}",
                        render::plain(&format!("could not finish the server's flow: {error}"), None)
                    );
                }
                interrupted = sent.interrupted;
                sent.results
            }
            Err(problem) => return Ok(problem.print()),
        }
    };
    let elapsed = started.elapsed();
    let mut exit = results.iter().map(RequestResult::exit).fold(Exit::Success, Exit::worst);
    if found.outside > 0 {
        exit = exit.worst(Exit::Invalid);
    }
    for (format, path) in &args.report {
        let written = match format {
            ReportFormat::Junit => report::junit(&results, &files, elapsed),
            ReportFormat::Json => report::json(&results, &files, elapsed),
        };
        if let Err(error) = written.and_then(|text| {
            std::fs::write(path, text).with_context(|| format!("cannot write the report `{}`", path.display()))
        }) {
            anstream::eprintln!("{}", render::plain(&format!("{error:#}"), None));
            exit = exit.worst(Exit::Usage);
        }
    }
    if matches!(mode, Mode::Normal | Mode::Verbose) && !blocked {
        human::summary(&results, found.outside, elapsed);
    }
    if interrupted {
        anstream::eprintln!("{}", render::plain("interrupted (Ctrl-C): the requests after it were not sent", None));
        return Ok(Exit::Code(Exit::INTERRUPTED));
    }
    Ok(exit)
}

/// Sends the planned requests in order through one client.
async fn send(
    args: &RunArgs,
    client: &dyn Execute,
    files: &[select::File],
    plan: &[select::Step],
    mode: Mode,
) -> anyhow::Result<Sent> {
    let overrides: Map<String, Value> =
        args.vars.iter().map(|(name, value)| (name.clone(), Value::String(value.clone()))).collect();
    // The requests of each file by index (`Document::request` walks the blocks).
    let requests: Vec<Vec<&volley_syntax::Request>> =
        files.iter().map(|file| file.document.requests().collect()).collect();
    // Streams print as they go: a progress bar would be redrawn between their lines.
    let streams = plan.iter().any(|step| {
        requests[step.file].get(step.request).is_some_and(|request| request.protocol != volley_syntax::Protocol::Http)
    });
    // A question on the terminal (`# @note`) would be overdrawn by a progress bar too.
    let asks = !args.yes && confirm::can_ask();
    let questions = asks
        && plan.iter().any(|step| requests[step.file].get(step.request).is_some_and(|request| request.note.is_some()));
    let progress = if streams || questions { ProgressBar::hidden() } else { progress_bar(plan.len(), mode) };
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
    let turn = Turn {
        args,
        client,
        overrides: &overrides,
        limits: &limits,
        progress: &progress,
        mode,
        several: plan.len() > 1,
        asks,
    };
    let mut results: Vec<RequestResult> = Vec::with_capacity(plan.len());
    let mut stop = false;
    // The named requests this run did not send or got no response for, and why: a
    // later request that needs their response says so.
    let mut missing: HashMap<String, &'static str> = HashMap::new();
    for step in plan {
        let file = &files[step.file];
        let request = *requests[step.file].get(step.request).context("planned request exists")?;
        let result = if stop || interrupt.is_cancelled() {
            RequestResult::skipped(file, request, Skip::Stopped)
        } else if request.disabled {
            RequestResult::skipped(file, request, Skip::Disabled)
        } else if let Some(refusal) = refusal::of(&file.document, request) {
            RequestResult::refused(file, request, refusal)
        } else if let Some(unsent) = turn.confirm(file, request).await {
            unsent
        } else {
            turn.exchange(file, request, &missing).await
        };
        if !matches!(result.outcome, Outcome::Response { .. } | Outcome::Error(_)) {
            progress.suspend(|| human::print(&result, file, mode, turn.several));
        }
        if !matches!(result.outcome, Outcome::Skipped(Skip::Stopped)) {
            progress.inc(1);
        }
        if let Some(name) = &result.name {
            match result.missing_reason() {
                Some(why) => missing.insert(name.clone(), why),
                None => missing.remove(name),
            };
        }
        stop = stop || (args.fail_fast && !result.passed());
        if mode == Mode::Json {
            let line = serde_json::to_string(&record::record(&result, file))?;
            progress.suspend(|| crate::output::line(&line));
        }
        results.push(result);
    }
    progress.finish_and_clear();
    signals.abort();
    Ok(Sent { results, interrupted: interrupt.is_cancelled() })
}

/// What each turn of the run needs beside its request.
struct Turn<'a> {
    args: &'a RunArgs,
    client: &'a dyn Execute,
    overrides: &'a Map<String, Value>,
    limits: &'a stream::Limits,
    progress: &'a ProgressBar,
    mode: Mode,
    /// More than one request runs: each gets a title line.
    several: bool,
    /// A `# @note` is asked about on the terminal.
    asks: bool,
}

impl Turn<'_> {
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

    /// Sends `request`, prints what came of it, and follows its stream.
    async fn exchange(
        &self,
        file: &select::File,
        request: &volley_syntax::Request,
        missing: &HashMap<String, &'static str>,
    ) -> RequestResult {
        let (args, mode) = (self.args, self.mode);
        self.progress.set_message(outcome::title(file, request));
        let mut options = RunOptions::default()
            .overrides(self.overrides.clone())
            // Through a server the client's defaults are not there: each run says them.
            .follow_redirects(args.no_redirect.then_some(false))
            .validate_ssl(args.insecure.then_some(false))
            .show_secrets(args.show_secrets)
            .cancel(self.limits.interrupt.child_token());
        if let Some(timeout) = args.timeout {
            options = options.timeout(Duration::from_millis(timeout));
        }
        let started = Instant::now();
        let response = self.client.run_parsed(&file.text, &file.document, request, Some(&file.path), options).await;
        let mut result = RequestResult::new(file, request, response).await;
        result.missing = result
            .needed_response()
            .and_then(|name| missing.get_key_value(name))
            .map(|(name, why)| (name.clone(), *why));
        self.progress.suspend(|| human::print(&result, file, mode, self.several));
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
        result
    }
}

/// The results of the requests sent, and whether Ctrl-C stopped the run.
struct Sent {
    results: Vec<RequestResult>,
    interrupted: bool,
}

/// The remote client of `--server`: a session and a flow labelled with the run.
fn remote(args: &RunArgs, url: &str) -> Result<RemoteClient, select::Problem> {
    let files: Vec<String> = args.files.iter().map(|path| path.display().to_string()).collect();
    let mut config = RemoteConfig {
        token: args.token.clone(),
        profile: args.profile.clone(),
        timeout: args.timeout.map(Duration::from_millis),
        flow_label: Some(format!("volley run {}", files.join(" "))),
        ..RemoteConfig::new(url)
    };
    config.fill_from_env();
    RemoteClient::new(config).map_err(|error| {
        select::Problem::usage(
            error.to_string(),
            Some("pass the server's base URL, like --server http://127.0.0.1:4097"),
        )
    })
}

/// The client of the run: profile, `--var`, `--no-redirect`, `--insecure`, cookies.
fn client(args: &RunArgs, files: &[select::File]) -> Result<Client, select::Problem> {
    let mut config = ClientConfig {
        profile: args.profile.clone(),
        defaults: RequestDefaults {
            follow_redirects: args.no_redirect.then_some(false),
            validate_ssl: args.insecure.then_some(false),
            ..RequestDefaults::default()
        },
        ..ClientConfig::default()
    };
    // The configuration of the first file decides the profile check and the jar.
    let probe = Client::new(ClientConfig::default());
    let directory = files.first().and_then(|file| file.path.parent()).map(PathBuf::from).unwrap_or_default();
    let found = volley_engine::stages::config_for(&probe, &directory)
        .map_err(|error| select::Problem::invalid(error.to_string(), None))?;
    if let Some(profile) = &args.profile {
        match &found {
            Some(found) => {
                found.profile(profile).map_err(|error| select::Problem::usage(error.to_string(), None))?;
            }
            None => {
                return Err(select::Problem::usage(
                    format!("unknown profile `{profile}`: no volley.jsonc or http-client.env.json was found"),
                    Some("profiles are declared in volley.jsonc `profiles`, next to the .http file or above it"),
                ));
            }
        }
    }
    let jar = CookieJar::chosen(args.cookie_jar.as_deref(), found.as_ref()).map_err(|error| {
        // A file named on the command line is a usage problem; one of volley.jsonc, invalid.
        if args.cookie_jar.is_some() {
            select::Problem::usage(error.to_string(), None)
        } else {
            select::Problem::invalid(error.to_string(), None)
        }
    })?;
    config.cookie_jar = jar;
    Ok(Client::new(config))
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
