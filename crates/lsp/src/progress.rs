//! Work-done progress (`$/progress`) of long commands, and their cancellation: by the
//! progress's cancel button (`window/workDoneProgress/cancel`) or by cancelling the
//! request (`$/cancelRequest`, which drops the command's future; the progress still
//! ends, from the guard's `Drop`).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::notification::Progress as ProgressNotification;
use tower_lsp_server::ls_types::{
    NumberOrString, ProgressParams, ProgressParamsValue, ProgressToken, WorkDoneProgress, WorkDoneProgressBegin,
    WorkDoneProgressEnd, WorkDoneProgressReport,
};
use volley_engine::CancellationToken;

/// How long the client may take to accept a progress token the server creates.
const CREATE_TIMEOUT: Duration = Duration::from_secs(5);
/// Most tokens remembered as cancelled before their progress began.
const EARLY_CANCELS: usize = 64;

/// The progresses running, by token, each with the cancellation of its work.
#[derive(Debug, Clone, Default)]
pub(crate) struct Progresses {
    running: Arc<Mutex<HashMap<String, CancellationToken>>>,
    /// Client tokens cancelled before their progress began (a cancel pressed while the
    /// command was still reading its document): the progress begins cancelled.
    early: Arc<Mutex<VecDeque<String>>>,
    next: Arc<AtomicU64>,
    /// The client accepts server-created tokens (`window.workDoneProgress`).
    pub(crate) client_creates: Arc<std::sync::atomic::AtomicBool>,
}

/// One progress shown in the editor; ends when dropped.
pub(crate) struct Ongoing {
    client: Client,
    token: Option<ProgressToken>,
    progresses: Progresses,
    /// Cancelled by the progress's cancel button.
    pub(crate) cancel: CancellationToken,
    /// The work ended (else the progress is dropped with its request, cancelled).
    finished: bool,
}

fn key(token: &ProgressToken) -> String {
    match token {
        NumberOrString::Number(number) => number.to_string(),
        NumberOrString::String(text) => text.clone(),
    }
}

impl Progresses {
    /// Begins a progress titled `title`: on the client's token when the request came
    /// with one, else on a token the server creates when the client accepts that, else
    /// none is shown (the work still runs and can be cancelled with `$/cancelRequest`).
    pub(crate) async fn begin(&self, client: &Client, given: Option<ProgressToken>, title: &str) -> Ongoing {
        let token = match given {
            Some(token) => Some(token),
            None if self.client_creates.load(Ordering::SeqCst) => {
                let token = NumberOrString::String(format!("volley-{}", self.next.fetch_add(1, Ordering::SeqCst)));
                let created =
                    tokio::time::timeout(CREATE_TIMEOUT, client.create_work_done_progress(token.clone())).await;
                matches!(created, Ok(Ok(()))).then_some(token)
            }
            None => None,
        };
        let cancel = CancellationToken::new();
        if let Some(token) = &token {
            let key = key(token);
            if self.cancelled_early(&key) {
                cancel.cancel();
            }
            self.running.lock().insert(key, cancel.clone());
            let begin = WorkDoneProgressBegin {
                title: title.to_owned(),
                cancellable: Some(true),
                message: None,
                percentage: None,
            };
            notify(client, token.clone(), WorkDoneProgress::Begin(begin)).await;
        }
        Ongoing { client: client.clone(), token, progresses: self.clone(), cancel, finished: false }
    }

    /// Whether the client cancelled the token `key` before its progress began (then
    /// forgotten).
    fn cancelled_early(&self, key: &str) -> bool {
        let mut early = self.early.lock();
        let found = early.iter().position(|cancelled| cancelled == key);
        found.map(|index| early.remove(index)).is_some()
    }

    /// The client pressed the progress's cancel button (perhaps before the progress
    /// began: then it begins cancelled).
    pub(crate) fn cancel(&self, token: &ProgressToken) {
        let key = key(token);
        if let Some(cancel) = self.running.lock().get(&key) {
            cancel.cancel();
            return;
        }
        let mut early = self.early.lock();
        if early.len() == EARLY_CANCELS {
            early.pop_front();
        }
        early.push_back(key);
    }
}

impl Ongoing {
    /// Shows `message` (and how far along, in percent) on the progress.
    pub(crate) async fn report(&self, message: String, percentage: Option<u32>) {
        if let Some(token) = &self.token {
            let report = WorkDoneProgressReport { cancellable: Some(true), message: Some(message), percentage };
            notify(&self.client, token.clone(), WorkDoneProgress::Report(report)).await;
        }
    }
}

impl Ongoing {
    /// Ends the progress: the work is done (or was cancelled by its button).
    pub(crate) fn finish(mut self) {
        self.finished = true;
    }
}

impl Drop for Ongoing {
    fn drop(&mut self) {
        let Some(token) = self.token.take() else { return };
        self.progresses.running.lock().remove(&key(&token));
        let client = self.client.clone();
        let message = if self.finished && !self.cancel.is_cancelled() { "done" } else { "cancelled" };
        let end = WorkDoneProgress::End(WorkDoneProgressEnd { message: Some(message.to_owned()) });
        tokio::spawn(async move { notify(&client, token, end).await });
    }
}

async fn notify(client: &Client, token: ProgressToken, value: WorkDoneProgress) {
    client
        .send_notification::<ProgressNotification>(ProgressParams {
            token,
            value: ProgressParamsValue::WorkDone(value),
        })
        .await;
}
