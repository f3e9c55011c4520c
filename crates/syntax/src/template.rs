//! Text with `{{…}}` interpolations: URLs, header names and values, bodies, paths,
//! form fields and directive values are all templates.

use serde::Serialize;

use crate::span::{Span, Spanned};

/// A piece of source text in which `{{ }}` interpolations are substituted before a
/// request is sent. Substitution is one pass: substituted text is never expanded again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Template {
    /// Where the template was written.
    pub span: Span,
    /// Literal text and interpolations, in order.
    pub parts: Vec<Part>,
}

impl Template {
    /// A template without any text (an absent URL, an empty value).
    #[must_use]
    pub fn empty(span: Span) -> Self {
        Self { span, parts: Vec::new() }
    }

    /// `true` when the template has no parts.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// The text when the template has no interpolation, else `None`.
    #[must_use]
    pub fn as_literal(&self) -> Option<String> {
        let mut text = String::new();
        for part in &self.parts {
            match part {
                Part::Text(piece) => text.push_str(&piece.value),
                Part::Interpolation(_) => return None,
            }
        }
        Some(text)
    }

    /// The literal text before the first interpolation (all of it for a literal).
    #[must_use]
    pub fn literal_prefix(&self) -> String {
        let mut text = String::new();
        for part in &self.parts {
            match part {
                Part::Text(piece) => text.push_str(&piece.value),
                Part::Interpolation(_) => break,
            }
        }
        text
    }

    /// The interpolations of the template, in order (not those nested in resolver
    /// arguments; see [`Interpolation::walk`]).
    pub fn interpolations(&self) -> impl Iterator<Item = &Interpolation> {
        self.parts.iter().filter_map(|part| match part {
            Part::Interpolation(interpolation) => Some(interpolation),
            Part::Text(_) => None,
        })
    }

    /// Every interpolation of the template, nested ones included, depth first.
    pub fn walk(&self, visit: &mut impl FnMut(&Interpolation)) {
        for interpolation in self.interpolations() {
            interpolation.walk(visit);
        }
    }

    /// The template written back as source text (`{{ }}` in canonical form). Useful in
    /// messages and tests.
    #[must_use]
    pub fn to_source(&self) -> String {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Text(text) => out.push_str(&text.value),
                Part::Interpolation(interpolation) => interpolation.write_source(&mut out),
            }
        }
        out
    }
}

/// One part of a [`Template`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Part {
    /// Literal text, sent as written.
    Text(Spanned<String>),
    /// A `{{ }}` interpolation.
    Interpolation(Interpolation),
}

/// A `{{ … }}` in the source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Interpolation {
    /// From `{{` to `}}` (or the end of what was written when unclosed).
    pub span: Span,
    /// What is inside; `None` for `{{}}`.
    pub expression: Option<Expression>,
    /// `false` when the closing `}}` is missing.
    pub closed: bool,
}

impl Interpolation {
    /// Visits this interpolation and the ones nested in its resolver arguments.
    pub fn walk(&self, visit: &mut impl FnMut(&Interpolation)) {
        visit(self);
        if let Some(Expression::Resolver(call)) = &self.expression {
            for argument in call.arguments.templates() {
                argument.walk(visit);
            }
        }
    }

    fn write_source(&self, out: &mut String) {
        out.push_str("{{");
        match &self.expression {
            None => {}
            Some(Expression::Variable(name)) => out.push_str(&name.value),
            Some(Expression::JavaScript(code)) => {
                out.push(' ');
                out.push_str(&code.value);
                out.push(' ');
            }
            Some(Expression::Resolver(call)) => {
                out.push('$');
                out.push_str(&call.name.value);
                match &call.arguments {
                    Arguments::None => {}
                    Arguments::List(list) => {
                        out.push('(');
                        for (index, argument) in list.iter().enumerate() {
                            if index > 0 {
                                out.push_str(", ");
                            }
                            out.push_str(&argument.to_source());
                        }
                        out.push(')');
                    }
                    Arguments::JsonArray(array) => {
                        out.push('(');
                        out.push_str(&array.to_source());
                        out.push(')');
                    }
                    Arguments::Words(words) => {
                        for word in words {
                            out.push(' ');
                            out.push_str(&word.to_source());
                        }
                    }
                }
            }
        }
        if self.closed {
            out.push_str("}}");
        }
    }
}

/// What an interpolation refers to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Expression {
    /// `{{name}}`, `{{a.b.c}}`, `{{login.response.body.$.token}}`: a variable path as
    /// written (see [`variable_path_segments`]).
    Variable(Spanned<String>),
    /// `{{$name(…)}}`.
    Resolver(ResolverCall),
    /// httpyac's JavaScript in `{{ }}` (`{{ Date.now() }}`, `{{name.toUpperCase()}}`):
    /// the code between the braces, trimmed, evaluated with the variables as JavaScript
    /// variables.
    JavaScript(Spanned<String>),
}

/// A resolver call: `{{$uuid()}}`, `{{$random(1, 10)}}`, `{{$randomInt 1 10}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResolverCall {
    /// The name without the `$` (`random.uuid` for `{{$random.uuid}}`).
    pub name: Spanned<String>,
    /// The arguments as written.
    pub arguments: Arguments,
}

/// The arguments of a resolver call, in the form they were written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "values", rename_all = "snake_case")]
pub enum Arguments {
    /// `{{$uuid}}` (no parentheses).
    None,
    /// `(a, "b, c", {{d}})`: comma separated; quotes removed, escapes resolved, the
    /// spaces around each argument trimmed. `()` is an empty list.
    List(Vec<Template>),
    /// `(["a", "{{b}}"])`: the array text; read as JSON after substitution.
    JsonArray(Template),
    /// `{{$randomInt 1 10}}`: space separated words (the form other tools use).
    Words(Vec<Template>),
}

impl Arguments {
    /// The argument templates (the array for a JSON array).
    #[must_use]
    pub fn templates(&self) -> &[Template] {
        match self {
            Arguments::None => &[],
            Arguments::List(list) | Arguments::Words(list) => list,
            Arguments::JsonArray(array) => std::slice::from_ref(array),
        }
    }

    /// Number of arguments as written; a JSON array counts its elements only after
    /// substitution, so it reports `None`.
    #[must_use]
    pub fn count(&self) -> Option<usize> {
        match self {
            Arguments::None => Some(0),
            Arguments::List(list) | Arguments::Words(list) => Some(list.len()),
            Arguments::JsonArray(_) => None,
        }
    }
}

/// The segments of a variable path: `a.b.0` → `["a", "b", "0"]`.
///
/// A request-variable path keeps its JSONPath tail in one piece:
/// `login.response.body.$.items[0].id` → `["login", "response", "body", "$.items[0].id"]`.
#[must_use]
pub fn variable_path_segments(path: &str) -> Vec<&str> {
    let mut segments = Vec::new();
    let mut rest = path;
    loop {
        if rest.starts_with('$') {
            segments.push(rest);
            break;
        }
        if let Some(dot) = rest.find('.') {
            segments.push(&rest[..dot]);
            rest = &rest[dot + 1..];
        } else {
            segments.push(rest);
            break;
        }
    }
    segments
}

/// `true` when `text` is read as one variable name inside `{{ }}` (`{{text}}`): the
/// grammar's `variable_name`, at least one character, no whitespace and no `{` or `}`,
/// not starting with `$` (a resolver). A request titled `### Basic authentication` has
/// a name that is not one, so it cannot be chained to.
#[must_use]
pub fn is_variable_name(text: &str) -> bool {
    !text.is_empty()
        && !text.starts_with('$')
        && !text.chars().any(|character| character.is_whitespace() || character == '{' || character == '}')
}

#[cfg(test)]
mod tests {
    use super::{Expression, is_variable_name, variable_path_segments};

    /// The rule agrees with the parser: a name is valid exactly when `{{name}}` parses to
    /// that variable without diagnostics.
    #[test]
    fn variable_names_follow_the_grammar() {
        for name in ["login", "api.host", "my-req_2", "a.b.0", "é", "x$", "a:b", "日本"] {
            assert!(is_variable_name(name), "{name}");
        }
        for name in ["", "Basic authentication", "$uuid", "a{b", "a}b", "tab\there"] {
            assert!(!is_variable_name(name), "{name}");
        }
        for name in ["login", "api.host", "x$", "a:b", "Basic authentication", "a{b", "a}b", "a\tb"] {
            let document = crate::parse(&format!("GET http://h/{{{{{name}}}}}\n"));
            let request = document.request(0).expect("a request");
            let mut found = Vec::new();
            request.url.walk(&mut |interpolation| found.push(interpolation.expression.clone()));
            let parsed_as_name = document.diagnostics.is_empty()
                && matches!(found.as_slice(), [Some(Expression::Variable(variable))] if variable.value == name);
            assert_eq!(parsed_as_name, is_variable_name(name), "{name}: {found:?} {:?}", document.diagnostics);
        }
    }

    #[test]
    fn splits_paths_and_keeps_jsonpath_whole() {
        assert_eq!(variable_path_segments("a"), ["a"]);
        assert_eq!(variable_path_segments("a.items.0"), ["a", "items", "0"]);
        assert_eq!(
            variable_path_segments("login.response.body.$.items[0].id"),
            ["login", "response", "body", "$.items[0].id"]
        );
        assert_eq!(
            variable_path_segments("login.response.headers.X-Token"),
            ["login", "response", "headers", "X-Token"]
        );
    }
}
