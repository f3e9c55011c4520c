//! How a server is set up: address, workspace, token, limits; and the one rule checked
//! before binding (no non-loopback address without a token).

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

/// The default port of `volley serve`.
pub const DEFAULT_PORT: u16 = 4097;
/// The default limit of request bodies and captured response bodies (10 MiB).
pub const DEFAULT_MAX_BODY_SIZE: usize = 10 * 1024 * 1024;
/// The default number of live sessions.
pub const DEFAULT_MAX_SESSIONS: usize = 100;
/// The default number of live WebSocket sessions.
pub const DEFAULT_MAX_WS_SESSIONS: usize = 1000;
/// How long parsing one execution's text may take: the budget of every front end.
pub const DEFAULT_PARSE_BUDGET: Duration = volley_syntax::DEFAULT_PARSE_TIME;
/// How many bytes of syntax trees the texts being parsed may take at once: the budget of
/// every front end (a real file of the largest `content`, 10 MiB, needs about 100 MiB).
pub const DEFAULT_PARSE_MEMORY: usize = volley_syntax::DEFAULT_PARSE_MEMORY;
/// How long a WebSocket session that closed with no control socket attached is kept,
/// closed, with its replay (60 s).
pub const DEFAULT_WS_CLOSED_GRACE: Duration = Duration::from_secs(60);
/// The default number of connections served at once; more wait to be accepted.
pub const DEFAULT_MAX_CONNECTIONS: usize = 512;
/// The default time a client has to send a request's head (10 s).
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// The default time a keep-alive connection may wait for its next request (60 s).
pub const DEFAULT_KEEP_ALIVE_TIMEOUT: Duration = Duration::from_secs(60);
/// The default time the server waits for a client that stopped reading its answer
/// (30 s): a write blocked this long closes the connection.
pub const DEFAULT_WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// The settings of a server. `ServerConfig::default()` is `volley serve` without flags
/// in the current directory.
#[derive(Clone)]
pub struct ServerConfig {
    /// Host name or address to bind (`127.0.0.1`).
    pub host: String,
    /// Port to bind; 0 picks a free one.
    pub port: u16,
    /// The directory `.http` files, body files and configuration are read from; paths
    /// outside it are refused.
    pub workspace: PathBuf,
    /// The bearer token every request must carry; `None` accepts everything (loopback only).
    pub token: Option<String>,
    /// Origins allowed by CORS besides `http://localhost:*` and `http://127.0.0.1:*`.
    pub cors: Vec<String>,
    /// Largest request body accepted and response body captured, in bytes.
    pub max_body_size: usize,
    /// Most live sessions at once.
    pub max_sessions: usize,
    /// Most WebSocket sessions at once (`POST /execute/ws` answers 429 beyond).
    pub max_ws_sessions: usize,
    /// Most connections served at once, WebSockets included; more wait in the listen
    /// backlog until one closes.
    pub max_connections: usize,
    /// Most connections one client address holds at once (an IPv6 address counts as
    /// its /64); one more is answered `429` and closed. `None` is half of
    /// `max_connections` (see [`connections_per_client`](Self::connections_per_client)).
    pub max_connections_per_client: Option<usize>,
    /// A connection that has not sent a whole request head this long after it opened
    /// (or after the first byte of a later request) is closed.
    pub header_read_timeout: Duration,
    /// A keep-alive connection with no new request this long after its last answer is
    /// closed.
    pub keep_alive_timeout: Duration,
    /// A connection whose answer (a plain one, a Server-Sent Events stream, a WebSocket)
    /// could not be written this long, because the client stopped reading, is closed.
    pub write_timeout: Duration,
    /// Largest WebSocket message a session relays either way, in bytes.
    pub ws_max_frame: usize,
    /// Default idle timeout of a WebSocket session.
    pub ws_idle_timeout: Duration,
    /// How long a WebSocket session that closed while no control socket was attached
    /// stays findable, with its replay, before it is removed.
    pub ws_closed_grace: Duration,
    /// Most live flows at once (finished flows are evicted first).
    pub max_flows: usize,
    /// Most executions kept per flow (the oldest are dropped).
    pub max_executions_per_flow: usize,
    /// A session unused this long is removed.
    pub session_ttl: Duration,
    /// A flow unused this long is removed.
    pub flow_ttl: Duration,
    /// How often expired sessions, flows and revoked tokens are swept.
    pub sweep_interval: Duration,
    /// Time between `heartbeat` events on observer streams.
    pub heartbeat: Duration,
    /// How long shutdown waits for in-flight executions.
    pub shutdown_grace: Duration,
    /// The most time parsing the `.http` text of one execution may take; past it the
    /// execution fails with `422 PARSE_BUDGET_EXCEEDED`.
    pub parse_budget: Duration,
    /// The most bytes the syntax trees of the texts being parsed may take at once;
    /// past it the execution fails with `413 PARSE_BUDGET_EXCEEDED`. Counted where
    /// tree-sitter allocates through `volley_syntax::allocator` (the `volley` binary).
    pub parse_memory: usize,
    /// What `$env` and `$secret` read (the server's environment). The token is never
    /// readable through it, whatever variable holds it.
    pub environment: volley_engine::resolvers::Environment,
    /// The environment variables callers with a scoped token may read (`--allow-env`);
    /// they read none by default.
    pub allow_env: Vec<String>,
    /// `--redis`: the Redis (`redis://[:password@]host:port[/db]`) that several
    /// instances share sessions, flows, events, tokens and WebSocket sessions through;
    /// `None` keeps everything in this process's memory.
    pub redis: Option<String>,
    /// The prefix of every Redis key (`volley:`), so that clusters may share a Redis.
    pub redis_prefix: String,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            host: "127.0.0.1".to_owned(),
            port: DEFAULT_PORT,
            workspace: PathBuf::from("."),
            token: None,
            cors: Vec::new(),
            max_body_size: DEFAULT_MAX_BODY_SIZE,
            max_sessions: DEFAULT_MAX_SESSIONS,
            max_flows: 100,
            max_ws_sessions: DEFAULT_MAX_WS_SESSIONS,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_connections_per_client: None,
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            keep_alive_timeout: DEFAULT_KEEP_ALIVE_TIMEOUT,
            write_timeout: DEFAULT_WRITE_TIMEOUT,
            ws_max_frame: 256 * 1024,
            ws_idle_timeout: Duration::from_secs(300),
            ws_closed_grace: DEFAULT_WS_CLOSED_GRACE,
            max_executions_per_flow: 500,
            session_ttl: Duration::from_secs(30 * 60),
            flow_ttl: Duration::from_secs(5 * 60),
            sweep_interval: Duration::from_secs(30),
            heartbeat: Duration::from_secs(15),
            shutdown_grace: Duration::from_secs(10),
            parse_budget: DEFAULT_PARSE_BUDGET,
            parse_memory: DEFAULT_PARSE_MEMORY,
            environment: volley_engine::resolvers::Environment::process(),
            allow_env: Vec::new(),
            redis: None,
            redis_prefix: "volley:".to_owned(),
        }
    }
}

impl ServerConfig {
    /// The most connections one client address holds: `max_connections_per_client`, by
    /// default half of `max_connections` (at least one). Half, because a share guards
    /// the others only where clients have addresses of their own, and there one client
    /// with half the connections (256 of the default 512) still leaves the other half to
    /// everyone else; while in local use, where every client is 127.0.0.1 (a browser
    /// with the observer page, editors, `volley run --server`), half is still far more
    /// than they open together. Behind a proxy every connection has the proxy's address:
    /// give it the whole cap.
    #[must_use]
    pub fn connections_per_client(&self) -> usize {
        self.max_connections_per_client
            .unwrap_or(self.max_connections.div_ceil(2))
            .clamp(1, self.max_connections.max(1))
    }
}

impl std::fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerConfig")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("workspace", &self.workspace)
            .field("token", &self.token.as_ref().map(|_| "[REDACTED]"))
            .field("cors", &self.cors)
            .field("max_body_size", &self.max_body_size)
            .field("max_sessions", &self.max_sessions)
            .field("max_flows", &self.max_flows)
            .field("max_connections", &self.max_connections)
            .field("max_connections_per_client", &self.max_connections_per_client)
            .field("redis", &self.redis.as_deref().map(shown_url))
            .finish_non_exhaustive()
    }
}

/// Why a server did not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    /// A non-loopback address without a token.
    #[error(
        "refusing to listen on `{host}` without a token: anyone who can reach it could send requests from this machine"
    )]
    OpenToNetwork {
        /// The host asked for.
        host: String,
    },
    /// The workspace is not a directory.
    #[error("the workspace `{}` is not a directory: {source}", path.display())]
    Workspace {
        /// The directory asked for.
        path: PathBuf,
        /// What the filesystem said.
        source: std::io::Error,
    },
    /// The address could not be bound.
    #[error("cannot listen on {address}: {source}")]
    Bind {
        /// `host:port`.
        address: String,
        /// What the system said.
        source: std::io::Error,
    },
    /// An empty token.
    #[error("the token is empty")]
    EmptyToken,
    /// `--redis` was given and Redis cannot be used.
    #[error(transparent)]
    Redis(#[from] RedisError),
    /// A connection limit of zero: no connection could ever be served.
    #[error("`{name}` must be more than zero")]
    ZeroLimit {
        /// The setting.
        name: &'static str,
    },
}

impl StartError {
    /// How to fix it.
    #[must_use]
    pub fn hint(&self) -> Option<&'static str> {
        match self {
            Self::OpenToNetwork { .. } => {
                Some("pass --token <secret> (clients then send `Authorization: Bearer <secret>`), or bind 127.0.0.1")
            }
            Self::Bind { .. } => Some("pick another --port, or --port 0 for a free one"),
            Self::Workspace { .. } => Some("pass --workspace <directory>"),
            Self::EmptyToken => Some("pass a non-empty --token"),
            Self::Redis(_) => Some(
                "start redis-server (e.g. `redis-server --port 6379`) and pass its URL: --redis redis://127.0.0.1:6379/",
            ),
            Self::ZeroLimit { .. } => None,
        }
    }
}

/// Checks the rules that apply before binding.
pub(crate) fn check(config: &ServerConfig) -> Result<(), StartError> {
    if config.token.as_deref().is_some_and(str::is_empty) {
        return Err(StartError::EmptyToken);
    }
    if config.token.is_none() && !is_loopback(&config.host) {
        return Err(StartError::OpenToNetwork { host: config.host.clone() });
    }
    let zero = [
        ("max_connections", config.max_connections == 0),
        ("max_connections_per_client", config.max_connections_per_client == Some(0)),
        ("header_read_timeout", config.header_read_timeout.is_zero()),
        ("keep_alive_timeout", config.keep_alive_timeout.is_zero()),
        ("write_timeout", config.write_timeout.is_zero()),
    ];
    if let Some((name, _)) = zero.into_iter().find(|(_, zero)| *zero) {
        return Err(StartError::ZeroLimit { name });
    }
    Ok(())
}

/// `127.0.0.0/8`, `::1` and `localhost` are loopback; everything else (`0.0.0.0`,
/// other names) is not.
#[must_use]
pub fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    host.parse::<IpAddr>().is_ok_and(|address| address.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts() {
        for host in ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "LOCALHOST"] {
            assert!(is_loopback(host), "{host}");
        }
        for host in ["0.0.0.0", "::", "192.168.1.2", "example.com", "localhost.example.com"] {
            assert!(!is_loopback(host), "{host}");
        }
    }

    #[test]
    fn open_address_needs_a_token() {
        let open = ServerConfig { host: "0.0.0.0".to_owned(), ..ServerConfig::default() };
        assert!(matches!(check(&open), Err(StartError::OpenToNetwork { .. })));
        let with_token = ServerConfig { token: Some("t".to_owned()), ..open };
        assert!(check(&with_token).is_ok());
        let empty = ServerConfig { token: Some(String::new()), ..ServerConfig::default() };
        assert!(matches!(check(&empty), Err(StartError::EmptyToken)));
    }

    #[test]
    fn connection_limits_are_more_than_zero() {
        let no_connections = ServerConfig { max_connections: 0, ..ServerConfig::default() };
        assert!(matches!(check(&no_connections), Err(StartError::ZeroLimit { name: "max_connections" })));
        let no_time = ServerConfig { header_read_timeout: Duration::ZERO, ..ServerConfig::default() };
        assert!(matches!(check(&no_time), Err(StartError::ZeroLimit { name: "header_read_timeout" })));
        let no_share = ServerConfig { max_connections_per_client: Some(0), ..ServerConfig::default() };
        assert!(matches!(check(&no_share), Err(StartError::ZeroLimit { name: "max_connections_per_client" })));
        let no_write = ServerConfig { write_timeout: Duration::ZERO, ..ServerConfig::default() };
        assert!(matches!(check(&no_write), Err(StartError::ZeroLimit { name: "write_timeout" })));
    }

    #[test]
    fn a_client_holds_half_the_connections_by_default() {
        assert_eq!(ServerConfig::default().connections_per_client(), 256);
        let small = ServerConfig { max_connections: 3, ..ServerConfig::default() };
        assert_eq!(small.connections_per_client(), 2);
        let one = ServerConfig { max_connections: 1, ..ServerConfig::default() };
        assert_eq!(one.connections_per_client(), 1);
        let set = ServerConfig { max_connections_per_client: Some(600), ..ServerConfig::default() };
        assert_eq!(set.connections_per_client(), 512, "never more than the cap");
    }
}

/// `--redis` could not be used.
#[derive(Debug, thiserror::Error)]
#[error("cannot use Redis at {url}: {message}")]
pub struct RedisError {
    /// The URL, its password hidden.
    pub url: String,
    /// What went wrong.
    pub message: String,
}

/// `url` without its password, for messages.
pub(crate) fn shown_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        _ => url.to_owned(),
    }
}
