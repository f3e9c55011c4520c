//! A gRPC call as prepared: its messages, rendered, and where its schema comes from.

use std::path::PathBuf;

use bytes::Bytes;
use volley_syntax::Span;

pub(crate) use volley_model::options::Listener;

/// A gRPC call, prepared: what [`Exchange::Grpc`](super::Exchange::Grpc) carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrpcCall {
    pub(crate) listener: Option<Listener>,
    pub(crate) messages: Vec<GrpcMessage>,
    pub(crate) schema: SchemaSource,
    /// httpyac's `keepCase: true`: responses name fields as the proto file does.
    pub(crate) proto_field_names: bool,
    /// The request line: where unknown services and methods are reported.
    pub(crate) line_span: Span,
    /// The body: where a wrong number of messages is reported.
    pub(crate) body_span: Span,
}

/// A request message, rendered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GrpcMessage {
    pub(crate) wait_for_server: usize,
    /// `None` for waits after the last message.
    pub(crate) json: Option<String>,
    pub(crate) span: Span,
}

/// Where the schema comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SchemaSource {
    /// Proto files, resolved, with where each is named.
    pub(crate) protos: Vec<(PathBuf, Span)>,
    /// Where imports are found.
    pub(crate) imports: Vec<PathBuf>,
    /// A compiled descriptor set: its path, its bytes, where it is named.
    pub(crate) protoset: Option<(PathBuf, Bytes, Span)>,
    /// Asked of the server by reflection, rather than read from files.
    pub(crate) reflection: Option<Reflection>,
}

/// Which server a schema is asked of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reflection {
    /// The server called.
    Called,
    /// Another (`# @grpc-reflection host:port`).
    Other(String),
}
