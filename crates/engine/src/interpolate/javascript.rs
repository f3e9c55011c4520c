//! httpyac's JavaScript in `{{ }}` (`{{ Date.now() }}`, `{{name.toUpperCase()}}`, and
//! `{{who.length}}` on a plain value): the names it reads looked up as variables, then
//! the expression evaluated by what the scope gives ([`Expressions`], the client's
//! script sandbox).

use serde_json::{Map, Value};
use volley_syntax::{Span, Spanned};

use super::{Renderer, text_of};
use crate::error::BuildError;

/// What evaluates httpyac's JavaScript expressions: the client's script sandbox. A
/// trait so that interpolation, below the client, does not name it.
pub(crate) trait Expressions: Sync {
    /// Evaluates `code` (`{{ Date.now() }}`) with `variables` (the names it uses that
    /// have values) as JavaScript variables: its value, or the error's message.
    fn evaluate_expression(
        &self,
        code: &str,
        variables: Map<String, Value>,
        settings: crate::config::ScriptSettings,
    ) -> Result<Value, String>;
}

impl Renderer<'_> {
    /// Whether the dotted `path`'s first name is a variable whose value is not an object
    /// (a string, a number): its other segments are then JavaScript properties.
    pub(super) async fn has_plain_root(&mut self, path: &str) -> bool {
        let segments = volley_syntax::variable_path_segments(path);
        let [root, _, ..] = segments.as_slice() else { return false };
        let root = Spanned::new((*root).to_owned(), Span::default());
        self.variable(&root).await.is_ok_and(|value| !value.is_object() && !value.is_array())
    }

    /// httpyac's `{{ expression }}`: evaluated in the scripts' sandbox, the variables it
    /// names (that have values) as JavaScript variables; `null` and `undefined` are empty.
    pub(super) async fn javascript(&mut self, code: &Spanned<String>) -> Result<String, BuildError> {
        if self.scope.ahead {
            return Err(self.decline(code.span));
        }
        let Some((expressions, settings)) = self.scope.javascript else {
            return Err(BuildError::Interpolation {
                message: "JavaScript expressions in `{{ }}` are not evaluated here".to_owned(),
                span: code.span,
            });
        };
        let mut variables = Map::new();
        for name in identifiers(&code.value) {
            match self.variable(&Spanned::new(name.clone(), code.span)).await {
                Ok(value) => {
                    variables.insert(name, value);
                }
                Err(BuildError::UndefinedVariable { .. }) => {}
                Err(error) => return Err(error),
            }
        }
        let value = expressions.evaluate_expression(&code.value, variables, settings).map_err(|message| {
            BuildError::Script {
                message: format!("`{{{{ {} }}}}` failed: {message}", code.value),
                stack: String::new(),
                span: code.span,
            }
        })?;
        Ok(match value {
            Value::Null => String::new(),
            value => text_of(&value),
        })
    }
}

/// The names a JavaScript expression may read as variables: its identifiers that are not
/// a property (`.name`), a keyword, or inside a string literal; each once.
fn identifiers(code: &str) -> Vec<String> {
    const KEYWORDS: &[&str] = &[
        "true",
        "false",
        "null",
        "undefined",
        "new",
        "typeof",
        "instanceof",
        "in",
        "of",
        "void",
        "this",
        "function",
        "return",
        "var",
        "let",
        "const",
        "if",
        "else",
        "await",
        "async",
        "delete",
        "NaN",
        "Infinity",
    ];
    let mut found: Vec<String> = Vec::new();
    let mut chars = code.char_indices().peekable();
    let mut previous = ' ';
    while let Some((at, character)) = chars.next() {
        if matches!(character, '\'' | '"' | '`') {
            let mut escaped = false;
            for (_, inner) in chars.by_ref() {
                if escaped {
                    escaped = false;
                } else if inner == '\\' {
                    escaped = true;
                } else if inner == character {
                    break;
                }
            }
            previous = character;
            continue;
        }
        if character.is_alphabetic() || character == '_' || character == '$' {
            let mut end = at + character.len_utf8();
            while let Some(&(next_at, next)) = chars.peek() {
                if next.is_alphanumeric() || next == '_' || next == '$' {
                    end = next_at + next.len_utf8();
                    chars.next();
                } else {
                    break;
                }
            }
            let word = &code[at..end];
            if previous != '.' && !KEYWORDS.contains(&word) && !found.iter().any(|seen| seen == word) {
                found.push(word.to_owned());
            }
            previous = 'a';
            continue;
        }
        if !character.is_whitespace() {
            previous = character;
        }
    }
    found
}

#[cfg(test)]
mod tests {
    #[test]
    fn identifiers_leave_out_properties_keywords_and_strings() {
        assert_eq!(super::identifiers("a.b + typeof c ? 'd e' : f(\"g\", a)"), ["a", "c", "f"]);
    }
}
