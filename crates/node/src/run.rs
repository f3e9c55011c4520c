//! `NativeRun`: one run of a local or a remote client, created by `runString`/`run`,
//! started by `start()` and cancelled by `cancel()` (the JavaScript layer calls it from
//! an `AbortSignal`).

use std::path::PathBuf;
use std::sync::Arc;

use napi::bindgen_prelude::Either;
use napi_derive::napi;
use parking_lot::Mutex;
use volley_engine::{CancellationToken, Execute, Io, RunOptions};

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

/// What `start()` takes: who runs, what, and how, and what reads the file of a
/// [`Source::File`] again to place a failure in it.
struct Pending {
    client: Arc<dyn Execute>,
    source: Source,
    options: RunOptions,
    io: Arc<dyn Io>,
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
    /// A run of `source` by `client`, local or remote, whose files `io` reads.
    pub(crate) fn new(client: Arc<dyn Execute>, source: Source, options: RunOptions, io: Arc<dyn Io>) -> Self {
        let cancel = CancellationToken::new();
        let options = options.cancel(cancel.clone());
        Self { pending: Mutex::new(Some(Pending { client, source, options, io })), cancel }
    }
}

#[napi]
impl NativeRun {
    /// Runs the request: its response, or why there is none. Rejects only when called
    /// twice.
    #[napi]
    pub async fn start(&self) -> napi::Result<Either<NativeResponse, NativeFailure>> {
        let Some(Pending { client, source, options, io }) = self.pending.lock().take() else {
            return Err(napi::Error::from_reason("the run was started already"));
        };
        if self.cancel.is_cancelled() {
            return Ok(Either::B(NativeFailure::from(&volley_engine::Error::Cancelled)));
        }
        let result = match &source {
            Source::Text(text) => client.run_string(text, options).await,
            Source::File(path) => client.run(path, options).await,
        };
        Ok(match result {
            Ok(response) => Either::A(NativeResponse::from(response)),
            Err(error) => {
                let failure = NativeFailure::from(&error);
                if failure.line.is_none() {
                    return Ok(Either::B(failure));
                }
                // Placed in the `.http` text: its column in UTF-16 code units. A file
                // is read again for that (a failure only), through the client's `io`.
                let text = match source {
                    Source::Text(text) => Some(text),
                    Source::File(path) => io.read(&path).ok().and_then(|bytes| String::from_utf8(bytes).ok()),
                };
                Either::B(match text {
                    Some(text) => failure.in_text(&text),
                    None => failure,
                })
            }
        })
    }

    /// Cancels the run: a run under way ends as `aborted`, a streamed body stops.
    #[napi]
    pub fn cancel(&self) {
        self.cancel.cancel();
    }
}
