//! The response history of the editor's sends (`volley.history`, `volley.historyEntry`,
//! `volley.historyClear`): every outcome with a response or a transport error is
//! recorded in the store of the document's project (the `volley-history` crate, which
//! `volley run --history` writes too), as redacted as the outcome itself. The `history`
//! setting turns it off (`false`), bounds it (`{perRequest, maxBytes}`) or puts every
//! project's history in one directory (`{dir}`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine as _;
use parking_lot::Mutex;
use serde::Deserialize;
use serde_json::{Value, json};
use volley_history::{Failure, Filter, Limits, Record, RequestRef, Source, Store};

use crate::outcome::Outcome;

/// The `history` setting: `None` when it is off.
#[derive(Debug, Clone)]
pub(crate) struct History(Arc<Mutex<Option<Setting>>>);

/// What the history keeps, and where.
#[derive(Debug, Clone, Default)]
pub(crate) struct Setting {
    pub(crate) limits: Limits,
    /// One directory for every project, instead of each project's under the user's cache.
    pub(crate) dir: Option<PathBuf>,
}

impl Setting {
    /// The store of the project of `file` (a folder counts as a file inside it).
    pub(crate) fn store_for(&self, file: &Path) -> Option<Store> {
        let dir = if let Some(dir) = &self.dir {
            dir.clone()
        } else {
            let probe = if file.is_dir() { file.join("x.http") } else { file.to_path_buf() };
            volley_history::default_dir(&volley_history::project_root(&probe))?
        };
        Some(Store::new(dir, self.limits))
    }
}

impl Default for History {
    fn default() -> Self {
        Self(Arc::new(Mutex::new(Some(Setting::default()))))
    }
}

impl History {
    /// Applies the `history` key of the settings (absent: unchanged).
    pub(crate) fn apply(&self, settings: &Value) {
        let Some(setting) = settings.get("history") else { return };
        let setting = match setting {
            Value::Bool(false) | Value::Null => None,
            Value::Object(fields) => {
                let defaults = Limits::default();
                let number = |key: &str| fields.get(key).and_then(Value::as_u64);
                let limits = Limits {
                    per_request: number("perRequest").map_or(defaults.per_request, |n| n.clamp(1, 1000) as usize),
                    max_bytes: number("maxBytes").map_or(defaults.max_bytes, |n| n.max(1024)),
                    max_body: defaults.max_body,
                };
                let dir = fields.get("dir").and_then(Value::as_str).filter(|dir| !dir.is_empty()).map(PathBuf::from);
                Some(Setting { limits, dir })
            }
            _ => Some(Setting::default()),
        };
        *self.0.lock() = setting;
    }

    /// The setting, when the history is on.
    pub(crate) fn setting(&self) -> Option<Setting> {
        self.0.lock().clone()
    }
}

/// Records `outcome` of the request in `file` and sets its `historyId`. Outcomes without
/// a response, and without a request that went out, are not recorded (refused, disabled,
/// cancelled before sending).
pub(crate) async fn record(setting: &Setting, file: &Path, outcome: &mut Outcome) {
    if outcome.response.is_none() && outcome.sent.is_none() {
        return;
    }
    let Some(store) = setting.store_for(file) else { return };
    let copy = outcome.clone();
    let file = file.to_path_buf();
    let recorded = tokio::task::spawn_blocking(move || record_blocking(&store, &file, &copy)).await;
    if let Ok(Ok(id)) = recorded {
        outcome.history_id = Some(id);
    }
}

fn record_blocking(store: &Store, file: &Path, outcome: &Outcome) -> std::io::Result<String> {
    let request = RequestRef {
        index: outcome.request.index,
        name: outcome.request.name.clone(),
        method: outcome.request.method.clone(),
        url: outcome.request.url.clone(),
        line: outcome.request.line,
    };
    let body = outcome.response.as_ref().map(|response| {
        if response.body_encoding == "base64" {
            base64::engine::general_purpose::STANDARD.decode(&response.body).unwrap_or_default()
        } else {
            response.body.clone().into_bytes()
        }
    });
    let result = match (&outcome.response, &body) {
        (Some(response), Some(body)) => Ok(volley_history::Response {
            status: response.status,
            status_text: &response.status_text,
            http_version: &response.http_version,
            headers: &response.headers,
            body,
            truncated: response.truncated,
        }),
        _ => Err(outcome.error.as_ref().map_or_else(
            || Failure { kind: "error".to_owned(), message: "no response".to_owned() },
            |error| Failure { kind: error.kind.clone(), message: error.message.clone() },
        )),
    };
    let duration_ms = outcome.response.as_ref().map(|response| response.timing.total_ms);
    let entry = store.record(&Record { source: Source::Editor, file, request, outcome: result, duration_ms })?;
    Ok(entry.id)
}

/// The arguments of `volley.history` and `volley.historyClear`.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ListArguments {
    pub(crate) uri: Option<String>,
    index: Option<usize>,
    name: Option<String>,
    limit: Option<usize>,
}

/// The arguments of `volley.historyEntry`.
#[derive(Debug, Deserialize)]
pub(crate) struct EntryArguments {
    pub(crate) id: String,
    /// A file of the project (the store is the project's); else the stores of the open
    /// documents' and workspace folders' projects are looked in.
    pub(crate) uri: Option<String>,
}

/// The stores a command without a document looks in: those of `candidates` (files or
/// folders), each once.
pub(crate) fn stores(setting: &Setting, candidates: &[PathBuf]) -> Vec<Store> {
    let mut stores: Vec<Store> = Vec::new();
    for store in candidates.iter().filter_map(|candidate| setting.store_for(candidate)) {
        if !stores.iter().any(|known| known.dir() == store.dir()) {
            stores.push(store);
        }
    }
    stores
}

/// `volley.history`: the entries, newest first.
pub(crate) fn list(stores: &[Store], file: Option<&Path>, arguments: &ListArguments) -> Result<Value, String> {
    let filter = Filter { file, index: arguments.index, name: arguments.name.as_deref(), limit: arguments.limit };
    let mut entries = Vec::new();
    for store in stores {
        entries.extend(
            store
                .list(&filter)
                .map_err(|error| format!("cannot read the history in {}: {error}", store.dir().display()))?,
        );
    }
    entries.sort_by(|a, b| b.id.cmp(&a.id));
    if let Some(limit) = arguments.limit {
        entries.truncate(limit);
    }
    Ok(json!({ "entries": entries }))
}

/// `volley.historyEntry`: the entry with its text view and body files.
pub(crate) fn entry(stores: &[Store], id: &str) -> Result<Value, String> {
    for store in stores {
        let found =
            store.get(id).map_err(|error| format!("cannot read the history in {}: {error}", store.dir().display()))?;
        if let Some(stored) = found {
            return Ok(json!({ "entry": stored.entry, "path": stored.text, "bodyPath": stored.body }));
        }
    }
    Err(format!(
        "the history has no entry `{id}` (it may have been dropped: the last responses of each request are kept)"
    ))
}

/// `volley.historyClear`: removes the entries of `file`, or all.
pub(crate) fn clear(stores: &[Store], file: Option<&Path>) -> Result<Value, String> {
    let mut cleared = 0;
    for store in stores {
        cleared += store
            .clear(file)
            .map_err(|error| format!("cannot clear the history in {}: {error}", store.dir().display()))?;
    }
    Ok(json!({ "cleared": cleared }))
}
