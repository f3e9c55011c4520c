//! `volley auth`: the OAuth 2.0 tokens `volley run --token-cache` keeps between runs.

use crate::exit::Exit;

/// What to do with the token cache.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum AuthCommand {
    /// Remove the token cache (`$XDG_CACHE_HOME/volley/tokens.json`, else
    /// `~/.cache/volley/tokens.json`): the next run signs in again.
    Clear,
    /// Print where the token cache is, and whether it exists.
    Path,
}

pub(crate) fn run(command: &AuthCommand) -> Exit {
    let Some(path) = volley_engine::auth::default_token_cache() else {
        crate::output::error_line("error: no cache directory: neither XDG_CACHE_HOME nor HOME is set");
        return Exit::Usage;
    };
    match command {
        AuthCommand::Clear => match volley_engine::auth::clear_token_cache(&path) {
            Ok(true) => crate::output::line(&format!("removed {}", path.display())),
            Ok(false) => crate::output::line(&format!("no token cache at {}: nothing to remove", path.display())),
            Err(error) => {
                crate::output::error_line(&format!("error: cannot remove {}: {error}", path.display()));
                return Exit::Usage;
            }
        },
        AuthCommand::Path => {
            let state = if path.exists() { "exists" } else { "not created yet" };
            crate::output::line(&format!("{} ({state})", path.display()));
        }
    }
    Exit::Success
}
