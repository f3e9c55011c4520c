//! gRPC requests (`GRPC host:port/package.Service/Method`): their messages rendered one
//! by one, their schema found (proto files compiled in process and kept while the files
//! are unchanged, a compiled descriptor set, or server reflection kept for a short while
//! per server), the call made by `volley-grpc`, and its answer as a [`Response`]: the
//! messages as JSON lines, the gRPC status beside the HTTP one. The HTTP path does not
//! come here.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use http::HeaderMap;
use tokio_util::sync::CancellationToken;
pub use volley_grpc::{Field, Schema, Target};
use volley_grpc::{Kind, Outgoing};
use volley_syntax::{GrpcOptions, ProtoImport, Request};

mod catalog;
mod connect;
mod errors;
mod export;

pub use catalog::catalog_fetch;
pub use export::grpcurl;

use self::connect::{settings, target_of};
use self::errors::{call_error, reflection_error, schema_error};
use crate::body::Files;
use crate::client::Client;
use crate::client::cache::stamp;
use crate::error::{BuildError, Error, TransportError};
use crate::interpolate::Renderer;
pub use crate::prepared::GrpcCall;
use crate::prepared::{Exchange, PreparedRequest};
pub(crate) use crate::prepared::{GrpcMessage, Reflection, SchemaSource};
use crate::response::{Body as ResponseBody, GrpcResult, Response, SentRequest, Timing};

/// Renders the messages of a gRPC `request` and finds where its schema comes from; the
/// bytes are the messages as sent, one JSON text per line (what a run shows as sent).
pub(crate) async fn prepare(
    request: &Request,
    options: &GrpcOptions,
    imports: &[ProtoImport],
    renderer: &mut Renderer<'_>,
    files: &Files<'_>,
) -> Result<(GrpcCall, Bytes), BuildError> {
    let body_span = request.body.span().unwrap_or(request.line_span);
    let refuse = |span| BuildError::Grpc {
        message: "the body of a gRPC request is its messages, as JSON".to_owned(),
        hint: Some("write each message as a JSON object, `===` between messages".to_owned()),
        span,
    };
    let messages: Vec<GrpcMessage> = crate::stream_messages::render(&request.body, renderer, files, refuse)
        .await?
        .into_iter()
        .map(|message| GrpcMessage { wait_for_server: message.wait_for_server, json: message.text, span: message.span })
        .collect();
    let sent: Vec<&str> = messages.iter().filter_map(|message| message.json.as_deref()).map(str::trim).collect();
    let bytes = Bytes::from(json_lines(sent));

    let mut source = SchemaSource { protos: Vec::new(), imports: Vec::new(), protoset: None, reflection: None };
    for import in imports {
        let path = renderer.render_text(&import.path.value).await?;
        let (resolved, _) = files.read(path.trim(), import.path.span)?;
        source.protos.push((resolved, import.path.span));
        for directory in &import.include_dirs {
            source.imports.push(files.inside(directory, import.span)?);
        }
    }
    for template in &options.protos {
        let path = renderer.render(template).await?;
        let (resolved, _) = files.read(path.trim(), template.span)?;
        source.protos.push((resolved, template.span));
    }
    for template in &options.import_paths {
        let path = renderer.render(template).await?;
        source.imports.push(files.inside(path.trim(), template.span)?);
    }
    if let Some(template) = &options.protoset {
        let path = renderer.render(template).await?;
        let (resolved, bytes) = files.read(path.trim(), template.span)?;
        source.protoset = Some((resolved, Bytes::from(bytes), template.span));
    }
    if options.reflection || (source.protos.is_empty() && source.protoset.is_none()) {
        let server = match &options.reflection_server {
            Some(template) => {
                Some(renderer.render(template).await?.trim().to_owned()).filter(|server| !server.is_empty())
            }
            None => None,
        };
        source.reflection = Some(server.map_or(Reflection::Called, Reflection::Other));
    }
    let call = GrpcCall {
        listener: None,
        messages,
        schema: source,
        proto_field_names: imports.iter().any(|import| import.keep_case),
        line_span: request.line_span,
        body_span,
    };
    Ok((call, bytes))
}

/// The server a reflection request's schema is asked of: the one called, or the one
/// `@grpc-reflection` names.
fn reflection_target(call: &GrpcCall, target: &Target) -> Result<Target, BuildError> {
    let mut asked = target.clone();
    if let Some(Reflection::Other(server)) = &call.schema.reflection {
        let other = Target::parse(&format!("{server}/{}/{}", target.service, target.method)).map_err(|error| {
            BuildError::Grpc {
                message: format!("`@grpc-reflection {server}`: {error}"),
                hint: Some("name the server as `host:port`".to_owned()),
                span: call.line_span,
            }
        })?;
        asked.authority = other.authority;
        asked.tls = other.tls.or(target.tls);
    }
    Ok(asked)
}

/// The schema of a prepared gRPC request and its call's target, as a send would find
/// them: for the language server's completion and diagnostics. `allow_reflection: false`
/// never asks a server (what a keystroke must not do): a schema that comes from
/// reflection is then its server's catalog as last got ([`catalog_fetch`]), or `Ok(None)`.
pub async fn schema_of(
    client: &Client,
    prepared: &PreparedRequest,
    allow_reflection: bool,
) -> Result<Option<(Schema, Target)>, Error> {
    let Exchange::Grpc(call) = &prepared.exchange else { return Ok(None) };
    if call.schema.reflection.is_some() && !allow_reflection {
        let Some(asked) = catalog::catalog_target(prepared) else { return Ok(None) };
        let target = target_of(&prepared.url, call.line_span)?;
        return Ok(client.inner.grpc_catalogs.get(&asked.authority).map(|schema| (schema, target)));
    }
    let target = target_of(&prepared.url, call.line_span)?;
    let (settings, _) = settings(client, prepared, false)?;
    let schema = client.grpc_schema(call, &target, &metadata(&prepared.headers), &settings).await?;
    Ok(Some((schema, target)))
}

impl Client {
    /// Makes the gRPC call of `prepared`: the schema, the method, the call within the
    /// request's timeout (its deadline), cancellation.
    pub(crate) async fn call_grpc(
        &self,
        prepared: PreparedRequest,
        cancel: Option<&CancellationToken>,
    ) -> Result<Response, Error> {
        let Exchange::Grpc(call) = &prepared.exchange else {
            return Err(Error::Transport(TransportError::Other { message: "not a gRPC request".to_owned() }));
        };
        let target = target_of(&prepared.url, call.line_span)?;
        let (settings, proxy) = settings(self, &prepared, call.proto_field_names)?;
        let metadata = metadata(&prepared.headers);
        let started = Instant::now();
        let work = async {
            let schema = self.grpc_schema(call, &target, &metadata, &settings).await?;
            let method =
                schema.method(&target.service, &target.method).map_err(|error| schema_error(&error, call.line_span))?;
            // A stream's messages are told as they come, secrets hidden.
            let settings = match (&call.listener, Kind::of(&method)) {
                (Some(listener), Kind::ServerStreaming | Kind::Bidirectional) => {
                    let (listener, redactor) = (listener.0.clone(), prepared.redactor.clone());
                    let heard = std::sync::atomic::AtomicUsize::new(0);
                    let on_message: volley_grpc::OnMessage = Arc::new(move |message| {
                        let number = heard.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                        listener(number, redactor.redact_json(&message));
                    });
                    volley_grpc::Settings { on_message: Some(on_message), ..settings.clone() }
                }
                _ => settings.clone(),
            };
            let outgoing: Vec<Outgoing> = call
                .messages
                .iter()
                .map(|message| Outgoing { wait_for_server: message.wait_for_server, json: message.json.clone() })
                .collect();
            let outcome = volley_grpc::call(&target, &method, &metadata, &outgoing, &settings)
                .await
                .map_err(|error| call_error(error, call, &target, proxy.as_deref()))?;
            Ok::<_, Error>((Kind::of(&method), outcome))
        };
        let (kind, outcome) = match cancel {
            Some(token) => tokio::select! {
                result = work => result,
                () = token.cancelled() => Err(Error::Cancelled),
            },
            None => work.await,
        }?;
        let elapsed = started.elapsed();
        let mut headers = HeaderMap::new();
        for (name, value) in outcome.headers.iter().chain(&outcome.trailers) {
            if let (Ok(name), Ok(value)) =
                (http::HeaderName::from_bytes(name.as_bytes()), http::HeaderValue::from_str(value))
            {
                headers.append(name, value);
            }
        }
        let lines = json_lines(outcome.messages.iter());
        let grpc = GrpcResult {
            code: outcome.status.code.name().to_owned(),
            number: outcome.status.number,
            message: outcome.status.message.clone(),
            details: outcome.details,
            kind: kind.name(),
            messages: outcome.messages,
        };
        let mut sent_headers = HeaderMap::new();
        for (name, value) in &metadata {
            if let (Ok(name), Ok(value)) =
                (http::HeaderName::from_bytes(name.as_bytes()), http::HeaderValue::from_str(value))
            {
                sent_headers.append(name, value);
            }
        }
        Ok(Response {
            status: http::StatusCode::OK,
            version: http::Version::HTTP_2,
            headers,
            url: prepared.url.clone(),
            redirected: false,
            body: ResponseBody::Read(Bytes::from(lines)),
            truncated: false,
            body_file: None,
            timing: Timing { ttfb: elapsed, total: elapsed },
            request: SentRequest {
                method: http::Method::POST,
                url: prepared.url.clone(),
                headers: sent_headers,
                body: prepared.body.clone(),
            },
            redactor: prepared.redactor.clone(),
            assertions: Vec::new(),
            logs: Vec::new(),
            grpc: Some(Arc::new(grpc)),
        })
    }

    /// The schema of a call: by reflection when asked (or when nothing else is given),
    /// else the descriptor set and the proto files.
    async fn grpc_schema(
        &self,
        call: &GrpcCall,
        target: &Target,
        metadata: &[(String, String)],
        settings: &volley_grpc::Settings,
    ) -> Result<Schema, Error> {
        let source = &call.schema;
        if source.reflection.is_some() {
            let asked = reflection_target(call, target)?;
            if let Some(schema) = self.inner.grpc_reflected.get(&asked.authority, &target.service) {
                return Ok(schema);
            }
            let schema = Schema::from_reflection(&asked, &target.service, metadata, settings)
                .await
                .map_err(|error| reflection_error(error, call, &asked, settings.connect.is_some()))?;
            self.inner.grpc_reflected.insert(&asked.authority, &target.service, schema.clone());
            return Ok(schema);
        }
        if let Some((path, bytes, span)) = &source.protoset {
            return Schema::from_descriptor_set(&path.display().to_string(), bytes)
                .map_err(|error| schema_error(&error, *span).into());
        }
        let protos: Vec<PathBuf> = source.protos.iter().map(|(path, _)| path.clone()).collect();
        let key = (protos.clone(), source.imports.clone());
        let io = &*self.inner.config.io;
        if let Some(schema) = self.inner.grpc_schemas.get(io, &key) {
            return Ok(schema);
        }
        let span = source.protos.first().map_or(call.line_span, |(_, span)| *span);
        let schema = Schema::compile(&protos, &source.imports).map_err(|error| schema_error(&error, span))?;
        // Kept while none of the files it was made of changes (imports included).
        let mut directories = source.imports.clone();
        directories.extend(protos.iter().filter_map(|path| path.parent().map(PathBuf::from)));
        let used: Vec<PathBuf> = schema
            .file_names()
            .iter()
            .filter_map(|name| directories.iter().map(|directory| directory.join(name)).find(|path| path.is_file()))
            .chain(protos.iter().cloned())
            .collect();
        self.inner.grpc_schemas.insert(key, schema.clone(), stamp(io, &used));
        Ok(schema)
    }
}

/// Each value on a line of its own.
fn json_lines<T: std::fmt::Display>(values: impl IntoIterator<Item = T>) -> String {
    use std::fmt::Write as _;
    values.into_iter().fold(String::new(), |mut lines, value| {
        let _ = writeln!(lines, "{value}");
        lines
    })
}

/// The metadata of a call: the request's headers but those the call writes itself
/// (`content-type`, `te`, the default `user-agent`) and those of HTTP/1.1.
pub(crate) fn metadata(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .filter(|(name, value)| {
            let written_by_the_call =
                matches!(name.as_str(), "content-type" | "te" | "host" | "connection" | "content-length");
            let default_agent =
                name.as_str() == "user-agent" && value.as_bytes() == crate::build::DEFAULT_USER_AGENT.as_bytes();
            !(written_by_the_call || default_agent)
        })
        .map(|(name, value)| (name.as_str().to_owned(), String::from_utf8_lossy(value.as_bytes()).into_owned()))
        .collect()
}
