//! `volley import` and `volley export`: the converters (`volley_convert`) read from a
//! file, an argument or stdin, and written to files or stdout.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use clap::{Args, ValueEnum};
use serde_json::{Map, Value};
use volley_convert::{Conversion, Format};
use volley_engine::curl::{CurlExport as _, CurlRequest, to_curl};
use volley_engine::{Client, ClientConfig, CookieJar, RunOptions};

use crate::exit::Exit;
use crate::render;

/// The formats of `volley import`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum ImportFormat {
    /// A cURL command (POSIX shell, Windows cmd or PowerShell quoting).
    Curl,
    /// An HTTP Archive (HAR 1.2) saved by a browser.
    Har,
    /// A Postman collection (v2.1).
    Postman,
    /// An Insomnia export (v4).
    Insomnia,
    /// An OpenAPI description (3.0 or 3.1, JSON or YAML).
    Openapi,
}

impl ImportFormat {
    fn format(self) -> Format {
        match self {
            ImportFormat::Curl => Format::Curl,
            ImportFormat::Har => Format::Har,
            ImportFormat::Postman => Format::Postman,
            ImportFormat::Insomnia => Format::Insomnia,
            ImportFormat::Openapi => Format::OpenApi,
        }
    }
}

const IMPORT_EXAMPLES: &str = "\
Examples:
  volley import curl 'curl -X POST https://example.com/users -d name=ada'
  pbpaste | volley import curl > request.http     a command from the clipboard
  volley import postman api.postman_collection.json --out api/
  volley import insomnia insomnia-export.json --out api/
  volley import openapi spec.yaml --out api/      servers become profiles in volley.jsonc
  volley import har capture.har > captured.http

What could not be converted is listed on stderr (`note: WHERE: WHY`) and kept as `#`
comments above the request; the exit code is 0, or 1 with --strict. A source that
cannot be read at all exits with 3.";

const EXPORT_EXAMPLES: &str = "\
Examples:
  volley export curl api.http                        every request, one command a line
  volley export curl api.http --name login --reveal  one request, secrets in clear
  volley export curl api.http --index 0 -p staging   with a profile's variables";

#[derive(Debug, Args)]
#[command(after_long_help = IMPORT_EXAMPLES)]
pub(crate) struct ImportArgs {
    /// What the source is.
    #[arg(value_enum)]
    format: ImportFormat,

    /// The source: for `curl` the command itself (one argument, quoted), for the others
    /// a file. `-` or nothing reads stdin.
    source: Option<String>,

    /// Write the files into this directory (created if needed). Without it the one
    /// `.http` file of the conversion is printed; a conversion that gives several files
    /// or a `volley.jsonc` needs it.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,

    /// Replace files that already exist in --out.
    #[arg(long)]
    force: bool,

    /// Exit with 1 when anything was not converted (it is always listed on stderr).
    #[arg(long)]
    strict: bool,
}

#[derive(Debug, Args)]
#[command(after_long_help = EXPORT_EXAMPLES)]
pub(crate) struct ExportArgs {
    /// What to write: `curl`, a cURL command per request.
    #[arg(value_enum)]
    format: ExportFormat,

    /// The .http file.
    file: PathBuf,

    /// Export only the request with this name (`# @name` or the `###` text).
    #[arg(long, short = 'n', value_name = "NAME", add = crate::complete::request_names())]
    name: Option<String>,

    /// Export only the request at this position (0 is the first).
    #[arg(long, value_name = "N", conflicts_with = "name")]
    index: Option<usize>,

    /// Use this profile of volley.jsonc (or environment of http-client.env.json).
    #[arg(long, short = 'p', value_name = "NAME", env = "VOLLEY_PROFILE", hide_env_values = true, add = crate::complete::profiles())]
    profile: Option<String>,

    /// Set a variable: `--var token=abc`. Repeatable; beats every other source.
    #[arg(long = "var", value_name = "NAME=VALUE", value_parser = crate::args::parse_var)]
    vars: Vec<(String, String)>,

    /// Write secrets in clear (credential headers, `$secret` values, sensitive
    /// variables). Without it they are `[REDACTED]`, and the command does not run as is.
    #[arg(long)]
    reveal: bool,
}

/// The formats of `volley export`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum ExportFormat {
    /// One cURL command line (POSIX shell quoting) per request.
    Curl,
}

pub(crate) fn import(args: &ImportArgs) -> anyhow::Result<Exit> {
    let format = args.format.format();
    let (source, stem, origin) = read_source(args.source.as_deref(), format)?;
    let conversion = match volley_convert::import(format, &source, &stem) {
        Ok(conversion) => conversion,
        Err(error) => {
            anstream::eprintln!("{}", render::plain(&format!("cannot import `{origin}`: {error}"), None));
            return Ok(Exit::Invalid);
        }
    };
    write_conversion(&conversion, args)?;
    for entry in &conversion.unconverted {
        anstream::eprintln!("note: {entry}");
    }
    if conversion.unconverted.is_empty() {
        return Ok(Exit::Success);
    }
    anstream::eprintln!(
        "{} part(s) of the source not converted or changed (listed above; those of a request are also `#` comments above it)",
        conversion.unconverted.len()
    );
    Ok(if args.strict { Exit::Failed } else { Exit::Success })
}

/// The text of the source, the stem of the file it becomes, and how to name it.
fn read_source(source: Option<&str>, format: Format) -> anyhow::Result<(String, String, String)> {
    let stdin = || -> anyhow::Result<String> {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text).context("cannot read stdin")?;
        Ok(text)
    };
    match (format, source) {
        (_, None | Some("-")) => Ok((stdin()?, "request".to_owned(), "stdin".to_owned())),
        (Format::Curl, Some(command)) => Ok((command.to_owned(), "request".to_owned(), "the command".to_owned())),
        (_, Some(path)) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("cannot read `{path}`"))?;
            let stem =
                Path::new(path).file_stem().map_or("requests".to_owned(), |stem| stem.to_string_lossy().into_owned());
            Ok((text, volley_convert::file_name(&stem), path.to_owned()))
        }
    }
}

/// Prints the one file, or writes every file into `--out`.
fn write_conversion(conversion: &Conversion, args: &ImportArgs) -> anyhow::Result<()> {
    let Some(out) = &args.out else {
        if conversion.files.len() == 1 && conversion.config.is_none() {
            let text = conversion.files.values().next().map(String::as_str).unwrap_or_default();
            crate::output::raw(text.as_bytes());
            return Ok(());
        }
        bail!(
            "the conversion gives {} file(s){}: pass --out DIR to write them",
            conversion.files.len(),
            if conversion.config.is_some() { " and a volley.jsonc" } else { "" }
        );
    };
    let mut writes: Vec<(PathBuf, &str)> =
        conversion.files.iter().map(|(path, text)| (out.join(path), text.as_str())).collect();
    if let Some(config) = &conversion.config {
        writes.push((out.join("volley.jsonc"), config));
    }
    if !args.force
        && let Some((existing, _)) = writes.iter().find(|(path, _)| path.exists())
    {
        bail!("`{}` exists: pass --force to replace it", existing.display());
    }
    for (path, text) in &writes {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("cannot create `{}`", parent.display()))?;
        }
        std::fs::write(path, text).with_context(|| format!("cannot write `{}`", path.display()))?;
        anstream::eprintln!("wrote {}", path.display());
    }
    Ok(())
}

pub(crate) fn export(args: &ExportArgs) -> anyhow::Result<Exit> {
    let ExportFormat::Curl = args.format;
    let shown = args.file.display().to_string();
    let text = std::fs::read_to_string(&args.file).with_context(|| format!("cannot read `{shown}`"))?;
    let path = std::path::absolute(&args.file).unwrap_or_else(|_| args.file.clone());
    let document = volley_syntax::parse(&text);
    let requests: Vec<_> = match (&args.name, args.index) {
        (Some(name), _) => document.request_named(name).into_iter().collect(),
        (None, Some(index)) => document.requests().nth(index).into_iter().collect(),
        (None, None) => document.requests().collect(),
    };
    if requests.is_empty() {
        let what = match (&args.name, args.index) {
            (Some(name), _) => format!("no request named `{name}` in `{shown}`"),
            (None, Some(index)) => format!("`{shown}` has no request at index {index} (--index counts from 0)"),
            (None, None) => format!("`{shown}` has no request"),
        };
        anstream::eprintln!("{}", render::plain(&what, None));
        return Ok(Exit::Usage);
    }
    let directory = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let probe = Client::new(ClientConfig::default());
    let found = volley_engine::stages::config_for(&probe, &directory)?;
    if let Some(profile) = &args.profile {
        // Once, as `volley run` checks it, rather than once per request.
        let known = volley_engine::stages::profile_for(&probe, &directory, profile).map(|_| ()).map_err(|error| {
            if found.is_some() { error.to_string() } else { format!("{error}: no configuration was found") }
        });
        if let Err(message) = known {
            anstream::eprintln!("{}", render::plain(&message, None));
            return Ok(Exit::Usage);
        }
    }
    let jar = CookieJar::chosen(None, found.as_ref())?;
    let client =
        Client::new(ClientConfig { profile: args.profile.clone(), cookie_jar: jar, ..ClientConfig::default() });
    let overrides: Map<String, Value> =
        args.vars.iter().map(|(name, value)| (name.clone(), Value::String(value.clone()))).collect();
    let options = RunOptions::default().overrides(overrides).show_secrets(args.reveal);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let mut exit = Exit::Success;
    for request in requests {
        let prepared = runtime.block_on(volley_engine::stages::prepare_request(
            &client,
            &document,
            request,
            Some(&path),
            &options,
        ));
        let mut prepared = match prepared {
            Ok(prepared) => prepared,
            Err(error) => {
                let mut placed = volley_engine::report::PlacedError::new(&error, request.line_span, &text);
                // A response of an earlier request: export sends nothing, so none is there.
                if let volley_engine::Error::Build(volley_engine::BuildError::RequestVariable { name, .. }) = &error {
                    let needed = volley_syntax::variable_path_segments(name).first().copied().unwrap_or(name);
                    placed.message =
                        format!("`{name}` is read from the response of `{needed}`, and `volley export` sends nothing");
                    placed.hint = Some(
                        "put the value in a variable for the export (`{{token}}` in the request, `--var token=…`), or \
                         copy the request as cURL in the editor once `{needed}` has run"
                            .replace("{needed}", needed),
                    );
                }
                let lines = volley_syntax::LineIndex::new(&text);
                anstream::eprintln!("{}", render::placed_error(&shown, &text, &lines, &placed));
                exit = exit.worst(Exit::Invalid);
                continue;
            }
        };
        // curl cannot make a gRPC call: its request is written as a grpcurl command.
        let redactor =
            if args.reveal { volley_engine::redact::Redactor::reveal_all() } else { prepared.redactor.clone() };
        if let Some((command, warnings)) = volley_engine::grpc::grpcurl(&prepared, &redactor) {
            if command.contains(volley_engine::redact::REDACTED) {
                anstream::eprintln!("warning: secrets are written `[REDACTED]`; pass --reveal to write them in clear");
            }
            for warning in warnings {
                anstream::eprintln!("warning: {warning}");
            }
            crate::output::raw(format!("{command}\n").as_bytes());
            continue;
        }
        prepared.add_jar_cookies();
        let curl = CurlRequest::from_request(&prepared, request, Some(&directory));
        let curl = if args.reveal { curl } else { curl.redacted(&prepared.redactor) };
        let command = to_curl(&curl);
        if command.command.contains(volley_engine::redact::REDACTED) {
            anstream::eprintln!("warning: secrets are written `[REDACTED]`; pass --reveal to write them in clear");
        }
        for warning in &command.warnings {
            anstream::eprintln!("warning: {warning}");
        }
        crate::output::raw(format!("{}\n", command.command).as_bytes());
    }
    Ok(exit)
}
