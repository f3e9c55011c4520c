//! A filesystem written in JavaScript (`config.io`, SPEC.md's IO adapter): the engine
//! reads the `.http` file of `run(path)`, `< file` bodies, script files, `volley.jsonc`
//! and `.env` files through it. Each read or existence check calls one threadsafe
//! function, the JavaScript layer's dispatcher, which calls the adapter's `readBinary`,
//! `readText` or `exists` and answers with the bytes or the answer.
//!
//! The engine's [`Io`] is synchronous (it is called while a request is prepared), the
//! adapter asynchronous: the call is made from napi's tokio runtime and waited for on
//! the engine's thread, which first hands its worker over (`block_in_place`) so that
//! the runtime, and the call itself, go on meanwhile. Node's thread never waits for
//! the engine, so the two cannot wait for each other.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use napi::Status;
use napi::bindgen_prelude::{Buffer, Promise};
use napi::threadsafe_function::ThreadsafeFunction;
use napi_derive::napi;
use volley_engine::Io;

/// One call of the adapter, as the dispatcher receives it.
#[napi(object)]
#[derive(Debug, Clone)]
pub struct NativeIoCall {
    /// `"read"` (the file's bytes) or `"exists"`.
    pub op: String,
    /// The path, absolute when the engine knows the directory it is relative to.
    pub path: String,
}

/// The dispatcher's answer: the bytes read, or whether the path exists. A failed read
/// rejects instead, with the adapter's error (`code: 'ENOENT'` is a missing file).
#[napi(object)]
pub struct NativeIoAnswer {
    /// What `"read"` read.
    pub bytes: Option<Buffer>,
    /// What `"exists"` found.
    pub exists: Option<bool>,
}

impl std::fmt::Debug for NativeIoAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeIoAnswer")
            .field("bytes_len", &self.bytes.as_ref().map(|bytes| bytes.len()))
            .field("exists", &self.exists)
            .finish()
    }
}

/// The dispatcher; weak and called with `call_async_catch`, as the resolvers' is.
pub(crate) type IoDispatcher =
    ThreadsafeFunction<NativeIoCall, Promise<NativeIoAnswer>, NativeIoCall, Status, false, true>;

/// How long one call of the adapter may take before the read fails: an adapter whose
/// promise never settles must not hold a run for ever.
const IO_TIMEOUT: Duration = Duration::from_secs(30);

/// The engine's [`Io`] over the dispatcher.
pub(crate) struct JsIo {
    pub(crate) dispatcher: Arc<IoDispatcher>,
}

impl std::fmt::Debug for JsIo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JsIo")
    }
}

impl JsIo {
    /// Calls the adapter and waits for its answer on this thread.
    fn ask(&self, op: &str, path: &Path) -> std::io::Result<NativeIoAnswer> {
        let call = NativeIoCall { op: op.to_owned(), path: path.to_string_lossy().into_owned() };
        let dispatcher = Arc::clone(&self.dispatcher);
        let (sender, receiver) = std::sync::mpsc::sync_channel(1);
        napi::bindgen_prelude::spawn(async move {
            let answer = match dispatcher.call_async_catch(call).await {
                Ok(promise) => promise.await,
                Err(error) => Err(error),
            };
            let _ = sender.send(answer);
        });
        let wait = || receiver.recv_timeout(IO_TIMEOUT);
        let multi_threaded = tokio::runtime::Handle::try_current()
            .is_ok_and(|handle| handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
        let answer = if multi_threaded { tokio::task::block_in_place(wait) } else { wait() };
        match answer {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(error)) => Err(io_error(&error)),
            Err(_) => Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("config.io did not answer within {} s", IO_TIMEOUT.as_secs()),
            )),
        }
    }
}

/// The adapter's error as an I/O error: `ENOENT` (Node's code for a missing file,
/// which the dispatcher puts first in the reason) is `NotFound`.
fn io_error(error: &napi::Error) -> std::io::Error {
    let reason = error.reason.clone();
    let kind = if reason.starts_with("ENOENT") { std::io::ErrorKind::NotFound } else { std::io::ErrorKind::Other };
    std::io::Error::new(kind, format!("config.io: {reason}"))
}

impl Io for JsIo {
    fn read(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        let answer = self.ask("read", path)?;
        answer.bytes.map(Vec::from).ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidData, "config.io: the read answered no bytes")
        })
    }

    fn is_file(&self, path: &Path) -> bool {
        self.exists(path)
    }

    fn exists(&self, path: &Path) -> bool {
        self.ask("exists", path).is_ok_and(|answer| answer.exists == Some(true))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_missing_file_is_not_found() {
        let missing = napi::Error::from_reason("ENOENT: no such file or directory, open '/x.http'");
        assert_eq!(super::io_error(&missing).kind(), std::io::ErrorKind::NotFound);
        let other = napi::Error::from_reason("EACCES: permission denied");
        assert_eq!(super::io_error(&other).kind(), std::io::ErrorKind::Other);
    }
}
