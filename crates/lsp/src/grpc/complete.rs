//! Completion in a gRPC request: on its request line, after `host:port/` (or Kulala's
//! `host:port `) the schema's services, fully qualified, and after `Service/` the
//! service's methods; in its body, where a key of a message's top-level object is
//! written, the fields of the method's input message by their JSON names (a send
//! accepts the proto names too).

use std::ops::Range;
use std::sync::Arc;

use volley_engine::grpc::Schema;
use volley_syntax::{Body, Protocol, Request};

use super::{Lookup, Place, Surroundings, json};
use crate::answers::{Candidate, Kind};
use crate::model::Snapshot;

/// What is completed where the cursor is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Wanted {
    /// A service; `replace` is what was typed of it.
    Service { replace: Range<usize> },
    /// A method of `service`.
    Method { service: String, replace: Range<usize> },
    /// A field of the top-level message object: `written` the keys already there, `quoted`
    /// when typed inside quotes, `closed` when a closing quote follows the cursor.
    Field { replace: Range<usize>, written: Vec<String>, quoted: bool, closed: bool },
}

/// The gRPC candidates at byte `offset` of a snapshot, `None` where none is wanted (not
/// a gRPC request, not on its target or at a key of its body). Awaits the schema: call
/// it off the async workers (see [`super::blocking`]).
pub(crate) fn candidates(
    snapshot: &Snapshot,
    engine: &volley_engine::Client,
    profile: Option<&str>,
    offset: usize,
) -> Option<Vec<Candidate>> {
    let placed = snapshot.model.part_at(offset)?;
    if !placed.part.outline.grpc {
        return None;
    }
    let document = placed.part.document();
    let local = placed.local(offset);
    let request = document.request_at(local).filter(|request| matches!(request.protocol, Protocol::Grpc(_)))?;
    let wanted = wanted_at(&placed.part.text, request, local)?;
    let variables: Arc<[_]> = snapshot.model.variables().cloned().collect();
    let surroundings = Surroundings::of(&snapshot.model, placed, variables);
    let place = Place { path: snapshot.path.as_deref(), profile, catalogs: None };
    let Lookup::Schema(schema) = super::blocking(super::schema(engine, &document, request, &surroundings, place))
    else {
        return Some(Vec::new());
    };
    let placed_range = |range: &Range<usize>| range.start + placed.start..range.end + placed.start;
    Some(match wanted {
        Wanted::Service { replace } => services(&schema, &placed_range(&replace)),
        Wanted::Method { service, replace } => methods(&schema, &service, &placed_range(&replace)),
        Wanted::Field { replace, written, quoted, closed } => {
            let Some(target) = target_of(request, &placed.part.text) else { return Some(Vec::new()) };
            let (service, method) = target;
            fields(&schema, (&service, &method), &placed_range(&replace), &written, quoted && !closed, !quoted)
        }
    })
}

/// What is completed at the part offset `local` of `request`, whose part text is `text`.
fn wanted_at(text: &str, request: &Request, local: usize) -> Option<Wanted> {
    let url = request.url.span;
    if (url.start..=url.end).contains(&local) {
        let written = text.get(url.start..local)?;
        let (service, start) = target_at(written)?;
        let replace = url.start + start..local;
        return Some(match service {
            Some(service) => Wanted::Method { service, replace },
            None => Wanted::Service { replace },
        });
    }
    let Body::Inline(body) = &request.body else { return None };
    if !body.span.contains(local) {
        return None;
    }
    // The message being written: after the last `===` line before the cursor.
    let mut start = body.span.start;
    let mut line_start = start;
    for line in volley_syntax::line_break::lines_inclusive(text.get(body.span.start..local)?) {
        line_start += line.len();
        if volley_syntax::line_break::ends_with_break(line) && is_separator(line) {
            start = line_start;
        }
    }
    let holes = body.interpolations().map(|interpolation| interpolation.span.range());
    let masked = json::Masked::of(text, start..local, holes)?;
    let key = json::key_at_end(&masked.text)?;
    let written = json::top_level_keys(&masked.text).into_iter().map(|key| key.name).collect();
    let rest = text.get(local..).unwrap_or_default();
    let closed =
        rest.trim_start_matches(|character: char| character.is_alphanumeric() || character == '_').starts_with('"');
    Some(Wanted::Field { replace: start + key.start..local, written, quoted: key.quoted, closed })
}

/// A `===` or `=== wait-for-server` line, which separates messages.
fn is_separator(line: &str) -> bool {
    line.trim().strip_prefix("===").is_some_and(|rest| {
        let rest = rest.trim();
        rest.is_empty() || rest.eq_ignore_ascii_case("wait-for-server")
    })
}

/// In the target written up to the cursor: the service before a `/` after it (when the
/// method is being written) and where what is being written starts; `None` while the
/// authority is written.
fn target_at(written: &str) -> Option<(Option<String>, usize)> {
    let mut rest_start = written.find("://").map_or(0, |at| at + 3);
    // `{{host}}` may hold anything, blanks included.
    if written[rest_start..].starts_with("{{") {
        rest_start = written[rest_start..].find("}}").map_or(written.len(), |at| rest_start + at + 2);
    }
    let rest = &written[rest_start..];
    let path_start = match rest.find(char::is_whitespace) {
        // Kulala's `host:port package.Service/Method`.
        Some(blank) => {
            let after = &rest[blank..];
            rest_start + blank + (after.len() - after.trim_start().len())
        }
        None => rest_start + rest.find('/')? + 1,
    };
    let path = &written[path_start..];
    Some(match path.rfind('/') {
        Some(slash) => (Some(path[..slash].trim_matches('/').to_owned()), path_start + slash + 1),
        None => (None, path_start),
    })
}

/// The service and method of a request line, as written (for the fields of its body).
fn target_of(request: &Request, text: &str) -> Option<(String, String)> {
    let url = request.url.span;
    let written = text.get(url.start..url.end)?.trim_end();
    let (Some(service), start) = target_at(written)? else { return None };
    let method = written[start..].trim();
    (!service.is_empty() && !method.is_empty()).then(|| (service, method.to_owned()))
}

fn services(schema: &Schema, replace: &Range<usize>) -> Vec<Candidate> {
    schema
        .services()
        .into_iter()
        .map(|service| {
            let methods = schema.methods(&service);
            Candidate {
                label: service.clone(),
                kind: Kind::Module,
                detail: Some("gRPC service".to_owned()),
                documentation: (!methods.is_empty()).then(|| format!("Methods: {}", methods.join(", "))),
                text: service,
                snippet: false,
                replace: replace.clone(),
            }
        })
        .collect()
}

fn methods(schema: &Schema, service: &str, replace: &Range<usize>) -> Vec<Candidate> {
    schema
        .methods(service)
        .into_iter()
        .map(|name| {
            let detail = schema.method(service, &name).ok().map(|method| {
                let stream = |streaming: bool| if streaming { "stream " } else { "" };
                format!(
                    "({}{}) returns ({}{})",
                    stream(method.is_client_streaming()),
                    method.input().full_name(),
                    stream(method.is_server_streaming()),
                    method.output().full_name()
                )
            });
            Candidate {
                label: name.clone(),
                kind: Kind::Method,
                detail,
                documentation: None,
                text: name,
                snippet: false,
                replace: replace.clone(),
            }
        })
        .collect()
}

/// The fields of the method's input not written yet: `"name": ` when `quote`, `name": `
/// when `close` (inside an unclosed quote), else the name alone.
fn fields(
    schema: &Schema,
    (service, method): (&str, &str),
    replace: &Range<usize>,
    written: &[String],
    close: bool,
    quote: bool,
) -> Vec<Candidate> {
    schema
        .input_fields(service, method)
        .into_iter()
        .filter(|field| !written.iter().any(|key| *key == field.json_name || *key == field.name))
        .map(|field| {
            let text = if quote {
                format!("\"{}\": ", field.json_name)
            } else if close {
                format!("{}\": ", field.json_name)
            } else {
                field.json_name.clone()
            };
            Candidate {
                label: field.json_name.clone(),
                kind: Kind::Field,
                documentation: (field.name != field.json_name).then(|| format!("In the proto file: `{}`", field.name)),
                detail: Some(field.kind),
                text,
                snippet: false,
                replace: replace.clone(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_part_of_a_target_being_written() {
        assert_eq!(target_at("localhost:50051"), None);
        assert_eq!(target_at("localhost:50051/"), Some((None, 16)));
        assert_eq!(target_at("grpcs://localhost:50051/shop."), Some((None, 24)));
        assert_eq!(target_at("localhost:50051/shop.v1.Orders/Pl"), Some((Some("shop.v1.Orders".to_owned()), 31)));
        assert_eq!(target_at("localhost:50051 shop.v1.Orders/"), Some((Some("shop.v1.Orders".to_owned()), 31)));
        assert_eq!(target_at("localhost:50051  sh"), Some((None, 17)));
        assert_eq!(target_at("/shop.v1.Orders/"), Some((Some("shop.v1.Orders".to_owned()), 16)));
        assert_eq!(target_at("{{ host }}/sh"), Some((None, 11)));
    }

    #[test]
    fn the_message_being_written_starts_after_the_last_separator_line() {
        let text = "GRPC localhost:50051/shop.v1.Orders/Place\n\n{\"a\": 1}\n===\n{\"b\": 2, \"\n";
        for text in [text.to_owned(), text.replace('\n', "\r\n"), text.replace('\n', "\r")] {
            let document = volley_syntax::parse(&text);
            let request = document.request(0).expect("a request");
            let local = text.trim_end().len();
            let Some(Wanted::Field { written, .. }) = wanted_at(&text, request, local) else {
                panic!("a field is wanted in {text:?}");
            };
            assert_eq!(written, ["b"], "{text:?}");
        }
    }

    #[test]
    fn separators_between_messages() {
        assert!(is_separator("===\n"));
        assert!(is_separator("  === wait-for-server\n"));
        assert!(!is_separator("==== \n"));
        assert!(!is_separator("{\"a\": \"===\"}\n"));
    }
}
