//! A schema from the server itself, by gRPC server reflection: the file that defines a
//! service and the files it imports, asked for over `grpc.reflection.v1` (then
//! `v1alpha`, which older servers offer) until none is missing.

use std::collections::BTreeSet;

use prost::Message as _;

use crate::call::{Settings, exchange};
use crate::error::CallError;
use crate::outgoing::{Frames, framed};
use crate::schema::{Schema, SchemaError};
use crate::status::Code;
use crate::target::Target;

/// The reflection services, newest first.
const SERVICES: [&str; 2] = ["grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"];
/// Most rounds of asking for missing imports (a chain of imports deeper than this is
/// not a schema a server sends).
const MOST_ROUNDS: usize = 16;

/// Why reflection gave no schema.
#[derive(Debug, thiserror::Error)]
pub enum ReflectionError {
    /// The server offers no reflection service.
    #[error("the server at {0} offers no gRPC reflection (v1 or v1alpha): give the schema as proto files")]
    NotOffered(String),
    /// The server answered a reflection request with an error.
    #[error("the server's reflection answered: {0}")]
    Answered(String),
    /// The call failed.
    #[error(transparent)]
    Call(#[from] CallError),
    /// What the server sent does not make a schema.
    #[error(transparent)]
    Schema(#[from] SchemaError),
}

// The messages of grpc/reflection/v1/reflection.proto that a client needs (v1alpha has
// the same fields), by their field numbers.

#[derive(Clone, PartialEq, prost::Message)]
struct Request {
    #[prost(string, tag = "1")]
    host: String,
    #[prost(oneof = "Ask", tags = "3, 4, 7")]
    ask: Option<Ask>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
enum Ask {
    #[prost(string, tag = "3")]
    FileByFilename(String),
    #[prost(string, tag = "4")]
    FileContainingSymbol(String),
    /// The names of the services the server offers (the field's value is ignored).
    #[prost(string, tag = "7")]
    ListServices(String),
}

#[derive(Clone, PartialEq, prost::Message)]
struct Response {
    #[prost(oneof = "Answer", tags = "4, 6, 7")]
    answer: Option<Answer>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
enum Answer {
    #[prost(message, tag = "4")]
    Files(Files),
    #[prost(message, tag = "6")]
    Services(Services),
    #[prost(message, tag = "7")]
    Error(Failure),
}

#[derive(Clone, PartialEq, prost::Message)]
struct Services {
    #[prost(message, repeated, tag = "1")]
    service: Vec<ServiceName>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct ServiceName {
    #[prost(string, tag = "1")]
    name: String,
}

/// Most services of a server's catalog ([`Schema::catalog_from_reflection`]).
pub const MOST_SERVICES: usize = 256;

#[derive(Clone, PartialEq, prost::Message)]
struct Files {
    #[prost(bytes = "vec", repeated, tag = "1")]
    file_descriptor_proto: Vec<Vec<u8>>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct Failure {
    #[prost(int32, tag = "1")]
    error_code: i32,
    #[prost(string, tag = "2")]
    error_message: String,
}

/// What a file descriptor says of itself: its name and its imports.
#[derive(Clone, PartialEq, prost::Message)]
struct FileHeader {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(string, repeated, tag = "3")]
    dependency: Vec<String>,
}

impl Schema {
    /// The schema of `service` (fully qualified) as the server at `target` describes it by
    /// reflection, its calls made as `settings` say.
    pub async fn from_reflection(
        target: &Target,
        service: &str,
        metadata: &[(String, String)],
        settings: &Settings,
    ) -> Result<Self, ReflectionError> {
        for reflection in SERVICES {
            let path = format!("/{reflection}/ServerReflectionInfo");
            let asks = vec![Ask::FileContainingSymbol(service.to_owned())];
            match collect(target, &path, metadata, settings, asks).await {
                Err(ReflectionError::NotOffered(_)) => {}
                Ok(files) => return Ok(Self::from_files(&files)?),
                Err(other) => return Err(other),
            }
        }
        Err(ReflectionError::NotOffered(target.authority.clone()))
    }
}

impl Schema {
    /// Every service the server at `target` offers (up to [`MOST_SERVICES`], the
    /// reflection services left out), as its reflection describes them: what an editor
    /// completes a request line from.
    pub async fn catalog_from_reflection(
        target: &Target,
        metadata: &[(String, String)],
        settings: &Settings,
    ) -> Result<Self, ReflectionError> {
        for reflection in SERVICES {
            let path = format!("/{reflection}/ServerReflectionInfo");
            let names = match services(target, &path, metadata, settings).await {
                Err(ReflectionError::NotOffered(_)) => continue,
                Err(other) => return Err(other),
                Ok(names) => names,
            };
            let asks = names
                .into_iter()
                .filter(|name| !name.starts_with("grpc.reflection."))
                .take(MOST_SERVICES)
                .map(Ask::FileContainingSymbol)
                .collect();
            let files = collect(target, &path, metadata, settings, asks).await?;
            return Ok(Self::from_files(&files)?);
        }
        Err(ReflectionError::NotOffered(target.authority.clone()))
    }
}

/// The names of the services the server offers.
async fn services(
    target: &Target,
    path: &str,
    metadata: &[(String, String)],
    settings: &Settings,
) -> Result<Vec<String>, ReflectionError> {
    let request = Request { host: String::new(), ask: Some(Ask::ListServices(String::new())) }.encode_to_vec();
    let answer = exchange(target, path, metadata, Frames::at_once(framed([request])?), settings).await?;
    if answer.status.code == Code::Unimplemented {
        return Err(ReflectionError::NotOffered(target.authority.clone()));
    }
    if !answer.status.is_ok() {
        return Err(ReflectionError::Answered(answer.status.to_string()));
    }
    let mut names = Vec::new();
    for message in answer.messages {
        let response = Response::decode(message).map_err(|error| CallError::Http(error.to_string()))?;
        match response.answer {
            Some(Answer::Services(services)) => names.extend(services.service.into_iter().map(|service| service.name)),
            Some(Answer::Error(failure)) => {
                return Err(ReflectionError::Answered(format!("{} ({})", failure.error_message, failure.error_code)));
            }
            _ => {}
        }
    }
    Ok(names)
}

/// The files the server sends for `asks`, then for the imports they name that it has
/// not sent, round after round: `(name, bytes)` in the order received.
async fn collect(
    target: &Target,
    path: &str,
    metadata: &[(String, String)],
    settings: &Settings,
    mut asks: Vec<Ask>,
) -> Result<Vec<(String, Vec<u8>)>, ReflectionError> {
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let mut asked: BTreeSet<String> = BTreeSet::new();
    for _ in 0..MOST_ROUNDS {
        if asks.is_empty() {
            return Ok(files);
        }
        let requests = asks.drain(..).map(|ask| Request { host: String::new(), ask: Some(ask) }.encode_to_vec());
        let answer = exchange(target, path, metadata, Frames::at_once(framed(requests)?), settings).await?;
        if answer.status.code == Code::Unimplemented {
            return Err(ReflectionError::NotOffered(target.authority.clone()));
        }
        if !answer.status.is_ok() {
            return Err(ReflectionError::Answered(answer.status.to_string()));
        }
        for message in answer.messages {
            let response = Response::decode(message).map_err(|error| CallError::Http(error.to_string()))?;
            match response.answer {
                Some(Answer::Files(sent)) => {
                    for bytes in sent.file_descriptor_proto {
                        let header =
                            FileHeader::decode(bytes.as_slice()).map_err(|error| CallError::Http(error.to_string()))?;
                        if !files.iter().any(|(name, _)| *name == header.name) {
                            files.push((header.name, bytes));
                        }
                    }
                }
                Some(Answer::Error(failure)) => {
                    return Err(ReflectionError::Answered(format!(
                        "{} ({})",
                        failure.error_message, failure.error_code
                    )));
                }
                Some(Answer::Services(_)) | None => {}
            }
        }
        // The imports no file sent yet: asked for by name, once each.
        for (_, bytes) in &files {
            let header = FileHeader::decode(bytes.as_slice()).map_err(|error| CallError::Http(error.to_string()))?;
            for dependency in header.dependency {
                if !files.iter().any(|(name, _)| *name == dependency) && asked.insert(dependency.clone()) {
                    asks.push(Ask::FileByFilename(dependency));
                }
            }
        }
    }
    Err(ReflectionError::Answered(format!("imports deeper than {MOST_ROUNDS} rounds of asking")))
}

impl Schema {
    /// The schema of the files reflection sent. Some servers (grpc-js among them) send a
    /// file per package without the imports it needs; those are declared here, from the
    /// types each file uses, so that the files make one schema.
    fn from_files(files: &[(String, Vec<u8>)]) -> Result<Self, SchemaError> {
        let invalid = |message: String| SchemaError::DescriptorSet {
            path: "the files of the server's reflection".to_owned(),
            message,
        };
        let mut decoded = files
            .iter()
            .map(|(_, bytes)| prost_types::FileDescriptorProto::decode(bytes.as_slice()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|error| invalid(error.to_string()))?;
        let defined: Vec<BTreeSet<String>> = decoded.iter().map(defined_types).collect();
        for (index, file) in decoded.iter_mut().enumerate() {
            for used in used_types(file) {
                let owner = candidates(file.package(), &used)
                    .find_map(|candidate| defined.iter().position(|types| types.contains(&candidate)));
                let Some(owner) = owner else { continue };
                let name = files[owner].0.clone();
                if owner != index && !file.dependency.contains(&name) {
                    file.dependency.push(name);
                }
            }
        }
        let set = prost_types::FileDescriptorSet { file: decoded };
        let pool =
            prost_reflect::DescriptorPool::from_file_descriptor_set(set).map_err(|error| invalid(error.to_string()))?;
        Ok(Self::from_pool(pool))
    }
}

/// The fully qualified names a type name written in a file of `package` may stand for,
/// innermost scope first, as protobuf resolves a relative name (`common.Money` in
/// `shop.v1`: `.shop.v1.common.Money`, `.shop.common.Money`, `.common.Money`).
fn candidates(package: &str, name: &str) -> impl Iterator<Item = String> {
    let absolute = name.starts_with('.').then(|| name.to_owned());
    let segments: Vec<&str> =
        if absolute.is_some() || package.is_empty() { Vec::new() } else { package.split('.').collect() };
    let scoped = (0..=segments.len()).rev().filter(move |_| !name.starts_with('.')).map(move |depth| {
        let scope = segments[..depth].join(".");
        if scope.is_empty() { format!(".{name}") } else { format!(".{scope}.{name}") }
    });
    absolute.into_iter().chain(scoped)
}

/// The fully qualified names of the messages and enums a file defines (nested ones too).
fn defined_types(file: &prost_types::FileDescriptorProto) -> BTreeSet<String> {
    fn walk(prefix: &str, message: &prost_types::DescriptorProto, into: &mut BTreeSet<String>) {
        let name = format!("{prefix}.{}", message.name());
        for nested in &message.nested_type {
            walk(&name, nested, into);
        }
        for nested in &message.enum_type {
            into.insert(format!("{name}.{}", nested.name()));
        }
        into.insert(name);
    }
    let prefix = if file.package().is_empty() { String::new() } else { format!(".{}", file.package()) };
    let mut found = BTreeSet::new();
    for each in &file.message_type {
        walk(&prefix, each, &mut found);
    }
    for each in &file.enum_type {
        found.insert(format!("{prefix}.{}", each.name()));
    }
    found
}

/// The fully qualified type names a file's fields and methods use.
fn used_types(file: &prost_types::FileDescriptorProto) -> BTreeSet<String> {
    fn walk(message: &prost_types::DescriptorProto, into: &mut BTreeSet<String>) {
        into.extend(
            message
                .field
                .iter()
                .filter(|field| !field.type_name().is_empty())
                .map(|field| field.type_name().to_owned()),
        );
        for nested in &message.nested_type {
            walk(nested, into);
        }
    }
    let mut used = BTreeSet::new();
    for each in &file.message_type {
        walk(each, &mut used);
    }
    for service in &file.service {
        for method in &service.method {
            used.insert(method.input_type().to_owned());
            used.insert(method.output_type().to_owned());
        }
    }
    used
}

#[cfg(test)]
mod tests {
    use super::candidates;

    #[test]
    fn a_relative_type_name_is_looked_up_from_the_innermost_scope() {
        let found: Vec<String> = candidates("shop.v1", "common.Money").collect();
        assert_eq!(found, [".shop.v1.common.Money", ".shop.common.Money", ".common.Money"]);
        assert_eq!(
            candidates("shop.v1", ".google.protobuf.Timestamp").collect::<Vec<_>>(),
            [".google.protobuf.Timestamp"]
        );
        assert_eq!(candidates("", "Money").collect::<Vec<_>>(), [".Money"]);
    }
}
