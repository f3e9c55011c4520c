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
