//! `volley docs`: the user documentation, built into the binary, so an installed
//! `volley` has its manual without the repository.

use crate::exit::Exit;
use crate::render;

/// Each topic: its name, what it covers, its text (the repository's `docs/<name>.md`).
const TOPICS: &[(&str, &str, &str)] = &[
    ("cli", "the commands, their flags, output, reports and exit codes", include_str!("../../../docs/cli.md")),
    ("format", "the .http format Volley reads, other tools' syntax included", include_str!("../../../docs/format.md")),
    (
        "configuration",
        "volley.jsonc, profiles, .env files, resolvers, authentication, TLS",
        include_str!("../../../docs/configuration.md"),
    ),
    ("diagnostics", "every diagnostic code, with an example", include_str!("../../../docs/diagnostics.md")),
    ("scripts", "pre-request scripts and response handlers", include_str!("../../../docs/scripts.md")),
    ("import", "converting cURL, HAR, Postman, Insomnia and OpenAPI", include_str!("../../../docs/import.md")),
    ("editors", "VS Code and Neovim", include_str!("../../../docs/editors.md")),
    ("lsp", "the language server", include_str!("../../../docs/lsp.md")),
    ("observer", "watching a server's runs: terminal UI and web page", include_str!("../../../docs/observer.md")),
    ("protocol", "the execution server's HTTP protocol", include_str!("../../../docs/protocol.md")),
    ("cluster", "several servers over Redis", include_str!("../../../docs/cluster.md")),
];

/// Arguments of `volley docs`.
#[derive(Debug, clap::Args)]
pub(crate) struct DocsArgs {
    /// The topic to print (Markdown); without one, the list of topics.
    #[arg(value_name = "TOPIC")]
    topic: Option<String>,
}

pub(crate) fn run(args: &DocsArgs) -> Exit {
    let Some(wanted) = args.topic.as_deref() else {
        crate::output::line("Volley's documentation, built in: `volley docs TOPIC` prints one topic (Markdown).\n");
        for (name, about, _) in TOPICS {
            crate::output::line(&format!("  {name:<14} {about}"));
        }
        return Exit::Success;
    };
    if let Some((_, _, text)) =
        TOPICS.iter().find(|(name, _, _)| name.eq_ignore_ascii_case(wanted.trim_end_matches(".md")))
    {
        crate::output::raw(text.as_bytes());
        return Exit::Success;
    }
    let names = TOPICS.iter().map(|(name, _, _)| *name);
    let hint = match volley_syntax::closest(wanted, names.clone()) {
        Some(close) => format!("did you mean `{close}`?"),
        None => format!("topics: {}", names.collect::<Vec<_>>().join(", ")),
    };
    anstream::eprintln!("{}", render::plain(&format!("no documentation topic `{wanted}`"), Some(&hint)));
    Exit::Usage
}
