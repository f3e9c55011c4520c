//! Semantic diagnostics: what can be known about a document without sending it, given
//! the configuration, the files next to it and the resolvers there are. `volley check`
//! and the language server both use this, over the parser's own diagnostics.
//!
//! Codes: `undefined-variable`, `unknown-resolver`, `resolver-arguments`,
//! `missing-file`, `invalid-json-body`, `invalid-assertion` (see docs/diagnostics.md).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use volley_syntax::{
    Body, BodyPart, Code, Diagnostic, Document, Expression, FormValue, Interpolation, Listing, Protocol, Request, Span,
    Template, Timeout, variable_path_segments,
};

mod client;
mod compose;
mod grpc;
mod json_body;
mod resolvers;
mod scripts;

pub use client::{Analysis, Analyzer};
pub use scripts::ScriptVariables;

use crate::assert;
use crate::config::Config;
use crate::interpolate::lookup;
use crate::io::Io;

/// What the analysis knows beyond the document.
#[derive(Debug, Clone, Default)]
pub struct AnalysisContext {
    /// The configuration that applies to the file: its variables, every profile's
    /// variables and its command resolvers count as defined.
    pub config: Option<Config>,
    /// Variables defined elsewhere (a client's variables, a session's, the `.env`
    /// files'), as maps so nested paths are checked.
    pub variables: Vec<Map<String, Value>>,
    /// Names of custom resolvers, without `$`.
    pub resolvers: BTreeSet<String>,
    /// The directory relative file references are resolved from; `None` skips the
    /// file checks (unsaved text with no location).
    pub directory: Option<PathBuf>,
    /// The active profile: only its variables and resolvers count, not every
    /// profile's. `None` (or a profile the configuration does not have) counts them all,
    /// unless [`exact_profile`](Self::exact_profile).
    pub profile: Option<String>,
    /// The profile is exactly [`profile`](Self::profile), as a run has it: with `None`,
    /// no profile's variables count (a name only profiles define is undefined, with a
    /// hint naming them).
    pub exact_profile: bool,
    /// What the scripts of the other documents of the run (or the other parts of the
    /// file) may set; the analysed document's own scripts are read too.
    pub script_variables: ScriptVariables,
    /// Files outside the project may be read (`--allow-external-files`): no
    /// `external-file` error.
    pub allow_external_files: bool,
    /// File variables declared outside the analysed document: the rest of the file,
    /// when a front end analyses a file one part at a time (the language server).
    pub file_variables: BTreeSet<String>,
    /// Request names declared outside the analysed document, likewise.
    pub request_names: BTreeSet<String>,
}

/// The semantic diagnostics of `document` (parsed from `text`), in source order. The
/// parser's own diagnostics are not repeated.
#[must_use]
pub fn analyze(document: &Document, text: &str, io: &dyn Io, context: &AnalysisContext) -> Vec<Diagnostic> {
    let analyzer = Walker::new(document, text, io, context);
    // At most `MAX_LISTED` of each code, as the parser lists its own: a file of a million
    // undefined variables gets two hundred warnings and a count.
    let mut diagnostics = Listing::new();
    for declaration in &document.variables {
        analyzer.template(&declaration.value, &mut diagnostics);
    }
    for request in document.requests() {
        analyzer.request(request, &mut diagnostics);
    }
    diagnostics.finish().0
}

struct Walker<'a> {
    document: &'a Document,
    text: &'a str,
    io: &'a dyn Io,
    context: &'a AnalysisContext,
    /// Variable maps to look names up in: the context's, the configuration's and every
    /// profile's.
    layers: Vec<&'a Map<String, Value>>,
    resolvers: BTreeSet<&'a str>,
    /// The names of the OAuth 2.0 configurations `$auth.token` can use (the
    /// configuration's and the active profile's, or every profile's); `None` without a
    /// configuration.
    auth: Option<BTreeSet<&'a str>>,
    /// What the scripts may set: the context's and the document's own.
    scripts: ScriptVariables,
    /// The project's root, outside which files are not read; `None`: any file.
    root: Option<PathBuf>,
    /// The names the `@loop` of the request being analysed sets.
    looping: std::cell::RefCell<Vec<String>>,
}

impl<'a> Walker<'a> {
    fn new(document: &'a Document, text: &'a str, io: &'a dyn Io, context: &'a AnalysisContext) -> Self {
        let mut layers: Vec<&Map<String, Value>> = context.variables.iter().collect();
        let mut resolvers: BTreeSet<&str> = context.resolvers.iter().map(String::as_str).collect();
        let mut auth = None;
        if let Some(config) = &context.config {
            let mut names: BTreeSet<&str> = config.auth.keys().map(String::as_str).collect();
            layers.push(&config.variables);
            resolvers.extend(config.resolvers.keys().map(String::as_str));
            let active = context
                .profile
                .as_deref()
                .or(config.default_profile.as_deref())
                .and_then(|name| config.profiles.get(name));
            let profiles: Vec<_> = match active {
                Some(profile) => vec![profile],
                None if context.exact_profile => Vec::new(),
                None => config.profiles.values().collect(),
            };
            for profile in profiles {
                layers.push(&profile.variables);
                resolvers.extend(profile.resolvers.keys().map(String::as_str));
                names.extend(profile.auth.keys().map(String::as_str));
            }
            auth = Some(names);
        }
        let mut scripts = ScriptVariables::of_document(document);
        match &context.directory {
            Some(directory) => scripts.read_files(directory, io),
            None => scripts.files.clear(),
        }
        scripts.extend(&context.script_variables);
        let root = context
            .directory
            .as_deref()
            .filter(|_| !context.allow_external_files)
            .map(|directory| crate::config::project_root(io, directory, context.config.as_ref()));
        Self {
            document,
            text,
            io,
            context,
            layers,
            resolvers,
            auth,
            scripts,
            root,
            looping: std::cell::RefCell::default(),
        }
    }

    fn request(&self, request: &Request, out: &mut Listing) {
        // httpyac's `@loop` defines `$index` and the element's name for its request.
        *self.looping.borrow_mut() = match request.repeat() {
            Some(volley_syntax::Loop::Each { name, .. }) => vec![name.value, "$index".to_owned()],
            Some(_) => vec!["$index".to_owned()],
            None => Vec::new(),
        };
        self.scripts(request, out);
        self.template(&request.url, out);
        // A request line refused for its protocol (`GRPC …`, `MQTT …`) has no HTTP URL.
        let unsupported =
            self.document.errors_of(request).any(|diagnostic| diagnostic.code == Code::UnsupportedRequest);
        if let Protocol::Grpc(grpc) = &request.protocol {
            self.grpc(request, grpc, out);
        } else if !unsupported {
            url(request, out);
        }
        for header in &request.headers {
            self.template(&header.name, out);
            self.template(&header.value, out);
            if header.is_named("authorization") {
                Self::credentials(request, header, out);
            }
            if let (Some(name), Some(value)) = (header.name.as_literal(), header.value.as_literal())
                && let Some(Err(refusal)) = crate::credentials::client_certificate_header(&name, &value)
            {
                out.push(Diagnostic::new(refusal.code(), header.span, refusal.reason).with_hint(refusal.hint));
            }
        }
        for directive in request.assertions() {
            if let Some(value) = &directive.value {
                self.template(value, out);
                assertion(value, assert::Flavour::of_directive(&directive.name.value), out);
            }
        }
        if let Some(Timeout::Template(value)) = &request.timeout {
            self.template(value, out);
        }
        match &request.protocol {
            Protocol::Http => {}
            Protocol::Sse(sse) => {
                if let Some(id) = &sse.last_event_id {
                    self.template(id, out);
                }
            }
            Protocol::WebSocket(websocket) => {
                if let Some(list) = &websocket.subprotocols {
                    self.template(list, out);
                }
                if let Some(Timeout::Template(value)) = &websocket.connect_timeout {
                    self.template(value, out);
                }
            }
            // Checked by `Walker::grpc`.
            Protocol::Grpc(_) => {}
        }
        match &request.body {
            Body::None => {}
            Body::Inline(template) => {
                self.template(template, out);
                // A gRPC call's messages are checked by `Walker::grpc`.
                if !matches!(request.protocol, Protocol::Grpc(_)) && json_body::is_json(request) {
                    self.json_body(template, out);
                }
            }
            Body::File(file) => {
                self.template(&file.path, out);
                self.file(&file.path, out);
            }
            Body::Form(form) => {
                for field in &form.fields {
                    match &field.value {
                        FormValue::Text(template) => self.template(template, out),
                        FormValue::File { path, filename } => {
                            self.template(path, out);
                            self.file(path, out);
                            if let Some(filename) = filename {
                                self.template(filename, out);
                            }
                        }
                    }
                }
            }
            Body::Parts(parts) => {
                for part in &parts.parts {
                    match part {
                        BodyPart::Text(template) => self.template(template, out),
                        BodyPart::File(file) => {
                            self.template(&file.path, out);
                            self.file(&file.path, out);
                        }
                    }
                }
            }
            Body::GraphQl(graphql) => {
                self.template(&graphql.query, out);
                if let Some(variables) = &graphql.variables {
                    self.template(variables, out);
                    self.json_body(variables, out);
                }
            }
        }
    }

    /// `Authorization` credentials written in clear that a run would refuse (`Digest` with
    /// a user and no password, `Digest` on a WebSocket), when the value is literal.
    fn credentials(request: &Request, header: &volley_syntax::Header, out: &mut Listing) {
        let Some(value) = header.value.as_literal() else { return };
        if let Some((scheme, rest)) = crate::credentials::oauth_scheme(&value) {
            if let Err(refusal) = crate::interpolate::oauth::parse_form(scheme, rest) {
                out.push(Diagnostic::new(refusal.code(), header.value.span, refusal.reason).with_hint(refusal.hint));
            }
            return;
        }
        let refusal = match crate::credentials::interpret(&value, &[]) {
            Err(refusal) => Some((refusal.code(), refusal.reason, refusal.hint)),
            Ok(crate::credentials::Authorization::Digest(_)) if matches!(request.protocol, Protocol::WebSocket(_)) => {
                Some((
                    Code::InvalidCredentials,
                    "`Digest` credentials cannot answer a challenge on a WebSocket handshake".to_owned(),
                    "use `Basic` credentials, or a header with the complete value".to_owned(),
                ))
            }
            Ok(_) => None,
        };
        if let Some((code, reason, hint)) = refusal {
            out.push(Diagnostic::new(code, header.value.span, reason).with_hint(hint));
        }
    }

    /// Every interpolation of a template, nested ones included.
    fn template(&self, template: &Template, out: &mut Listing) {
        template.walk(&mut |interpolation| self.interpolation(interpolation, out));
    }

    fn interpolation(&self, interpolation: &Interpolation, out: &mut Listing) {
        if !interpolation.closed {
            return; // The parser reports it (`unclosed-variable`); its name may be unfinished.
        }
        match &interpolation.expression {
            None => {}
            Some(Expression::Variable(name)) => {
                if let Some(diagnostic) = self.variable(&name.value, name.span) {
                    out.push(diagnostic);
                }
            }
            // httpyac's JavaScript: its syntax; the names it uses are looked up when it runs.
            Some(Expression::JavaScript(code)) => {
                if let Some(error) =
                    crate::script::syntax_error(&crate::script::expression_body(&code.value), code.span, false)
                {
                    out.push(
                        Diagnostic::new(
                            Code::ScriptSyntax,
                            code.span,
                            format!("the JavaScript expression does not parse: {}", error.message),
                        )
                        .with_hint("httpyac evaluates `{{ … }}` as one JavaScript expression (`{{ Date.now() }}`)"),
                    );
                }
            }
            Some(Expression::Resolver(call)) => self.resolver_call(call, interpolation.span, out),
        }
    }

    /// A diagnostic when the variable path is defined nowhere the analysis can see.
    fn variable(&self, path: &str, span: Span) -> Option<Diagnostic> {
        let segments = variable_path_segments(path);
        if segments.first().is_some_and(|root| self.looping.borrow().iter().any(|set| set == root)) {
            return None;
        }
        if self.document.variables.iter().any(|declaration| declaration.name.value == path)
            || self.context.file_variables.contains(path)
            || self.document.requests().any(|request| request.prompts().iter().any(|(name, _)| name == path))
        {
            return None;
        }
        if self.layers.iter().any(|layer| lookup(layer, path, &segments).is_some()) {
            return None;
        }
        if let [request, "response", ..] = segments.as_slice() {
            if self.document.request_named(request).is_some() || self.context.request_names.contains(*request) {
                return None;
            }
            let names = self
                .document
                .requests()
                .filter_map(|request| request.name.as_ref().map(|n| n.value.as_str()))
                .chain(self.context.request_names.iter().map(String::as_str));
            let hint = match volley_syntax::closest(request, names) {
                Some(suggestion) => format!("did you mean `{suggestion}`?"),
                None => format!("name the request it refers to with `# @name {request}`"),
            };
            return Some(
                Diagnostic::new(
                    Code::UndefinedVariable,
                    span,
                    format!("no request named `{request}` in this file for `{path}`"),
                )
                .with_hint(hint),
            );
        }
        let root = segments.first().copied().unwrap_or(path);
        // httpyac: a request's name stands for its response body.
        if self.document.request_named(root).is_some() || self.context.request_names.contains(root) {
            return None;
        }
        // A `@loop` keeps each iteration's response as the name and its index (`login0`).
        let looped = root.trim_end_matches(|character: char| character.is_ascii_digit());
        if looped.len() < root.len()
            && self.document.request_named(looped).is_some_and(|request| request.repeat().is_some())
        {
            return None;
        }
        if self.scripts.may_set(root) {
            return None;
        }
        // httpyac: `{{who.length}}` reads a property of a plain value with JavaScript.
        let plain_root = self.document.variables.iter().any(|declaration| declaration.name.value == root)
            || self.context.file_variables.contains(root)
            || self
                .layers
                .iter()
                .any(|layer| layer.get(root).is_some_and(|value| !value.is_object() && !value.is_array()));
        if segments.len() > 1 && plain_root {
            return None;
        }
        let mut known: Vec<&str> = self
            .document
            .variables
            .iter()
            .map(|declaration| declaration.name.value.as_str())
            .chain(self.context.file_variables.iter().map(String::as_str))
            .collect();
        for layer in &self.layers {
            known.extend(layer.keys().map(String::as_str));
        }
        // Defined only by profiles that are not active: say which, and how to pick one.
        let profiles: Vec<&str> = match &self.context.config {
            Some(config) if self.context.exact_profile => config
                .profiles
                .iter()
                .filter(|(name, profile)| {
                    Some(name.as_str()) != self.context.profile.as_deref().or(config.default_profile.as_deref())
                        && lookup(&profile.variables, path, &segments).is_some()
                })
                .map(|(name, _)| name.as_str())
                .collect(),
            _ => Vec::new(),
        };
        let hint = match (profiles.first(), volley_syntax::closest(root, known.iter().copied())) {
            (Some(first), _) => {
                let listed = profiles.iter().map(|name| format!("`{name}`")).collect::<Vec<_>>().join(", ");
                let noun = if profiles.len() == 1 { "profile" } else { "profiles" };
                format!("`{root}` is defined in the {noun} {listed}: pass `-p {first}`")
            }
            (None, Some(suggestion)) if suggestion != root => format!("did you mean `{suggestion}`?"),
            _ => format!(
                "define it in the file (`@{root} = value`), in volley.jsonc `variables` or a profile, \
                 or pass `--var {root}=value`"
            ),
        };
        Some(Diagnostic::new(Code::UndefinedVariable, span, format!("undefined variable `{path}`")).with_hint(hint))
    }

    /// Script files that are missing, and scripts in place that do not parse (checked
    /// by compiling, never running them).
    fn scripts(&self, request: &Request, out: &mut Listing) {
        for script in &request.scripts {
            if let Some(path) = &script.path {
                // A response is saved to a file that need not exist, inside the project.
                let must_exist = !script.saves_response();
                if must_exist || !path.value.contains("{{") {
                    self.file_at(&path.value, path.span, out, must_exist);
                }
            }
            if let Some(code) = &script.code
                && let Some(error) = crate::script::syntax_error(&code.value, code.span, script.is_httpyac())
            {
                out.push(
                    Diagnostic::new(
                        Code::ScriptSyntax,
                        error.span,
                        format!("the script does not parse: {}", error.message),
                    )
                    .with_hint(
                        "scripts are JavaScript (ES2023); the request is still sent, the script fails when it runs",
                    ),
                );
            }
        }
    }

    fn file(&self, path: &Template, out: &mut Listing) {
        if let Some(relative) = path.as_literal() {
            self.file_at(&relative, path.span, out, true);
        }
    }

    /// `relative` inside the project and, when `must_exist`, there.
    fn file_at(&self, relative: &str, span: Span, out: &mut Listing, must_exist: bool) {
        let Some(directory) = &self.context.directory else { return };
        let relative = relative.trim();
        if relative.is_empty() {
            return;
        }
        let resolved = resolve(directory, relative);
        if let Some(root) = self.root.as_ref().filter(|root| !resolved.starts_with(root)) {
            out.push(
                Diagnostic::new(
                    Code::ExternalFile,
                    span,
                    format!("`{relative}` is outside the project ({})", root.display()),
                )
                .with_hint(crate::error::EXTERNAL_FILE_HINT),
            );
            return;
        }
        if must_exist && !self.io.exists(&resolved) {
            out.push(
                Diagnostic::new(Code::MissingFile, span, format!("file `{relative}` not found"))
                    .with_hint(format!("paths are relative to the .http file (looked for {})", resolved.display())),
            );
        }
    }
}

/// An `invalid-assertion` for a literal `@assert` or `??` line that does not parse.
fn assertion(value: &Template, flavour: assert::Flavour, out: &mut Listing) {
    let Some(expression) = value.as_literal() else { return };
    if let Err(error) = assert::parse_as(&expression, flavour) {
        let span = assert::narrow(value.span, error.range.clone());
        out.push(Diagnostic::new(Code::InvalidAssertion, span, error.message).with_hint(error.hint));
    }
}

/// A URL a run would refuse (`invalid-url`), by the run's own rule: checked whole when it
/// is written out; with variables, only as far as its text goes (the scheme, and the
/// host and port when they are written before the first variable).
fn url(request: &Request, out: &mut Listing) {
    let template = &request.url;
    let default_scheme = if matches!(request.protocol, Protocol::WebSocket(_)) { "ws" } else { "http" };
    let (written, whole) = match template.as_literal() {
        Some(literal) => (literal, true),
        None => match template.parts.first() {
            Some(volley_syntax::Part::Text(text)) => (text.value.clone(), false),
            _ => return,
        },
    };
    let written = written.trim();
    // A path goes after a `Host` header or the `host` variable: the run decides.
    if written.is_empty() || written.starts_with('/') {
        return;
    }
    let with_scheme =
        if written.contains("://") { written.to_owned() } else { format!("{default_scheme}://{written}") };
    let candidate = if whole {
        with_scheme
    } else {
        // Only what the text settles: the scheme, and the host and port when a `/`
        // ends them before the first variable.
        let Some((scheme, after)) = with_scheme.split_once("://") else { return };
        match after.find(['/', '?', '#']) {
            Some(end) => format!("{scheme}://{}/", &after[..end]),
            None if written.contains("://") => format!("{scheme}://placeholder/"),
            None => return,
        }
    };
    if let Some((reason, hint)) = crate::url_rule::url_problem(written, &candidate) {
        let shown = crate::credentials::redact_url_password(written);
        let mut diagnostic = Diagnostic::new(
            Code::InvalidUrl,
            template.span,
            if whole { format!("invalid URL `{shown}`: {reason}") } else { format!("invalid URL: {reason}") },
        );
        diagnostic = diagnostic.with_hint(
            hint.unwrap_or_else(|| "a URL needs a scheme and a host, e.g. `http://localhost:8080/path`".to_owned()),
        );
        out.push(diagnostic);
    }
}

fn resolve(directory: &Path, relative: &str) -> PathBuf {
    let path = Path::new(relative);
    if path.is_absolute() { path.to_path_buf() } else { crate::io::normalize(&directory.join(path)) }
}
