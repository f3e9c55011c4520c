//! The details of a status (`grpc-status-details-bin`: a `google.rpc.Status` whose
//! `details` are `Any` messages), as proto3 JSON: the standard error details
//! (`google.rpc.BadRequest`, `ErrorInfo`, `RetryInfo` …) and the call's own message types
//! decoded, any other kept as its type URL and bytes.

use std::sync::OnceLock;

use base64::Engine as _;
use prost::Message as _;
use prost_reflect::{DescriptorPool, DynamicMessage, SerializeOptions};
use serde_json::{Map, Value};

/// The trailer that carries the details.
const TRAILER: &str = "grpc-status-details-bin";

/// The standard error details of `google/rpc/error_details.proto`, written here from
/// their published field numbers.
const ERROR_DETAILS: &str = r#"
syntax = "proto3";
package google.rpc;
import "google/protobuf/duration.proto";
message ErrorInfo { string reason = 1; string domain = 2; map<string, string> metadata = 3; }
message RetryInfo { google.protobuf.Duration retry_delay = 1; }
message DebugInfo { repeated string stack_entries = 1; string detail = 2; }
message QuotaFailure {
  message Violation { string subject = 1; string description = 2; }
  repeated Violation violations = 1;
}
message PreconditionFailure {
  message Violation { string type = 1; string subject = 2; string description = 3; }
  repeated Violation violations = 1;
}
message BadRequest {
  message FieldViolation { string field = 1; string description = 2; }
  repeated FieldViolation field_violations = 1;
}
message RequestInfo { string request_id = 1; string serving_data = 2; }
message ResourceInfo { string resource_type = 1; string resource_name = 2; string owner = 3; string description = 4; }
message Help {
  message Link { string description = 1; string url = 2; }
  repeated Link links = 1;
}
message LocalizedMessage { string locale = 1; string message = 2; }
"#;

/// `google.rpc.Status`, as far as the details need it.
#[derive(Clone, PartialEq, prost::Message)]
struct RichStatus {
    #[prost(message, repeated, tag = "3")]
    details: Vec<prost_types::Any>,
}

fn error_details() -> Option<&'static DescriptorPool> {
    static POOL: OnceLock<Option<DescriptorPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        let mut resolver = protox::file::ChainFileResolver::new();
        resolver.add(protox::file::GoogleFileResolver::new());
        resolver.add(Source);
        let mut compiler = protox::Compiler::with_file_resolver(resolver);
        compiler.include_imports(true);
        compiler.open_file("volley/error_details.proto").ok()?;
        Some(compiler.descriptor_pool())
    })
    .as_ref()
}

/// The one file of [`ERROR_DETAILS`].
struct Source;

impl protox::file::FileResolver for Source {
    fn open_file(&self, name: &str) -> Result<protox::file::File, protox::Error> {
        if name == "volley/error_details.proto" {
            protox::file::File::from_source(name, ERROR_DETAILS)
        } else {
            Err(protox::Error::file_not_found(name))
        }
    }
}

/// The details among `trailers`, each as JSON with its `@type`; empty when there are
/// none (or they cannot be read).
pub(crate) fn details<'a>(
    mut fields: impl Iterator<Item = &'a (String, String)>,
    schema: &DescriptorPool,
) -> Vec<Value> {
    let Some((_, encoded)) = fields.find(|(name, _)| name == TRAILER) else { return Vec::new() };
    // `-bin` values are base64, padded or not.
    let encoded = encoded.trim().trim_end_matches('=');
    let Ok(bytes) = base64::engine::general_purpose::STANDARD_NO_PAD.decode(encoded) else { return Vec::new() };
    let Ok(status) = RichStatus::decode(bytes.as_slice()) else { return Vec::new() };
    status.details.iter().map(|any| detail(any, schema)).collect()
}

fn detail(any: &prost_types::Any, schema: &DescriptorPool) -> Value {
    let name = any.type_url.rsplit('/').next().unwrap_or_default();
    let descriptor =
        schema.get_message_by_name(name).or_else(|| error_details().and_then(|pool| pool.get_message_by_name(name)));
    let decoded = descriptor.and_then(|descriptor| {
        let message = DynamicMessage::decode(descriptor, any.value.as_slice()).ok()?;
        message.serialize_with_options(serde_json::value::Serializer, &SerializeOptions::new()).ok()
    });
    let mut object = Map::new();
    object.insert("@type".to_owned(), Value::String(any.type_url.clone()));
    match decoded {
        Some(Value::Object(fields)) => object.extend(fields),
        _ => {
            object.insert(
                "value".to_owned(),
                Value::String(base64::engine::general_purpose::STANDARD.encode(&any.value)),
            );
        }
    }
    Value::Object(object)
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;
    use prost::Message as _;
    use serde_json::json;

    use super::{RichStatus, details};

    #[test]
    fn standard_details_are_decoded_and_others_kept() {
        // BadRequest { field_violations: [{field: "item", description: "no such item"}] }
        let violation = [b"\x0a\x04item".as_slice(), b"\x12\x0cno such item"].concat();
        let bad_request = [b"\x0a".as_slice(), &[u8::try_from(violation.len()).unwrap()], &violation].concat();
        let status = RichStatus {
            details: vec![
                prost_types::Any {
                    type_url: "type.googleapis.com/google.rpc.BadRequest".to_owned(),
                    value: bad_request,
                },
                prost_types::Any { type_url: "type.googleapis.com/acme.Unknown".to_owned(), value: vec![1, 2] },
            ],
        };
        let encoded = base64::engine::general_purpose::STANDARD_NO_PAD.encode(status.encode_to_vec());
        let trailers = [("grpc-status-details-bin".to_owned(), encoded)];
        assert_eq!(
            details(trailers.iter(), &prost_reflect::DescriptorPool::new()),
            [
                json!({"@type": "type.googleapis.com/google.rpc.BadRequest",
                       "fieldViolations": [{"field": "item", "description": "no such item"}]}),
                json!({"@type": "type.googleapis.com/acme.Unknown", "value": "AQI="}),
            ]
        );
        assert!(details([].iter(), &prost_reflect::DescriptorPool::new()).is_empty());
    }
}
