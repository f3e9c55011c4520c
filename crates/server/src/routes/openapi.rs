//! The `OpenAPI` document as a server serves it, and what the derives cannot state in
//! it: security and the rules of authentication only when the server has a token, each
//! execute route's own fields, the rules between the fields of a request (exactly one of `content` and
//! `path`, not both `requestName` and `requestIndex`, a token's scope), and the observer
//! filters as one query object (at least one filter under authentication, `afterSeq`
//! only with a `flowId`), and the headers of a WebSocket handshake. They are the rules the routes check (`execute/source.rs`,
//! `routes/tokens.rs`, `routes/events.rs`, `routes/ws.rs`); `tests/it/openapi.rs` holds the
//! document and the server to each other with requests generated from the document.

use serde_json::json;
use utoipa::OpenApi as _;
use utoipa::openapi::extensions::Extensions;
use utoipa::openapi::path::{Parameter, ParameterBuilder, ParameterIn, ParameterStyle};
use utoipa::openapi::schema::{AllOfBuilder, AnyOfBuilder, ObjectBuilder, OneOfBuilder, Schema, Type};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{ContentBuilder, OpenApi, Ref, RefOr, Required, ResponseBuilder};

/// The routes that read or write the shared store (`--redis`) themselves: sessions,
/// flows and their executions, scoped tokens, WebSocket sessions.
const STORE_ROUTES: [&str; 13] = [
    "/execute",
    "/execute/sse",
    "/execute/ws",
    "/flows",
    "/flows/{id}/executions",
    "/flows/{id}/executions/{exec}",
    "/flows/{id}/finish",
    "/session",
    "/session/{id}",
    "/session/{id}/variables",
    "/tokens",
    "/tokens/{jti}",
    "/ws/session/{wsSessionId}",
];

/// The document of a server started with a token (`with_token`) or without one, with
/// its state in Redis (`shared_store`, `--redis`) or in its memory. With a token every
/// route needs it (bearer, `401` without it). Without one there is no security and no
/// `401`, the observer streams take no filter too, and `POST /tokens` is left out: such
/// a server has nothing to sign tokens with and answers it `400`. With Redis, `503`
/// where the store is asked: on the routes of [`STORE_ROUTES`], and with a token on
/// every route (a scoped token is checked there).
pub(crate) fn document(with_token: bool, shared_store: bool) -> OpenApi {
    let mut openapi = crate::routes::ApiDoc::openapi();
    if shared_store {
        add_unavailable(&mut openapi, with_token);
    }
    if with_token {
        let components = openapi.components.get_or_insert_with(Default::default);
        let bearer = SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build());
        components.add_security_scheme("bearer", bearer);
        openapi.security = Some(vec![SecurityRequirement::new("bearer", Vec::<String>::new())]);
        let unauthorized = ResponseBuilder::new()
            .description("UNAUTHORIZED: no bearer token, or not a valid one")
            .content("application/json", ContentBuilder::new().schema(Some(Ref::from_schema_name("ErrorBody"))).build())
            .build();
        for item in openapi.paths.paths.values_mut() {
            for operation in operations_mut(item) {
                operation.responses.responses.entry("401".to_owned()).or_insert_with(|| unauthorized.clone().into());
            }
        }
        return openapi;
    }
    if let Some(tokens) = openapi.paths.paths.get_mut("/tokens") {
        tokens.post = None;
    }
    openapi.paths.paths.retain(|_, item| operations(item).next().is_some());
    for (path, item) in &mut openapi.paths.paths {
        let after_seq = path == "/event/ws";
        for operation in operations_mut(item) {
            operation.responses.responses.remove("401");
            for parameter in operation.parameters.iter_mut().flatten() {
                if parameter.name == "filters" {
                    parameter.schema = Some(filters_schema(after_seq, false).into());
                }
            }
        }
    }
    openapi
}

/// The `503` of a server whose store (Redis) could not be asked, on the routes that ask
/// it (every route with a token).
fn add_unavailable(openapi: &mut OpenApi, with_token: bool) {
    let answer = |description: &str| {
        ResponseBuilder::new()
            .description(description)
            .content("application/json", ContentBuilder::new().schema(Some(Ref::from_schema_name("ErrorBody"))).build())
            .build()
    };
    let unavailable = answer(
        "INTERNAL_ERROR (`--redis`): the shared store (Redis) could not be asked; `details.hint` says what to check",
    );
    let not_stored = answer(
        "INTERNAL_ERROR (`--redis`): the shared store (Redis) could not be asked, or (`details.kind: \"not_stored\"`, \
         with `reqExecId` and `flowId`) the execution ran but what it stored in its flow was lost",
    );
    for (path, item) in &mut openapi.paths.paths {
        if !with_token && !STORE_ROUTES.contains(&path.as_str()) {
            continue;
        }
        let response = if path == "/execute" { &not_stored } else { &unavailable };
        for operation in operations_mut(item) {
            operation.responses.responses.entry("503".to_owned()).or_insert_with(|| response.clone().into());
        }
    }
}

fn operations(item: &utoipa::openapi::PathItem) -> impl Iterator<Item = &utoipa::openapi::path::Operation> {
    [&item.get, &item.put, &item.post, &item.delete, &item.options, &item.head, &item.patch, &item.trace]
        .into_iter()
        .flatten()
}

fn operations_mut(item: &mut utoipa::openapi::PathItem) -> impl Iterator<Item = &mut utoipa::openapi::path::Operation> {
    [
        &mut item.get,
        &mut item.put,
        &mut item.post,
        &mut item.delete,
        &mut item.options,
        &mut item.head,
        &mut item.patch,
        &mut item.trace,
    ]
    .into_iter()
    .flatten()
}

/// The fields of `ExecuteRequest` that only `/execute/sse` takes.
const SSE_FIELDS: [&str; 2] = ["timeout", "lastEventId"];
/// The fields of `ExecuteRequest` that only `/execute/ws` takes.
const WS_FIELDS: [&str; 3] = ["connectTimeoutMs", "idleTimeoutMs", "replayBufferSize"];

/// Adds the rules between fields to the schemas of the request bodies.
pub(crate) struct Constraints;

impl utoipa::Modify for Constraints {
    fn modify(&self, openapi: &mut OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        if let Some(RefOr::T(Schema::Object(fields))) = components.schemas.remove("ExecuteRequest") {
            // Each route without the fields of the others.
            let routes: [(&str, &str, &[&str]); 3] = [
                ("ExecuteRequest", "POST /execute", &[SSE_FIELDS.as_slice(), &WS_FIELDS].concat()),
                ("ExecuteSseRequest", "POST /execute/sse", &WS_FIELDS),
                ("ExecuteWsRequest", "POST /execute/ws", &SSE_FIELDS),
            ];
            for (name, route, others) in routes {
                let mut object = fields.clone();
                object.properties.retain(|field, _| !others.contains(&field.as_str()));
                object.description = Some(format!(
                    "The body of `{route}`. Unknown fields (those of the other execute routes too) are ignored."
                ));
                components.schemas.insert(name.to_owned(), execute_rules(object.into()));
            }
        }
        if let Some(token) = components.schemas.remove("CreateToken") {
            let scoped = AnyOfBuilder::new()
                .description(Some("scoped to a flow, a session, or both: at least one of `flowId` and `sessionId`"))
                .item(object().required("flowId").property("flowId", typed(Type::String)))
                .item(object().required("sessionId").property("sessionId", typed(Type::String)));
            components.schemas.insert("CreateToken".to_owned(), AllOfBuilder::new().item(token).item(scoped).into());
        }
        if let Some(parse) = components.schemas.remove("ParseRequest") {
            let source = OneOfBuilder::new()
                .description(Some("exactly one of `content` and `path`"))
                .item(
                    object()
                        .required("content")
                        .property("content", typed(Type::String))
                        .property("path", typed(Type::Null)),
                )
                .item(
                    object()
                        .required("path")
                        .property("path", typed(Type::String))
                        .property("content", typed(Type::Null)),
                );
            components.schemas.insert("ParseRequest".to_owned(), AllOfBuilder::new().item(parse).item(source).into());
        }
        for path in ["/import/{source}/preview", "/import/{source}/apply"] {
            let operation = openapi.paths.paths.get_mut(path).and_then(|item| item.post.as_mut());
            for parameter in operation.and_then(|operation| operation.parameters.as_mut()).into_iter().flatten() {
                if parameter.name == "source" {
                    parameter.schema = Some(import_source().into());
                }
            }
        }
        for (path, name) in [("/execute/sse", "ExecuteSseRequest"), ("/execute/ws", "ExecuteWsRequest")] {
            let body = openapi.paths.paths.get_mut(path).and_then(|item| item.post.as_mut());
            if let Some(body) = body.and_then(|operation| operation.request_body.as_mut()) {
                for content in body.content.values_mut() {
                    content.schema = Some(Ref::from_schema_name(name).into());
                }
            }
        }
    }
}

/// `fields` with the rules every execute route checks first.
fn execute_rules(fields: RefOr<Schema>) -> RefOr<Schema> {
    let source = OneOfBuilder::new()
        .description(Some("exactly one of `content` and `path`; `basePath` goes with `content` only"))
        .item(object().required("content").property("content", typed(Type::String)).property("path", typed(Type::Null)))
        .item(
            object()
                .required("path")
                .property("path", typed(Type::String))
                .property("content", typed(Type::Null))
                .property("basePath", typed(Type::Null)),
        );
    let selection = AnyOfBuilder::new()
        .description(Some("not both `requestName` and `requestIndex`"))
        .item(object().property("requestName", typed(Type::Null)))
        .item(object().property("requestIndex", typed(Type::Null)));
    AllOfBuilder::new().item(fields).item(source).item(selection).into()
}

/// The query of an observer stream as one object (`style: form`, exploded: each property
/// is a query parameter of its own), so that the rules between its parameters can be
/// stated; `after_seq` for `/event/ws`. As a server with a token checks it (`document`
/// puts the rules of a server without one in its place).
pub(crate) fn observer_filters(after_seq: bool) -> Vec<Parameter> {
    let parameter = ParameterBuilder::new()
        .name("filters")
        .parameter_in(ParameterIn::Query)
        .required(Required::True)
        .style(Some(ParameterStyle::Form))
        .explode(Some(true))
        .description(Some("The filters, each a query parameter of its own (`?flowId=…&afterSeq=…`)."))
        .schema(Some(filters_schema(after_seq, true)))
        .build();
    vec![parameter]
}

/// The filters' object: with a token at least one of `sessionId` and `flowId`.
fn filters_schema(after_seq: bool, with_token: bool) -> Schema {
    let mut filters = object()
        .property("sessionId", described(Type::String, "Only events of this session."))
        .property("flowId", described(Type::String, "Only events of this flow."));
    if after_seq {
        let after =
            seq().description(Some("With `flowId` only: the retained events of the flow with a larger `seq` first."));
        // utoipa has no `dependentRequired` (JSON Schema 2020-12, which OpenAPI 3.1
        // uses); the extension map is written into the object as it is.
        let dependent = Extensions::from_iter([("dependentRequired", json!({ "afterSeq": ["flowId"] }))]);
        filters = filters.property("afterSeq", after).extensions(Some(dependent));
    }
    if !with_token {
        return filters.description(Some("Without authentication, any filters or none.")).into();
    }
    let one_filter = AnyOfBuilder::new()
        .description(Some("with authentication enabled (`--token`), at least one of `sessionId` and `flowId`"))
        .item(object().required("sessionId"))
        .item(object().required("flowId"));
    AllOfBuilder::new().item(filters).item(one_filter).into()
}

/// The headers of a WebSocket handshake (RFC 6455) as required header parameters: a
/// `GET` without them is not an upgrade, and the routes that upgrade answer it 400.
pub(crate) fn handshake_headers() -> Vec<Parameter> {
    let header = |name: &str, schema: ObjectBuilder, description: &str| {
        ParameterBuilder::new()
            .name(name)
            .parameter_in(ParameterIn::Header)
            .required(Required::True)
            .description(Some(description))
            .schema(Some(schema))
            .build()
    };
    let one_of = |values: &[&str]| typed(Type::String).enum_values(Some(values.iter().copied()));
    vec![
        header("Upgrade", one_of(&["websocket"]), "A WebSocket handshake."),
        header("Connection", one_of(&["Upgrade", "upgrade"]), "A WebSocket handshake."),
        header("Sec-WebSocket-Version", one_of(&["13"]), "A WebSocket handshake (RFC 6455)."),
        // RFC 6455 has the client send 16 random bytes in base64; the server checks only
        // that the header is there, as servers commonly do.
        header(
            "Sec-WebSocket-Key",
            typed(Type::String),
            "16 random bytes in base64 (RFC 6455); the server takes any value, an empty one too.",
        ),
    ]
}

/// A `seq` as the server reads it: any unsigned 64-bit integer (not `int64`, whose
/// upper half the server takes too).
pub(crate) fn seq() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::Integer).minimum(Some(0_usize)).maximum(Some(u64::MAX as usize))
}

/// The import sources the server converts (`routes/import.rs`), as the path parameter's
/// enumeration: another is a `400`.
fn import_source() -> ObjectBuilder {
    let names = volley_convert::Format::ALL.iter().map(|format| format.name());
    typed(Type::String).enum_values(Some(names)).description(Some("The format of `input`."))
}

fn object() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::Object)
}

fn typed(kind: Type) -> ObjectBuilder {
    ObjectBuilder::new().schema_type(kind)
}

fn described(kind: Type, description: &str) -> ObjectBuilder {
    typed(kind).description(Some(description))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answers_503(openapi: &OpenApi, path: &str) -> bool {
        let item = openapi.paths.paths.get(path).unwrap_or_else(|| panic!("{path} is in the document"));
        let mut operations = operations(item).peekable();
        assert!(operations.peek().is_some(), "{path} has operations");
        operations.all(|operation| operation.responses.responses.contains_key("503"))
    }

    /// `--redis` adds the store's `503` where the store is asked (every route with a
    /// token, which may be a scoped one); a server without it never answers `503`.
    #[test]
    fn the_stores_503_is_stated_only_with_redis() {
        for with_token in [false, true] {
            let alone = document(with_token, false);
            for path in alone.paths.paths.keys() {
                assert!(!answers_503(&alone, path), "{path} without --redis");
            }
            let shared = document(with_token, true);
            for path in STORE_ROUTES {
                if path == "/tokens" && !with_token {
                    continue; // No `POST /tokens` without a token: the path is left out.
                }
                assert!(answers_503(&shared, path), "{path} with --redis");
            }
            assert_eq!(answers_503(&shared, "/health"), with_token, "/health, token: {with_token}");
            assert_eq!(answers_503(&shared, "/parse"), with_token, "/parse, token: {with_token}");
        }
    }
}
