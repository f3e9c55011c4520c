//! Which requests a run refuses to send, and why: a request with errors of its own, or
//! one that uses a file variable declared on a line with errors. The other requests of
//! the file run.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use volley_syntax::{
    Diagnostic, Document, Expression, Protocol, Request, Span, Template, Timeout, VariableDeclaration,
};

/// Why a request is not sent.
#[derive(Debug, Clone)]
pub(crate) enum Refusal {
    /// The request has errors, or uses file variables that do.
    Errors {
        /// The errors inside the request's block.
        diagnostics: Vec<Diagnostic>,
        /// The file variables it uses that are declared on lines with errors.
        variables: Vec<BrokenVariable>,
    },
    /// It has a `# @note`, and nobody could confirm it: stdin is not a terminal and
    /// `--yes` was not given.
    Unconfirmed {
        /// The `# @note` line.
        note: Span,
    },
}

/// One reason of a refusal, as it is shown: compiler-style, or as a JSON error.
#[derive(Debug, Clone)]
pub(crate) struct Problem {
    pub(crate) code: String,
    pub(crate) message: String,
    pub(crate) span: Span,
    pub(crate) hint: Option<String>,
}

impl Refusal {
    /// Every reason, in the order they are shown.
    pub(crate) fn problems(&self) -> Vec<Problem> {
        match self {
            Refusal::Errors { diagnostics, variables } => diagnostics
                .iter()
                .map(|diagnostic| Problem {
                    code: diagnostic.code.as_str().to_owned(),
                    message: diagnostic.message.clone(),
                    span: diagnostic.span,
                    hint: diagnostic.hint.clone(),
                })
                .chain(variables.iter().map(|variable| Problem {
                    code: "broken-variable".to_owned(),
                    message: match &variable.through {
                        Some(through) => format!(
                            "`{through}` uses `{}`, declared on line {}, which has errors",
                            variable.name, variable.declared_line
                        ),
                        None => format!(
                            "`{}` is declared on line {}, which has errors",
                            variable.name, variable.declared_line
                        ),
                    },
                    span: variable.used_at,
                    hint: Some(format!(
                        "fix `@{}` on line {} (its error is shown before the run); the requests that do not \
                         use it still run",
                        variable.name, variable.declared_line
                    )),
                }))
                .collect(),
            Refusal::Unconfirmed { note } => vec![Problem {
                code: "note-not-confirmed".to_owned(),
                message: "the request has a `# @note` to confirm, and stdin is not a terminal".to_owned(),
                span: *note,
                hint: Some(
                    "run it from a terminal to be asked, or pass --yes (-y) to send it without asking".to_owned(),
                ),
            }],
        }
    }
}

/// A use of a file variable whose declaration has errors.
#[derive(Debug, Clone)]
pub(crate) struct BrokenVariable {
    pub(crate) name: String,
    /// The variable the request uses, when it reaches `name` through it.
    pub(crate) through: Option<String>,
    /// Where the request uses it (directly, or through another file variable).
    pub(crate) used_at: Span,
    /// The 1-based line of the declaration with errors.
    pub(crate) declared_line: u32,
}

/// The refusal of `request`, or `None` when it can be sent.
pub(crate) fn of(document: &Document, request: &Request) -> Option<Refusal> {
    let diagnostics: Vec<Diagnostic> = own_errors(document, request).cloned().collect();
    let variables = broken_variables(document, request);
    (!diagnostics.is_empty() || !variables.is_empty()).then_some(Refusal::Errors { diagnostics, variables })
}

/// The errors that belong to `request`: those of its block
/// ([`Document::errors_of`]), except on file variable lines (which refuse the
/// requests that use the variable instead).
pub(crate) fn own_errors<'a>(document: &'a Document, request: &'a Request) -> impl Iterator<Item = &'a Diagnostic> {
    document.errors_of(request).filter(|diagnostic| !on_a_variable_line(document, diagnostic))
}

/// The errors no request owns: on file variable lines, before the first request,
/// in blocks without a request. Every error of a document is one of these or belongs
/// to a request ([`own_errors`]), so none goes unreported.
pub(crate) fn outside_errors(document: &Document) -> Vec<&Diagnostic> {
    let owned: HashSet<*const Diagnostic> =
        document.requests().flat_map(|request| own_errors(document, request)).map(std::ptr::from_ref).collect();
    document
        .diagnostics
        .iter()
        .filter(|diagnostic| diagnostic.is_error() && !owned.contains(&std::ptr::from_ref(*diagnostic)))
        .collect()
}

fn on_a_variable_line(document: &Document, diagnostic: &Diagnostic) -> bool {
    let line = diagnostic.span.start_position.line;
    document
        .variables
        .iter()
        .any(|declaration| (declaration.span.start_position.line..=declaration.span.end_position.line).contains(&line))
}

/// The file variables `request` uses (through other file variables too) whose
/// declaration (the last of its name, as the engine reads it) is on a line with errors.
fn broken_variables(document: &Document, request: &Request) -> Vec<BrokenVariable> {
    let declarations: BTreeMap<&str, &VariableDeclaration> =
        document.variables.iter().map(|declaration| (declaration.name.value.as_str(), declaration)).collect();
    let broken: BTreeMap<&str, u32> = declarations
        .iter()
        .filter(|(_, declaration)| has_errors_on_its_lines(document, declaration))
        .map(|(name, declaration)| (*name, declaration.span.start_position.line + 1))
        .collect();
    if broken.is_empty() {
        return Vec::new();
    }
    let mut found = Vec::new();
    let mut seen = BTreeSet::new();
    // (a variable, where the request uses it, the variable used there)
    let mut pending: Vec<(String, Span, Option<String>)> = Vec::new();
    for_each_template(request, &mut |template| uses(template, &mut |name, span| pending.push((name, span, None))));
    while let Some((name, used_at, through)) = pending.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        if let Some(line) = broken.get(name.as_str()) {
            found.push(BrokenVariable { name: name.clone(), through: through.clone(), used_at, declared_line: *line });
        }
        if let Some(declaration) = declarations.get(name.as_str()) {
            // What it uses is reported where the request uses it.
            let through = through.unwrap_or(name);
            uses(&declaration.value, &mut |inner, _| pending.push((inner, used_at, Some(through.clone()))));
        }
    }
    found.sort_by_key(|variable| (variable.used_at.start, variable.declared_line));
    found
}

fn has_errors_on_its_lines(document: &Document, declaration: &VariableDeclaration) -> bool {
    let lines = declaration.span.start_position.line..=declaration.span.end_position.line;
    document
        .diagnostics
        .iter()
        .any(|diagnostic| diagnostic.is_error() && lines.contains(&diagnostic.span.start_position.line))
}

/// The variable paths of a template (nested resolver arguments included).
fn uses(template: &Template, found: &mut impl FnMut(String, Span)) {
    template.walk(&mut |interpolation| {
        if let Some(Expression::Variable(name)) = &interpolation.expression {
            found(name.value.clone(), name.span);
        }
    });
}

/// Every template of a request: URL, headers, directive values, options, body.
fn for_each_template(request: &Request, visit: &mut impl FnMut(&Template)) {
    visit(&request.url);
    for header in &request.headers {
        visit(&header.name);
        visit(&header.value);
    }
    for directive in &request.directives {
        if let Some(value) = &directive.value {
            visit(value);
        }
    }
    if let Some(Timeout::Template(value)) = &request.timeout {
        visit(value);
    }
    match &request.protocol {
        Protocol::Http => {}
        Protocol::Sse(sse) => {
            if let Some(id) = &sse.last_event_id {
                visit(id);
            }
        }
        Protocol::WebSocket(websocket) => {
            if let Some(list) = &websocket.subprotocols {
                visit(list);
            }
            if let Some(Timeout::Template(value)) = &websocket.connect_timeout {
                visit(value);
            }
        }
    }
    request.body.for_each_template(&mut |template| visit(template));
}
