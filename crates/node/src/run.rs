//! `NativeRun`: one run of a local or a remote client, created by `runString`/`run`,
//! started by `start()` and cancelled by `cancel()` (the JavaScript layer calls it from
//! an `AbortSignal`).

use std::path::PathBuf;
use std::sync::Arc;

use napi::bindgen_prelude::Either;
use napi_derive::napi;
use parking_lot::Mutex;
use volley_engine::{CancellationToken, Execute, RunOptions};

use crate::failure::NativeFailure;
use crate::response::NativeResponse;

/// What a run reads its request from.
#[derive(Debug)]
pub(crate) enum Source {
    /// `.http` text.
    Text(String),
    /// A `.http` file.
    File(PathBuf),
}

/// What `start()` takes: who runs, what, and how.
struct Pending {
    client: Arc<dyn Execute>,
    source: Source,
    options: RunOptions,
}

/// A run not started yet, started, or finished. `cancel()` works in every state: a run
/// cancelled before `start()` ends at once as `aborted`.
#[napi]
pub struct NativeRun {
    /// Taken by `start()`.
    pending: Mutex<Option<Pending>>,
    cancel: CancellationToken,
}

impl std::fmt::Debug for NativeRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let started = self.pending.lock().is_none();
        f.debug_struct("NativeRun").field("started", &started).field("cancelled", &self.cancel.is_cancelled()).finish()
    }
}

impl NativeRun {
    /// A run of `source` by `client`, local or remote.
    pub(crate) fn new(client: Arc<dyn Execute>, source: Source, options: RunOptions) -> Self {
        let cancel = CancellationToken::new();
        let options = options.cancel(cancel.clone());
        Self { pending: Mutex::new(Some(Pending { client, source, options })), cancel }
    }
}

#[napi]
impl NativeRun {
    /// Runs the request: its response, or why there is none. Rejects only when called
    /// twice.
    #[napi]
    pub async fn start(&self) -> napi::Result<Either<NativeResponse, NativeFailure>> {
        let Some(Pending { client, source, options }) = self.pending.lock().take() else {
            return Err(napi::Error::from_reason("the run was started already"));
        };
        if self.cancel.is_cancelled() {
            return Ok(Either::B(NativeFailure::from(&volley_engine::Error::Cancelled)));
        }
        let result = match source {
            Source::Text(text) => client.run_string(&text, options).await,
            Source::File(path) => client.run(&path, options).await,
        };
        Ok(match result {
            Ok(response) => Either::A(NativeResponse::from(response)),
            Err(error) => Either::B(NativeFailure::from(&error)),
        })
    }

    /// Cancels the run: a run under way ends as `aborted`, a streamed body stops.
    #[napi]
    pub fn cancel(&self) {
        self.cancel.cancel();
    }
}
