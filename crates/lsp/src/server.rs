//! The `LanguageServer` implementation: the one place where every handler is registered
//! (`initialize` announces them, the trait methods below answer them).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{
    CompletionOptions, CompletionParams, CompletionResponse, DidChangeTextDocumentParams, DidCloseTextDocumentParams,
    DidOpenTextDocumentParams, DidSaveTextDocumentParams, DocumentSymbolParams, DocumentSymbolResponse, FoldingRange,
    FoldingRangeParams, FoldingRangeProviderCapability, Hover, HoverParams, HoverProviderCapability, InitializeParams,
    InitializeResult, InitializedParams, MessageType, OneOf, SaveOptions, ServerCapabilities, ServerInfo,
    TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions, TextDocumentSyncSaveOptions,
};
use tower_lsp_server::{Client, LanguageServer};

use crate::documents::Documents;
use crate::{completion, convert, diagnostics, hover};

/// The state of the language server. Cheap to clone: handlers and background tasks
/// share the same documents and engine.
#[derive(Debug, Clone)]
pub struct Backend {
    client: Client,
    documents: Documents,
    engine: volley_engine::Client,
    /// Set by `shutdown`: the process exits with 0 only after it (LSP's `exit` rule).
    shut_down: Arc<AtomicBool>,
}

impl Backend {
    pub(crate) fn new(client: Client) -> Self {
        let files = volley_engine::MemoryFs::over(volley_engine::RealFs);
        let config =
            volley_engine::ClientConfig { io: Arc::new(files.clone()), ..volley_engine::ClientConfig::default() };
        Self {
            client,
            documents: Documents::new(files),
            engine: volley_engine::Client::new(config),
            shut_down: Arc::default(),
        }
    }

    /// `true` once the client asked the server to shut down.
    #[must_use]
    pub fn is_shut_down(&self) -> bool {
        self.shut_down.load(Ordering::SeqCst)
    }

    fn publish_later(&self, uri: tower_lsp_server::ls_types::Uri, version: i32, delay: Duration) {
        diagnostics::schedule(self.client.clone(), self.documents.clone(), self.engine.clone(), uri, version, delay);
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, _: InitializeParams) -> Result<InitializeResult> {
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(TextDocumentSyncKind::INCREMENTAL),
                    save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions { include_text: Some(false) })),
                    ..TextDocumentSyncOptions::default()
                })),
                document_symbol_provider: Some(OneOf::Left(true)),
                folding_range_provider: Some(FoldingRangeProviderCapability::Simple(true)),
                completion_provider: Some(CompletionOptions {
                    trigger_characters: Some(["{", "$", "@", ".", ":"].map(str::to_owned).to_vec()),
                    ..CompletionOptions::default()
                }),
                hover_provider: Some(HoverProviderCapability::Simple(true)),
                ..ServerCapabilities::default()
            },
            server_info: Some(ServerInfo {
                name: "volley".to_owned(),
                version: Some(env!("CARGO_PKG_VERSION").to_owned()),
            }),
            ..InitializeResult::default()
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        self.client.log_message(MessageType::INFO, "volley language server ready").await;
    }

    async fn shutdown(&self) -> Result<()> {
        self.shut_down.store(true, Ordering::SeqCst);
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let document = params.text_document;
        self.documents.open(&document.uri, document.version, &document.text);
        self.publish_later(document.uri, document.version, Duration::ZERO);
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let document = params.text_document;
        if self.documents.change(&document.uri, document.version, &params.content_changes) {
            self.publish_later(document.uri, document.version, diagnostics::DEBOUNCE);
        }
    }

    async fn did_save(&self, params: DidSaveTextDocumentParams) {
        // A saved file can change what other files see (config, file references).
        let uri = params.text_document.uri;
        if let Some(version) = self.documents.version(&uri) {
            self.publish_later(uri, version, Duration::ZERO);
        }
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        self.documents.close(&uri);
        self.client.publish_diagnostics(uri, Vec::new(), None).await;
    }

    async fn document_symbol(&self, params: DocumentSymbolParams) -> Result<Option<DocumentSymbolResponse>> {
        let Some(snapshot) = self.documents.snapshot(&params.text_document.uri) else {
            return Ok(None);
        };
        let document = snapshot.tree.document();
        let symbols = document.requests().map(|request| convert::symbol(&snapshot.rope, request)).collect();
        Ok(Some(DocumentSymbolResponse::Nested(symbols)))
    }

    async fn folding_range(&self, params: FoldingRangeParams) -> Result<Option<Vec<FoldingRange>>> {
        let Some(snapshot) = self.documents.snapshot(&params.text_document.uri) else {
            return Ok(None);
        };
        let document = snapshot.tree.document();
        let ranges =
            document.blocks.iter().filter_map(|block| convert::folding_range(&snapshot.rope, &block.span)).collect();
        Ok(Some(ranges))
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        let position = params.text_document_position;
        let Some(snapshot) = self.documents.snapshot(&position.text_document.uri) else {
            return Ok(None);
        };
        let engine = self.engine.clone();
        // Reading the configuration: off the async workers, on the snapshot (no lock held).
        let items = tokio::task::spawn_blocking(move || {
            let offset = convert::offset(&snapshot.rope, position.position);
            let candidates = completion::complete(&snapshot, &engine, offset);
            candidates.iter().map(|candidate| convert::completion_item(&snapshot.rope, candidate)).collect()
        })
        .await
        .unwrap_or_default();
        Ok(Some(CompletionResponse::Array(items)))
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let position = params.text_document_position_params;
        let Some(snapshot) = self.documents.snapshot(&position.text_document.uri) else {
            return Ok(None);
        };
        let engine = self.engine.clone();
        let found = tokio::task::spawn_blocking(move || {
            let offset = convert::offset(&snapshot.rope, position.position);
            hover::hover(&snapshot, &engine, offset).map(|found| convert::hover(&snapshot.rope, &found))
        })
        .await
        .unwrap_or_default();
        Ok(found)
    }
}
