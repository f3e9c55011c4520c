//! Substitution of `{{ }}`: variables by precedence, request variables, file variables,
//! `.env` variables, resolvers. One pass: substituted text is never expanded again; every
//! occurrence of a resolver is evaluated once per send; a file variable is evaluated once
//! per send.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use volley_syntax::{Expression, Interpolation, Part, Span, Spanned, Template, Timeout, VariableDeclaration};

use crate::chaining::{self, Chain};
use crate::dotenv::DotEnv;
use crate::error::{BuildError, ConfigError};
use crate::redact::{Secrets, is_sensitive_variable};
use crate::resolvers::{CommandResolver, Environment, Resolver};
use crate::transport::BoxFuture;

mod auth;
mod javascript;
mod resolver;
pub(crate) use javascript::Expressions;
pub(crate) mod oauth;

/// Everything a template may refer to.
pub(crate) struct Scope<'a> {
    /// Variable maps, highest precedence first: CLI overrides, run, client, profile,
    /// configuration.
    pub(crate) layers: Vec<&'a Map<String, Value>>,
    /// The file's `@name = value` lines (a later one wins), after those of the files
    /// it imports.
    pub(crate) file_variables: &'a [VariableDeclaration],
    /// How many of `file_variables` come from imported files: their spans are in those
    /// files, so their errors are shown where they are used.
    pub(crate) imported_variables: usize,
    /// The variables of the `.env` files, below the file's; or why they cannot be read
    /// (an error only when a value is looked for there).
    pub(crate) dotenv: Result<&'a DotEnv, &'a ConfigError>,
    /// Last responses of named requests.
    pub(crate) chain: &'a Chain,
    /// The client's resolvers, keys with `$`.
    pub(crate) custom: &'a HashMap<String, Arc<dyn Resolver>>,
    /// Command resolvers of the configuration and profile, keys without `$`.
    pub(crate) commands: &'a BTreeMap<String, CommandResolver>,
    /// What `$env`, `$processEnv` and `$secret` read.
    pub(crate) environment: &'a Environment,
    /// Named OAuth 2.0 configurations (`$auth.token("id")`).
    pub(crate) auth: &'a BTreeMap<String, crate::config::AuthEntry>,
    /// The index of the first of `layers` whose string values are templates, `{{ }}`
    /// substituted when used (the profile and configuration of httpyac's and REST
    /// Client's environments: [`crate::config::Config::expand_values`]).
    pub(crate) expand_from: Option<usize>,
    /// The index of the layer of a `run` line's variables, whose string values are
    /// templates too (`run #login (@user={{admin}})`).
    pub(crate) command_layer: Option<usize>,
    /// Who answers prompts (`$input`, `$password`, `$pick`), and the answers kept.
    pub(crate) prompt: Option<&'a Arc<dyn crate::prompt::ValuePrompt>>,
    pub(crate) answers: &'a crate::prompt::Answers,
    /// What evaluates httpyac's `{{ expressions }}` (the client's script sandbox), with
    /// the scripts' limits; `None`: they are refused.
    pub(crate) javascript: Option<(&'a dyn Expressions, crate::config::ScriptSettings)>,
    /// Rendering ahead of its turn ([`crate::stages::prepare_ahead`]): what could act
    /// (custom and command resolvers, tokens) or read a response is refused instead,
    /// and the request is prepared again in its turn.
    pub(crate) ahead: bool,
}

/// What rendering ahead of its turn refuses; the request is prepared again in its turn.
pub(crate) fn not_ahead(span: Span) -> BuildError {
    BuildError::Interpolation { message: "prepared in its turn, not ahead of it".to_owned(), span }
}

/// The most bytes one substituted template (a URL, a header, a body's text, a file
/// variable's value) may hold.
pub const MAX_RENDERED_BYTES: usize = 16 * 1024 * 1024;

/// The most bytes all the templates substituted for one send may hold together (the
/// files a body reads are not counted).
pub const MAX_REQUEST_BYTES: usize = 64 * 1024 * 1024;

/// Renders templates within one send.
pub(crate) struct Renderer<'a> {
    scope: Scope<'a>,
    /// Values of `$secret` resolved so far (and credentials made with them), for
    /// redaction.
    pub(crate) secrets: Vec<String>,
    /// Environment variables and `.env` keys read by resolvers, with their names: the
    /// values of sensitive names are redacted.
    reads: Vec<(String, String)>,
    /// File variables already evaluated in this send.
    file_values: HashMap<String, String>,
    /// File variables being evaluated, to catch `@a = {{b}}`, `@b = {{a}}`.
    resolving: Vec<String>,
    /// Bytes substituted so far in this send (see [`MAX_REQUEST_BYTES`]).
    rendered: usize,
    /// The OAuth 2.0 tokens this send needs, each rendered as its placeholder, with
    /// where it is written.
    pub(crate) tokens: Vec<(volley_auth::oauth::PendingToken, volley_syntax::Span)>,
    /// Rendering ahead of the request's turn met what it refuses ([`Scope::ahead`]),
    /// also where the error was kept rather than returned (an invalid assertion).
    declined: bool,
}

impl<'a> Renderer<'a> {
    pub(crate) fn new(scope: Scope<'a>) -> Self {
        Self {
            scope,
            secrets: Vec::new(),
            reads: Vec::new(),
            file_values: HashMap::new(),
            resolving: Vec::new(),
            rendered: 0,
            tokens: Vec::new(),
            declined: false,
        }
    }

    /// Whether this renders ahead of the request's turn ([`Scope::ahead`]).
    pub(crate) fn ahead(&self) -> bool {
        self.scope.ahead
    }

    /// Whether rendering ahead met what it refuses: the request is prepared in its turn.
    pub(crate) fn declined(&self) -> bool {
        self.declined
    }

    /// The error of what rendering ahead refuses, remembered ([`Self::declined`]).
    fn decline(&mut self, span: Span) -> BuildError {
        self.declined = true;
        not_ahead(span)
    }

    /// Everything this send must keep out of what is shown: the `$secret` values, and
    /// the values of sensitive names in every variable layer, the `.env` files, the file
    /// variables evaluated and the environment variables read.
    pub(crate) fn secrets(&self) -> Secrets {
        let mut secrets = Secrets::new();
        for value in &self.secrets {
            secrets.add_value(value.as_str());
        }
        for layer in &self.scope.layers {
            secrets.add_variables(layer);
        }
        if let Ok(dotenv) = self.scope.dotenv {
            secrets.add_variables(&dotenv.variables);
        }
        for (name, value) in self.file_values.iter().chain(self.reads.iter().map(|(name, value)| (name, value))) {
            if is_sensitive_variable(name) {
                secrets.add_variable(name, &Value::String(value.clone()));
            }
        }
        secrets
    }

    /// The duration of a `@timeout` or `@ws-connect-timeout` value, if the request has
    /// one (`directive` names it for the error): a written one as the parser read it, a
    /// template once substituted, read the same way.
    pub(crate) async fn duration(
        &mut self,
        timeout: Option<&Timeout>,
        directive: &str,
    ) -> Result<Option<Duration>, BuildError> {
        let template = match timeout {
            None => return Ok(None),
            Some(Timeout::Millis(millis)) => return Ok(Some(Duration::from_millis(millis.value))),
            Some(Timeout::Template(template)) => template,
        };
        let text = self.render(template).await?;
        match volley_syntax::directive::parse_duration_ms(&text) {
            Some(millis) => Ok(Some(Duration::from_millis(millis))),
            None => Err(BuildError::InvalidTimeout {
                directive: directive.to_owned(),
                value: text.trim().to_owned(),
                span: template.span,
            }),
        }
    }

    /// The text of `template` with every interpolation substituted. The text is checked
    /// against the limits as it grows, before each piece is added: a template that
    /// would exceed them is never built (`too-large`, at the piece that crossed them).
    pub(crate) fn render<'b>(&'b mut self, template: &'b Template) -> BoxFuture<'b, Result<String, BuildError>> {
        Box::pin(async move {
            let mut out = String::new();
            for part in &template.parts {
                match part {
                    Part::Text(text) => {
                        self.grow(&mut out, &text.value, text.span)?;
                    }
                    Part::Interpolation(interpolation) => {
                        let value = self.interpolation(interpolation).await?;
                        self.grow(&mut out, &value, interpolation.span)?;
                    }
                }
            }
            Ok(out)
        })
    }

    /// Appends `piece` to `out` unless that would cross [`MAX_RENDERED_BYTES`] for the
    /// template or [`MAX_REQUEST_BYTES`] for the send.
    fn grow(&mut self, out: &mut String, piece: &str, span: Span) -> Result<(), BuildError> {
        let template = out.len().saturating_add(piece.len());
        let request = self.rendered.saturating_add(piece.len());
        if template > MAX_RENDERED_BYTES || request > MAX_REQUEST_BYTES {
            let (what, limit) = if template > MAX_RENDERED_BYTES {
                ("this value", MAX_RENDERED_BYTES)
            } else {
                ("the request's substituted text", MAX_REQUEST_BYTES)
            };
            return Err(BuildError::TooLarge { what: what.to_owned(), limit, span });
        }
        self.rendered = request;
        out.push_str(piece);
        Ok(())
    }

    async fn interpolation(&mut self, interpolation: &Interpolation) -> Result<String, BuildError> {
        if !interpolation.closed {
            return Err(BuildError::Interpolation { message: "unclosed `{{`".to_owned(), span: interpolation.span });
        }
        match &interpolation.expression {
            None => Err(BuildError::Interpolation { message: "empty `{{}}`".to_owned(), span: interpolation.span }),
            Some(Expression::Variable(name)) => match self.variable(name).await {
                Ok(value) => Ok(text_of(&value)),
                // httpyac: `{{who.length}}` is JavaScript on a variable that has no such field.
                Err(error @ BuildError::UndefinedVariable { .. }) => {
                    if self.scope.javascript.is_some() && self.has_plain_root(&name.value).await {
                        self.javascript(name).await
                    } else {
                        Err(error)
                    }
                }
                Err(error) => Err(error),
            },
            Some(Expression::Resolver(call)) => self.resolver(call, interpolation.span).await,
            Some(Expression::JavaScript(code)) => self.javascript(code).await,
        }
    }

    /// The value of the variable `name` as text, `None` when it is defined nowhere.
    pub(crate) async fn optional_variable(&mut self, name: &str, span: Span) -> Result<Option<String>, BuildError> {
        match self.variable(&Spanned::new(name.to_owned(), span)).await {
            Ok(value) => Ok(Some(text_of(&value))),
            Err(BuildError::UndefinedVariable { .. }) => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// The value of a variable path.
    async fn variable(&mut self, name: &Spanned<String>) -> Result<Value, BuildError> {
        let path = name.value.as_str();
        let segments = volley_syntax::variable_path_segments(path);
        if self.scope.ahead && matches!(segments.as_slice(), [_, "response", ..]) {
            return Err(self.decline(name.span));
        }
        if let [request, "response", rest @ ..] = segments.as_slice()
            && let Some(stored) = self.scope.chain.get(request)
        {
            return chaining::read(stored, rest).map_err(|message| BuildError::RequestVariable {
                name: path.to_owned(),
                span: name.span,
                message: format!("`{path}`: {message}"),
                hint: Some(chaining::ran_hint(request, stored)),
            });
        }
        for (index, layer) in self.scope.layers.iter().enumerate() {
            if let Some(value) = lookup(layer, path, &segments) {
                return match value {
                    Value::String(text)
                        if text.contains("{{")
                            && (self.scope.expand_from.is_some_and(|from| index >= from)
                                || self.scope.command_layer == Some(index)) =>
                    {
                        let from = if self.scope.command_layer == Some(index) {
                            "set by the `run` line"
                        } else {
                            "from the environment"
                        };
                        self.expanded(path, &text, name.span, from).await.map(Value::String)
                    }
                    value => Ok(value),
                };
            }
        }
        if let Some(declaration) =
            self.scope.file_variables.iter().rev().find(|declaration| declaration.name.value == path)
        {
            return self.file_variable(declaration, name.span).await.map(Value::String);
        }
        match self.scope.dotenv {
            Ok(dotenv) => {
                if let Some(value) = lookup(&dotenv.variables, path, &segments) {
                    return Ok(value);
                }
            }
            Err(error) if !matches!(segments.as_slice(), [_, "response", ..]) => {
                return Err(BuildError::Interpolation {
                    message: format!("`{path}` is not defined here, and the .env files cannot be read: {error}"),
                    span: name.span,
                });
            }
            Err(_) => {}
        }
        if self.scope.ahead {
            return Err(self.decline(name.span));
        }
        // httpyac: the name of a request that ran stands for its response body.
        if let [request, properties @ ..] = segments.as_slice()
            && let Some(stored) = self.scope.chain.get(request)
        {
            return chaining::read_body_properties(stored, properties).map_err(|message| BuildError::RequestVariable {
                name: path.to_owned(),
                span: name.span,
                message: format!("`{path}`: {message}"),
                hint: Some(chaining::ran_hint(request, stored)),
            });
        }
        if let [request, "response", ..] = segments.as_slice() {
            let message = if self.scope.chain.dropped_some() {
                format!(
                    "`{path}`: no response of a request named `{request}` is kept in this client: it has not run \
                     yet, or ran before the last {} named responses (or {} MiB of them), which are all a client keeps \
                     (run it again first)",
                    chaining::MAX_CHAINED_RESPONSES,
                    chaining::MAX_CHAINED_BYTES >> 20
                )
            } else {
                format!(
                    "`{path}`: no request named `{request}` has run yet in this client (run it first; \
                     `volley run` runs a file's requests in order)"
                )
            };
            return Err(BuildError::RequestVariable { name: path.to_owned(), span: name.span, message, hint: None });
        }
        Err(BuildError::UndefinedVariable { name: path.to_owned(), span: name.span })
    }

    /// The value `text` of the environment variable `name` with its `{{ }}` substituted
    /// (httpyac's and REST Client's environments), once per send.
    async fn expanded(&mut self, name: &str, text: &str, used_at: Span, from: &str) -> Result<String, BuildError> {
        let key = format!("\u{0}environment\u{0}{name}");
        if let Some(value) = self.file_values.get(&key) {
            return Ok(value.clone());
        }
        if self.resolving.iter().any(|resolving| resolving == name) {
            let mut chain = self.resolving.clone();
            chain.push(name.to_owned());
            return Err(BuildError::Cycle { name: name.to_owned(), chain, span: used_at });
        }
        let (template, _) = volley_syntax::parse_template(text);
        self.resolving.push(name.to_owned());
        let value = self.render(&template).await;
        self.resolving.pop();
        let value = value.map_err(|error| match error {
            // Spans of the value's own text mean nothing in the document: the use is shown.
            BuildError::Cycle { name, chain, .. } => BuildError::Cycle { name, chain, span: used_at },
            error @ BuildError::Interpolation { .. } if error.message().starts_with("in the value of") => {
                BuildError::Interpolation { message: error.message(), span: used_at }
            }
            error => BuildError::Interpolation {
                message: format!("in the value of `{name}` (`{text}`) {from}: {}", error.message()),
                span: used_at,
            },
        })?;
        self.file_values.insert(key, value.clone());
        Ok(value)
    }

    async fn file_variable(&mut self, declaration: &VariableDeclaration, used_at: Span) -> Result<String, BuildError> {
        let name = &declaration.name.value;
        if let Some(value) = self.file_values.get(name) {
            return Ok(value.clone());
        }
        if self.resolving.contains(name) {
            let mut chain = self.resolving.clone();
            chain.push(name.clone());
            return Err(BuildError::Cycle { name: name.clone(), chain, span: used_at });
        }
        self.resolving.push(name.clone());
        let value = self.render(&declaration.value).await;
        self.resolving.pop();
        let imported = self.scope.file_variables[..self.scope.imported_variables]
            .as_ptr_range()
            .contains(&std::ptr::from_ref(declaration));
        let value = value.map_err(|error| match error {
            BuildError::Cycle { name, chain, .. } if imported => BuildError::Cycle { name, chain, span: used_at },
            error if imported => BuildError::Interpolation {
                message: format!("in the value of the imported `{name}`: {}", error.message()),
                span: used_at,
            },
            error => error,
        })?;
        self.file_values.insert(name.clone(), value.clone());
        Ok(value)
    }

    /// A setting's text (a proxy URL, a passphrase, a field of an `auth` entry) with its
    /// `{{…}}` substituted; as it is when it holds none.
    pub(crate) async fn render_text(&mut self, text: &str) -> Result<String, BuildError> {
        if !text.contains("{{") {
            return Ok(text.to_owned());
        }
        let (template, _) = volley_syntax::parse_template(text);
        Box::pin(self.render(&template)).await
    }
}

/// The value at `path` in one variable map: an exact key (`api.host` defined with a
/// dot), else the longest key that is a prefix of the path, walked into nested objects
/// and array indices (`api.hosts.0`).
pub(crate) fn lookup(map: &Map<String, Value>, path: &str, segments: &[&str]) -> Option<Value> {
    if let Some(value) = map.get(path) {
        return Some(value.clone());
    }
    for split in (1..segments.len()).rev() {
        let key = segments[..split].join(".");
        if let Some(value) = map.get(&key)
            && let Some(found) = walk(value, &segments[split..])
        {
            return Some(found.clone());
        }
    }
    None
}

fn walk<'v>(value: &'v Value, segments: &[&str]) -> Option<&'v Value> {
    segments.iter().try_fold(value, |current, segment| match current {
        Value::Object(map) => map.get(*segment),
        Value::Array(items) => segment.parse::<usize>().ok().and_then(|index| items.get(index)),
        _ => None,
    })
}

/// A value as substituted text: strings as they are, everything else as JSON.
pub(crate) fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looks_up_exact_dotted_and_nested_paths() {
        let map: Map<String, Value> = serde_json::from_str(
            r#"{"host": "h", "api.host": "dotted", "api": {"host": "nested", "ports": [80, 443]}, "user": {"name": "ada"}}"#,
        )
        .unwrap();
        let find = |path: &str| lookup(&map, path, &volley_syntax::variable_path_segments(path));
        assert_eq!(find("host").unwrap(), "h");
        assert_eq!(find("api.host").unwrap(), "dotted");
        assert_eq!(find("api.ports.1").unwrap(), 443);
        assert_eq!(find("user.name").unwrap(), "ada");
        assert!(find("user.age").is_none());
        assert!(find("api.ports.9").is_none());
        assert_eq!(text_of(&find("api.ports").unwrap()), "[80,443]");
    }
}
