//! httpyac's `# @loop`: the iterations of a request, each the variables it sets. The
//! list is evaluated by preparing the request (never sent), so this stands above
//! `prepare`.

use std::path::Path;

use serde_json::{Map, Value};
use volley_syntax::{Document, Span, Spanned};

use crate::client::Client;
use crate::error::{BuildError, Error};

/// The most iterations one `@loop` may run.
pub(crate) const MAX_LOOP_ITERATIONS: usize = 10_000;

/// The header of the request built only to evaluate a `@loop`'s list.
const LOOP_PROBE: &str = "x-volley-loop";

impl Client {
    /// The iterations of `request`'s `# @loop` (httpyac), each the variables it sets
    /// (`$index`, and the element's name for `for item of list`); `None` without one.
    /// The list is evaluated as the request would be (its file, profile, the responses
    /// kept so far); `while` loops and a list that is not one are errors at the directive.
    pub(crate) async fn loop_iterations(
        &self,
        document: &Document,
        request: &volley_syntax::Request,
        source_path: Option<&Path>,
        options: &crate::RunOptions,
    ) -> Result<Option<Vec<Map<String, Value>>>, Error> {
        use volley_syntax::Loop;
        let Some(repeat) = request.repeat() else { return Ok(None) };
        let refused = |message: String, hint: &str, span: Span| {
            Error::Build(BuildError::Command { message, hint: Some(hint.to_owned()), span })
        };
        let index = |at: usize| Value::from(at);
        match repeat {
            Loop::Unsupported(text) => Err(refused(
                format!("`@loop {}` is not supported", text.value),
                "Volley runs `@loop for <count>` and `@loop for <name> of <list>`; write the requests one by one \
                 otherwise",
                text.span,
            )),
            Loop::Count(count) => {
                let text = self.evaluate_probe(document, request, source_path, options, &count).await?;
                let count = text.trim().parse::<usize>().map_err(|_| {
                    refused(
                        format!("`@loop for {text}`: not a number of iterations"),
                        "write `@loop for 3`",
                        count.span,
                    )
                })?;
                if count > MAX_LOOP_ITERATIONS {
                    return Err(refused(
                        format!("`@loop for {count}`: more than {MAX_LOOP_ITERATIONS} iterations"),
                        "loop fewer times, or use `volley run --repeat`",
                        request.line_span,
                    ));
                }
                Ok(Some((0..count).map(|at| Map::from_iter([("$index".to_owned(), index(at))])).collect()))
            }
            Loop::Each { name, list } => {
                let written = Spanned::new(format!("{{{{ JSON.stringify({}) }}}}", list.value), list.span);
                let json = self.evaluate_probe(document, request, source_path, options, &written).await?;
                let items = match serde_json::from_str::<Value>(&json) {
                    Ok(Value::Array(items)) => items,
                    Ok(Value::Object(fields)) => fields.into_iter().map(|(_, value)| value).collect(),
                    _ => {
                        return Err(refused(
                            format!("`@loop for {} of {}`: `{}` is not a list", name.value, list.value, list.value),
                            "loop over an array: a variable holding one, or a response's field",
                            list.span,
                        ));
                    }
                };
                if items.len() > MAX_LOOP_ITERATIONS {
                    return Err(refused(
                        format!("`{}` has more than {MAX_LOOP_ITERATIONS} elements", list.value),
                        "loop over a shorter list",
                        list.span,
                    ));
                }
                let iterations = items
                    .into_iter()
                    .enumerate()
                    .map(|(at, item)| Map::from_iter([(name.value.clone(), item), ("$index".to_owned(), index(at))]))
                    .collect();
                Ok(Some(iterations))
            }
        }
    }

    /// `written` (text with `{{ }}`) substituted as `request` of `document` would see it,
    /// after httpyac's global scripts and without its own: a request to nowhere is
    /// prepared (never sent) with the text as a header.
    async fn evaluate_probe(
        &self,
        document: &Document,
        request: &volley_syntax::Request,
        source_path: Option<&Path>,
        options: &crate::RunOptions,
        written: &Spanned<String>,
    ) -> Result<String, Error> {
        let (value, _) = volley_syntax::parse_template(&written.value);
        let (name, _) = volley_syntax::parse_template(LOOP_PROBE);
        let mut probe = request.clone();
        probe.directives.clear();
        probe.scripts.clear();
        probe.body = volley_syntax::Body::None;
        probe.protocol = volley_syntax::Protocol::Http;
        probe.headers = vec![volley_syntax::Header { span: written.span, name, value }];
        probe.url = volley_syntax::parse_template("http://volley.invalid/").0;
        let prepared =
            self.prepare_request(document, &probe, source_path, options).await.map_err(|error| match error {
                Error::Build(error) => Error::Build(BuildError::Command {
                    message: format!("in `{}`: {}", written.value, error.message()),
                    hint: error.hint(),
                    span: written.span,
                }),
                error => error,
            })?;
        let value =
            prepared.headers.get(LOOP_PROBE).map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
        Ok(value.unwrap_or_default())
    }
}
