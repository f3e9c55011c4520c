//! The lines of a block that compose requests: JetBrains' and Kulala's `import` and
//! `run` lines, httpyac's `# @loop` (what they mean for a document: `composition.rs`).

use serde::Serialize;

use crate::span::{Span, Spanned};

/// httpyac's `# @loop`: how a request repeats.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Loop {
    /// `for 3`: this many times (written as is, `{{ }}` allowed).
    Count(Spanned<String>),
    /// `for item of items`: once per element of the list `items` (a variable path or a
    /// JavaScript expression), the element in the variable `item`.
    Each {
        /// The variable of the element.
        name: Spanned<String>,
        /// The list, as written.
        list: Spanned<String>,
    },
    /// Anything else (`while …`): refused with this reason.
    Unsupported(Spanned<String>),
}

/// A line that imports or runs requests of another place: JetBrains' and Kulala's
/// `import ./file.http` and `run #name` / `run ./file.http (@name=value)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Command {
    /// The whole line.
    pub span: Span,
    /// What it does.
    pub kind: CommandKind,
}

/// What a [`Command`] does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CommandKind {
    /// `import ./file.http`: the named requests and file variables of the file are
    /// available to this one (as httpyac's `# @import`).
    Import(Spanned<String>),
    /// `run #name` or `run ./file.http`, with `(@name=value, …)` set for that run.
    Run {
        /// What runs.
        target: RunTarget,
        /// The variables set for it, in order.
        variables: Vec<RunVariable>,
    },
}

/// What a `run` line runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunTarget {
    /// `run #name`: the request of that name, in this file or an imported one.
    Request(Spanned<String>),
    /// `run ./file.http`: every request of that file, in order.
    File(Spanned<String>),
}

impl RunTarget {
    /// The name or path, with its span.
    #[must_use]
    pub fn text(&self) -> &Spanned<String> {
        match self {
            Self::Request(name) | Self::File(name) => name,
        }
    }
}

/// `@name=value` of a `run` line: set for that run, above every other variable. The
/// value may use `{{ }}`, resolved where the request runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunVariable {
    /// The name, without `@`.
    pub name: Spanned<String>,
    /// The value as written, trimmed.
    pub value: Spanned<String>,
}
