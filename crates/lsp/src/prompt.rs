//! The editor's part in an OAuth 2.0 flow that needs a person: the authorization request
//! opened in the user's browser through the editor (`window/showDocument` with
//! `external: true`), the device code shown as a message (`window/showMessage`). An
//! editor that cannot show documents gets the URL as a message instead.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tower_lsp_server::Client;
use tower_lsp_server::ls_types::{MessageType, ShowDocumentParams, Uri};
use volley_engine::auth::{AuthPrompt, DeviceCode};

/// What the engine asks of the editor.
pub(crate) struct EditorPrompt {
    pub(crate) client: Client,
    /// `window.showDocument.support` of the client's capabilities.
    pub(crate) can_show_document: Arc<AtomicBool>,
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
