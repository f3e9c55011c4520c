//! Values of command-line arguments that several commands take: `--var NAME=VALUE`,
//! and `--report FORMAT=PATH` (the formats a report is written in, and where it goes).

use std::path::PathBuf;

/// A format of `--report FORMAT=PATH`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Junit,
    Json,
    Tap,
    Html,
}

impl Format {
    const NAMES: &str = "junit, json, tap or html";

    fn of(name: &str) -> Option<Self> {
        match name {
            "junit" => Some(Self::Junit),
            "json" => Some(Self::Json),
            "tap" => Some(Self::Tap),
            "html" => Some(Self::Html),
            _ => None,
        }
    }
}

/// Creates the directories `path` goes in, as `volley import --out` creates its own.
pub(crate) fn create_parent(path: &std::path::Path) -> anyhow::Result<()> {
    if let Some(parent) = path.parent().filter(|parent| !parent.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|error| anyhow::anyhow!("cannot create the directory `{}`: {error}", parent.display()))?;
    }
    Ok(())
}

/// `junit=out.xml`: the format and the path of a `--report`.
pub(crate) fn parse_target(text: &str) -> Result<(Format, PathBuf), String> {
    let (format, path) = text
        .split_once('=')
        .ok_or_else(|| format!("expected FORMAT=PATH with FORMAT {}, got `{text}`", Format::NAMES))?;
    let format = Format::of(format).ok_or_else(|| format!("unknown report format `{format}` ({})", Format::NAMES))?;
    if path.is_empty() {
        return Err("the report needs a path: FORMAT=PATH, like junit=report.xml".to_owned());
    }
    Ok((format, PathBuf::from(path)))
}

/// `NAME=VALUE` of `--var` (and `--prompt`): the name trimmed, the value as written.
pub(crate) fn parse_var(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => Ok((name.trim().to_owned(), value.to_owned())),
        _ => Err(format!("expected NAME=VALUE, got `{text}`")),
    }
}
