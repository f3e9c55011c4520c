//! The editor's part where a send needs a person: an OAuth 2.0 flow's authorization
//! request opened in the user's browser through the editor (`window/showDocument` with
//! `external: true`), the device code shown as a message (`window/showMessage`; an editor
//! that cannot show documents gets the URL as a message instead); httpyac's and REST
//! Client's prompts (`$input`, `$password`, `$pick`, `# @prompt`) asked with the
//! `volley/prompt` request of editors that said they answer it (`prompts: true` in the
//! initialization options: VS Code's input box and quick pick, Neovim's `vim.fn.input`),
//! else a `$pick` as a `window/showMessageRequest` with its choices as actions.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tower_lsp_server::Client;
use tower_lsp_server::ls_types::{MessageType, ShowDocumentParams, Uri};
use volley_engine::auth::{AuthPrompt, DeviceCode};
use volley_engine::prompt::{Prompt, PromptKind, ValuePrompt};

/// What the engine asks of the editor.
pub(crate) struct EditorPrompt {
    pub(crate) client: Client,
    /// `window.showDocument.support` of the client's capabilities.
    pub(crate) can_show_document: Arc<AtomicBool>,
    /// The editor answers `volley/prompt` (`prompts: true` in its initialization options).
    pub(crate) can_prompt: Arc<AtomicBool>,
}

/// `volley/prompt`: asks the editor for a value.
enum PromptRequest {}

impl tower_lsp_server::ls_types::request::Request for PromptRequest {
    type Params = serde_json::Value;
    type Result = Option<serde_json::Value>;
    const METHOD: &'static str = "volley/prompt";
}

impl EditorPrompt {
    /// Sends `message` to the editor without waiting for it.
    fn message(&self, kind: MessageType, message: String) {
        let client = self.client.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move { client.show_message(kind, message).await });
        }
    }
}

impl AuthPrompt for EditorPrompt {
    fn open_browser(&self, url: &str) -> bool {
        let (Ok(uri), true) = (url.parse::<Uri>(), self.can_show_document.load(Ordering::SeqCst)) else {
            self.message(MessageType::INFO, format!("Volley: open this URL in a browser to sign in: {url}"));
            return false;
        };
        let client = self.client.clone();
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return false };
        runtime.spawn(async move {
            let params = ShowDocumentParams { uri, external: Some(true), take_focus: Some(true), selection: None };
            let _ = client.show_document(params).await;
        });
        true
    }

    fn show_device_code(&self, code: &DeviceCode) {
        let complete = code.verification_uri_complete.as_deref().map(|url| format!(" ({url})")).unwrap_or_default();
        self.message(
            MessageType::INFO,
            format!(
                "Volley: to sign in, open {}{complete} and enter the code {} (valid {} s)",
                code.verification_uri,
                code.user_code,
                code.expires_in.as_secs()
            ),
        );
    }
}

impl ValuePrompt for EditorPrompt {
    fn ask(&self, prompt: &Prompt) -> volley_engine::transport::BoxFuture<'_, Option<String>> {
        let kind = match prompt.kind {
            PromptKind::Input => "input",
            PromptKind::Password => "password",
            PromptKind::Pick => "pick",
        };
        let params = serde_json::json!({
            "kind": kind,
            "label": prompt.label,
            "default": prompt.default,
            "choices": prompt.choices,
        });
        let choices = prompt.choices.clone();
        let label = prompt.label.clone();
        Box::pin(async move {
            if self.can_prompt.load(Ordering::SeqCst) {
                let answer = self.client.send_request::<PromptRequest>(params).await.ok().flatten()?;
                return answer.get("value").and_then(serde_json::Value::as_str).map(str::to_owned);
            }
            // Every editor shows a message with actions: enough for a choice.
            if choices.is_empty() {
                return None;
            }
            let actions = choices
                .iter()
                .map(|choice| tower_lsp_server::ls_types::MessageActionItem {
                    title: choice.clone(),
                    properties: std::collections::HashMap::default(),
                })
                .collect();
            let picked = self.client.show_message_request(MessageType::INFO, format!("Volley: {label}"), Some(actions));
            picked.await.ok().flatten().map(|item| item.title)
        })
    }
}
