//! `volley lsp`: the language server on stdin/stdout, for editors.

use anyhow::Context as _;

use crate::exit::Exit;

/// Serves until the editor sends `exit`: 0 after a `shutdown`, 1 without one.
pub(crate) fn run() -> anyhow::Result<Exit> {
    let runtime =
        tokio::runtime::Builder::new_multi_thread().enable_all().build().context("cannot start the async runtime")?;
    let clean = runtime.block_on(volley_lsp::serve_stdio());
    // Blocking analysis tasks of a closed session must not keep the process alive.
    runtime.shutdown_background();
    Ok(if clean { Exit::Success } else { Exit::Failed })
}
