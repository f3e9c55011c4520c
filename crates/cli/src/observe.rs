//! `volley observe`: the terminal observer of a running `volley serve`.

use anyhow::Context as _;

use crate::exit::Exit;

/// Arguments of `volley observe`.
#[derive(Debug, clap::Args)]
#[command(after_long_help = OBSERVE_EXAMPLES)]
pub(crate) struct ObserveArgs {
    /// The server to watch.
    #[arg(
        long,
        env = "VOLLEY_SERVER",
        hide_env_values = true,
        default_value = "http://127.0.0.1:4097",
        value_name = "URL"
    )]
    server: String,

    /// The server's bearer token (or a scoped token). With a token, --flow or --session
    /// is needed: such servers only stream a flow or a session to observers.
    #[arg(long, env = "VOLLEY_TOKEN", hide_env_values = true, value_name = "TOKEN")]
    token: Option<String>,

    /// Watch one flow (its past events first, then live; resumed where it was left
    /// after a reconnection).
    #[arg(long, env = "VOLLEY_FLOW_ID", hide_env_values = true, value_name = "ID")]
    flow: Option<String>,

    /// Watch one session.
    #[arg(long, env = "VOLLEY_SESSION_ID", hide_env_values = true, value_name = "ID")]
    session: Option<String>,
}

const OBSERVE_EXAMPLES: &str = "\
Keys:
  ↑ ↓ j k, PgUp PgDn, Home End   move (or scroll an open detail); the mouse wheel too
  Enter                          details of an execution (from the execution store), of a
                                 WebSocket session, or (in the flows pane) only that flow
  Tab                            next pane: executions, flows, WebSocket sessions
  /                              filter by method, URL, status, label (Enter keeps, Esc clears)
  f                              follow the newest execution (on at start)
  Esc                            close the detail, clear the filters
  q, Ctrl-C                      quit

The observer keeps the last 20,000 executions and 1,000 messages per WebSocket
session, and reconnects by itself after a drop or a server restart (docs/observer.md).
The same view is in the browser at the server's address.

Examples:
  volley observe                                 the server on 127.0.0.1:4097
  volley observe --server http://10.0.0.5:4097 --token \"$TOKEN\" --flow flow_1a2b";

pub(crate) fn run(args: &ObserveArgs) -> anyhow::Result<Exit> {
    let server = url::Url::parse(&args.server)
        .ok()
        .filter(|url| matches!(url.scheme(), "http" | "https") && url.host().is_some())
        .with_context(|| {
            format!("`{}` is not a server URL\n  hint: give http://HOST:PORT, as `volley serve` prints it", args.server)
        })?;
    let nonempty = |value: &Option<String>| value.clone().filter(|value| !value.is_empty());
    let target = volley_observe::Target {
        server,
        token: nonempty(&args.token),
        flow: nonempty(&args.flow),
        session: nonempty(&args.session),
    };
    let runtime =
        tokio::runtime::Builder::new_multi_thread().enable_all().build().context("cannot start the async runtime")?;
    runtime.block_on(volley_observe::run(target))?;
    Ok(Exit::Success)
}
