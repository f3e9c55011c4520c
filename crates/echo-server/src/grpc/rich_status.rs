//! The rich error model of `google.rpc` (`google/rpc/status.proto`,
//! `google/rpc/error_details.proto`): the few messages the server sends in
//! `grpc-status-details-bin`, written with prost's derive instead of generated.

use prost::Message as _;
use prost::bytes::Bytes;

/// The type URL of a packed [`BadRequest`].
const BAD_REQUEST_TYPE_URL: &str = "type.googleapis.com/google.rpc.BadRequest";

/// `google.rpc.Status`: the status again, with its details packed in `Any`s.
#[derive(Clone, PartialEq, prost::Message)]
struct RpcStatus {
    #[prost(int32, tag = "1")]
    code: i32,
    #[prost(string, tag = "2")]
    message: String,
    #[prost(message, repeated, tag = "3")]
    details: Vec<prost_types::Any>,
}

/// `google.rpc.BadRequest`: which fields of the request were wrong.
#[derive(Clone, PartialEq, prost::Message)]
struct BadRequest {
    #[prost(message, repeated, tag = "1")]
    field_violations: Vec<FieldViolation>,
}

/// `google.rpc.BadRequest.FieldViolation`.
#[derive(Clone, PartialEq, prost::Message)]
struct FieldViolation {
    #[prost(string, tag = "1")]
    field: String,
    #[prost(string, tag = "2")]
    description: String,
}

/// The encoded `google.rpc.Status` of `code` and `message` whose one detail is a
/// `BadRequest` naming `field`.
pub(crate) fn bad_request(code: tonic::Code, message: &str, field: &str, description: &str) -> Bytes {
    let violation = FieldViolation { field: field.to_owned(), description: description.to_owned() };
    let detail = BadRequest { field_violations: vec![violation] };
    let any = prost_types::Any { type_url: BAD_REQUEST_TYPE_URL.to_owned(), value: detail.encode_to_vec() };
    let status = RpcStatus { code: code as i32, message: message.to_owned(), details: vec![any] };
    Bytes::from(status.encode_to_vec())
}
