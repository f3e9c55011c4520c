//! `volley echo-server`: the local server of Volley's tests, for trying `.http` files
//! and the examples without the network.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::process::Stdio;

use anyhow::Context as _;

use crate::exit::Exit;

/// Arguments of `volley echo-server`.
#[derive(Debug, clap::Args)]
#[command(after_long_help = ECHO_EXAMPLES)]
pub(crate) struct EchoArgs {
    /// The port to listen on (0 picks a free one).
    #[arg(long, default_value_t = 8088)]
    port: u16,

    /// The address to listen on.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    host: IpAddr,

    /// A command to run once the server listens; the server stops when it ends, and
    /// `volley` exits with its code. `VOLLEY_ECHO_URL` is set for it.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

const ECHO_EXAMPLES: &str = "\
Routes:
  /echo, /echo/*         the request as JSON (method, path, query, headers, body)
  /status/{code}         answers with that status
  /drain                 reads the body, answers with its length
  /redirect/N            N redirects, then /redirect/0
  /cookies/set?k=v       sets cookies; /cookies shows the ones sent
  /basic-auth, /digest-auth, /login, /bearer, /session, /api-key, /api-key-query
                         authentication patterns (user ada, password lovelace, key test-api-key)
  /oauth/token, /refresh, /expiring
                         OAuth client credentials (volley-client, volley-secret), token refresh
  /stats                 requests per path, event streams still open
  /slow?ms=N             answers after N ms
  /upload                multipart forms
  /sse/events, /sse/slow, /sse/never, /sse/forever, /sse/fast, /sse/status/{code}
                         Server-Sent Events (scripted, slow, stalled, endless, fast, errors)
  /ws/echo, /ws/close, /ws/binary, /ws/hang, /ws/reject, /ws/headers, /ws/count
                         WebSockets (echo, server close, binary, hung or refused handshake)

Examples:
  volley echo-server                                   serve on 127.0.0.1:8088
  volley echo-server -- volley run examples/quickstart.http";

pub(crate) fn run(args: &EchoArgs) -> anyhow::Result<Exit> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        let address = SocketAddr::new(args.host, args.port);
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .with_context(|| format!("cannot listen on {address} (is the port taken? try --port 0)"))?;
        let local = listener.local_addr()?;
        let url = format!("http://{local}");
        let server = tokio::spawn(volley_echo_server::serve(listener));
        let Some((program, arguments)) = args.command.split_first() else {
            anstream::eprintln!("echo server listening on {url} (Ctrl-C stops it)");
            server.await.context("the server stopped")??;
            return Ok(Exit::Success);
        };
        let status = tokio::process::Command::new(program)
            .args(arguments)
            .env("VOLLEY_ECHO_URL", &url)
            .stdin(Stdio::inherit())
            .status()
            .await
            .with_context(|| format!("cannot run `{program}`"))?;
        server.abort();
        Ok(match status.code() {
            Some(0) => Exit::Success,
            Some(code) => Exit::Code(u8::try_from(code).unwrap_or(1)),
            None => Exit::Failed,
        })
    })
}
