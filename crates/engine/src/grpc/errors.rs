//! A gRPC call's failures as the engine's errors: what is wrong with the request
//! (`BuildError::Grpc`, located, with a hint) or with the exchange (`TransportError`).

use volley_grpc::{CallError, ReflectionError, SchemaError, Target};
use volley_syntax::Span;

use super::GrpcCall;
use crate::error::{BuildError, Error, TransportError};

pub(super) fn schema_error(error: &SchemaError, span: Span) -> BuildError {
    let hint = match &error {
        SchemaError::Compile { .. } => Some(
            "fix the proto file; imports are found in `@grpc-import-path` directories, \
                                             `includeDirs`, and beside the file that imports them"
                .to_owned(),
        ),
        SchemaError::DescriptorSet { .. } => {
            Some("make it with `protoc --include_imports --descriptor_set_out=FILE`".to_owned())
        }
        SchemaError::UnknownService { known, .. } | SchemaError::UnknownMethod { known, .. } if !known.is_empty() => {
            Some(format!("the schema has {}", known.join(", ")))
        }
        SchemaError::UnknownService { .. } | SchemaError::UnknownMethod { .. } => None,
    };
    BuildError::Grpc { message: error.to_string(), hint, span }
}

pub(super) fn reflection_error(error: ReflectionError, call: &GrpcCall, target: &Target, proxied: bool) -> Error {
    match error {
        ReflectionError::Call(CallError::Connect { reason, .. }) if proxied => {
            TransportError::Proxy { proxy: "(the request's proxy)".to_owned(), message: reason }.into()
        }
        ReflectionError::Call(error) => call_error(error, call, target, None),
        ReflectionError::Schema(error) => schema_error(&error, call.line_span).into(),
        ReflectionError::NotOffered(_) => BuildError::Grpc {
            message: format!("the server at {} offers no gRPC reflection, and no schema is given", target.authority),
            hint: Some(
                "give the proto file: `# @grpc-proto ./service.proto` (or httpyac's `proto < ./service.proto` line), \
                 or a descriptor set with `# @grpc-protoset ./service.protoset`"
                    .to_owned(),
            ),
            span: call.line_span,
        }
        .into(),
        ReflectionError::Answered(message) => BuildError::Grpc {
            message: format!("the server's reflection answered: {message}"),
            hint: Some("check the service's name, or give its proto file with `# @grpc-proto`".to_owned()),
            span: call.line_span,
        }
        .into(),
    }
}

pub(super) fn call_error(error: CallError, call: &GrpcCall, target: &Target, proxy: Option<&str>) -> Error {
    let located = |message: String, hint: &str, span: Span| -> Error {
        BuildError::Grpc { message, hint: Some(hint.to_owned()), span }.into()
    };
    match error {
        CallError::Json { number, message, reason } => {
            let span = call
                .messages
                .iter()
                .filter(|sent| sent.json.is_some())
                .nth(number - 1)
                .map_or(call.body_span, |sent| sent.span);
            located(
                format!("the message is not a `{message}`: {reason}"),
                "write the message as the proto3 JSON of its type: field names as in the proto file or in lowerCamelCase",
                span,
            )
        }
        error @ CallError::TooManyMessages { .. } => {
            located(error.to_string(), "send one message, or call a streaming method", call.body_span)
        }
        CallError::Metadata(name) => located(
            format!("the header `{name}` cannot be sent as gRPC metadata"),
            "metadata names are lower-case letters, digits and `-_.`; values visible ASCII (a `-bin` name for bytes)",
            call.line_span,
        ),
        CallError::Connect { reason, .. } if proxy.is_some() => TransportError::Proxy {
            proxy: crate::network::without_password(proxy.unwrap_or_default()),
            message: reason,
        }
        .into(),
        CallError::Connect { authority, reason } => {
            let lower = reason.to_ascii_lowercase();
            if lower.contains("refused") {
                TransportError::ConnectionRefused { host: authority }.into()
            } else if lower.contains("lookup") || lower.contains("resolve") || lower.contains("name or service") {
                TransportError::Dns {
                    host: authority.split(':').next().unwrap_or_default().to_owned(),
                    message: reason,
                }
                .into()
            } else {
                TransportError::Other { message: format!("cannot connect to {authority}: {reason}") }.into()
            }
        }
        CallError::Handshake { authority, reason } => TransportError::Tls { host: authority, message: reason }.into(),
        CallError::Tls => located(CallError::Tls.to_string(), "write `grpc://` for plaintext", call.line_span),
        error @ CallError::NotGrpc { .. } => TransportError::Other {
            message: format!(
                "{error} at {}: is it a gRPC server (and over TLS when the target says `grpcs://`)?",
                target.authority
            ),
        }
        .into(),
        other => TransportError::Other { message: format!("gRPC call to {}: {other}", target.authority) }.into(),
    }
}
