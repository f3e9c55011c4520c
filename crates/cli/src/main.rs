//! `volley`: the one binary of the project (checking files now; running, serving and
//! the language server as they land). Thin by design: what a file means is decided
//! in the library crates, this crate only reads arguments and prints.

mod check;
mod exit;
mod render;

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

const EXIT_CODES: &str = "\
Exit codes:
  0  everything passed
  2  usage error (bad arguments, unreadable file)
  3  a file has errors (syntax errors, invalid directives, ...)";

/// Volley: a toolkit for .http request files.
#[derive(Debug, Parser)]
#[command(name = "volley", version, about, after_help = EXIT_CODES, propagate_version = true)]
struct Cli {
    /// When to color the output: `auto` colors a terminal and honours `NO_COLOR`.
    #[arg(long, value_enum, default_value_t = Color::Auto, global = true)]
    color: Color,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check .http files for errors and warnings without sending anything.
    ///
    /// Reports syntax errors, unknown methods and directives, malformed headers,
    /// unclosed `{{`, invalid timeouts, WebSocket requests with bodies, duplicate
    /// request names and more, compiler-style with the line, a caret and a hint.
    /// Directories are searched for `.http` and `.rest` files.
    Check(check::CheckArgs),
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
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    #[allow(unsafe_code)] // The one unsafe call of the binary; see its safety contract.
    // SAFETY: first thing in main, before any thread or tree-sitter object exists.
    unsafe {
        volley_syntax::allocator::use_mimalloc_for_trees();
    }
    let cli = Cli::parse();
    let choice = match cli.color {
        Color::Auto => anstream::ColorChoice::Auto,
        Color::Always => anstream::ColorChoice::Always,
        Color::Never => anstream::ColorChoice::Never,
    };
    choice.write_global();
    let result = match cli.command {
        Command::Check(args) => check::run(&args),
    };
    match result {
        Ok(code) => code.into(),
        Err(error) => {
            anstream::eprintln!("error: {error:#}");
            exit::Exit::Usage.into()
        }
    }
}
