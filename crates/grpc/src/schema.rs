//! The schema of calls: proto files compiled in process by protox (imports found in the
//! import paths, then beside each file; Google's well-known types built in), or a
//! compiled descriptor set (`.protoset`, `.pb`). Errors say where, as a compiler does.

use std::path::{Path, PathBuf};

use miette::Diagnostic as _;
use prost_reflect::{DescriptorPool, MethodDescriptor};

/// The services and messages calls are made with.
#[derive(Debug, Clone)]
pub struct Schema {
    pool: DescriptorPool,
}

/// Why a schema or a method of it cannot be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// A proto file does not compile (or cannot be read): where, and why.
    #[error("{}{message}", location.as_deref().map(|at| format!("{at}: ")).unwrap_or_default())]
    Compile {
        /// `file:line:column` (or the file alone) when the compiler says.
        location: Option<String>,
        /// The compiler's message.
        message: String,
    },
    /// A descriptor set that is not one.
    #[error("`{path}` is not a compiled descriptor set (protoc --descriptor_set_out): {message}")]
    DescriptorSet {
        /// The file.
        path: String,
        /// Why.
        message: String,
    },
    /// No service of that name.
    #[error("the schema has no service `{service}`{}", hint(suggestion.as_deref(), known))]
    UnknownService {
        /// As written.
        service: String,
        /// The closest name, when one is close.
        suggestion: Option<String>,
        /// The services there are.
        known: Vec<String>,
    },
    /// No method of that name in the service.
    #[error("the service `{service}` has no method `{method}`{}", hint(suggestion.as_deref(), known))]
    UnknownMethod {
        /// The service.
        service: String,
        /// As written.
        method: String,
        /// The closest name, when one is close.
        suggestion: Option<String>,
        /// The methods there are.
        known: Vec<String>,
    },
}

fn hint(suggestion: Option<&str>, known: &[String]) -> String {
    match suggestion {
        Some(name) => format!(": did you mean `{name}`?"),
        None if known.is_empty() => String::new(),
        None => format!(" (it has {})", known.join(", ")),
    }
}

impl Schema {
    /// Compiles `files`; an import is looked up in `imports` in order, then in the
    /// directory of each file not under one of them (as `protoc -I`, a file is named by
    /// its path from the first import directory that holds it).
    pub fn compile(files: &[PathBuf], imports: &[PathBuf]) -> Result<Self, SchemaError> {
        let mut includes: Vec<PathBuf> = imports.to_vec();
        for file in files {
            let directory = file.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf);
            if !imports.iter().any(|import| file.starts_with(import)) && !includes.contains(&directory) {
                includes.push(directory);
            }
        }
        let compiled = protox::Compiler::new(&includes)
            .and_then(|mut compiler| {
                compiler.include_imports(true).open_files(files)?;
                Ok(compiler.descriptor_pool())
            })
            .map_err(|error| compile_error(&error))?;
        Ok(Self { pool: compiled })
    }

    /// A compiled descriptor set's bytes (`path` names it in errors).
    pub fn from_descriptor_set(path: &str, bytes: &[u8]) -> Result<Self, SchemaError> {
        let pool = DescriptorPool::decode(bytes)
            .map_err(|error| SchemaError::DescriptorSet { path: path.to_owned(), message: error.to_string() })?;
        Ok(Self { pool })
    }

    /// The method `method` of the service `service`. As httpyac finds them, a service
    /// may be named without its package when one service of the schema has that name,
    /// and a method in lower camel case (`sayHello` for `SayHello`) when no other
    /// method of the service differs from it only in case.
    pub fn method(&self, service: &str, method: &str) -> Result<MethodDescriptor, SchemaError> {
        let Some(found) = self.service(service) else {
            let known: Vec<String> = self.pool.services().map(|service| service.full_name().to_owned()).collect();
            return Err(SchemaError::UnknownService {
                service: service.to_owned(),
                suggestion: closest(service, &known),
                known,
            });
        };
        let exact = found.methods().find(|candidate| candidate.name() == method);
        let folded = || {
            let mut same = found.methods().filter(|candidate| candidate.name().eq_ignore_ascii_case(method));
            let first = same.next();
            first.filter(|_| same.next().is_none())
        };
        let known: Vec<String> = found.methods().map(|method| method.name().to_owned()).collect();
        exact.or_else(folded).ok_or_else(|| SchemaError::UnknownMethod {
            service: found.full_name().to_owned(),
            method: method.to_owned(),
            suggestion: closest(method, &known),
            known,
        })
    }

    pub(crate) fn from_pool(pool: DescriptorPool) -> Self {
        Self { pool }
    }

    /// The names of the files the schema was made of, as imported (`shop/v1/orders.proto`),
    /// Google's well-known types left out.
    #[must_use]
    pub fn file_names(&self) -> Vec<String> {
        self.pool
            .files()
            .map(|file| file.name().to_owned())
            .filter(|name| !name.starts_with("google/protobuf/"))
            .collect()
    }

    /// The names of the methods of `service` (as [`Schema::method`] finds services).
    #[must_use]
    pub fn methods(&self, service: &str) -> Vec<String> {
        self.service(service)
            .map(|found| found.methods().map(|method| method.name().to_owned()).collect())
            .unwrap_or_default()
    }

    /// The fields of a method's request message: each field's names and its type as a
    /// proto file writes it.
    #[must_use]
    pub fn input_fields(&self, service: &str, method: &str) -> Vec<Field> {
        let Ok(found) = self.method(service, method) else { return Vec::new() };
        found
            .input()
            .fields()
            .map(|field| Field {
                name: field.name().to_owned(),
                json_name: field.json_name().to_owned(),
                kind: kind_name(&field),
            })
            .collect()
    }

    fn service(&self, service: &str) -> Option<prost_reflect::ServiceDescriptor> {
        self.pool.get_service_by_name(service).or_else(|| {
            let mut named =
                self.pool.services().filter(|candidate| !service.contains('.') && candidate.name() == service);
            let first = named.next();
            first.filter(|_| named.next().is_none())
        })
    }

    /// Whether `other` describes the same files (reflection asked again gives an equal
    /// schema when the server has not changed).
    #[must_use]
    pub fn same_as(&self, other: &Schema) -> bool {
        self.pool.encode_to_vec() == other.pool.encode_to_vec()
    }

    /// The fully qualified names of the services.
    #[must_use]
    pub fn services(&self) -> Vec<String> {
        self.pool.services().map(|service| service.full_name().to_owned()).collect()
    }
}

/// A field of a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// As the proto file names it (`request_id`).
    pub name: String,
    /// Its proto3 JSON name (`requestId`).
    pub json_name: String,
    /// Its type as a proto file writes it: `string`, `repeated int64`, `shop.common.Money`,
    /// `map<string, int32>`.
    pub kind: String,
}

fn kind_name(field: &prost_reflect::FieldDescriptor) -> String {
    use prost_reflect::Kind;
    let scalar = |kind: &Kind| match kind {
        Kind::Message(message) => message.full_name().to_owned(),
        Kind::Enum(enumeration) => enumeration.full_name().to_owned(),
        other => format!("{other:?}").to_ascii_lowercase(),
    };
    if field.is_map()
        && let Kind::Message(entry) = field.kind()
    {
        let key = entry.map_entry_key_field().kind();
        let value = entry.map_entry_value_field().kind();
        return format!("map<{}, {}>", scalar(&key), scalar(&value));
    }
    if field.is_list() { format!("repeated {}", scalar(&field.kind())) } else { scalar(&field.kind()) }
}

/// A protox error as `file:line:column` and its message.
fn compile_error(error: &protox::Error) -> SchemaError {
    let file = error.file().map(str::to_owned);
    let position =
        error.source_code().zip(error.labels().and_then(|mut labels| labels.next())).and_then(|(source, label)| {
            let contents = source.read_span(label.inner(), 0, 0).ok()?;
            Some((contents.line() + 1, contents.column() + 1))
        });
    let location = match (file, position) {
        (Some(file), Some((line, column))) => Some(format!("{file}:{line}:{column}")),
        (file, _) => file,
    };
    SchemaError::Compile { location, message: error.to_string() }
}

/// The name of `known` closest to `written` (at most a third of its letters apart).
fn closest(written: &str, known: &[String]) -> Option<String> {
    let lower = written.to_ascii_lowercase();
    known
        .iter()
        .map(|name| (distance(&lower, &name.to_ascii_lowercase()), name))
        .filter(|(distance, _)| *distance <= (written.chars().count() / 3).max(1))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, name)| name.clone())
}

/// Levenshtein distance, by characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, left) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, right) in b.iter().enumerate() {
            let substitution = previous + usize::from(left != *right);
            previous = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(previous + 1);
        }
    }
    row[b.len()]
}
