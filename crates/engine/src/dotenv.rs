//! `.env` files: the `KEY=value` variables of the `.http` file's directory and of each
//! directory above it up to the project's root, the nearest file winning.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::ConfigError;
use crate::io::Io;

/// The name of the files read.
pub const DOTENV_FILE: &str = ".env";

/// The variables of the `.env` files that apply to one directory.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct DotEnv {
    /// Every variable, as a string; a nearer file's value wins over a farther one's.
    pub(crate) variables: Map<String, Value>,
    /// Every `.env` path looked at, nearest first, whether it exists or not: a file that
    /// appears, changes or goes away makes a cached `DotEnv` stale.
    pub(crate) candidates: Vec<PathBuf>,
}

/// httpyac's folder of `.env` files in a directory.
pub(crate) const ENV_FOLDER: &str = "env";

/// The files that may hold variables for `directories` (nearest first) with `profile`,
/// nearest first and, within a directory, the most specific first: as httpyac reads
/// them, `env/.env.<profile>`, `env/<profile>.env`, `env/.env`, then `.env.<profile>`,
/// `<profile>.env` and `.env`.
pub(crate) fn candidates(directories: &[PathBuf], profile: Option<&str>) -> Vec<PathBuf> {
    let mut names = Vec::new();
    if let Some(profile) = profile {
        names.push(format!(".env.{profile}"));
        names.push(format!("{profile}.env"));
    }
    names.push(DOTENV_FILE.to_owned());
    let mut found = Vec::new();
    for directory in directories {
        let folder = directory.join(ENV_FOLDER);
        found.extend(names.iter().map(|name| folder.join(name)));
        found.extend(names.iter().map(|name| directory.join(name)));
    }
    found
}

/// The profiles httpyac's `.env` files name in `directories` and their `env` folders:
/// `dev` for `dev.env` or `.env.dev`.
pub(crate) fn profiles(io: &dyn Io, directories: &[PathBuf]) -> Vec<String> {
    let mut found: Vec<String> = directories
        .iter()
        .flat_map(|directory| [directory.join(ENV_FOLDER), directory.clone()])
        .flat_map(|folder| io.file_names(&folder))
        .filter_map(|name| {
            let profile = name.strip_prefix(".env.").or_else(|| name.strip_suffix(".env"))?;
            (!profile.is_empty() && !profile.starts_with('.')).then(|| profile.to_owned())
        })
        .collect();
    found.sort();
    found.dedup();
    found
}

impl DotEnv {
    /// Reads the `.env` files of `directories` (nearest first) and, with a profile, its
    /// own files ([`candidates`]); missing ones are skipped.
    pub(crate) fn read(io: &dyn Io, directories: &[PathBuf], profile: Option<&str>) -> Result<DotEnv, ConfigError> {
        let candidates = candidates(directories, profile);
        let mut variables = Map::new();
        // Farthest and least specific first, so that nearer, more specific files overwrite.
        for path in candidates.iter().rev() {
            if !io.is_file(path) {
                continue;
            }
            let bytes = io.read(path).map_err(|source| ConfigError::Read { path: path.clone(), source })?;
            let text = String::from_utf8(bytes).map_err(|error| ConfigError::Syntax {
                path: path.clone(),
                line: 1,
                column: 1,
                message: format!("not UTF-8 text (invalid byte at offset {})", error.utf8_error().valid_up_to()),
            })?;
            for (key, value) in parse(&text, path)? {
                variables.insert(key, Value::String(value));
            }
        }
        Ok(DotEnv { variables, candidates })
    }

    /// The value of `key`, if a file has it.
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.variables.get(key).and_then(Value::as_str)
    }

    /// The paths looked at, nearest first, for messages.
    pub(crate) fn describe_candidates(&self) -> String {
        let shown: Vec<String> = self.candidates.iter().map(|path| path.display().to_string()).collect();
        shown.join(", ")
    }
}

/// The directories whose `.env` files apply to a `.http` file in `directory`, nearest
/// first: `directory` and each one above it up to `root` included. When `root` is not
/// `directory` or above it, `directory` alone.
pub(crate) fn directories(directory: &Path, root: &Path) -> Vec<PathBuf> {
    let directory = crate::io::normalize(directory);
    let root = crate::io::normalize(root);
    if !directory.starts_with(&root) {
        return vec![directory];
    }
    let mut found = Vec::new();
    let mut current = Some(directory.as_path());
    while let Some(path) = current {
        found.push(path.to_path_buf());
        if path == root {
            break;
        }
        current = path.parent();
    }
    found
}

/// Parses `.env` text into `(key, value)` pairs, in file order (a later pair of the same
/// key wins). Understood: `KEY=value`, an `export ` prefix, `#` comment lines, blank
/// lines, values in double quotes (`\n`, `\r`, `\t`, `\"` and `\\` escapes; they may run
/// over several lines) or single quotes (taken as written, over several lines too), and
/// ` #` comments after unquoted values. Values are not expanded: `$OTHER` stays as written.
pub(crate) fn parse(text: &str, path: &Path) -> Result<Vec<(String, String)>, ConfigError> {
    let error = |line: usize, column: usize, message: &str| ConfigError::Syntax {
        path: path.to_path_buf(),
        line,
        column,
        message: message.to_owned(),
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines: Vec<&str> = text.lines().collect();
    let mut pairs = Vec::new();
    let mut index = 0;
    while index < lines.len() {
        let number = index + 1;
        let line = lines[index].trim();
        index += 1;
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").map_or(line, str::trim_start);
        let Some((key, value)) = line.split_once('=') else {
            return Err(error(number, 1, "expected `KEY=value`"));
        };
        let key = key.trim();
        if key.is_empty() || key.contains(char::is_whitespace) {
            return Err(error(number, 1, "expected `KEY=value` with a key of one word"));
        }
        let value = value.trim_start();
        let value = if let Some(quote @ ('"' | '\'')) = value.chars().next() {
            // The quoted text may go on over the following lines.
            let mut raw = value[1..].to_owned();
            let closing = loop {
                if let Some(end) = closing_quote(&raw, quote) {
                    break end;
                }
                let Some(next) = lines.get(index) else {
                    return Err(error(number, 1, &format!("the value's `{quote}` is never closed")));
                };
                raw.push('\n');
                raw.push_str(next);
                index += 1;
            };
            let rest = raw[closing + 1..].trim();
            if !rest.is_empty() && !rest.starts_with('#') {
                return Err(error(number, 1, "unexpected text after the closing quote"));
            }
            let inner = &raw[..closing];
            if quote == '"' { unescape(inner) } else { inner.to_owned() }
        } else {
            let end = value.find(" #").or_else(|| value.find("\t#")).unwrap_or(value.len());
            value[..end].trim_end().to_owned()
        };
        pairs.push((key.to_owned(), value));
    }
    Ok(pairs)
}

/// Where the quote that closes a value opened by `quote` is in `raw` (escaped double
/// quotes do not count).
fn closing_quote(raw: &str, quote: char) -> Option<usize> {
    let mut escaped = false;
    for (at, character) in raw.char_indices() {
        if escaped {
            escaped = false;
        } else if character == '\\' && quote == '"' {
            escaped = true;
        } else if character == quote {
            return Some(at);
        }
    }
    None
}

fn unescape(inner: &str) -> String {
    let mut out = String::with_capacity(inner.len());
    let mut characters = inner.chars();
    while let Some(character) = characters.next() {
        if character != '\\' {
            out.push(character);
            continue;
        }
        match characters.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some(other @ ('"' | '\\')) => out.push(other),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::MemoryFs;

    fn pairs(text: &str) -> Vec<(String, String)> {
        parse(text, Path::new(".env")).unwrap()
    }

    fn value(text: &str, key: &str) -> String {
        pairs(text).into_iter().rev().find(|(found, _)| found == key).map(|(_, value)| value).unwrap()
    }

    #[test]
    fn parses_keys_values_comments_exports_and_quotes() {
        let text = "# comment\n\nA=1\nexport B = two words\nC=\"line\\nnext \\\"q\\\" \\\\\"\nD='single # kept \\n'\n\
                    E=x # trailing\nF=\nG=\"quoted\" # comment\nH=$A ${B}\nA=again\n";
        assert_eq!(value(text, "A"), "again", "a later line wins");
        assert_eq!(value(text, "B"), "two words");
        assert_eq!(value(text, "C"), "line\nnext \"q\" \\");
        assert_eq!(value(text, "D"), "single # kept \\n");
        assert_eq!(value(text, "E"), "x");
        assert_eq!(value(text, "F"), "");
        assert_eq!(value(text, "G"), "quoted");
        assert_eq!(value(text, "H"), "$A ${B}", "no expansion");
    }

    #[test]
    fn quoted_values_may_run_over_lines() {
        let text = "KEY=\"-----BEGIN-----\nabc\n-----END-----\"\nNEXT='a\nb'\nLAST=1\n";
        assert_eq!(value(text, "KEY"), "-----BEGIN-----\nabc\n-----END-----");
        assert_eq!(value(text, "NEXT"), "a\nb");
        assert_eq!(value(text, "LAST"), "1");
    }

    #[test]
    fn reports_lines_that_are_not_assignments() {
        let error = |text: &str| parse(text, Path::new("/p/.env")).unwrap_err().to_string();
        assert_eq!(error("A=1\noops\n"), "`/p/.env`:2:1: expected `KEY=value`");
        assert!(error("A=\"open\nB=2\n").contains(":1:1: the value's `\"` is never closed"));
        assert!(error("two words=1\n").contains("a key of one word"));
        assert!(error("A=\"x\" y\n").contains("after the closing quote"));
    }

    #[test]
    fn walks_from_the_directory_up_to_the_root_and_nearer_files_win() {
        assert_eq!(
            directories(Path::new("/p/a/b"), Path::new("/p")),
            [PathBuf::from("/p/a/b"), PathBuf::from("/p/a"), PathBuf::from("/p")]
        );
        assert_eq!(directories(Path::new("/p"), Path::new("/p")), [PathBuf::from("/p")]);
        assert_eq!(directories(Path::new("/q/a"), Path::new("/p")), [PathBuf::from("/q/a")], "not above it");

        let files = MemoryFs::new();
        files.insert("/p/.env", "SHARED=root\nROOT_ONLY=r\n");
        files.insert("/p/a/b/.env", "SHARED=near\n");
        files.insert("/.env", "OUTSIDE=never read\n");
        let dotenv = DotEnv::read(&files, &directories(Path::new("/p/a/b"), Path::new("/p")), None).unwrap();
        assert_eq!(dotenv.get("SHARED"), Some("near"));
        assert_eq!(dotenv.get("ROOT_ONLY"), Some("r"));
        assert_eq!(dotenv.get("OUTSIDE"), None);
        // Each directory's `.env` and its `env/.env`.
        assert_eq!(dotenv.candidates.len(), 6);
    }

    #[test]
    fn a_profiles_own_files_win_in_httpyacs_order() {
        let files = MemoryFs::new();
        files.insert(
            "/p/.env",
            "A=root
B=root
C=root
D=root
",
        );
        files.insert(
            "/p/env/dev.env",
            "B=env folder
",
        );
        files.insert(
            "/p/api/.env.dev",
            "C=near
",
        );
        files.insert(
            "/p/api/env/.env",
            "D=near env folder
",
        );
        files.insert(
            "/p/prod.env",
            "A=prod
",
        );
        let directories = directories(Path::new("/p/api"), Path::new("/p"));
        let dev = DotEnv::read(&files, &directories, Some("dev")).unwrap();
        assert_eq!(
            [dev.get("A"), dev.get("B"), dev.get("C"), dev.get("D")],
            [Some("root"), Some("env folder"), Some("near"), Some("near env folder")]
        );
        let none = DotEnv::read(&files, &directories, None).unwrap();
        assert_eq!([none.get("B"), none.get("C")], [Some("root"), Some("root")], "no profile: `.env` files only");
        assert_eq!(profiles(&files, &directories), ["dev", "prod"]);
    }
}
