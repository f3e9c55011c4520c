//! The script API of `{% %}` scripts (JetBrains' HTTP Client API as Volley runs it): one
//! table of its members, with signatures, docs and the scripts that have them, read by
//! completion and hover alike.

use volley_syntax::ScriptKind;

/// What a member is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MemberKind {
    /// An object of the API (`client`, `response.headers`): its members follow a `.`.
    Object,
    Method,
    /// A value (`response.status`).
    Property,
}

/// One member of the API.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Member {
    /// The whole path, `client.global.set`.
    pub(crate) path: &'static str,
    pub(crate) kind: MemberKind,
    /// A method's parameters: `(name, value)`; `message?` is optional, `...values` any
    /// number. Empty for objects and properties.
    pub(crate) parameters: &'static str,
    /// Markdown.
    pub(crate) doc: &'static str,
    /// Only response handlers have it (`response`): a pre-request script runs before
    /// there is one.
    pub(crate) handlers_only: bool,
}

impl Member {
    /// The member, in response handlers only.
    const fn in_handlers_only(self) -> Self {
        Self { handlers_only: true, ..self }
    }

    /// The last name of the path: `set` of `client.global.set`.
    pub(crate) fn name(&self) -> &'static str {
        self.path.rsplit('.').next().unwrap_or(self.path)
    }

    /// `client.global.set(name, value)`, `response.status`.
    pub(crate) fn signature(&self) -> String {
        format!("{}{}", self.path, self.parameters)
    }

    /// The doc, and where the member exists when not in every script (Markdown).
    pub(crate) fn documentation(&self) -> String {
        if self.handlers_only { format!("{}\n\nIn response handlers only.", self.doc) } else { self.doc.to_owned() }
    }

    /// Whether a script of `kind` has this member.
    pub(crate) fn available_in(&self, kind: ScriptKind) -> bool {
        !self.handlers_only || kind == ScriptKind::ResponseHandler
    }

    /// The names of the parameters a call needs (without `?` optional ones and `...`
    /// rest ones): `["name", "value"]`.
    pub(crate) fn required_parameters(&self) -> impl Iterator<Item = &'static str> {
        let inside = self.parameters.trim_start_matches('(').trim_end_matches(')');
        inside
            .split(',')
            .map(str::trim)
            .filter(|parameter| !parameter.is_empty() && !parameter.ends_with('?') && !parameter.starts_with("..."))
    }
}

/// The members a script of `kind` has after `qualifier.` (`client.global`), or at the
/// top level for an empty `qualifier`.
pub(crate) fn members_of(qualifier: &str, kind: ScriptKind) -> impl Iterator<Item = &'static Member> {
    MEMBERS.iter().filter(move |member| {
        let parent = member.path.rsplit_once('.').map_or("", |(parent, _)| parent);
        parent == qualifier && member.available_in(kind)
    })
}

/// The member at `path`, whichever scripts have it.
pub(crate) fn member(path: &str) -> Option<&'static Member> {
    MEMBERS.iter().find(|member| member.path == path)
}

/// Every member of the API, parents before their members.
pub(crate) const MEMBERS: &[Member] = &[
    object("client", "The HTTP client of the script: globals, tests, assertions and the log."),
    object(
        "client.global",
        "The globals: variables of every later request of the run (and of the editor session), \
         written `{{name}}`.",
    ),
    method(
        "client.global.set",
        "(name, value)",
        "Sets the global `name` to `value`: a variable of every later request of the run (and of \
         the editor session), written `{{name}}`. Above the profile and the configuration, below \
         a run's `--var`.",
    ),
    method("client.global.get", "(name)", "The value of the global `name`, `null` when it is not set."),
    method("client.global.isEmpty", "()", "`true` when no global is set."),
    method("client.global.clear", "(name)", "Removes the global `name`."),
    method("client.global.clearAll", "()", "Removes every global."),
    method(
        "client.test",
        "(name, fn)",
        "A test named `name`: `fn` runs after the handler, in order, and passes unless it throws. \
         Its result is listed with the request's assertions.",
    ),
    method(
        "client.assert",
        "(condition, message?)",
        "Throws `AssertionError: message` when `condition` is falsy (`Assertion failed` without a \
         message).",
    ),
    method(
        "client.log",
        "(...values)",
        "Writes one line to the request's result: strings as they are, other values as JSON.",
    ),
    method("client.exit", "()", "Ends the script here, without an error; the tests already registered still run."),
    object("request", "The request of the script, as written and as sent."),
    object("request.variables", "The request's own variables."),
    method(
        "request.variables.set",
        "(name, value)",
        "Sets `name` to `value` for this request only, above every other variable: `{{name}}` \
         in its URL, headers and body. In a pre-request script.",
    ),
    method(
        "request.variables.get",
        "(name)",
        "A variable set with `request.variables.set`, else one known before the request is built; \
         `null` when unknown.",
    ),
    object(
        "request.environment",
        "The variables of the active profile (`volley.jsonc`) or environment (`http-client.env.json`).",
    ),
    method(
        "request.environment.get",
        "(name)",
        "The variable `name` of the active profile or environment file, `null` when it has none.",
    ),
    property("request.method", "The request's method: `GET`, `POST`, …"),
    object("request.url", "The request's URL."),
    method("request.url.getRaw", "()", "The URL as written, `{{variables}}` included."),
    method(
        "request.url.tryGetSubstituted",
        "()",
        "The URL with the known variables substituted: as sent, in a response handler.",
    ),
    object("request.headers", "The request's headers, as written."),
    method(
        "request.headers.all",
        "()",
        "The request's headers as written, each with `name`, `getRawValue()` and \
         `tryGetSubstitutedValue()`.",
    ),
    method(
        "request.headers.findByName",
        "(name)",
        "The first header named `name` (in any case) with `name`, `getRawValue()` and \
         `tryGetSubstitutedValue()`; `null` when the request has none.",
    ),
    object("request.body", "The request's body."),
    method(
        "request.body.getRaw",
        "()",
        "The body written in the request, `{{variables}}` included; `undefined` for a file body or none.",
    ),
    method(
        "request.body.tryGetSubstituted",
        "()",
        "The body with the known variables substituted; `undefined` for a file body or none.",
    ),
    object("response", "The response the handler runs on: status, headers, body.").in_handlers_only(),
    property("response.status", "The status code, a number: `200`.").in_handlers_only(),
    property(
        "response.body",
        "The body: parsed JSON when the content type is JSON (`application/json`, `*+json`) and it \
         parses, else the text.",
    )
    .in_handlers_only(),
    object("response.headers", "The response's headers.").in_handlers_only(),
    method(
        "response.headers.valueOf",
        "(name)",
        "The first value of the header `name` (in any case), `null` when absent.",
    )
    .in_handlers_only(),
    method("response.headers.valuesOf", "(name)", "Every value of the header `name` (in any case), `[]` when absent.")
        .in_handlers_only(),
    object("response.contentType", "The response's `Content-Type`, read.").in_handlers_only(),
    property(
        "response.contentType.mimeType",
        "The media type of the `Content-Type`: `application/json` of `application/json; charset=utf-8`.",
    )
    .in_handlers_only(),
    property(
        "response.contentType.charset",
        "The charset of the `Content-Type`: `utf-8` of `application/json; charset=utf-8`.",
    )
    .in_handlers_only(),
];

const fn object(path: &'static str, doc: &'static str) -> Member {
    Member { path, kind: MemberKind::Object, parameters: "", doc, handlers_only: false }
}

const fn method(path: &'static str, parameters: &'static str, doc: &'static str) -> Member {
    Member { path, kind: MemberKind::Method, parameters, doc, handlers_only: false }
}

const fn property(path: &'static str, doc: &'static str) -> Member {
    Member { path, kind: MemberKind::Property, parameters: "", doc, handlers_only: false }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_member_has_its_parent_and_one_entry() {
        for member in MEMBERS {
            if let Some((parent, _)) = member.path.rsplit_once('.') {
                let parent = super::member(parent).unwrap_or_else(|| panic!("no parent of {}", member.path));
                assert_eq!(parent.kind, MemberKind::Object, "{}", member.path);
                assert!(!parent.handlers_only || member.handlers_only, "{}", member.path);
            }
            assert_eq!(MEMBERS.iter().filter(|other| other.path == member.path).count(), 1, "{}", member.path);
            assert_eq!(member.kind == MemberKind::Method, member.parameters.starts_with('('), "{}", member.path);
            assert!(member.doc.ends_with('.') || member.doc.ends_with('…'), "{}", member.path);
        }
    }

    #[test]
    fn members_follow_their_qualifier_and_the_script_kind() {
        let names = |qualifier, kind| members_of(qualifier, kind).map(Member::name).collect::<Vec<_>>();
        assert_eq!(names("client", ScriptKind::ResponseHandler), ["global", "test", "assert", "log", "exit"]);
        assert_eq!(names("", ScriptKind::ResponseHandler), ["client", "request", "response"]);
        assert_eq!(names("", ScriptKind::PreRequest), ["client", "request"]);
        assert_eq!(names("response", ScriptKind::PreRequest), Vec::<&str>::new());
        assert_eq!(names("response.headers", ScriptKind::ResponseHandler), ["valueOf", "valuesOf"]);
    }

    #[test]
    fn required_parameters_leave_out_optional_and_rest_ones() {
        let required = |path| member(path).expect(path).required_parameters().collect::<Vec<_>>();
        assert_eq!(required("client.global.set"), ["name", "value"]);
        assert_eq!(required("client.assert"), ["condition"]);
        assert_eq!(required("client.log"), Vec::<&str>::new());
        assert_eq!(required("client.exit"), Vec::<&str>::new());
    }
}
