//! `volley`: the one binary of the project. Thin by design: what a file means and how
//! a request runs is decided in the library crates; this crate reads arguments and
//! prints.

mod args;
mod auth;
mod check;
mod complete;
mod convert;
mod docs;
mod echo;
mod exit;
mod files;
mod history;
mod load;
mod lsp;
mod observe;
mod output;
mod pretty;
mod render;
mod report;
mod run;
mod serve;
mod verdict;

use std::process::ExitCode;

use clap::{CommandFactory as _, Parser, Subcommand, ValueEnum};

const AFTER_HELP: &str = "\
Exit codes:
  0  everything passed
  1  an assertion failed or is invalid (run); a file has errors (check)
  2  usage error (bad arguments, unreadable file, no such request)
  3  a request was refused (it has errors) or could not be built (run)
  4  a transport failure: connection refused, DNS, TLS, timeout (run)
  130 interrupted with Ctrl-C (run; the reports are still written)
With several failures `run` exits with the first of 3, 4, 1.

Examples:
  volley run api.http                  send every request of the file, in order
  volley run api.http --name login     send one request
  volley check .                       check every .http file below the directory
  volley load api.http --name search -c 64 -d 30s --threshold 'p95<200ms'   a load run
  volley report merge a.json b.json --junit junit.xml   merge the reports of shards
  volley import postman api.json --out api/   a Postman collection as .http files
  volley export curl api.http -n login     a request as a cURL command

Documentation: `volley docs` (built in: `volley docs cli`, `volley docs format`, …).";

/// Volley: run, check and serve .http request files.
#[derive(Debug, Parser)]
#[command(name = "volley", version, about, after_help = AFTER_HELP, propagate_version = true)]
struct Cli {
    /// When to color the output: `auto` colors a terminal and honours `NO_COLOR` and
    /// `CLICOLOR_FORCE`.
    #[arg(long, value_enum, default_value_t = Color::Auto, global = true)]
    color: Color,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
// Parsed once per process: the size of `run`'s many flags costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
enum Command {
    /// Send the requests of .http files and check their `# @assert`s.
    ///
    /// Every request of each file runs in order (so later requests can use earlier
    /// responses), unless `--name`, `--index` or `--line` selects some. Each response is printed
    /// with its status, headers, body (JSON pretty-printed) and timing; a summary line
    /// ends the run. Server-Sent Events and WebSocket messages print as they arrive
    /// (stdin's lines are sent on a WebSocket). A request with errors is refused and
    /// reported, and the others run (`--strict`: nothing is sent); a `# @disabled`
    /// request is skipped, and one with a `# @note` is confirmed first.
    Run(run::RunArgs),
    /// Check .http files for errors and warnings without sending anything.
    ///
    /// Runs the diagnostics of the language server: syntax errors, unknown methods and
    /// directives, malformed headers, unclosed `{{`, invalid timeouts and assertions,
    /// undefined variables, unknown resolvers, missing body files, invalid JSON bodies,
    /// URLs no run can send, duplicate request names and more, compiler-style with the
    /// line, a caret and a hint. The verdict is `volley run`'s on the same files with the
    /// same `-p` and `--var`: what is an error here, a run refuses before sending.
    /// Directories are searched for `.http` and `.rest` files. Exits with 1 on errors.
    Check(check::CheckArgs),
    /// Convert a cURL command, HAR, Postman, Insomnia or OpenAPI file to .http files.
    ///
    /// Reads a cURL command, a HAR capture, a Postman collection (v2.1), an Insomnia
    /// export (v4) or an OpenAPI description (3.0, 3.1). One `.http` file is printed; several files (and a generated volley.jsonc with
    /// the source's variables and servers as profiles) are written into --out. What
    /// could not be converted is listed on stderr and kept as `#` comments in the
    /// requests; the exit code is still 0 unless --strict (then 1). A source that
    /// cannot be read at all exits with 3. See `volley docs import`.
    Import(convert::ImportArgs),
    /// Write requests of a .http file as cURL commands.
    ///
    /// Each command sends exactly what `volley run` would send. Variables are resolved with the profile, volley.jsonc, .env files and --var as
    /// in a run (earlier responses are not there: nothing is sent), the cookie jar's
    /// cookies added. Secrets (credential headers, `$secret` values, sensitive
    /// variables) are written `[REDACTED]` unless --reveal. One line per request.
    Export(convert::ExportArgs),
    /// Start the execution server: run .http definitions for remote clients, keep
    /// sessions and flows, stream events to observers.
    ///
    /// Serves protocol 1.1 over HTTP (`volley docs protocol`, or GET /doc) on
    /// 127.0.0.1:4097 by default. Files are read from the workspace only. With
    /// --token every request needs `Authorization: Bearer <token>`; without it the
    /// server refuses to listen beyond loopback. Ctrl-C or SIGTERM stops it after
    /// in-flight executions finish (at most 10 s).
    Serve(serve::ServeArgs),
    /// Watch a running `volley serve` live in the terminal: flows, executions, details,
    /// WebSocket sessions.
    ///
    /// Follows the server's observer stream (/event/ws): executions appear as they run
    /// (failures in red), Enter shows one with its headers, body and assertion checks
    /// from the execution store, and WebSocket sessions show their messages both ways.
    /// Reconnects after a drop or a server restart and says when it is disconnected.
    Observe(observe::ObserveArgs),
    /// Start the language server on stdin/stdout (for editors).
    ///
    /// Speaks the Language Server Protocol: diagnostics as `volley check` reports them,
    /// document symbols and folding ranges. Configure your editor to run `volley lsp`
    /// for .http and .rest files; see `volley docs lsp`.
    Lsp,
    /// Runs a jq filter on the JSON on stdin (the language server's filters run here,
    /// in a process of their own).
    #[command(hide = true)]
    Jq {
        /// The filter.
        expression: String,
    },

    /// The response history: responses kept by the editors and by `volley run
    /// --history`, listed, shown, compared and cleared.
    ///
    /// One store per project (the directory above the file with volley.jsonc, .git or
    /// http-client.env.json), under ~/.cache/volley/history/. `volley history diff
    /// api.http --name login` compares the last two responses of `login`.
    #[command(subcommand)]
    History(history::HistoryCommand),
    /// OAuth 2.0 tokens kept between runs (`volley run --token-cache`).
    #[command(subcommand)]
    Auth(auth::AuthCommand),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    ///
    /// The script asks `volley` (on PATH) for candidates as you type: subcommands, flags,
    /// the profiles of volley.jsonc after `-p` and the request names of the files on the
    /// line after `-n`. Load it from your shell's startup file, for example:
    /// `source <(volley completions bash)` in ~/.bashrc,
    /// `source <(volley completions zsh)` in ~/.zshrc (after `compinit`),
    /// `volley completions fish | source` in ~/.config/fish/config.fish.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print Volley's documentation, built into the binary (Markdown).
    ///
    /// Without a topic, lists them: cli, format, configuration, diagnostics, scripts,
    /// import, editors, lsp, observer, protocol, cluster.
    Docs(docs::DocsArgs),
    /// Send requests of a .http file under load: virtual users or a constant rate,
    /// latency percentiles from an HDR histogram, thresholds for CI.
    ///
    /// The selected request (--name, --index), a weighted mix of several, or the whole
    /// file in order per virtual user, sent through the same engine as `volley run`
    /// (variables and resolvers evaluated for each request). Prints a live progress
    /// line and a summary; --json and --report write reports that `volley report
    /// merge` adds up across shards.
    Load(load::LoadArgs),
    /// Work with the reports of runs: merge the JSON reports of several runs (the
    /// shards of a suite) into JUnit, JSON, TAP or HTML.
    Report(report::merge::ReportArgs),
    /// Serve the local echo server of Volley's tests (127.0.0.1:8088), to try .http
    /// files offline.
    EchoServer(echo::EchoArgs),
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Color {
    Auto,
    Always,
    Never,
}

// mimalloc for Rust allocations and (below) for tree-sitter's: parsing allocates many
// small nodes, and glibc's allocator costs a fifth of the parse time on large files.
#[global_allocator]
static GLOBAL: volley_syntax::allocator::Mimalloc = volley_syntax::allocator::Mimalloc;

/// mimalloc asks the kernel for transparent huge pages on its arenas by default: the
/// first small allocation then makes 2 MiB resident, and a `volley run` of 1,000
/// requests held 31.7 MB where it needs 18.3 MB (docs/benchmarks.md, "CLI and engine
/// against peers"). Turned off before mimalloc's first allocation by a constructor that
/// the loader runs before mimalloc's own (objects of the binary come before native
/// libraries in the link, and `.init_array` runs in link order). mimalloc then also sets
/// `PR_SET_THP_DISABLE`, which children of the process inherit.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)] // A constructor is a link section; see `huge_pages_off`.
#[used]
#[unsafe(link_section = ".init_array")]
static HUGE_PAGES_OFF: extern "C" fn() = huge_pages_off;

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
extern "C" fn huge_pages_off() {
    /// `mi_option_allow_thp` in mimalloc 3's `mi_option_e` (libmimalloc-sys has no constant for it).
    const MI_OPTION_ALLOW_THP: libmimalloc_sys::mi_option_t = 43;
    // SAFETY: writes one entry of mimalloc's option table, a plain static; no thread
    // exists yet and nothing has allocated.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_ALLOW_THP, 0) }
}

fn main() -> ExitCode {
    #[allow(unsafe_code)] // The one unsafe call of the binary; see its safety contract.
    // SAFETY: first thing in main, before any thread or tree-sitter object exists.
    unsafe {
        volley_syntax::allocator::use_mimalloc_for_trees();
    }
    // How every client of this process sends: Volley's HTTP client. The engine and the
    // front ends take the transport's contract only (docs/ARCHITECTURE.md).
    volley_engine::transport::install_default(volley_http::transport::HttpTransport::shared);
    complete::answer_if_asked(Cli::command);
    let cli = Cli::parse();
    let choice = match cli.color {
        Color::Auto => anstream::ColorChoice::Auto,
        Color::Always => anstream::ColorChoice::Always,
        Color::Never => anstream::ColorChoice::Never,
    };
    choice.write_global();
    let result = match cli.command {
        Command::Run(args) => run::run(&args),
        Command::Check(args) => check::run(&args),
        Command::Import(args) => convert::import(&args),
        Command::Export(args) => convert::export(&args),
        Command::Completions { shell } => {
            // Into memory first: `volley completions bash | head` must not panic on a closed pipe.
            output::raw(&complete::registration(shell));
            Ok(exit::Exit::Success)
        }
        Command::EchoServer(args) => echo::run(&args),
        Command::Load(args) => load::run(&args),
        Command::Report(args) => report::merge::run(&args),
        Command::Docs(args) => Ok(docs::run(&args)),
        Command::Serve(args) => serve::run(&args),
        Command::Observe(args) => observe::run(&args),
        Command::Lsp => lsp::run(),
        Command::Jq { expression } => {
            Ok(if volley_lsp::filter::evaluate_stdio(&expression) { exit::Exit::Success } else { exit::Exit::Failed })
        }
        Command::Auth(command) => Ok(auth::run(&command)),
        Command::History(command) => history::run(&command),
    };
    match result {
        Ok(code) => code.into(),
        Err(error) => {
            anstream::eprintln!("{}", render::plain(&format!("{error:#}"), None));
            exit::Exit::Usage.into()
        }
    }
}
