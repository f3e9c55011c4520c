//! Composition: the files a `.http` file imports (httpyac's `# @import`, JetBrains' and
//! Kulala's `import`) and what its `run` lines run (`run #name`, `run ./file.http`,
//! with `(@name=value)`). The requests run by each front end as its own; this module
//! only finds them, with the chain shown when one leads back to itself.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};
use volley_syntax::{Document, RunTarget, Span, Spanned, VariableDeclaration};

use crate::body::Files;
use crate::client::Client;
use crate::error::{BuildError, Error};

/// The most files one file imports, directly and through the files it imports.
pub const MAX_IMPORTED_FILES: usize = 64;

/// How deep `run ./file.http` lines may lead into each other.
pub const MAX_RUN_DEPTH: usize = 16;

/// The most requests the `run` lines of one block may expand to.
pub const MAX_RUN_STEPS: usize = 10_000;

/// A `.http` file read because another imports or runs it.
#[derive(Debug)]
pub struct Linked {
    /// Where it is (absolute, normalised).
    pub path: PathBuf,
    /// Its text.
    pub text: String,
    /// Its parsed document.
    pub document: Document,
}

/// One request a block's `run` lines run, in order.
#[derive(Debug, Clone)]
pub struct RunStep {
    /// The file of the request: `None` for the file of the `run` line itself.
    pub file: Option<Arc<Linked>>,
    /// The request's index among its file's requests.
    pub request: usize,
    /// What the `run` lines set (`(@host=example.com)`), the innermost last:
    /// [`RunOptions::command_variables`](crate::RunOptions::command_variables).
    pub variables: Map<String, Value>,
}

impl Client {
    /// The files `document` imports, directly and through the files they import, in
    /// the order they are named (each once). Paths are relative to the importing file;
    /// files outside the project are read only when the client allows it.
    pub(crate) fn imports_of(
        &self,
        document: &Document,
        source_path: Option<&Path>,
    ) -> Result<Vec<Arc<Linked>>, Error> {
        if !document.has_imports() {
            return Ok(Vec::new());
        }
        let own = source_path.map(crate::io::normalize);
        let directory =
            own.as_deref().and_then(Path::parent).map(Path::to_path_buf).or_else(|| self.working_directory());
        self.imports_from(document, own.as_deref(), &directory.unwrap_or_default())
    }

    /// [`Client::imports_of`] for a file at `own` (when it has a path) in `directory`.
    pub(crate) fn imports_from(
        &self,
        document: &Document,
        own: Option<&Path>,
        directory: &Path,
    ) -> Result<Vec<Arc<Linked>>, Error> {
        let mut found: Vec<Arc<Linked>> = Vec::new();
        let mut pending: Vec<(PathBuf, Spanned<String>, Option<usize>)> =
            document.imports().into_iter().rev().map(|path| (directory.to_path_buf(), path, None)).collect();
        while let Some((from, path, through)) = pending.pop() {
            let linked = self.read_linked(&from, &path).map_err(|error| match through {
                // Found through another import: its place is that file's.
                Some(index) => Error::Build(BuildError::Included {
                    path: found[index].path.clone(),
                    span: path.span,
                    source: Box::new(error),
                }),
                None => Error::Build(error),
            })?;
            if own == Some(linked.path.as_path()) || found.iter().any(|seen| seen.path == linked.path) {
                continue;
            }
            if found.len() == MAX_IMPORTED_FILES {
                return Err(Error::Build(BuildError::Command {
                    message: format!("more than {MAX_IMPORTED_FILES} files are imported"),
                    hint: Some("import fewer files; imports of imported files count too".to_owned()),
                    span: path.span,
                }));
            }
            let index = found.len();
            let inner = linked.document.imports();
            let directory = linked.path.parent().map(Path::to_path_buf).unwrap_or_default();
            pending.extend(inner.into_iter().rev().map(|path| (directory.clone(), path, Some(index))));
            found.push(Arc::new(linked));
        }
        Ok(found)
    }

    /// The requests the `run` lines of `document`'s block `block` run, in order:
    /// `run #name` the request of that name (this file's, else the first imported
    /// file's that has one), `run ./file.http` every request of the file, its own
    /// `run` lines followed. A name no file has, a missing file and a cycle are errors
    /// at the line.
    pub(crate) fn run_steps(
        &self,
        document: &Document,
        source_path: Option<&Path>,
        block: usize,
    ) -> Result<Vec<RunStep>, Error> {
        let mut steps = Vec::new();
        let own = source_path.map(crate::io::normalize);
        let chain: Vec<String> = own.iter().map(|path| path.display().to_string()).collect();
        let place = Place { document, path: own.as_deref(), linked: None };
        self.expand_block(&place, block, &Map::new(), &chain, &mut steps)?;
        Ok(steps)
    }

    fn expand_block(
        &self,
        place: &Place<'_>,
        block: usize,
        outer: &Map<String, Value>,
        chain: &[String],
        steps: &mut Vec<RunStep>,
    ) -> Result<(), BuildError> {
        let Some(block) = place.document.blocks.get(block) else { return Ok(()) };
        for (target, variables) in block.runs() {
            let mut set = outer.clone();
            for variable in variables {
                set.insert(variable.name.value.clone(), Value::String(variable.value.value.clone()));
            }
            let span = target.text().span;
            match target {
                RunTarget::Request(name) => {
                    let (file, request) = self.named_request(place, name)?;
                    steps.push(RunStep { file, request, variables: set });
                }
                RunTarget::File(path) => {
                    let linked = Arc::new(self.read_linked(&place.directory(self), path)?);
                    let shown = linked.path.display().to_string();
                    if chain.contains(&shown) || chain.len() > MAX_RUN_DEPTH {
                        let mut shown_chain: Vec<String> = chain.iter().map(|path| file_name(path)).collect();
                        shown_chain.push(file_name(&shown));
                        let message = if chain.contains(&shown) {
                            format!(
                                "`run {}` leads back to a file that runs it ({})",
                                path.value,
                                shown_chain.join(" → ")
                            )
                        } else {
                            format!("`run` lines lead more than {MAX_RUN_DEPTH} files deep")
                        };
                        return Err(BuildError::Command {
                            message,
                            hint: Some("a file cannot run itself, directly or through the files it runs".to_owned()),
                            span,
                        });
                    }
                    let mut inner_chain = chain.to_vec();
                    inner_chain.push(shown);
                    let inner = Place { document: &linked.document, path: Some(&linked.path), linked: Some(&linked) };
                    for each in &linked.document.blocks {
                        if let Some(request) = &each.request {
                            let file = Some(Arc::clone(&linked));
                            steps.push(RunStep { file, request: request.index, variables: set.clone() });
                        } else if each.runs().next().is_some() {
                            self.expand_block(&inner, each.index, &set, &inner_chain, steps)
                                .map_err(|error| included(&linked.path, span, error))?;
                        }
                    }
                }
            }
            if steps.len() > MAX_RUN_STEPS {
                return Err(BuildError::Command {
                    message: format!("the `run` lines of this block run more than {MAX_RUN_STEPS} requests"),
                    hint: Some("run fewer files, or the requests by name".to_owned()),
                    span,
                });
            }
        }
        Ok(())
    }

    /// The request `run #name` runs from `place`: its own file's, else the first
    /// imported file's of that name.
    fn named_request(
        &self,
        place: &Place<'_>,
        name: &Spanned<String>,
    ) -> Result<(Option<Arc<Linked>>, usize), BuildError> {
        if let Some(request) = place.document.request_named(&name.value) {
            return Ok((place.linked.cloned(), request.index));
        }
        let imports = self.imports_of(place.document, place.path).map_err(|error| match error {
            Error::Build(error) => error,
            other => BuildError::Command { message: other.to_string(), hint: None, span: name.span },
        })?;
        for linked in &imports {
            if let Some(request) = linked.document.request_named(&name.value) {
                return Ok((Some(Arc::clone(linked)), request.index));
            }
        }
        let own = place.document.requests().filter_map(|request| request.name.as_ref());
        let imported = imports.iter().flat_map(|linked| linked.document.requests().filter_map(|r| r.name.as_ref()));
        let names: Vec<&str> = own.chain(imported).map(|name| name.value.as_str()).collect();
        let hint = match volley_syntax::closest(&name.value, names.iter().copied()) {
            Some(best) => format!("did you mean `{best}`?"),
            None if imports.is_empty() => {
                "name a request with `# @name`, or import the file that has it (`import ./other.http`)".to_owned()
            }
            None => "name a request with `# @name` in this file or in one it imports".to_owned(),
        };
        let files = if imports.is_empty() { "this file" } else { "this file or the files it imports" };
        Err(BuildError::Command {
            message: format!("no request of {files} is named `{}`", name.value),
            hint: Some(hint),
            span: name.span,
        })
    }

    /// Reads and parses the `.http` file `path` names, relative to `base`.
    pub(crate) fn read_linked(&self, base: &Path, path: &Spanned<String>) -> Result<Linked, BuildError> {
        let root = (!self.inner.config.allow_external_files).then(|| {
            let config = self.config_for(base).ok().flatten();
            crate::config::project_root(&*self.inner.config.io, base, config.as_ref())
        });
        let files = Files { io: &*self.inner.config.io, base, root: root.as_deref() };
        let (resolved, bytes) = files.read(&path.value, path.span)?;
        let text = String::from_utf8(bytes).map_err(|_| BuildError::Command {
            message: format!("`{}` is not UTF-8 text", path.value),
            hint: Some("import and run `.http` files".to_owned()),
            span: path.span,
        })?;
        let document = volley_syntax::parse(&text);
        Ok(Linked { path: resolved, text, document })
    }
}

/// Where `run` lines are read: a file, and the file's [`Linked`] when it is not the
/// one the run started from.
struct Place<'a> {
    document: &'a Document,
    path: Option<&'a Path>,
    linked: Option<&'a Arc<Linked>>,
}

impl Place<'_> {
    /// The directory paths are relative to.
    fn directory(&self, client: &Client) -> PathBuf {
        let directory = self.path.and_then(Path::parent).map(Path::to_path_buf);
        directory.or_else(|| client.working_directory()).unwrap_or_default()
    }
}

fn included(path: &Path, span: Span, error: BuildError) -> BuildError {
    BuildError::Included { path: path.to_path_buf(), span, source: Box::new(error) }
}

fn file_name(path: &str) -> String {
    Path::new(path).file_name().map_or_else(|| path.to_owned(), |name| name.to_string_lossy().into_owned())
}

/// The file variables a request of `document` sees: those of the files it imports,
/// in order, then its own (a later declaration of a name wins).
pub(crate) fn file_variables<'a>(document: &'a Document, imports: &[Arc<Linked>]) -> Cow<'a, [VariableDeclaration]> {
    if imports.is_empty() {
        return Cow::Borrowed(&document.variables);
    }
    let imported = imports.iter().flat_map(|linked| linked.document.variables.iter().cloned());
    Cow::Owned(imported.chain(document.variables.iter().cloned()).collect())
}

/// An error of an import or `run` line as the diagnostic `volley check` shows at the
/// line: `missing-file`, `external-file`, else `invalid-command`.
#[must_use]
pub fn diagnostic(error: &BuildError) -> volley_syntax::Diagnostic {
    use volley_syntax::Code;
    let code = match error {
        BuildError::File { source, .. } if source.kind() == std::io::ErrorKind::NotFound => Code::MissingFile,
        BuildError::ExternalFile { .. } => Code::ExternalFile,
        _ => Code::InvalidCommand,
    };
    let mut diagnostic = volley_syntax::Diagnostic::new(code, error.span(), error.message());
    if let Some(hint) = error.hint() {
        diagnostic = diagnostic.with_hint(hint);
    }
    diagnostic
}
