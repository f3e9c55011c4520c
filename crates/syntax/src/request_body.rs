//! The body of a typed request: inline text, a file, form fields, a multipart body
//! written by hand, a GraphQL query; with the visit of its templates.

use serde::Serialize;

use crate::span::{Span, Spanned};
use crate::template::Template;

/// The body of a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Body {
    /// No body.
    None,
    /// Text sent as written (after substitution); trailing blank lines dropped.
    Inline(Template),
    /// `< ./path` (sent as is) or `<@ ./path` (variables substituted in the file).
    File(FileBody),
    /// `name = value` lines.
    Form(FormBody),
    /// Text with `< ./file` lines among it (a multipart body written by hand): each
    /// file line is replaced by the file's content.
    Parts(PartsBody),
    /// A GraphQL request (`GRAPHQL` method or `X-Request-Type: GraphQL`): the query and
    /// an optional JSON object of variables, sent as `{"query", "variables",
    /// "operationName"}`.
    GraphQl(GraphQlBody),
}

impl Body {
    /// Visits every template of the body in order: text, file paths, form values and
    /// filenames, a GraphQL query and its variables.
    pub fn for_each_template<'a>(&'a self, visit: &mut impl FnMut(&'a Template)) {
        match self {
            Body::None => {}
            Body::Inline(template) => visit(template),
            Body::File(file) => visit(&file.path),
            Body::Form(form) => {
                for field in &form.fields {
                    match &field.value {
                        FormValue::Text(template) => visit(template),
                        FormValue::File { path, filename } => {
                            visit(path);
                            if let Some(filename) = filename {
                                visit(filename);
                            }
                        }
                    }
                }
            }
            Body::Parts(parts) => {
                for part in &parts.parts {
                    match part {
                        BodyPart::Text(template) => visit(template),
                        BodyPart::File(file) => visit(&file.path),
                    }
                }
            }
            Body::GraphQl(graphql) => {
                visit(&graphql.query);
                if let Some(variables) = &graphql.variables {
                    visit(variables);
                }
            }
        }
    }

    /// The span of the body, `None` for no body.
    #[must_use]
    pub fn span(&self) -> Option<Span> {
        match self {
            Body::None => None,
            Body::Inline(template) => Some(template.span),
            Body::File(file) => Some(file.span),
            Body::Form(form) => Some(form.span),
            Body::Parts(parts) => Some(parts.span),
            Body::GraphQl(graphql) => Some(graphql.span),
        }
    }
}

/// `< ./path` and `<@ ./path`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileBody {
    /// The whole line.
    pub span: Span,
    /// The path, relative to the `.http` file; may contain variables.
    pub path: Template,
    /// `true` for `<@`: substitute `{{ }}` in the file's content.
    pub substitute: bool,
    /// The encoding named after `<@` (`<@latin1 ./file`), as written.
    pub encoding: Option<String>,
}

/// A body of text and `< ./file` lines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartsBody {
    /// The whole body.
    pub span: Span,
    /// Text and files, in order. The line break before and after a file line belongs
    /// to the text around it.
    pub parts: Vec<BodyPart>,
}

/// One piece of a [`PartsBody`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum BodyPart {
    /// Text, substituted.
    Text(Template),
    /// A `< ./file` or `<@ ./file` line.
    File(FileBody),
}

/// The body of a GraphQL request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GraphQlBody {
    /// The whole body.
    pub span: Span,
    /// The query (or mutation, subscription), as written.
    pub query: Template,
    /// The JSON object after the query's last blank line, when there is one.
    pub variables: Option<Template>,
    /// The name of the first named operation (`query GetUser { … }`), when there is one.
    pub operation_name: Option<String>,
    /// The fragments of the file the query spreads (`...Parts`), directly or through
    /// other fragments, as written: they are sent after the query.
    pub fragments: Vec<String>,
}

/// A form body: url-encoded, or multipart when a field is a file or the
/// `Content-Type` is `multipart/form-data`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FormBody {
    /// All the field lines.
    pub span: Span,
    /// `true` when the body must be sent as `multipart/form-data`.
    pub multipart: bool,
    /// The fields in order.
    pub fields: Vec<FormField>,
}

/// One `name = value` line of a form body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FormField {
    /// The whole line.
    pub span: Span,
    /// The field name.
    pub name: Spanned<String>,
    /// The value or file.
    pub value: FormValue,
}

/// The value of a form field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FormValue {
    /// Text (may be empty).
    Text(Template),
    /// `@./path` or `@./path | filename`: a file upload.
    File {
        /// Path relative to the `.http` file.
        path: Template,
        /// The filename to send instead of the file's own name.
        filename: Option<Template>,
    },
}
