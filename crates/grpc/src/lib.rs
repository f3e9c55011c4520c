//! gRPC calls of `.http` files, as JetBrains', httpyac's and Kulala's `GRPC` requests
//! mean them: the target of a request line ([`Target`]), the schema from proto files
//! compiled in process or asked of the server by reflection ([`Schema`]), and a call of
//! any kind over HTTP/2 ([`call`]), messages written and read as proto3 JSON.
//!
//! This is the first layer of gRPC support: HTTP/2 with prior knowledge, or over TLS
//! (ALPN `h2`) with the configuration the caller gives; every request message sent
//! before the answers are read. The executor does not use it yet.

mod call;
mod connection;
mod details;
mod error;
mod outgoing;
mod reflection;
mod schema;
mod status;
mod target;

pub use call::{CallOutcome, Kind, OnMessage, Settings, call};
pub use connection::{Connect, Connections};
pub use error::CallError;
pub use outgoing::Outgoing;
pub use reflection::{MOST_SERVICES, ReflectionError};
pub use schema::{Field, Schema, SchemaError};
pub use status::{Code, Status};
pub use target::{Target, TargetError};
