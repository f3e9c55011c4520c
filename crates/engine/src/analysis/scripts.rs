//! The variables scripts may set (`client.global.set("token", …)`,
//! `request.variables.set("ts", …)`): defined for the analysis, though no file or
//! configuration declares them. Read from the text, never by running it: a script that
//! sets a name the text does not spell out (`client.global.set(name, …)`, a setter under
//! another name) makes every name possibly defined.

use std::collections::BTreeSet;
use std::path::Path;

use volley_syntax::Document;

use crate::io::Io;

/// What the scripts of some documents may set.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct ScriptVariables {
    /// The names set with a literal name.
    pub names: BTreeSet<String>,
    /// Some script sets names the text does not show: any name may be set.
    pub unknown: bool,
    /// Script files (`< ./pre.js`, `> ./check.js`) not read yet, as written.
    pub files: BTreeSet<String>,
}

impl ScriptVariables {
    /// What the scripts in place of `document` set, and its script files (to read with
    /// [`read_files`](Self::read_files)).
    #[must_use]
    pub fn of_document(document: &Document) -> Self {
        let mut found = Self::default();
        for script in document.global_scripts() {
            if let Some(code) = &script.code {
                found.scan(&code.value);
            }
        }
        for request in document.requests() {
            for script in &request.scripts {
                if let Some(code) = &script.code {
                    found.scan(&code.value);
                }
                if let Some(path) = &script.path {
                    found.files.insert(path.value.trim().to_owned());
                }
            }
        }
        found
    }

    /// Reads and scans the script files, relative to `directory`; a file that cannot be
    /// read sets nothing (the analysis reports it as missing).
    pub fn read_files(&mut self, directory: &Path, io: &dyn Io) {
        for relative in std::mem::take(&mut self.files) {
            if let Ok(bytes) = io.read(&super::resolve(directory, &relative)) {
                self.scan(&String::from_utf8_lossy(&bytes));
            }
        }
    }

    /// Adds what `other` found.
    pub fn extend(&mut self, other: &ScriptVariables) {
        self.names.extend(other.names.iter().cloned());
        self.unknown |= other.unknown;
        self.files.extend(other.files.iter().cloned());
    }

    /// Whether `name` (a variable's first segment) may be set by a script.
    #[must_use]
    pub fn may_set(&self, name: &str) -> bool {
        self.unknown || self.names.contains(name)
    }

    /// Finds the setters in one script's code: the JetBrains API's, and httpyac's
    /// `exports.name = …` (`exports[…]` names one the text does not spell out).
    pub fn scan(&mut self, code: &str) {
        let mut from = 0;
        while let Some(found) = code[from..].find("exports") {
            let at = from + found;
            from = at + "exports".len();
            let word = !code[..at]
                .ends_with(|character: char| character.is_alphanumeric() || matches!(character, '_' | '$' | '.'));
            let rest = code[from..].trim_start();
            if !word {
                continue;
            }
            if let Some(member) = rest.strip_prefix('.') {
                let name: String = member
                    .chars()
                    .take_while(|character| character.is_alphanumeric() || matches!(character, '_' | '$'))
                    .collect();
                if !name.is_empty() {
                    self.names.insert(name);
                }
            } else if rest.starts_with('[') {
                self.unknown = true;
            }
        }
        self.scan_setters(code);
    }

    fn scan_setters(&mut self, code: &str) {
        let mut from = 0;
        while let Some(found) = code[from..].find(".set(") {
            let at = from + found;
            from = at + 5;
            let receiver = code[..at].trim_end();
            let known = ["client.global", "request.variables"].iter().any(|setter| {
                receiver.strip_suffix(setter).is_some_and(|before| {
                    !before.ends_with(|character: char| character.is_alphanumeric() || matches!(character, '_' | '$'))
                })
            });
            match literal_argument(&code[from..]) {
                Some(name) if known => {
                    self.names.insert(name);
                }
                // Another object's `set` (a `Map`), or a name computed at run time.
                _ => self.unknown = true,
            }
        }
    }
}

/// The string literal that starts `arguments` (after spaces), when the first argument
/// is one: `'token'`, `"token"`, or a template literal without `${`.
fn literal_argument(arguments: &str) -> Option<String> {
    let arguments = arguments.trim_start();
    let quote = arguments.chars().next().filter(|quote| matches!(quote, '\'' | '"' | '`'))?;
    let rest = &arguments[1..];
    let end = rest.find(quote)?;
    let name = &rest[..end];
    let after = rest[end + 1..].trim_start();
    (!name.contains(['\\', '\n']) && !name.contains("${") && after.starts_with([',', ')'])).then(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scanned(code: &str) -> ScriptVariables {
        let mut found = ScriptVariables::default();
        found.scan(code);
        found
    }

    #[test]
    fn literal_names_are_read_and_the_rest_is_unknown() {
        let found = scanned("client.global.set('token', response.body.token);\nrequest.variables.set(\"ts\", 1)");
        assert_eq!(found.names.iter().map(String::as_str).collect::<Vec<_>>(), ["token", "ts"]);
        assert!(!found.unknown);
        assert!(scanned("client.global.set(name, 1)").unknown);
        assert!(scanned("const seen = new Map(); seen.set('a', 1);").unknown);
        assert!(scanned("client.global.set(`t-${i}`, 1)").unknown);
        assert!(!scanned("client.global.get('token'); client.log('x')").unknown);
        assert!(scanned("myclient.global.set('x', 1)").unknown);
        assert_eq!(scanned("client.global.set( `plain` , 2)").names.len(), 1);
    }
}
