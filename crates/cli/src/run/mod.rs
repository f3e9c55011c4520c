//! `volley run`: sends the requests of `.http` files, checks their `@assert`s, prints
//! the exchanges and writes reports.

mod clients;
mod compose;
mod confirm;
mod depends;
mod history;
mod human;
pub(crate) mod outcome;
mod part;
mod prompt;
mod record;
mod refusal;
mod report;
pub(crate) mod select;
mod send;
mod shard;
mod stream;
mod test_mode;
mod watch;

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context as _;
use volley_engine::Execute;

use crate::exit::Exit;
use crate::{output, render, verdict};
use outcome::{RequestResult, Tally};

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
    #[arg(long = "name", short = 'n', value_name = "NAME", add = crate::complete::request_names())]
    names: Vec<String>,

    /// Run only the request at this position of each file (0 is the first).
    #[arg(long, value_name = "N", conflicts_with = "names")]
    index: Option<usize>,

    /// Keep each response (and each failed exchange) in the project's response history,
    /// the one the editors keep, redacted as `--json` shows it: `volley history` lists,
    /// shows and diffs them (the last 10 per request, 100 MiB in all, under
    /// `~/.cache/volley/history/`).
    #[arg(long, conflicts_with = "server")]
    pub(crate) history: bool,

    /// Keep OAuth 2.0 tokens between runs in the user's cache directory
    /// (`~/.cache/volley/tokens.json`, readable by its owner only), so that a later run
    /// reuses or refreshes them rather than sign in again; `volley auth clear` removes it.
    #[arg(long, env = "VOLLEY_TOKEN_CACHE", hide_env_values = true, conflicts_with = "server")]
    token_cache: bool,

    /// Run only the request whose block holds this line of each file (1 is the first):
    /// a request owns every line from its `###` line to the next, so the line of its
    /// `###`, its `# @name`, a directive or a comment above it picks it, as a cursor does.
    #[arg(long, value_name = "N", conflicts_with_all = ["names", "index"], value_parser = clap::value_parser!(u32).range(1..))]
    line: Option<u32>,

    /// Set a variable for this run: `--var token=abc`. Repeatable; beats every other
    /// source (file, config, profile).
    #[arg(long = "var", value_name = "NAME=VALUE", value_parser = crate::args::parse_var)]
    vars: Vec<(String, String)>,

    /// Answer a prompt of the file (httpyac's `{{$input LABEL}}`, `{{$password LABEL}}`,
    /// `{{$pick LABEL $value: a,b}}`):
    /// `--prompt 'LABEL=value'`. Repeatable. In a terminal the others are asked (a
    /// password hidden); without one, a request with a prompt left unanswered is
    /// refused, naming it.
    #[arg(long = "prompt", value_name = "LABEL=VALUE", value_parser = crate::args::parse_var)]
    prompts: Vec<(String, String)>,

    /// Use this profile of volley.jsonc (or environment of http-client.env.json).
    #[arg(long, short = 'p', value_name = "NAME", env = "VOLLEY_PROFILE", hide_env_values = true, add = crate::complete::profiles())]
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

    /// Trust the CA certificates of this PEM bundle beside the system's (repeatable).
    #[arg(long, value_name = "FILE", conflicts_with = "server")]
    cacert: Vec<PathBuf>,

    /// Present this client certificate (mutual TLS) to every host, over volley.jsonc
    /// `tls.hosts`: PEM with `--key` (or a PEM file holding the key too), or PKCS#12
    /// (`.p12`, `.pfx`).
    #[arg(long, value_name = "FILE", conflicts_with = "server")]
    cert: Option<PathBuf>,

    /// The private key of `--cert` (PEM).
    #[arg(long, value_name = "FILE", requires = "cert")]
    key: Option<PathBuf>,

    /// The passphrase of an encrypted `--key` or a PKCS#12 `--cert`, best as
    /// `{{$secret NAME}}` (read from the environment or .env, never shown).
    #[arg(long, value_name = "TEMPLATE", requires = "cert")]
    cert_passphrase: Option<String>,

    /// Send every request through this proxy (`http://host:port`, `socks5://host:port`),
    /// over volley.jsonc `proxy` and `HTTP_PROXY`/`HTTPS_PROXY`; `""` for none.
    #[arg(long, value_name = "URL", conflicts_with = "server")]
    proxy: Option<String>,

    /// Reach these hosts directly, not through a proxy (comma-separated, like `NO_PROXY`).
    #[arg(long, value_name = "LIST", conflicts_with = "server")]
    noproxy: Option<String>,

    /// Use HTTP/1.1 for requests whose request line names no version.
    #[arg(long = "http1.1", conflicts_with_all = ["http2", "server"])]
    http1_1: bool,

    /// Use HTTP/2 for requests whose request line names no version (prior knowledge on
    /// `http://`, ALPN on `https://`).
    #[arg(long, conflicts_with = "server")]
    http2: bool,

    /// Keep cookies in this file: read before the run, saved after each request.
    /// Without it cookies live for the run only (or where volley.jsonc `cookies` says).
    #[arg(long, value_name = "FILE")]
    cookie_jar: Option<PathBuf>,

    /// Stop at the first request that fails (an assertion, or an error).
    #[arg(long)]
    fail_fast: bool,

    /// Read files outside the project (`< ../../secret.txt`, a script file): the
    /// directory of volley.jsonc, else of the checkout's `.git`, else of the `.http`
    /// file. Without it such a request is refused before anything is sent.
    #[arg(long)]
    allow_external_files: bool,

    /// Run again each time a file of the run changes (the `.http` files, a directory's
    /// new ones, the volley.jsonc, env and `.env` files that apply), the screen cleared
    /// first on a terminal, until Ctrl-C; the exit code is the last run's.
    #[arg(long)]
    watch: bool,

    /// Send nothing when a request to run has errors, or its file has errors outside
    /// any request. Without it, each request with errors is refused and reported, and
    /// the others run.
    #[arg(long)]
    strict: bool,

    /// Send nothing when a request to run, or its file outside any request, has a
    /// warning (an unknown directive, an undefined variable the parser sees, …), as
    /// `volley check --deny-warnings` fails on them: a CI gate that lets nothing through
    /// unchecked. Exit code 3.
    #[arg(long)]
    deny_warnings: bool,

    /// Send the requests that have a `# @note` without asking. Without it, each one is
    /// shown and `send? [y/N]` is asked on the terminal; when stdin is not a terminal,
    /// it is refused.
    #[arg(long, short = 'y')]
    yes: bool,

    /// Print one JSON document per request (NDJSON) instead of text.
    #[arg(long, conflicts_with_all = ["verbose", "quiet"])]
    json: bool,

    /// Write a report after the run: `junit=report.xml`, `json=report.json`,
    /// `tap=report.tap` (TAP 14) or `html=report.html` (one self-contained page).
    /// Repeatable.
    #[arg(long, value_name = "FORMAT=PATH", value_parser = crate::report::parse_target)]
    report: Vec<(crate::report::Format, PathBuf)>,

    /// Print one line per request (✓, ✗ or -, its name, status, assertions passed, time)
    /// once the run is over, then each failure in full and the summary.
    #[arg(long, conflicts_with_all = ["json", "verbose", "quiet"])]
    test: bool,

    /// Print only this part of the response of the one request run: `body` (the bytes
    /// as received, for a pipe into jq), `headers`, `status` or `none`. Failures and
    /// errors go to stderr; the exit code is the run's.
    #[arg(long, short = 'o', value_name = "PART", value_enum, conflicts_with_all = ["json", "verbose", "quiet", "test"])]
    output: Option<part::Part>,

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

    /// Run this many files at the same time. The requests of a file still run in
    /// order, each file with its own variables, cookies and responses (its requests
    /// cannot use another file's); the output stays grouped per file, in file order.
    /// Default 1: the files, a directory's too, run in order with one client, so a
    /// file can use the responses of the files before it.
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,

    /// Run the selected requests this many times (each time a file starts afresh).
    /// With `--jobs`, the runs of the files go at the same time: a simple load.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,

    /// Send a request again, up to N more times, when its assertions fail or its
    /// exchange fails (connection, timeout); the attempts are shown and reported.
    #[arg(long, value_name = "N", default_value_t = 0)]
    retry: u32,

    /// Wait this long before each retry.
    #[arg(long, value_name = "MS", default_value_t = 1000, requires = "retry")]
    retry_interval: u64,

    /// Wait this long between two requests of a file.
    #[arg(long, value_name = "MS")]
    delay: Option<u64>,

    /// Run only shard K of N of the files (1 <= K <= N), for a CI matrix of N
    /// machines: the split depends on the files' paths only, so the N shards run
    /// every file exactly once between them.
    #[arg(long, value_name = "K/N", value_parser = shard::parse)]
    shard: Option<shard::Shard>,

    /// Send the requests through the execution server at this URL (`volley serve`)
    /// instead of from here: one server session and flow for the run, visible to its
    /// observers. Files are sent as text; `< file` references and volley.jsonc are
    /// read on the server, relative to its workspace.
    #[arg(long, value_name = "URL", env = "VOLLEY_SERVER", hide_env_values = true, conflicts_with = "cookie_jar")]
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
  volley run tests/ --report junit=out.xml   a directory (its files in order, one client), a JUnit report
  volley run tests/ --jobs 4                 four files at a time, each with a client of its own
  volley run tests/ --shard 2/4              the second quarter of the files (a CI matrix)
  volley run api.http --retry 3 --retry-interval 500   send failing requests again
  volley run smoke.http --repeat 100 --jobs 8          a simple load
  volley run api.http --json | jq .response.status
  volley run api.http -n me -o body | jq .id  only the response body, as received
  volley run tests/ --test                   a line per request, then the failures
  volley run api.http --watch                again on every save, until Ctrl-C
  volley run tests/ --report html=report.html  a self-contained HTML report
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

/// How the run shows things.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Normal,
    Verbose,
    Quiet,
    Json,
    /// `--test`: the list of requests and the failures, once the run is over.
    Test,
    /// `--output`: one part of the one response, once the run is over.
    Part(part::Part),
}

impl RunArgs {
    /// Which requests of the files `--name`, `--index` or `--line` select.
    fn selection(&self) -> select::Selection<'_> {
        match (self.index, self.line) {
            (Some(index), _) => select::Selection::Index(index),
            (None, Some(line)) => select::Selection::Line(line - 1),
            (None, None) if self.names.is_empty() => select::Selection::All,
            (None, None) => select::Selection::Names(&self.names),
        }
    }
}

pub(crate) fn run(args: &RunArgs) -> anyhow::Result<Exit> {
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().context("cannot start the async runtime")?;
    if args.watch {
        return runtime.block_on(watch::watch(&args.files, || execute(args)));
    }
    runtime.block_on(execute(args))
}

async fn execute(args: &RunArgs) -> anyhow::Result<Exit> {
    let started = Instant::now();
    let mut files = match select::load(&args.files) {
        Ok(files) => files,
        Err(problem) => return Ok(problem.print()),
    };
    if let Some(shard) = args.shard {
        // `--name` and `--index` are checked against every file, then the shard keeps
        // its part: a shard without the named request is no error, a misspelt name is.
        if let Err(problem) = select::plan(&files, &select::Runs::new(), &args.selection(), false) {
            return Ok(problem.print());
        }
        files = shard::select(files, |file| Path::new(&file.shown), shard);
        if files.is_empty() {
            let message = format!("shard {shard} has no files: the other shards run them all");
            output::error_line(&format!("note: {message}"));
        }
    }
    let jobs = match clients::jobs(args) {
        Ok(jobs) => jobs,
        Err(problem) => return Ok(problem.print()),
    };
    // What `run` lines run, the files they lead to read.
    let runs = match compose::link(&mut files, args.allow_external_files, args.server.is_some()) {
        Ok(runs) => runs,
        Err(problem) => return Ok(problem.print()),
    };
    let mut plan = match select::plan(&files, &runs, &args.selection(), args.shard.is_some()) {
        Ok(plan) => plan,
        Err(problem) => return Ok(problem.print()),
    };
    // A part of the files selected: the requests whose responses it reads run first.
    if !matches!(args.selection(), select::Selection::All) {
        match depends::with_dependencies(&files, plan) {
            Ok((planned, added)) => {
                plan = planned;
                for added in added {
                    output::error_line(&format!(
                        "note: `{}` runs first: {} reads its response (`{}`)",
                        added.needed, added.by, added.reference
                    ));
                }
            }
            Err(problem) => return Ok(problem.print()),
        }
    }
    let mode = if args.json {
        Mode::Json
    } else if let Some(part) = args.output {
        Mode::Part(part)
    } else if args.test {
        Mode::Test
    } else if args.quiet {
        Mode::Quiet
    } else if args.verbose {
        Mode::Verbose
    } else {
        Mode::Normal
    };
    if matches!(mode, Mode::Part(_))
        && let Err(problem) = part::check(plan.len().saturating_mul(usize::try_from(args.repeat).unwrap_or(usize::MAX)))
    {
        return Ok(problem.print());
    }
    // A report that cannot be written fails the run before anything is sent.
    for (_, path) in &args.report {
        // Its directory is created, as `volley import --out` creates its own.
        if let Err(error) = crate::report::create_parent(path) {
            let message = format!("cannot write the report `{}`: {error:#}", path.display());
            return Ok(select::Problem::usage(message, Some("choose a path whose directories can be made")).print());
        }
        if let Err(error) = std::fs::File::create(path) {
            let message = format!("cannot write the report `{}`: {error}", path.display());
            return Ok(select::Problem::usage(message, Some("check that its directory exists")).print());
        }
    }
    // The client is made before anything is shown: the analysis reads its configuration.
    let (mut local, mut remote_client) = (None, None);
    let chosen = match &args.server {
        Some(url) => clients::remote(args, url).map(|made| remote_client = Some(made)),
        None => clients::client(args, &files).map(|made| local = Some(made)),
    };
    if let Err(problem) = chosen {
        return Ok(problem.print());
    }
    // The verdict of `volley check` on the same files, profile and variables: what it
    // calls an error is refused here, at the same place. Through a server, whose
    // configuration and variables are its own, the parser's diagnostics only.
    if let Some(client) = &local {
        let analyses: Vec<_> = {
            let parsed: Vec<(&Path, &volley_syntax::Document)> =
                files.iter().map(|file| (file.path.as_path(), &file.document)).collect();
            let mut invocation = verdict::Invocation::new(client, args.profile.as_deref(), &args.vars, &parsed);
            invocation.allow_external_files = args.allow_external_files;
            // A linked file's requests run with what its `run` lines set: the engine judges them.
            files
                .iter()
                .map(|file| {
                    if file.linked {
                        return Vec::new();
                    }
                    invocation.analyze(&file.path, &file.document, &file.text).diagnostics
                })
                .collect()
        };
        for (file, analysis) in files.iter_mut().zip(analyses) {
            verdict::merge(&mut file.document, analysis);
        }
    }
    let found = select::diagnostics(&files, &plan, mode, args.strict);
    let denied = args.deny_warnings && found.warnings > 0;
    if denied {
        let noun = if found.warnings == 1 { "warning" } else { "warnings" };
        anstream::eprintln!(
            "{}",
            render::plain(
                &format!("{} {noun} and --deny-warnings: nothing was sent", found.warnings),
                Some("fix them, or run without --deny-warnings"),
            )
        );
    }
    let blocked = (args.strict && found.errors > 0) || denied;
    let mut interrupted = false;
    let (results, tally) = if blocked {
        // Nothing is sent; the records and reports still say why, request by request.
        let mut results = Vec::with_capacity(plan.len());
        let requests: Vec<Vec<&volley_syntax::Request>> =
            files.iter().map(|file| file.document.requests().collect()).collect();
        for step in &plan {
            let file = &files[step.file];
            let request = requests[step.file].get(step.request).context("planned request exists")?;
            let result = RequestResult::not_sent(file, request);
            if mode == Mode::Json {
                crate::output::line(&serde_json::to_string(&record::record(&result, file))?);
            }
            results.push(result);
        }
        let tally = Tally::of(&results);
        (results, tally)
    } else {
        let executor: &dyn Execute = match (&local, &remote_client) {
            (Some(client), _) => client,
            (_, Some(remote)) => remote,
            (None, None) => anyhow::bail!("a local or a remote client is made"),
        };
        if let Some(remote) = &remote_client
            && let Some(problem) = clients::reach(remote, args, &files).await
        {
            return Ok(problem.print());
        }
        let sent = send::send(args, executor, local.as_ref(), &files, &plan, mode, jobs).await?;
        // A remote client's flow is finished; nothing to do for a local one.
        if let Err(error) = executor.close().await {
            output::error_line(&render::plain(&format!("could not finish the server's flow: {error}"), None));
        }
        interrupted = sent.interrupted;
        (sent.results, sent.tally)
    };
    let elapsed = started.elapsed();
    let mut exit = tally.exit;
    if found.outside > 0 {
        exit = exit.worst(Exit::Invalid);
    }
    if let Err(error) = report::write(&args.report, &results, &files, elapsed, args.profile.as_deref()) {
        output::error_line(&render::plain(&format!("{error:#}"), None));
        exit = exit.worst(Exit::Usage);
    }
    match mode {
        Mode::Normal | Mode::Verbose if !blocked => human::summary(&tally, found.outside, elapsed),
        Mode::Test => test_mode::finish(&results, &files, found.outside, elapsed, blocked),
        Mode::Part(part) => part::print(part, &results, &files),
        _ => {}
    }
    if interrupted {
        anstream::eprintln!("{}", render::plain("interrupted (Ctrl-C): the requests after it were not sent", None));
        return Ok(Exit::Code(Exit::INTERRUPTED));
    }
    Ok(exit)
}
