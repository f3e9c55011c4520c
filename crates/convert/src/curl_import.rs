//! `volley import curl`: a cURL command read by `crate::curl::parse_curl` and written as
//! one `.http` file. The parser's notes (options not converted, differences) are both
//! `# curl:` comments in the request and [`Unconverted`] entries.

use super::{Conversion, ConvertError, Unconverted};
use crate::curl::parse_curl;

pub(super) fn import(source: &str, stem: &str) -> Result<Conversion, ConvertError> {
    // A command copied with its prompt (`$ curl …`) is read without it.
    let command = source.trim();
    let command = command.strip_prefix("$ ").unwrap_or(command);
    let parsed = parse_curl(command).map_err(|error| ConvertError::new(error.message))?;
    let mut conversion = Conversion::default();
    conversion.files.insert(format!("{stem}.http"), parsed.to_http());
    conversion.unconverted = parsed
        .notes
        .iter()
        .map(|note| {
            // A note that only names an option says nothing more: say what happened to it.
            let reason = if note.contains("`: ") { note.clone() } else { format!("{note}: not converted") };
            Unconverted { location: "curl".to_owned(), reason }
        })
        .collect();
    Ok(conversion)
}
