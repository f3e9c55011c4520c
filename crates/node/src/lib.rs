//! The Node.js addon of the npm client package (`packages/client`): the engine's
//! [`Client`](volley_engine::Client) behind N-API, for the package's JavaScript layer
//! only (it builds the Fetch API `Response`, the errors and the `AbortSignal` wiring).
//!
//! The calls, as JavaScript sees them:
//!
//! ```text
//! const jar = new NativeCookieJar()
//! const client = new NativeClient({ variables, timeout, defaults: { headers: [[name, value]] },
//!                                   resolvers: ['$token'] }, jar, ({ name, arguments }) => promiseOfString,
//!                                 ({ method, url, headers, body }) => promiseOfStatusHeadersBody,
//!                                 ({ op, path }) => promiseOfBytesOrExists)
//! const run = client.runString(text, { variables, timeout })   // or client.run(path, options)
//! signal.addEventListener('abort', () => run.cancel())
//! const outcome = await run.start()                              // NativeResponse | NativeFailure
//! outcome.takeBody()                                             // a body read with the response
//! await outcome.read()                                           // else chunk by chunk, null at the end
//! ```
//!
//! `createRemoteClient(config)` gives a `NativeRemoteClient` (or a `NativeFailure`)
//! with the same `runString`/`run`, plus `setVariables`, `close`, `sessionId`, `flowId`.
//!
//! A run's failure is data (`NativeFailure`: kind, code, message, line, column), not a
//! thrown error, so the JavaScript layer decides what to throw. Everything runs on
//! napi's tokio runtime; nothing here blocks Node's thread on the network.

mod client;
mod config;
mod cookie_jar;
mod failure;
mod io;
mod remote;
mod resolvers;
mod response;
mod run;
mod transport;

pub use client::NativeClient;
pub use config::{NativeConfig, NativeDefaults, NativeRunOptions};
pub use cookie_jar::{NativeCookie, NativeCookieJar};
pub use failure::NativeFailure;
pub use io::{NativeIoAnswer, NativeIoCall};
pub use remote::{NativeRemoteClient, NativeRemoteConfig, create_remote_client};
pub use resolvers::NativeResolverCall;
pub use response::NativeResponse;
pub use run::NativeRun;
pub use transport::{NativeTransportRequest, NativeTransportResponse};

/// The runtime the engine runs on: one worker thread unless `VOLLEY_NODE_THREADS` asks
/// for more. A call is a request or two on a connection kept open, waited for by
/// Node; with a second worker, tasks woken by the network move between threads, and
/// those wake-ups made a `runString` cost 1.6 times a `fetch` instead of about as
/// much (docs/benchmarks.md). CPU-heavy work does not hold the worker: scripts and
/// `config.io` calls hand it over first (`block_in_place`).
#[napi_derive::module_init]
fn init() {
    let threads = std::env::var("VOLLEY_NODE_THREADS")
        .ok()
        .and_then(|value| value.trim().parse::<usize>().ok())
        .filter(|threads| (1..=256).contains(threads))
        .unwrap_or(1);
    if let Ok(runtime) = tokio::runtime::Builder::new_multi_thread().worker_threads(threads).enable_all().build() {
        napi::bindgen_prelude::create_custom_tokio_runtime(runtime);
    }
}
