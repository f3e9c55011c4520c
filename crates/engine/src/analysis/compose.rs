//! The `import` and `run` lines of a document (`# @import`, JetBrains' and Kulala's
//! `import` and `run`): files that cannot be read, names no file has.

use volley_syntax::{Code, Diagnostic, Document, RunTarget};

use super::AnalysisContext;
use crate::client::Client;

/// The diagnostics of `document`'s import and `run` lines: a file that cannot be read
/// (`missing-file`, `external-file`), a `run #name` that no request of the file, of the
/// context (the rest of the file, the files it imports) or of the files it imports has.
pub(super) fn check(client: &Client, document: &Document, context: &AnalysisContext) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    let Some(directory) = context.directory.as_deref() else { return found };
    for path in document.imports() {
        if let Err(error) = client.read_linked(directory, &path) {
            found.push(crate::compose::diagnostic(&error));
        }
    }
    let imports = client.imports_from(document, None, directory).unwrap_or_default();
    for block in &document.blocks {
        for (target, _) in block.runs() {
            match target {
                RunTarget::Request(name) => {
                    let known = document.request_named(&name.value).is_some()
                        || context.request_names.contains(&name.value)
                        || imports.iter().any(|linked| linked.document.request_named(&name.value).is_some());
                    if !known {
                        let names = document
                            .requests()
                            .filter_map(|request| request.name.as_ref().map(|name| name.value.as_str()))
                            .chain(context.request_names.iter().map(String::as_str));
                        let hint = match volley_syntax::closest(&name.value, names) {
                            Some(best) => format!("did you mean `{best}`?"),
                            None => "name a request with `# @name`, or import the file that has it \
                                     (`import ./other.http`)"
                                .to_owned(),
                        };
                        found.push(
                            Diagnostic::new(
                                Code::InvalidCommand,
                                name.span,
                                format!("no request of this file or the files it imports is named `{}`", name.value),
                            )
                            .with_hint(hint),
                        );
                    }
                }
                RunTarget::File(path) => {
                    if let Err(error) = client.read_linked(directory, path) {
                        found.push(crate::compose::diagnostic(&error));
                    }
                }
            }
        }
    }
    found
}
