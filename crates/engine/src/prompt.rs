//! Values a person types when a request runs: httpyac's `{{$input label}}`,
//! `{{$password label}}`, `{{$pick label $value: a, b}}` (and their `-askonce` forms,
//! asked once per client). The answer comes from a variable named as the label (the
//! CLI's `--prompt label=value`), else from the client's [`ValuePrompt`] (a terminal, an
//! editor); without one the request is refused, naming the prompt.

use std::collections::HashMap;

use parking_lot::Mutex;

use crate::transport::BoxFuture;

/// What kind of value a prompt asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptKind {
    /// Any text (`$input`).
    Input,
    /// A secret typed without being shown, and redacted wherever the run shows it
    /// (`$password`).
    Password,
    /// One of [`Prompt::choices`] (`$pick`).
    Pick,
}

/// One question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    pub kind: PromptKind,
    /// What is asked (`$input Your name` → `Your name`).
    pub label: String,
    /// The answer offered (`$value: …` of `$input`).
    pub default: Option<String>,
    /// The values to pick from (`$pick`).
    pub choices: Vec<String>,
}

/// Who answers prompts: a terminal, an editor. `None` when no one can (no terminal, the
/// question dismissed): the request is then refused.
pub trait ValuePrompt: Send + Sync {
    fn ask(&self, prompt: &Prompt) -> BoxFuture<'_, Option<String>>;
}

/// The answers of `-askonce` prompts, by label, for the client's life.
#[derive(Debug, Default)]
pub(crate) struct Answers(Mutex<HashMap<String, String>>);

impl Answers {
    pub(crate) fn get(&self, label: &str) -> Option<String> {
        self.0.lock().get(label).cloned()
    }

    pub(crate) fn keep(&self, label: &str, answer: &str) {
        self.0.lock().insert(label.to_owned(), answer.to_owned());
    }
}

/// Where a prompt's answer may come from beside a variable.
pub(crate) struct Asking<'a> {
    pub(crate) answers: &'a Answers,
    pub(crate) asker: Option<&'a std::sync::Arc<dyn ValuePrompt>>,
    /// The call, for errors.
    pub(crate) span: volley_syntax::Span,
}

/// The answer to the prompt of the resolver `name`: `given` (a variable named as its
/// label: `--prompt label=value`), an `-askonce` answer given before, else what the
/// asker is told; a pick must be one of its choices. Without an answer, why not.
pub(crate) async fn answer(
    name: &str,
    prompt: &Prompt,
    once: bool,
    given: Option<serde_json::Value>,
    asking: Asking<'_>,
) -> Result<String, crate::error::BuildError> {
    let Asking { answers, asker, span } = asking;
    let label = &prompt.label;
    let failed = |message: String| crate::error::BuildError::Resolver { name: name.to_owned(), message, span };
    let answer = match given {
        Some(serde_json::Value::String(text)) => Some(text),
        Some(value) => Some(value.to_string()),
        None if once => answers.get(label),
        None => None,
    };
    let answer = match (answer, asker) {
        (Some(answer), _) => answer,
        (None, Some(asker)) => asker
            .ask(prompt)
            .await
            .ok_or_else(|| failed(format!("`{label}` was not answered, so the request was not sent")))?,
        (None, None) => {
            return Err(failed(format!(
                "`{label}` asks for a value and no one can answer here: pass `--prompt '{label}=…'` (or a variable \
                 named `{label}`), or run in a terminal"
            )));
        }
    };
    if prompt.kind == PromptKind::Pick && !prompt.choices.is_empty() && !prompt.choices.contains(&answer) {
        return Err(failed(format!("`{answer}` is not one of {} (`{label}`)", prompt.choices.join(", "))));
    }
    if once {
        answers.keep(label, &answer);
    }
    Ok(answer)
}

/// REST Client's `# @prompt name [description]` lines of `request`: each name that
/// `defined` does not know is asked of `asker` (hidden when the name says secret). The
/// answers as variables, and those that are secrets; an unanswered one refuses the
/// request.
pub(crate) async fn ask_declared(
    request: &volley_syntax::Request,
    asker: Option<&std::sync::Arc<dyn ValuePrompt>>,
    defined: impl Fn(&str) -> bool,
) -> Result<(serde_json::Map<String, serde_json::Value>, Vec<String>), crate::error::BuildError> {
    let mut answers = serde_json::Map::new();
    let mut secrets = Vec::new();
    for (name, description) in request.prompts() {
        if defined(&name) {
            continue;
        }
        let secret = crate::redact::is_sensitive_variable(&name);
        let prompt = Prompt {
            kind: if secret { PromptKind::Password } else { PromptKind::Input },
            label: description.unwrap_or_else(|| name.clone()),
            default: None,
            choices: Vec::new(),
        };
        let answer = match asker {
            Some(asker) => asker.ask(&prompt).await,
            None => None,
        };
        let Some(answer) = answer else {
            return Err(crate::error::BuildError::Interpolation {
                message: format!(
                    "`# @prompt {name}` asks for `{name}` and no one can answer here: pass `--prompt '{name}=…'` (or \
                     a variable `{name}`), or run in a terminal"
                ),
                span: request.line_span,
            });
        };
        if secret {
            secrets.push(answer.clone());
        }
        answers.insert(name, serde_json::Value::String(answer));
    }
    Ok((answers, secrets))
}

/// Whether the resolver `name` (without `$`) is a prompt: `input`, `password`, `pick`,
/// REST Client's `prompt`, and their `-askonce` forms.
#[must_use]
pub fn is_prompt(name: &str) -> bool {
    parse(name, "").is_some()
}

/// The prompt a resolver call stands for: `name` (`input`, `password-askonce`, …) and
/// its arguments joined (`Your name $value: anna`); `None` for other resolvers.
pub(crate) fn parse(name: &str, text: &str) -> Option<(Prompt, bool)> {
    let (base, once) = match name.strip_suffix("-askonce") {
        Some(base) => (base, true),
        None => (name, false),
    };
    let kind = match base {
        "input" | "prompt" => PromptKind::Input,
        "password" => PromptKind::Password,
        "pick" => PromptKind::Pick,
        _ => return None,
    };
    let (label, value) = match text.split_once("$value:") {
        Some((label, value)) => (label.trim(), Some(value.trim())),
        None => (text.trim(), None),
    };
    let choices = match (kind, value) {
        (PromptKind::Pick, Some(value)) => choices(value),
        _ => Vec::new(),
    };
    let default =
        if kind == PromptKind::Pick { None } else { value.filter(|value| !value.is_empty()).map(str::to_owned) };
    Some((Prompt { kind, label: label.to_owned(), default, choices }, once))
}

/// `a, b, c` or a JSON array of strings (`["a", "b"]`).
fn choices(value: &str) -> Vec<String> {
    if let Ok(serde_json::Value::Array(items)) = serde_json::from_str::<serde_json::Value>(value) {
        return items.iter().map(|item| item.as_str().map_or_else(|| item.to_string(), str::to_owned)).collect();
    }
    value
        .split(',')
        .map(|choice| choice.trim().trim_matches(['"', '\'']).to_owned())
        .filter(|c| !c.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_are_read_as_httpyac_writes_them() {
        let (input, once) = parse("input", "Your name $value: anna").unwrap();
        assert_eq!(
            (input.kind, input.label.as_str(), input.default.as_deref(), once),
            (PromptKind::Input, "Your name", Some("anna"), false)
        );
        let (password, once) = parse("password-askonce", "token").unwrap();
        assert_eq!((password.kind, password.label.as_str(), once), (PromptKind::Password, "token", true));
        let (pick, _) = parse("pick", "environment $value: dev, prod").unwrap();
        assert_eq!(pick.choices, ["dev", "prod"]);
        let (pick, _) = parse("pick", r#"colour $value: ["red", "green"]"#).unwrap();
        assert_eq!(pick.choices, ["red", "green"]);
        assert!(parse("uuid", "").is_none());
    }
}
