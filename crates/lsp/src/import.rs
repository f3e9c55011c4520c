//! `volley.import`: a cURL command, HAR capture, Postman collection, Insomnia export or
//! OpenAPI description converted by the converters (`volley_convert`, the same code as
//! `volley import`), and the files written into a directory of the workspace, or answered
//! as text for the editor to open.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use volley_convert::Format;

/// The arguments of `volley.import`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ImportArguments {
    /// `curl`, `har`, `postman`, `insomnia` or `openapi`.
    pub(crate) format: String,
    /// The file to convert (a path or a `file:` URI); or give `text`.
    #[serde(default)]
    pub(crate) source: Option<String>,
    /// The text to convert (a cURL command, a file's content), instead of `source`.
    #[serde(default)]
    pub(crate) text: Option<String>,
    /// Where to write the files (a path or a `file:` URI); without it nothing is written.
    #[serde(default)]
    pub(crate) directory: Option<String>,
    /// Replace files that exist in `directory`.
    #[serde(default)]
    pub(crate) overwrite: bool,
}

/// The answer of `volley.import`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Imported {
    /// The files: the path relative to `directory` and the text.
    pub(crate) files: Vec<ImportedFile>,
    /// The paths written (absolute), when `directory` was given.
    pub(crate) written: Vec<PathBuf>,
    /// What was not converted.
    pub(crate) unconverted: Vec<ImportNote>,
}

/// One file of an import.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ImportedFile {
    pub(crate) path: String,
    pub(crate) text: String,
}

/// One thing not converted, and where it was in the source.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ImportNote {
    pub(crate) location: String,
    pub(crate) reason: String,
}

/// Converts, and writes when asked; the message of what went wrong otherwise.
pub(crate) fn import(arguments: &ImportArguments) -> Result<Imported, String> {
    let format = Format::from_name(&arguments.format).ok_or_else(|| {
        let names: Vec<&str> = Format::ALL.iter().map(|format| format.name()).collect();
        format!("unknown format `{}`: one of {}", arguments.format, names.join(", "))
    })?;
    let (text, stem) = match (&arguments.text, &arguments.source) {
        (Some(text), _) => (text.clone(), "request".to_owned()),
        (None, Some(source)) => {
            let path = local_path(source);
            let text =
                std::fs::read_to_string(&path).map_err(|error| format!("cannot read `{}`: {error}", path.display()))?;
            let stem = path
                .file_stem()
                .map_or_else(|| "requests".to_owned(), |stem| volley_convert::file_name(&stem.to_string_lossy()));
            (text, stem)
        }
        (None, None) => return Err("give `source` (a file) or `text`".to_owned()),
    };
    let conversion = volley_convert::import(format, &text, &stem).map_err(|error| error.message)?;
    let mut files: Vec<ImportedFile> =
        conversion.files.into_iter().map(|(path, text)| ImportedFile { path, text }).collect();
    if let Some(config) = conversion.config {
        files.push(ImportedFile { path: "volley.jsonc".to_owned(), text: config });
    }
    let unconverted = conversion
        .unconverted
        .into_iter()
        .map(|entry| ImportNote { location: entry.location, reason: entry.reason })
        .collect();
    let mut written = Vec::new();
    if let Some(directory) = &arguments.directory {
        let directory = local_path(directory);
        let targets: Vec<PathBuf> = files.iter().map(|file| directory.join(&file.path)).collect();
        if !arguments.overwrite
            && let Some(existing) = targets.iter().find(|path| path.exists())
        {
            return Err(format!(
                "`{}` exists: nothing was written (pass `overwrite: true` to replace it)",
                existing.display()
            ));
        }
        std::fs::create_dir_all(&directory)
            .map_err(|error| format!("cannot create `{}`: {error}", directory.display()))?;
        for (file, target) in files.iter().zip(targets) {
            std::fs::write(&target, &file.text)
                .map_err(|error| format!("cannot write `{}`: {error}", target.display()))?;
            written.push(target);
        }
    }
    Ok(Imported { files, written, unconverted })
}

/// A path, or the path of a `file:` URI.
fn local_path(text: &str) -> PathBuf {
    match url::Url::parse(text) {
        Ok(url) if url.scheme() == "file" => url.to_file_path().unwrap_or_else(|()| PathBuf::from(text)),
        _ => Path::new(text).to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arguments(format: &str, text: &str, directory: Option<&Path>) -> ImportArguments {
        ImportArguments {
            format: format.to_owned(),
            source: None,
            text: Some(text.to_owned()),
            directory: directory.map(|directory| directory.display().to_string()),
            overwrite: false,
        }
    }

    #[test]
    fn converts_and_writes_without_replacing() {
        let imported = import(&arguments("curl", "curl -k https://h/x", None)).unwrap();
        assert_eq!(imported.files.len(), 1);
        assert_eq!(imported.files[0].path, "request.http");
        assert!(imported.files[0].text.contains("GET https://h/x"), "{:?}", imported.files);
        assert!(imported.written.is_empty());
        assert_eq!(imported.unconverted.len(), 1);

        let directory = std::env::temp_dir().join(format!("volley-lsp-import-{}", std::process::id()));
        let har = r#"{"log": {"entries": [{"request": {"method": "GET", "url": "https://h/a", "headers": []}}]}}"#;
        let written = import(&arguments("har", har, Some(&directory))).unwrap();
        assert_eq!(written.written, [directory.join("request.http")]);
        assert!(std::fs::read_to_string(directory.join("request.http")).unwrap().contains("GET https://h/a"));
        let again = import(&arguments("har", har, Some(&directory))).unwrap_err();
        assert!(again.contains("exists"), "{again}");
        std::fs::remove_dir_all(&directory).ok();

        assert!(import(&arguments("yaml", "", None)).unwrap_err().contains("unknown format"));
        assert!(import(&arguments("postman", "{}", None)).is_err());
    }
}
