//! `NativeRemoteClient`: the engine's [`RemoteClient`], which runs through an execution
//! server (`volley serve`): the same runs and responses as a local client, plus the
//! session and flow it creates and `close()`.

use std::path::PathBuf;
use std::sync::Arc;

use napi::bindgen_prelude::Either;
use napi_derive::napi;
use serde_json::{Map, Value};
use volley_engine::io::RealFs;
use volley_engine::{RemoteClient, RemoteConfig};

use crate::config::{NativeRunOptions, milliseconds};
use crate::failure::NativeFailure;
use crate::run::{NativeRun, Source};

/// SPEC.md's remote client configuration.
#[napi(object)]
#[derive(Debug, Default)]
pub struct NativeRemoteConfig {
    /// Base URL of the execution server.
    pub server_url: String,
    /// Bearer token, needed when the server was started with `--token`.
    pub token: Option<String>,
    /// Initial variables, synced to the server session.
    pub variables: Option<Map<String, Value>>,
    /// Label of the flow, shown in Observer Mode.
    pub flow_label: Option<String>,
    /// Metadata of the flow.
    pub flow_meta: Option<Map<String, Value>>,
    /// The server's configuration profile.
    pub profile: Option<String>,
    /// Default timeout of every run, in milliseconds.
    pub timeout: Option<f64>,
}

/// A client of an execution server. The session and the flow are created by the first
/// run; variables set before it go with the session's creation.
#[napi]
#[derive(Debug)]
pub struct NativeRemoteClient {
    client: RemoteClient,
}

/// A remote client for `config`, or why there is none (an invalid server URL).
#[napi]
pub fn create_remote_client(config: NativeRemoteConfig) -> napi::Result<Either<NativeRemoteClient, NativeFailure>> {
    // A remote client opens its control sockets with the installed transport.
    volley_engine::transport::install_default(volley_http::transport::HttpTransport::shared);
    let remote = RemoteConfig {
        server_url: config.server_url,
        token: config.token,
        variables: config.variables.unwrap_or_default(),
        flow_label: config.flow_label,
        flow_meta: config.flow_meta,
        profile: config.profile,
        timeout: config.timeout.map(|ms| milliseconds("timeout", ms)).transpose()?,
        // As a local client: a device flow's code on stderr.
        auth_prompt: Some(std::sync::Arc::new(volley_engine::auth::CommandPrompt)),
        ..RemoteConfig::default()
    };
    Ok(match RemoteClient::new(remote) {
        Ok(client) => Either::A(NativeRemoteClient { client }),
        Err(error) => Either::B(NativeFailure::from(&error)),
    })
}

#[napi]
impl NativeRemoteClient {
    /// A run of the first request of `content`; `start()` sends it to the server.
    #[napi]
    pub fn run_string(&self, content: String, options: Option<NativeRunOptions>) -> napi::Result<NativeRun> {
        let options = options.unwrap_or_default().into_run_options()?;
        Ok(NativeRun::new(Arc::new(self.client.clone()), Source::Text(content), options, Arc::new(RealFs)))
    }

    /// A run of the first request of the `.http` file at `path`, read here and sent
    /// as text (body files are read by the server, in its workspace).
    #[napi]
    pub fn run(&self, path: String, options: Option<NativeRunOptions>) -> napi::Result<NativeRun> {
        let options = options.unwrap_or_default().into_run_options()?;
        Ok(NativeRun::new(Arc::new(self.client.clone()), Source::File(PathBuf::from(path)), options, Arc::new(RealFs)))
    }

    /// Sets session variables: kept until the session exists, else sent at once.
    /// `null` when done, else why the server refused them.
    #[napi]
    pub async fn set_variables(&self, variables: Map<String, Value>) -> Option<NativeFailure> {
        self.client.set_variables(variables).await.err().map(|error| NativeFailure::from(&error))
    }

    /// The client's variables: the initial ones and those set since.
    #[napi]
    #[must_use]
    pub fn get_variables(&self) -> Map<String, Value> {
        self.client.get_variables()
    }

    /// Finishes the flow this client created, best effort. `null` when done.
    #[napi]
    pub async fn close(&self) -> Option<NativeFailure> {
        self.client.close().await.err().map(|error| NativeFailure::from(&error))
    }

    /// The server session's id, once the first run created it.
    #[napi]
    #[must_use]
    pub fn session_id(&self) -> Option<String> {
        self.client.session_id()
    }

    /// The flow's id, once the first run created it.
    #[napi]
    #[must_use]
    pub fn flow_id(&self) -> Option<String> {
        self.client.flow_id()
    }
}
