//! `NativeClient`: the engine's [`Client`] with its variables, and the runs it starts.

use std::path::PathBuf;
use std::sync::Arc;

use napi::Status;
use napi_derive::napi;
use serde_json::{Map, Value};
use volley_engine::{Client, Io};

use crate::config::{NativeConfig, NativeRunOptions};
use crate::cookie_jar::NativeCookieJar;
use crate::io::IoDispatcher;
use crate::resolvers::Dispatcher;
use crate::run::{NativeRun, Source};
use crate::transport::{TransportAborter, TransportDispatcher};

/// A client: variables, defaults and an optional shared cookie jar; runs read files
/// from the real filesystem (or through `config.io`) and find `volley.jsonc` as the
/// CLI does.
#[napi]
#[derive(Debug)]
pub struct NativeClient {
    client: Client,
    /// What the client reads files with (to place a failure in a file run).
    io: Arc<dyn Io>,
}

#[napi]
impl NativeClient {
    /// A client with `config`, sharing `jar` when given; `resolve` answers the calls
    /// of the custom resolvers that `config.resolvers` names; `transport`, when given,
    /// makes every exchange instead of the engine's HTTP client, with `abort` called
    /// with an exchange's id when the engine stops waiting for it; `io`, when given,
    /// reads every file instead of the real filesystem.
    #[napi(constructor)]
    pub fn new(
        config: Option<NativeConfig>,
        jar: Option<&NativeCookieJar>,
        resolve: Option<Dispatcher>,
        transport: Option<TransportDispatcher>,
        abort: Option<TransportAborter>,
        io: Option<IoDispatcher>,
    ) -> napi::Result<Self> {
        let jar = jar.map(|jar| jar.jar.clone());
        let transport = match (transport, abort) {
            (Some(transport), Some(abort)) => Some((transport, abort)),
            (None, _) => None,
            (Some(_), None) => return Err(napi::Error::new(Status::InvalidArg, "transport: given without its abort")),
        };
        let config = config.unwrap_or_default().into_client_config(jar, resolve, transport, io)?;
        let io = Arc::clone(&config.io);
        Ok(Self { client: Client::new(config), io })
    }

    /// A run of the first request of `content` (`.http` text); `start()` sends it.
    #[napi]
    pub fn run_string(&self, content: String, options: Option<NativeRunOptions>) -> napi::Result<NativeRun> {
        let options = options.unwrap_or_default().into_run_options()?;
        Ok(NativeRun::new(Arc::new(self.client.clone()), Source::Text(content), options, Arc::clone(&self.io)))
    }

    /// A run of the first request of the `.http` file at `path` (relative to the
    /// working directory); `start()` reads and sends it.
    #[napi]
    pub fn run(&self, path: String, options: Option<NativeRunOptions>) -> napi::Result<NativeRun> {
        let options = options.unwrap_or_default().into_run_options()?;
        Ok(NativeRun::new(
            Arc::new(self.client.clone()),
            Source::File(PathBuf::from(path)),
            options,
            Arc::clone(&self.io),
        ))
    }

    /// Sets a client variable (above the configuration's, below a run's).
    #[napi]
    pub fn set_variable(&self, key: String, value: Value) {
        self.client.set_variable(key, value);
    }

    /// Sets several client variables.
    #[napi]
    pub fn set_variables(&self, variables: Map<String, Value>) {
        self.client.set_variables(variables);
    }

    /// The client variables: the initial ones and those set since.
    #[napi]
    #[must_use]
    pub fn get_variables(&self) -> Map<String, Value> {
        self.client.get_variables()
    }
}
