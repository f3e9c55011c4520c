//! Composition: JetBrains' and Kulala's `import` and `run` lines, httpyac's `# @import`
//! and `# @loop` — what a block runs besides its own request, and what a file takes from
//! others. The engine carries them out (`compose.rs`).

use crate::command::{CommandKind, Loop, RunTarget, RunVariable};
use crate::directive::DirectiveKind;
use crate::document::{Block, Directive, Document, Request};
use crate::span::Spanned;

impl Block {
    /// The block's `run` lines (JetBrains, Kulala): what runs in its place.
    pub fn runs(&self) -> impl Iterator<Item = (&RunTarget, &[RunVariable])> {
        self.commands.iter().filter_map(|command| match &command.kind {
            CommandKind::Run { target, variables } => Some((target, variables.as_slice())),
            CommandKind::Import(_) => None,
        })
    }
}

/// The directives of a block: its request's, then those of a block without one.
fn directives_of(block: &Block) -> impl Iterator<Item = &Directive> {
    block.request.iter().flat_map(|request| &request.directives).chain(&block.orphan_directives)
}

impl Document {
    /// The files this one imports, in order: `import ./file.http` lines (JetBrains,
    /// Kulala) and `# @import ./file.http` directives (httpyac), wherever they are.
    #[must_use]
    pub fn imports(&self) -> Vec<Spanned<String>> {
        let mut imports = Vec::new();
        for block in &self.blocks {
            let from_directives = directives_of(block)
                .filter(|directive| directive.kind == DirectiveKind::Import)
                .filter_map(|directive| directive.value.as_ref())
                .filter_map(|value| Some(Spanned::new(value.as_literal()?.trim().to_owned(), value.span)));
            let from_commands = block.commands.iter().filter_map(|command| match &command.kind {
                CommandKind::Import(path) => Some(path.clone()),
                CommandKind::Run { .. } => None,
            });
            let mut found: Vec<Spanned<String>> = from_directives.chain(from_commands).collect();
            found.sort_by_key(|path| path.span.start);
            imports.extend(found);
        }
        imports
    }

    /// `true` when the file imports another ([`Document::imports`]); worked out once
    /// per document.
    #[must_use]
    pub fn has_imports(&self) -> bool {
        self.known.imports(|| {
            self.blocks.iter().any(|block| {
                block.commands.iter().any(|command| matches!(command.kind, CommandKind::Import(_)))
                    || directives_of(block).any(|directive| directive.kind == DirectiveKind::Import)
            })
        })
    }

    /// `true` when a block has a `run` line (JetBrains, Kulala).
    #[must_use]
    pub fn has_runs(&self) -> bool {
        self.blocks.iter().any(|block| block.runs().next().is_some())
    }
}

impl Request {
    /// Its `# @loop` (httpyac), the last when there are several.
    #[must_use]
    pub fn repeat(&self) -> Option<Loop> {
        let directive = self.directives.iter().rev().find(|directive| directive.kind == DirectiveKind::Loop)?;
        let value = directive.value.as_ref()?;
        let text = value.to_source();
        let span = value.span;
        let spanned = |text: &str| Spanned::new(text.trim().to_owned(), span);
        let Some(rest) = text.trim().strip_prefix("for ") else {
            return Some(Loop::Unsupported(spanned(&text)));
        };
        let rest = rest.trim();
        if let Some((name, list)) = rest.split_once(" of ")
            && crate::is_variable_name(name.trim())
            && !list.trim().is_empty()
        {
            return Some(Loop::Each { name: spanned(name), list: spanned(list) });
        }
        Some(Loop::Count(spanned(rest)))
    }
}
