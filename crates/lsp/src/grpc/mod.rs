//! gRPC requests in the editor: completion of a request line's service and method and of
//! the top-level fields of its messages (`complete.rs`), and diagnostics of a service,
//! method or field the schema does not have, or of a proto file that does not compile
//! (`check.rs`).
//!
//! The schema is the one a send would use, got from the engine
//! ([`volley_engine::grpc::schema_of`]), which compiles proto files in process and keeps
//! the result while the files are unchanged: asking again on the next keystroke costs a
//! look at their modification times. A schema from server reflection is never asked for
//! on a keystroke: the server's catalog (every service it offers) is fetched in the
//! background when a document is checked, at most every 30 s per server
//! ([`volley_engine::grpc::catalog_fetch`]), and the documents are checked again when it
//! changed; until it came, such a request has neither completion nor these diagnostics.
//!
//! The schema is found on a copy of the request reduced to what it depends on (its
//! `proto` lines and `@grpc-*` directives, the file's variables): its headers, body and
//! scripts are left out, so that nothing runs (no script, no resolver, no token flow) and
//! an unfinished request line or body does not stand in the way. Requests whose proto
//! paths call a resolver, directly or through the file variables they use, are left out.

mod check;
mod complete;
mod json;

use std::collections::HashSet;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::sync::Arc;

use volley_engine::grpc::Schema;
use volley_engine::{BuildError, Error, RunOptions};
use volley_syntax::{
    Block, Body, Document, Expression, ProtoImport, Protocol, Request, Span, Template, VariableDeclaration,
};

use crate::model::{Model, Placed};

pub(crate) use check::diagnostics;
pub(crate) use complete::candidates;

/// The target the reduced copy of a request is prepared with: the schema does not depend
/// on it, and the one written may be unfinished (`GRPC localhost:50051/shop.`).
const PLACEHOLDER_TARGET: &str = "grpc://localhost/volley.Placeholder/Schema";

/// What the schema of a part's gRPC requests depends on beyond the part.
#[derive(Debug, Clone)]
pub(crate) struct Surroundings {
    /// The file's variables, in order (a part's requests may use any of them).
    variables: Arc<[VariableDeclaration]>,
    /// The `proto <` lines of the other parts' blocks without a request line, those
    /// before the part first.
    before: Vec<ProtoImport>,
    after: Vec<ProtoImport>,
}

impl Surroundings {
    /// The surroundings of `part` in `model`, with the file's variables given.
    pub(crate) fn of(model: &Model, part: &Placed, variables: Arc<[VariableDeclaration]>) -> Self {
        let mut surroundings = Surroundings { variables, before: Vec::new(), after: Vec::new() };
        for placed in &model.parts {
            let imports = placed.part.outline.global_proto_imports.iter().cloned();
            if placed.start < part.start {
                surroundings.before.extend(imports);
            } else if placed.start > part.start {
                surroundings.after.extend(imports);
            }
        }
        surroundings
    }

    /// A hash of what the schema may depend on: the variables' names and values, the
    /// other parts' `proto <` lines.
    pub(crate) fn fingerprint(&self) -> u64 {
        let mut hasher = DefaultHasher::new();
        for variable in self.variables.iter() {
            variable.name.value.hash(&mut hasher);
            variable.value.to_source().hash(&mut hasher);
        }
        for import in self.before.iter().chain(&self.after) {
            import.path.value.hash(&mut hasher);
            import.include_dirs.hash(&mut hasher);
            import.keep_case.hash(&mut hasher);
        }
        hasher.finish()
    }
}

/// Where a document is and which profile is active: what preparing a request needs
/// beyond the text.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Place<'a> {
    pub(crate) path: Option<&'a Path>,
    pub(crate) profile: Option<&'a str>,
    /// Told when a server's catalog, fetched in the background, has changed (the
    /// documents are then checked again); `None`: no fetch is started.
    pub(crate) catalogs: Option<&'a Arc<tokio::sync::Notify>>,
}

/// The schema of a gRPC request, as far as the language server looks for it.
pub(crate) enum Lookup {
    /// From the request's proto files or descriptor set.
    Schema(Schema),
    /// A proto file that does not compile, a descriptor set that is not one: the
    /// engine's message and hint, where it is named (in the part's coordinates; the
    /// request line for a `proto <` line of another part).
    Broken { message: String, hint: Option<String>, span: Span },
    /// Not known here: from reflection, through a resolver, or the request cannot be
    /// prepared (the analysis reports why: an undefined variable, a missing file).
    Unknown,
}

/// The schema of `request`, a gRPC request of the part document `document`.
pub(crate) async fn schema(
    engine: &volley_engine::Client,
    document: &Document,
    request: &Request,
    surroundings: &Surroundings,
    place: Place<'_>,
) -> Lookup {
    let Protocol::Grpc(options) = &request.protocol else { return Lookup::Unknown };
    // Another part's `proto <` lines are named on this request's line, for errors.
    let foreign = |import: &ProtoImport| {
        let mut import = import.clone();
        import.span = request.line_span;
        import.path.span = request.line_span;
        import
    };
    let mut globals: Vec<ProtoImport> = surroundings.before.iter().map(foreign).collect();
    globals.extend(
        document.blocks.iter().filter(|block| block.request.is_none()).flat_map(|block| block.proto_imports.clone()),
    );
    globals.extend(surroundings.after.iter().map(foreign));
    let own = document.blocks.get(request.block).map(|block| block.proto_imports.clone()).unwrap_or_default();

    let import_paths: Vec<Template> =
        globals.iter().chain(&own).map(|import| volley_syntax::parse_template(&import.path.value).0).collect();
    // From reflection: the server is part of what the schema depends on.
    let reflection = options.reflection
        || (options.protos.is_empty() && options.protoset.is_none() && globals.is_empty() && own.is_empty());
    let server = reflection.then(|| server_of(&request.url));
    let mut paths: Vec<&Template> = options
        .protos
        .iter()
        .chain(&options.import_paths)
        .chain(&options.protoset)
        .chain(&options.reflection_server)
        .chain(&server)
        .collect();
    paths.extend(&import_paths);
    if !runs_nothing(paths, &surroundings.variables) {
        return Lookup::Unknown;
    }

    let mut reduced = reduced(request);
    if let Some(server) = server {
        reduced.url = server;
    }
    // The request's block first: its place is its index (`Document::refusal_of`).
    let blocks = vec![block(0, request.span, Some(reduced), own), block(1, request.span, None, globals)];
    let document = Document { blocks, variables: surroundings.variables.to_vec(), ..Document::default() };
    let Some(reduced) = document.request(0) else { return Lookup::Unknown };
    let options = RunOptions::default().profile_or_default(place.profile);
    let prepared = match volley_engine::stages::prepare_request(engine, &document, reduced, place.path, &options).await
    {
        Ok(prepared) => prepared,
        Err(error) => return broken(error),
    };
    if let (true, Some(changed)) = (reflection, place.catalogs)
        && let Some(fetch) = volley_engine::grpc::catalog_fetch(engine, &prepared)
    {
        let changed = Arc::clone(changed);
        tokio::spawn(async move {
            if fetch.await {
                changed.notify_one();
            }
        });
    }
    match volley_engine::grpc::schema_of(engine, &prepared, false).await {
        Ok(Some((schema, _))) => Lookup::Schema(schema),
        Ok(None) => Lookup::Unknown,
        Err(error) => broken(error),
    }
}

/// Waits for `future` on this thread: for the features computed off the async workers
/// (completion, diagnostics), on a thread of the runtime's blocking pool.
pub(crate) fn blocking<F: Future>(future: F) -> F::Output {
    tokio::runtime::Handle::current().block_on(future)
}

/// The target `url` is written with, its service and method replaced by the placeholder's
/// (they may be unfinished): `grpcs://{{host}}:443/shop.` → `grpcs://{{host}}:443/volley.Placeholder/Schema`,
/// grpcurl's `host:port pkg.Svc/M` keeps its space, httpyac's `/pkg.Svc/M` (after the
/// variable `host`) is the placeholder's path alone.
fn server_of(url: &Template) -> Template {
    const PLACEHOLDER_PATH: &str = "volley.Placeholder/Schema";
    let mut parts = Vec::new();
    for part in &url.parts {
        match part {
            volley_syntax::Part::Text(text) => {
                let value = &text.value;
                // A scheme, where it comes before the first `/` (`{{scheme}}://` too).
                let from = value
                    .find("://")
                    .filter(|at| !value[..*at].contains(|c: char| c == '/' || c.is_whitespace()))
                    .map_or(0, |at| at + 3);
                match value[from..].find(|c: char| c == '/' || c.is_whitespace()) {
                    Some(at) => {
                        let end = from + at;
                        let separator = if value[end..].starts_with('/') { "/" } else { " " };
                        let kept = format!("{}{separator}{PLACEHOLDER_PATH}", &value[..end]);
                        parts.push(volley_syntax::Part::Text(volley_syntax::Spanned::new(kept, text.span)));
                        return Template { span: url.span, parts };
                    }
                    None => parts.push(part.clone()),
                }
            }
            volley_syntax::Part::Interpolation(_) => parts.push(part.clone()),
        }
    }
    parts.push(volley_syntax::Part::Text(volley_syntax::Spanned::new(format!("/{PLACEHOLDER_PATH}"), url.span)));
    Template { span: url.span, parts }
}

/// The request without what the schema does not depend on.
fn reduced(request: &Request) -> Request {
    let mut reduced = request.clone();
    reduced.block = 0;
    reduced.url = Template {
        span: request.url.span,
        parts: vec![volley_syntax::Part::Text(volley_syntax::Spanned::new(
            PLACEHOLDER_TARGET.to_owned(),
            request.url.span,
        ))],
    };
    reduced.headers.clear();
    reduced.body = Body::None;
    reduced.scripts.clear();
    reduced.directives.clear();
    reduced.timeout = None;
    reduced.http_version = None;
    reduced
}

fn block(index: usize, span: Span, request: Option<Request>, proto_imports: Vec<ProtoImport>) -> Block {
    Block {
        commands: Vec::new(),
        index,
        span,
        separator: None,
        request: request.map(Box::new),
        orphan_directives: Vec::new(),
        orphan_scripts: Vec::new(),
        proto_imports,
    }
}

/// What an error of preparing or of finding the schema is to the language server: a
/// schema that cannot be made is reported; the rest is the analysis's to report.
fn broken(error: Error) -> Lookup {
    match error {
        Error::Build(error @ BuildError::Grpc { .. }) => {
            Lookup::Broken { message: error.message(), hint: error.hint(), span: error.span() }
        }
        _ => Lookup::Unknown,
    }
}

/// `true` when the templates, and the file variables they use (followed through the
/// variables those use), call no resolver: substituting them runs nothing and asks
/// for nothing (no command resolver, no secret).
fn runs_nothing(templates: Vec<&Template>, variables: &[VariableDeclaration]) -> bool {
    let mut pending = templates;
    let mut seen: HashSet<String> = HashSet::new();
    while let Some(template) = pending.pop() {
        let mut calls = false;
        let mut names = Vec::new();
        template.walk(&mut |interpolation| match &interpolation.expression {
            Some(Expression::Resolver(_) | Expression::JavaScript(_)) => calls = true,
            Some(Expression::Variable(name)) => names.push(name.value.clone()),
            None => {}
        });
        if calls {
            return false;
        }
        for name in names {
            if let Some(declaration) = variables.iter().rev().find(|declaration| declaration.name.value == name)
                && seen.insert(name)
            {
                pending.push(&declaration.value);
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_of_a_target_keeps_its_form() {
        let server = |written: &str| server_of(&volley_syntax::parse_template(written).0).to_source();
        assert_eq!(server("localhost:50051/shop."), "localhost:50051/volley.Placeholder/Schema");
        assert_eq!(server("grpcs://{{host}}:443/shop.v1.Orders/Pl"), "grpcs://{{host}}:443/volley.Placeholder/Schema");
        assert_eq!(
            server("{{scheme}}://localhost:50051/a/b"),
            "{{scheme}}://localhost:50051/volley.Placeholder/Schema"
        );
        assert_eq!(server("localhost:50051 shop.v1.Orders/Place"), "localhost:50051 volley.Placeholder/Schema");
        assert_eq!(server("/shop.v1.Orders/Place"), "/volley.Placeholder/Schema");
        assert_eq!(server("{{server}}"), "{{server}}/volley.Placeholder/Schema");
    }

    #[test]
    fn paths_that_call_resolvers_are_not_substituted() {
        let document = volley_syntax::parse("@dir = ./protos\n@secret = {{$exec whoami}}\n@other = {{secret}}\n");
        let template = |text: &str| volley_syntax::parse_template(text).0;
        let variables = &document.variables;
        assert!(runs_nothing(vec![&template("./x.proto")], variables));
        assert!(runs_nothing(vec![&template("{{dir}}/x.proto")], variables));
        assert!(!runs_nothing(vec![&template("{{$uuid}}.proto")], variables));
        assert!(!runs_nothing(vec![&template("{{other}}/x.proto")], variables));
    }
}
