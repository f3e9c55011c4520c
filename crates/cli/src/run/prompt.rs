//! httpyac's prompts asked in the terminal (stderr): `$input` as a line (its
//! `$value:` offered), `$password` hidden, `$pick` from a list.

use volley_engine::prompt::{Prompt, PromptKind, ValuePrompt};
use volley_engine::transport::BoxFuture;

/// Asks on the terminal; only made when stdin is one.
pub(crate) struct TerminalPrompt;

impl ValuePrompt for TerminalPrompt {
    fn ask(&self, prompt: &Prompt) -> BoxFuture<'_, Option<String>> {
        let prompt = prompt.clone();
        // dialoguer reads the terminal with blocking calls.
        Box::pin(async move { tokio::task::spawn_blocking(move || ask(&prompt)).await.ok().flatten() })
    }
}

fn ask(prompt: &Prompt) -> Option<String> {
    let theme = dialoguer::theme::SimpleTheme;
    match prompt.kind {
        PromptKind::Input => {
            let mut input = dialoguer::Input::<String>::with_theme(&theme).with_prompt(&prompt.label).allow_empty(true);
            if let Some(default) = &prompt.default {
                input = input.default(default.clone());
            }
            input.interact_text().ok()
        }
        PromptKind::Password => dialoguer::Password::with_theme(&theme)
            .with_prompt(&prompt.label)
            .allow_empty_password(true)
            .interact()
            .ok(),
        PromptKind::Pick => {
            let chosen = dialoguer::Select::with_theme(&theme)
                .with_prompt(&prompt.label)
                .items(&prompt.choices)
                .default(0)
                .interact();
            chosen.ok().and_then(|index| prompt.choices.get(index).cloned())
        }
    }
}
