//! `volley serve`: the execution server. Reads its flags, prints where it listens and
//! what it found, logs to stderr, and stops gracefully on Ctrl-C or SIGTERM.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use volley_server::{
    DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_KEEP_ALIVE_TIMEOUT, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_SESSIONS,
    DEFAULT_MAX_WS_SESSIONS, DEFAULT_PORT, DEFAULT_WRITE_TIMEOUT, Server, ServerConfig,
};

use crate::exit::Exit;

/// Arguments of `volley serve`.
#[derive(Debug, clap::Args)]
#[command(after_long_help = SERVE_EXAMPLES)]
pub(crate) struct ServeArgs {
    /// The port to listen on (0 picks a free one and prints it).
    #[arg(long, default_value_t = DEFAULT_PORT)]
    port: u16,

    /// The address to listen on. Anything but loopback (`127.0.0.1`, `::1`, `localhost`)
    /// needs --token.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,

    /// The directory .http files, body files and volley.jsonc are read from; paths
    /// outside it are refused.
    #[arg(long, value_name = "DIR", default_value = ".")]
    workspace: PathBuf,

    /// Require `Authorization: Bearer <TOKEN>` on every request.
    #[arg(long, env = "VOLLEY_TOKEN", hide_env_values = true)]
    token: Option<String>,

    /// More origins allowed by CORS (comma-separated), besides `http://localhost:*` and
    /// `http://127.0.0.1:*`.
    #[arg(long, value_name = "ORIGINS", value_delimiter = ',')]
    cors: Vec<String>,

    /// Largest request body accepted and response body captured: bytes, or with a
    /// unit (`512KiB`, `10MiB`, `1MB`).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "10MiB")]
    max_body_size: usize,

    /// Most sessions open at once; creating one more answers 429.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_SESSIONS)]
    max_sessions: usize,

    /// Most server-owned WebSocket sessions open at once; one more answers 429.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_WS_SESSIONS)]
    max_ws_sessions: usize,

    /// Most connections served at once, WebSockets included. More wait to be accepted
    /// until one closes; keep it under the file descriptor limit (`ulimit -n`).
    #[arg(long, value_name = "N", value_parser = parse_count, default_value_t = DEFAULT_MAX_CONNECTIONS)]
    max_connections: usize,

    /// Most connections one client address holds at once (an IPv6 address counts as
    /// its /64); one more is answered 429 and closed. Default: half of
    /// --max-connections, far more than local clients open together; behind a proxy,
    /// where every connection has the proxy's address, give it --max-connections.
    #[arg(long, value_name = "N", value_parser = parse_count)]
    max_connections_per_client: Option<usize>,

    /// Milliseconds a client has to send a request's head, counted from the connection's
    /// opening or from the first byte of a later request; also the longest pause in a
    /// request body. Then the connection is closed (after a 408 when a part of the
    /// request came).
    #[arg(
        long,
        value_name = "MS",
        value_parser = clap::value_parser!(u64).range(1..),
        default_value_t = DEFAULT_HEADER_READ_TIMEOUT.as_secs() * 1000
    )]
    header_timeout: u64,

    /// Milliseconds a keep-alive connection may wait for its next request before it is
    /// closed.
    #[arg(
        long,
        value_name = "MS",
        value_parser = clap::value_parser!(u64).range(1..),
        default_value_t = DEFAULT_KEEP_ALIVE_TIMEOUT.as_secs() * 1000
    )]
    keep_alive_timeout: u64,

    /// Milliseconds the server waits for a client that stopped reading its answer (a
    /// plain one, a Server-Sent Events stream, a WebSocket): a write blocked this long
    /// closes the connection.
    #[arg(
        long,
        value_name = "MS",
        value_parser = clap::value_parser!(u64).range(1..),
        default_value_t = DEFAULT_WRITE_TIMEOUT.as_secs() * 1000
    )]
    write_timeout: u64,

    /// Environment variables that callers with a scoped token may read through `$env`,
    /// `$processEnv` and `$secret` (comma-separated names). Without it they read none;
    /// the main token's holder reads the server's environment, and nobody reads the
    /// token itself.
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    allow_env: Vec<String>,

    /// Share sessions, flows, stored executions, observer events (with their replay),
    /// scoped tokens and WebSocket sessions with every instance given the same Redis,
    /// e.g. `redis://127.0.0.1:6379/`: run several behind a load balancer
    /// (docs/cluster.md). Without it everything stays in this process's memory.
    #[arg(long, value_name = "URL", env = "VOLLEY_REDIS", hide_env_values = true)]
    redis: Option<String>,

    /// The prefix of every Redis key, so that several clusters may share one Redis.
    #[arg(long, value_name = "PREFIX", default_value = "volley:", requires = "redis")]
    redis_prefix: String,

    /// Log lines on stderr as text or JSON (level from `RUST_LOG`, default `info`).
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

const SERVE_EXAMPLES: &str = "\
Routes (protocol 1.1, docs/protocol.md; the OpenAPI document is at /doc):
  GET  /, /ui                            the observer page (no token needed to load it)
  GET  /health, /capabilities, /doc
  POST /execute, /execute/sse            run a request of a .http text or file
  POST /session   GET|DELETE /session/{id}   PUT /session/{id}/variables
  POST /flows     POST /flows/{id}/finish    GET /flows/{id}/executions/{reqExecId}
  POST /execute/ws                       open a server-owned WebSocket session
  GET  /ws/session/{id}?afterSeq=        its control socket (replay, then live); DELETE closes it
  GET  /event?sessionId=&flowId=         observer events (Server-Sent Events)
  GET  /event/ws?flowId=&afterSeq=       observer events (WebSocket, with replay)
  POST /tokens    DELETE /tokens/{jti}   scoped tokens (needs --token)
  GET  /workspace/files, /workspace/requests?path=   the .http files and their requests
  GET|POST|PUT|DELETE /workspace/file    read, create, update, delete a .http file
  POST /parse     GET /config   GET /plugins   POST /import/{source}/preview|apply
  /script*, /test*                       not served (501): no scripts or test suites run

Examples:
  volley serve                              127.0.0.1:4097, this directory
  volley serve --port 0                     a free port (printed)
  volley serve --host 0.0.0.0 --token \"$SECRET\"
  volley serve --redis redis://127.0.0.1:6379/  one of several instances (docs/cluster.md)
  volley run api.http --server http://127.0.0.1:4097";

pub(crate) fn run(args: &ServeArgs) -> anyhow::Result<Exit> {
    init_logging(args.log_format);
    let runtime =
        tokio::runtime::Builder::new_multi_thread().enable_all().build().context("cannot start the async runtime")?;
    runtime.block_on(serve(args))
}

async fn serve(args: &ServeArgs) -> anyhow::Result<Exit> {
    let config = ServerConfig {
        host: args.host.clone(),
        port: args.port,
        workspace: args.workspace.clone(),
        token: args.token.clone(),
        allow_env: args.allow_env.clone(),
        cors: args.cors.clone(),
        max_body_size: args.max_body_size,
        max_sessions: args.max_sessions,
        max_ws_sessions: args.max_ws_sessions,
        max_connections: args.max_connections,
        max_connections_per_client: args.max_connections_per_client,
        header_read_timeout: Duration::from_millis(args.header_timeout),
        keep_alive_timeout: Duration::from_millis(args.keep_alive_timeout),
        write_timeout: Duration::from_millis(args.write_timeout),
        redis: args.redis.clone(),
        redis_prefix: args.redis_prefix.clone(),
        ..ServerConfig::default()
    };
    let per_client = config.connections_per_client();
    let server = match Server::bind(config).await {
        Ok(server) => server,
        Err(error) => {
            let hint = error.hint().map(str::to_owned);
            anstream::eprintln!("{}", crate::render::plain(&error.to_string(), hint.as_deref()));
            return Ok(Exit::Failed);
        }
    };
    let address = server.local_addr();
    let base = if address.is_ipv6() {
        format!("http://[{}]:{}", address.ip(), address.port())
    } else {
        format!("http://{address}")
    };
    let workspace = server.workspace().to_path_buf();
    let config = match volley_engine::config::Config::discover(
        &volley_engine::io::RealFs,
        &workspace,
        &volley_engine::resolvers::Environment::process(),
    ) {
        Ok(Some(config)) => {
            let profiles: Vec<&str> = config.profiles.keys().map(String::as_str).collect();
            let profiles =
                if profiles.is_empty() { String::new() } else { format!(" (profiles: {})", profiles.join(", ")) };
            format!("{}{profiles}", config.path.display())
        }
        Ok(None) => "none found (volley.jsonc, http-client.env.json)".to_owned(),
        Err(error) => format!("broken: {error}"),
    };
    let auth = if args.token.is_some() { "bearer token required" } else { "none (loopback only)" };
    crate::output::line(&format!("volley serve: listening on {base}"));
    crate::output::line(&format!("  workspace  {}", workspace.display()));
    crate::output::line(&format!("  config     {config}"));
    crate::output::line(&format!("  auth       {auth}"));
    crate::output::line(&format!("  observer   {base}/ (live page; `volley observe` in a terminal)"));
    if let Some(url) = &args.redis {
        crate::output::line(&format!(
            "  shared     Redis {} (sessions, flows, events, tokens, WebSocket sessions; keys `{}*`)",
            volley_server::shown_redis_url(url),
            args.redis_prefix
        ));
    }
    crate::output::line(&format!(
        "  limits     bodies {}, {} sessions, {} WebSocket sessions, {} connections ({} per client address)",
        format_size(args.max_body_size),
        args.max_sessions,
        args.max_ws_sessions,
        args.max_connections,
        per_client
    ));
    crate::output::line(&format!("  api        {base}/doc (OpenAPI); Ctrl-C stops"));
    server.run(shutdown_signal()).await.context("the server failed")?;
    tracing::info!("stopped");
    Ok(Exit::Success)
}

/// Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {}
        () = terminate => {}
    }
}

fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder.with_ansi(anstream::stderr().is_terminal()).try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}

/// `1048576`, `512KiB`, `10MiB`, `1MB`, `2GiB`.
fn parse_size(text: &str) -> Result<usize, String> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: usize = number.parse().map_err(|_| format!("`{text}` is not a size (try 10MiB or 1048576)"))?;
    let factor: usize = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1000,
        "kib" => 1024,
        "m" | "mb" => 1_000_000,
        "mib" => 1024 * 1024,
        "g" | "gb" => 1_000_000_000,
        "gib" => 1024 * 1024 * 1024,
        other => return Err(format!("unknown size unit `{other}` (use B, KiB, MiB, GiB, KB, MB, GB)")),
    };
    let size = number.checked_mul(factor).ok_or_else(|| format!("`{text}` is too large"))?;
    if size == 0 {
        return Err("the size must be more than 0".to_owned());
    }
    Ok(size)
}

/// A count of one or more.
fn parse_count(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(0) => Err("the number must be more than 0".to_owned()),
        Ok(count) => Ok(count),
        Err(_) => Err(format!("`{text}` is not a number")),
    }
}

fn format_size(bytes: usize) -> String {
    if bytes.is_multiple_of(1024 * 1024) {
        format!("{} MiB", bytes / (1024 * 1024))
    } else if bytes.is_multiple_of(1024) {
        format!("{} KiB", bytes / 1024)
    } else {
        format!("{bytes} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1048576"), Ok(1_048_576));
        assert_eq!(parse_size("10MiB"), Ok(10 * 1024 * 1024));
        assert_eq!(parse_size("512 KiB"), Ok(512 * 1024));
        assert_eq!(parse_size("1MB"), Ok(1_000_000));
        assert!(parse_size("0").is_err());
        assert!(parse_size("ten").is_err());
        assert!(parse_size("5 parsecs").is_err());
        assert_eq!(format_size(10 * 1024 * 1024), "10 MiB");
    }

    #[test]
    fn counts() {
        assert_eq!(parse_count("512"), Ok(512));
        assert!(parse_count("0").is_err());
        assert!(parse_count("-1").is_err());
        assert!(parse_count("many").is_err());
    }
}
