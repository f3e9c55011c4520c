//! The gRPC diagnostics of a part: for each gRPC request whose target is written out
//! (no `{{ }}`) and whose schema comes from proto files or a descriptor set, a service
//! or method the schema does not have (at the target, with the engine's "did you
//! mean"), a top-level key of a message that is no field of the method's input (at the
//! key), and once per proto line a proto file that does not compile (at the line naming
//! it, with the compiler's `file:line:column`). All are `invalid-grpc`, as a send would
//! fail with them.

use volley_engine::grpc::{Field, Schema, Target};
use volley_syntax::{Body, Code, Diagnostic, Document, LineIndex, Protocol, Request, Template};

use super::{Lookup, Place, Surroundings, json};

/// The gRPC diagnostics of the part `document` (whose text is `text`), spans counted
/// from the part's start. Awaits the schemas: see [`super::blocking`].
pub(crate) async fn diagnostics(
    engine: &volley_engine::Client,
    text: &str,
    document: &Document,
    surroundings: &Surroundings,
    place: Place<'_>,
) -> Vec<Diagnostic> {
    let mut found: Vec<Diagnostic> = Vec::new();
    let lines = LineIndex::new(text);
    for request in document.requests().filter(|request| matches!(request.protocol, Protocol::Grpc(_))) {
        let Some(target) = written_target(request) else { continue };
        match super::schema(engine, document, request, surroundings, place).await {
            Lookup::Schema(schema) => check(&schema, &target, request, text, &lines, &mut found),
            Lookup::Broken { message, hint, span } => {
                // Another part's `proto <` line is reported on the request's target.
                let span = if span == request.line_span { request.url.span } else { span };
                let mut diagnostic = Diagnostic::new(Code::InvalidGrpc, span, message);
                diagnostic.hint = hint;
                // Several requests may use the same broken file: one diagnostic per line.
                if !found.contains(&diagnostic) {
                    found.push(diagnostic);
                }
            }
            Lookup::Unknown => {}
        }
    }
    found
}

/// The target of a request line written without variables (`localhost:50051/a.B/C`,
/// Kulala's `localhost:50051 a.B/C`, `/a.B/C` after a variable `host`). The analysis
/// reports one that cannot be read.
fn written_target(request: &Request) -> Option<Target> {
    let written = request.url.as_literal()?;
    let written = written.trim();
    if written.starts_with('/') {
        return Target::parse(&format!("localhost{written}")).ok();
    }
    Target::parse(written).ok()
}

fn check(
    schema: &Schema,
    target: &Target,
    request: &Request,
    text: &str,
    lines: &LineIndex,
    found: &mut Vec<Diagnostic>,
) {
    let method = match schema.method(&target.service, &target.method) {
        Ok(method) => method,
        Err(error) => {
            let mut known = schema.methods(&target.service);
            if known.is_empty() {
                known = schema.services();
            }
            let mut diagnostic = Diagnostic::new(Code::InvalidGrpc, request.url.span, error.to_string());
            if !known.is_empty() {
                diagnostic = diagnostic.with_hint(format!("the schema has {}", known.join(", ")));
            }
            found.push(diagnostic);
            return;
        }
    };
    let input = method.input();
    // The well-known types have JSON forms of their own (`Struct` is any object).
    if input.full_name().starts_with("google.protobuf.") {
        return;
    }
    let Body::Inline(body) = &request.body else { return };
    let fields = schema.input_fields(&target.service, &target.method);
    for message in volley_syntax::split_messages(body).iter().filter(|message| !message.is_blank()) {
        unknown_keys(&message.body, input.full_name(), &fields, text, lines, found);
    }
}

/// An `invalid-grpc` for each top-level key of `message` that names no field (by its
/// proto name or its JSON name, both of which a send accepts).
fn unknown_keys(
    message: &Template,
    type_name: &str,
    fields: &[Field],
    text: &str,
    lines: &LineIndex,
    found: &mut Vec<Diagnostic>,
) {
    let span = message.span;
    let Some(masked) = json::Masked::of(text, span.range(), message.interpolations().map(|at| at.span.range())) else {
        return;
    };
    let json_names: Vec<&str> = fields.iter().map(|field| field.json_name.as_str()).collect();
    for key in json::top_level_keys(&masked.text) {
        let known = fields.iter().any(|field| field.name == key.name || field.json_name == key.name);
        // `@type` belongs to `Any`; a key written with `{{ }}` is known only when sent.
        if known || key.name.starts_with('@') || masked.has_hole_in(&key.range) {
            continue;
        }
        let suggestion = volley_syntax::closest(&key.name, json_names.iter().copied())
            .map(|name| format!(": did you mean `{name}`?"))
            .unwrap_or_default();
        let range = span.start + key.range.start..span.start + key.range.end;
        let diagnostic = Diagnostic::new(
            Code::InvalidGrpc,
            lines.span(range),
            format!("the message `{type_name}` has no field `{}`{suggestion}", key.name),
        );
        found.push(if json_names.is_empty() {
            diagnostic.with_hint(format!("`{type_name}` has no fields: send `{{}}`"))
        } else {
            diagnostic.with_hint(format!("its fields: {}", json_names.join(", ")))
        });
    }
}
