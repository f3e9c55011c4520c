//! The `LanguageServer` implementation: the one place where every handler is registered
//! (`initialize` announces them, the trait methods below answer them). The state they
//! share is [`Backend`] (`backend.rs`); the `workspace/executeCommand` commands are
//! implemented in `commands.rs`.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::{Value, json};
use tower_lsp_server::LanguageServer;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{
    CodeActionKind, CodeActionOptions, CodeActionParams, CodeActionProviderCapability, CodeActionResponse, CodeLens,
    CodeLensOptions, CodeLensParams, CompletionList, CompletionOptions, CompletionParams, CompletionResponse,
    DidChangeConfigurationParams, DidChangeTextDocumentParams, DidChangeWatchedFilesParams,
    DidChangeWatchedFilesRegistrationOptions, DidChangeWorkspaceFoldersParams, DidCloseTextDocumentParams,
    DidOpenTextDocumentParams, DidSaveTextDocumentParams, DocumentFormattingParams, DocumentLink, DocumentLinkOptions,
    DocumentLinkParams, DocumentSymbolParams, DocumentSymbolResponse, ExecuteCommandOptions, ExecuteCommandParams,
    FileSystemWatcher, FoldingRange, FoldingRangeParams, FoldingRangeProviderCapability, GlobPattern,
    GotoDefinitionParams, GotoDefinitionResponse, Hover, HoverParams, HoverProviderCapability, InitializeParams,
    InitializeResult, InitializedParams, Location, MessageType, OneOf, PrepareRenameResponse, ReferenceParams,
    Registration, RenameOptions, RenameParams, SaveOptions, ServerCapabilities, ServerInfo, TextDocumentPositionParams,
    TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions, TextDocumentSyncSaveOptions, TextEdit,
    WorkDoneProgressOptions, WorkspaceEdit, WorkspaceFoldersServerCapabilities, WorkspaceServerCapabilities,
};

use crate::backend::{Backend, document_of, invalid_params};
use crate::diagnostics::{self};
use crate::documents::is_config;
use crate::execute;
use crate::model::Snapshot;
use crate::scope::Scope;
use crate::{completion, convert, formatting, hover, navigation, paste, preview, settings};

/// The files whose changes re-publish every document's diagnostics: the configuration
/// files, and the proto files and descriptor sets of gRPC requests.
const WATCHED_GLOBS: [&str; 10] = [
    "**/volley.jsonc",
    "**/volley.json",
    "**/http-client.env.json",
    "**/http-client.private.env.json",
    // `.env`, and httpyac's per-environment files (`dev.env`, `.env.dev`).
    "**/{*.env,.env.*}",
    "**/.env",
    // httpyac's configuration and REST Client's settings (a `package.json` is not
    // watched: installs change thousands of them).
    "**/{.httpyac,.httpyac.config,httpyac.config}.{js,cjs,json}",
    "**/.vscode/settings.json",
    "**/*.proto",
    "**/*.protoset",
];

/// The first argument, or its default when there is none.
fn optional_argument<T: serde::de::DeserializeOwned + Default>(params: &ExecuteCommandParams) -> Result<T> {
    match params.arguments.first() {
        None | Some(Value::Null) => Ok(T::default()),
        Some(_) => first_argument(params),
    }
}

fn first_argument<T: serde::de::DeserializeOwned>(params: &ExecuteCommandParams) -> Result<T> {
    let argument = params.arguments.first().cloned().unwrap_or(Value::Null);
    serde_json::from_value(argument).map_err(|error| invalid_params(format!("`{}`: {error}", params.command)))
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        if let Some(profile) = params.initialization_options.as_ref().and_then(settings::initial_profile) {
            self.environment.lock().profile = Some(profile);
        }
        if let Some(options) = &params.initialization_options {
            self.apply_send_settings(options).await;
            let prompts = options.get("prompts").and_then(Value::as_bool).unwrap_or(false);
            self.can_prompt.store(prompts, Ordering::SeqCst);
        }
        #[allow(deprecated)] // `rootUri`: the folder of clients that send no `workspaceFolders`.
        let folders: Vec<std::path::PathBuf> = match (&params.workspace_folders, &params.root_uri) {
            (Some(folders), _) => folders.iter().filter_map(|folder| convert::path(&folder.uri)).collect(),
            (None, Some(root)) => convert::path(root).into_iter().collect(),
            (None, None) => Vec::new(),
        };
        self.jars.set_folders(folders);
        let capabilities = &params.capabilities;
        let progress = capabilities.window.as_ref().and_then(|window| window.work_done_progress).unwrap_or(false);
        let show_document = capabilities
            .window
            .as_ref()
            .and_then(|window| window.show_document.as_ref())
            .is_some_and(|show| show.support);
        self.can_show_document.store(show_document, Ordering::SeqCst);
        self.progresses.client_creates.store(progress, Ordering::SeqCst);
        let watch = capabilities
            .workspace
            .as_ref()
            .and_then(|workspace| workspace.did_change_watched_files.as_ref())
            .and_then(|watched| watched.dynamic_registration)
            .unwrap_or(false);
        self.can_watch.store(watch, Ordering::SeqCst);
        let snippets = capabilities
            .text_document
            .as_ref()
            .and_then(|text_document| text_document.completion.as_ref())
            .and_then(|completion| completion.completion_item.as_ref())
            .and_then(|item| item.snippet_support)
            .unwrap_or(false);
        self.snippets.store(snippets, Ordering::SeqCst);
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
                    trigger_characters: Some(["{", "$", "@", ".", ":", "/"].map(str::to_owned).to_vec()),
                    ..CompletionOptions::default()
                }),
                hover_provider: Some(HoverProviderCapability::Simple(true)),
                code_lens_provider: Some(CodeLensOptions { resolve_provider: Some(false) }),
                definition_provider: Some(OneOf::Left(true)),
                references_provider: Some(OneOf::Left(true)),
                rename_provider: Some(OneOf::Right(RenameOptions {
                    prepare_provider: Some(true),
                    work_done_progress_options: WorkDoneProgressOptions::default(),
                })),
                document_link_provider: Some(DocumentLinkOptions {
                    resolve_provider: Some(false),
                    work_done_progress_options: WorkDoneProgressOptions::default(),
                }),
                document_formatting_provider: Some(OneOf::Left(true)),
                code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
                    code_action_kinds: Some(vec![CodeActionKind::REFACTOR_REWRITE]),
                    work_done_progress_options: WorkDoneProgressOptions::default(),
                    resolve_provider: Some(false),
                })),
                workspace: Some(WorkspaceServerCapabilities {
                    workspace_folders: Some(WorkspaceFoldersServerCapabilities {
                        supported: Some(true),
                        change_notifications: Some(OneOf::Left(true)),
                    }),
                    file_operations: None,
                }),
                execute_command_provider: Some(ExecuteCommandOptions {
                    commands: execute::COMMANDS.map(str::to_owned).to_vec(),
                    work_done_progress_options: WorkDoneProgressOptions { work_done_progress: Some(true) },
                }),
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
        // A gRPC server's catalog came or changed: every document is checked again.
        let catalogs = Arc::clone(&self.environment.lock().catalogs);
        let (publisher, context, shut_down) = (self.publisher.clone(), self.context(), Arc::clone(&self.shut_down));
        tokio::spawn(async move {
            loop {
                catalogs.notified().await;
                if shut_down.load(Ordering::SeqCst) {
                    return;
                }
                publisher.request_all(&context);
            }
        });
        if self.can_watch.load(Ordering::SeqCst) {
            let watchers: Vec<FileSystemWatcher> = WATCHED_GLOBS
                .iter()
                .map(|glob| FileSystemWatcher { glob_pattern: GlobPattern::String((*glob).to_owned()), kind: None })
                .collect();
            let options = DidChangeWatchedFilesRegistrationOptions { watchers };
            let registration = Registration {
                id: "volley-config".to_owned(),
                method: "workspace/didChangeWatchedFiles".to_owned(),
                register_options: serde_json::to_value(options).ok(),
            };
            if let Err(error) = self.client.register_capability(vec![registration]).await {
                self.client.log_message(MessageType::WARNING, format!("cannot watch volley.jsonc: {error}")).await;
            }
        }
        self.client.log_message(MessageType::INFO, "volley language server ready").await;
    }

    async fn shutdown(&self) -> Result<()> {
        self.shut_down.store(true, Ordering::SeqCst);
        self.bodies.remove_all();
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let document = params.text_document;
        let (uri, version) = (document.uri, document.version);
        if is_config(&uri) {
            self.documents.open(&uri, version, document.text);
            // Perhaps a configuration where there was none.
            volley_engine::stages::reload_config(&self.engine);
            self.publish_all();
            return;
        }
        // A large document: the diagnostics of its first chunks, published while it is
        // parsed, made before its parse starts.
        let first = diagnostics::first_chunks(&document.text).map(|first| {
            let environment = self.environment.lock().clone();
            diagnostics::first(&Snapshot::parse(version, first, convert::path(&uri)), &self.engine, &environment)
        });
        self.documents.open(&uri, version, document.text);
        if let Some(first) = first {
            self.publisher.request_first(&self.context(), uri.clone(), version, first);
        }
        self.publish(uri);
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let document = params.text_document;
        if self.documents.change(&document.uri, document.version, &params.content_changes) {
            // An unsaved configuration is what the analysis reads: every document follows.
            if is_config(&document.uri) {
                self.publish_all();
            } else {
                self.publish(document.uri);
            }
        }
    }

    async fn did_save(&self, _: DidSaveTextDocumentParams) {
        // A saved file can change what other files see (configuration, file references).
        self.files_changed();
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        self.documents.close(&uri);
        self.client.publish_diagnostics(uri.clone(), Vec::new(), None).await;
        if is_config(&uri) {
            self.publish_all();
        }
    }

    async fn did_change_workspace_folders(&self, params: DidChangeWorkspaceFoldersParams) {
        let removed: Vec<std::path::PathBuf> =
            params.event.removed.iter().filter_map(|folder| convert::path(&folder.uri)).collect();
        let mut folders: Vec<std::path::PathBuf> =
            self.jars.folders().into_iter().filter(|folder| !removed.contains(folder)).collect();
        folders.extend(params.event.added.iter().filter_map(|folder| convert::path(&folder.uri)));
        self.jars.set_folders(folders);
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        self.apply_settings(&params.settings).await;
    }

    async fn did_change_watched_files(&self, _: DidChangeWatchedFilesParams) {
        self.files_changed();
    }

    async fn document_symbol(&self, params: DocumentSymbolParams) -> Result<Option<DocumentSymbolResponse>> {
        let Some(snapshot) = self.documents.snapshot(&params.text_document.uri).await else {
            return Ok(None);
        };
        let document = document_of(&snapshot).await?;
        // A block owns the lines up to the next `###` line, blank lines after it included.
        let ends = document.blocks.iter().skip(1).map(|next| next.span.start).chain([snapshot.rope.len_bytes()]);
        let symbols = document
            .blocks
            .iter()
            .zip(ends)
            .filter_map(|(block, end)| {
                Some(convert::symbol(&snapshot.rope, block.request.as_deref()?, block.span.start..end))
            })
            .collect();
        Ok(Some(DocumentSymbolResponse::Nested(symbols)))
    }

    async fn folding_range(&self, params: FoldingRangeParams) -> Result<Option<Vec<FoldingRange>>> {
        let Some(snapshot) = self.documents.snapshot(&params.text_document.uri).await else {
            return Ok(None);
        };
        let ranges = snapshot
            .model
            .parts
            .iter()
            .flat_map(|placed| placed.part.outline.blocks.iter().map(move |block| placed.place(block.span)))
            .filter_map(|span| convert::folding_range(&snapshot.rope, &span))
            .collect();
        Ok(Some(ranges))
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        let position = params.text_document_position;
        let Some(snapshot) = self.documents.snapshot(&position.text_document.uri).await else {
            return Ok(None);
        };
        let engine = self.engine.clone();
        let profile = self.profile();
        let snippets = self.snippets.load(Ordering::SeqCst);
        // Reading the configuration: off the async workers, on the snapshot (no lock held).
        let list = tokio::task::spawn_blocking(move || {
            let offset = convert::offset(&snapshot.rope, position.position);
            let completion = completion::complete(&snapshot, &engine, profile.as_deref(), offset, snippets);
            CompletionList {
                is_incomplete: completion.incomplete,
                items: completion
                    .candidates
                    .iter()
                    .map(|candidate| convert::completion_item(&snapshot.rope, candidate))
                    .collect(),
            }
        })
        .await
        .unwrap_or_default();
        Ok(Some(CompletionResponse::List(list)))
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let position = params.text_document_position_params;
        let Some(snapshot) = self.documents.snapshot(&position.text_document.uri).await else {
            return Ok(None);
        };
        let engine = self.engine.clone();
        let profile = self.profile();
        let offset = convert::offset(&snapshot.rope, position.position);
        let found = {
            let snapshot = snapshot.clone();
            let profile = profile.clone();
            tokio::task::spawn_blocking(move || hover::hover(&snapshot, &engine, profile.as_deref(), offset))
                .await
                .unwrap_or_default()
        };
        if let Some(found) = found {
            return Ok(Some(convert::hover(&snapshot.rope, &found)));
        }
        // On a request line: the request as it would be sent.
        let on_request_line =
            snapshot.model.request_at(offset).map(|(placed, request)| placed.place(request.line_span));
        let Some(line) = on_request_line.filter(|line| (line.start..=line.end).contains(&offset)) else {
            return Ok(None);
        };
        let document = document_of(&snapshot).await?;
        let Some(request) = document.request_at(offset) else {
            return Ok(None);
        };
        let scope = {
            let (snapshot, engine, profile) = (snapshot.clone(), self.engine.clone(), profile.clone());
            tokio::task::spawn_blocking(move || Scope::of(&snapshot, &engine, profile.as_deref()))
                .await
                .unwrap_or_default()
        };
        let markdown =
            preview::preview(&self.engine, &document, request, snapshot.path.as_deref(), profile.as_deref(), &scope)
                .await;
        let found = hover::Hover { markdown, range: line.start..line.end };
        Ok(Some(convert::hover(&snapshot.rope, &found)))
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let uri = params.text_document.uri;
        let Some(snapshot) = self.documents.snapshot(&uri).await else {
            return Ok(None);
        };
        let line = params.range.start.line as usize;
        let actions = paste::conversion(&snapshot.rope, line)
            .map(|conversion| convert::code_action(&uri, &snapshot.rope, conversion))
            .into_iter()
            .collect();
        Ok(Some(actions))
    }

    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        let uri = params.text_document.uri;
        let Some(snapshot) = self.documents.snapshot(&uri).await else {
            return Ok(None);
        };
        let mut lenses: Vec<CodeLens> = snapshot
            .model
            .requests()
            .enumerate()
            .map(|(index, (placed, request))| {
                let line = placed.place(request.line_span);
                let argument = json!({ "uri": uri.as_str(), "index": index });
                convert::code_lens(
                    &snapshot.rope,
                    line.start..line.end,
                    "Send Request".to_owned(),
                    execute::SEND,
                    argument,
                )
            })
            .collect();
        if !lenses.is_empty() {
            let title = format!("Send All ({})", lenses.len());
            let argument = json!({ "uri": uri.as_str() });
            lenses.insert(0, convert::code_lens(&snapshot.rope, 0..0, title, execute::SEND_ALL, argument));
        }
        Ok(Some(lenses))
    }

    async fn goto_definition(&self, params: GotoDefinitionParams) -> Result<Option<GotoDefinitionResponse>> {
        let position = params.text_document_position_params;
        let Some((snapshot, document, symbol, _)) =
            self.symbol_at(&position.text_document.uri, position.position).await?
        else {
            return Ok(None);
        };
        let mut locations =
            Self::locations(&position.text_document.uri, &snapshot, navigation::declarations(&document, &symbol));
        if locations.is_empty() {
            locations = self.imported_declarations(&snapshot, &document, &symbol);
        }
        if locations.is_empty() {
            locations = self.config_declarations(&snapshot, &symbol);
        }
        Ok((!locations.is_empty()).then_some(GotoDefinitionResponse::Array(locations)))
    }

    async fn references(&self, params: ReferenceParams) -> Result<Option<Vec<Location>>> {
        let position = params.text_document_position;
        let uri = position.text_document.uri;
        let Some((snapshot, document, symbol, _)) = self.symbol_at(&uri, position.position).await? else {
            return Ok(None);
        };
        let mut locations = Vec::new();
        if params.context.include_declaration {
            locations.extend(Self::locations(&uri, &snapshot, navigation::declarations(&document, &symbol)));
            locations.extend(self.config_declarations(&snapshot, &symbol));
        }
        locations.extend(Self::locations(&uri, &snapshot, navigation::references(&document, &symbol)));
        Ok(Some(locations))
    }

    async fn prepare_rename(&self, params: TextDocumentPositionParams) -> Result<Option<PrepareRenameResponse>> {
        let Some(snapshot) = self.documents.snapshot(&params.text_document.uri).await else {
            return Ok(None);
        };
        let document = document_of(&snapshot).await?;
        let offset = convert::offset(&snapshot.rope, params.position);
        let range = navigation::prepare_rename(&document, offset).map_err(invalid_params)?;
        Ok(Some(PrepareRenameResponse::Range(convert::range(&snapshot.rope, range.start, range.end))))
    }

    async fn rename(&self, params: RenameParams) -> Result<Option<WorkspaceEdit>> {
        let position = params.text_document_position;
        let uri = position.text_document.uri;
        let Some(snapshot) = self.documents.snapshot(&uri).await else {
            return Ok(None);
        };
        let document = document_of(&snapshot).await?;
        let offset = convert::offset(&snapshot.rope, position.position);
        let edits = navigation::rename(&document, offset, &params.new_name).map_err(invalid_params)?;
        let edits =
            edits.into_iter().map(|(range, new_text)| convert::text_edit(&snapshot.rope, range, new_text)).collect();
        Ok(Some(WorkspaceEdit { changes: Some(HashMap::from([(uri, edits)])), ..WorkspaceEdit::default() }))
    }

    async fn document_link(&self, params: DocumentLinkParams) -> Result<Option<Vec<DocumentLink>>> {
        let Some(snapshot) = self.documents.snapshot(&params.text_document.uri).await else {
            return Ok(None);
        };
        let Some(directory) = snapshot.path.as_deref().and_then(std::path::Path::parent) else {
            return Ok(None);
        };
        let document = document_of(&snapshot).await?;
        let links = navigation::file_links(&document)
            .into_iter()
            .filter_map(|(range, path)| {
                convert::document_link(&snapshot.rope, range, &volley_engine::io::normalize(&directory.join(&path)))
            })
            .collect();
        Ok(Some(links))
    }

    async fn formatting(&self, params: DocumentFormattingParams) -> Result<Option<Vec<TextEdit>>> {
        let Some(snapshot) = self.documents.snapshot(&params.text_document.uri).await else {
            return Ok(None);
        };
        let document = document_of(&snapshot).await?;
        let text = snapshot.rope.to_string();
        let edits = formatting::format(&document, &text)
            .into_iter()
            .map(|(range, new_text)| convert::text_edit(&snapshot.rope, range, new_text))
            .collect();
        Ok(Some(edits))
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<Value>> {
        let token = params.work_done_progress_params.work_done_token.clone();
        let result = match params.command.as_str() {
            execute::SEND => self.send(first_argument(&params)?, token).await?,
            execute::SEND_ALL => self.send_all(first_argument(&params)?, token).await?,
            execute::SELECT_PROFILE => {
                let profile: Option<String> = first_argument(&params)?;
                self.set_profile(profile);
                json!({ "active": self.profile() })
            }
            execute::PROFILES => self.profiles(params.arguments.first().unwrap_or(&Value::Null))?,
            execute::COPY_AS_CURL => self.copy_as_curl(first_argument(&params)?).await?,
            execute::IMPORT => Self::import(&first_argument(&params)?)?,
            execute::FILTER => Self::filter(first_argument(&params)?).await,
            execute::CLEAR_COOKIES => self.clear_cookies(params.arguments.first().unwrap_or(&Value::Null)).await?,
            execute::TESTS => self.tests(&first_argument(&params)?).await?,
            execute::SNIPPET => self.snippet(params.arguments.first().cloned().unwrap_or(Value::Null)).await?,
            execute::HISTORY => self.history_list(optional_argument(&params)?).await?,
            execute::HISTORY_ENTRY => self.history_entry(first_argument(&params)?).await?,
            execute::HISTORY_CLEAR => self.history_clear(optional_argument(&params)?).await?,
            other => return Err(invalid_params(format!("unknown command `{other}`"))),
        };
        Ok(Some(result))
    }
}
