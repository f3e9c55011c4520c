//! How a person takes part in a flow: the browser opened for the authorization-code
//! grant, the code shown for the device grant. Front ends give their own
//! (the engine's `ClientConfig::auth_prompt`: the language
//! server asks the editor); [`CommandPrompt`] is the default: `$VOLLEY_BROWSER`, then
//! `$BROWSER`, then the platform's opener, and the URL and the code on stderr.

use std::future::Future;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

tokio::task_local! {
    /// The prompt of the execution running on this task, over the client's own.
    static PROMPT: Arc<dyn AuthPrompt>;
}

/// Runs `future` (a send) with `prompt` in place of the client's: the execution server
/// gives each execution one that tells that execution's observers.
pub async fn with_prompt<F: Future>(prompt: Arc<dyn AuthPrompt>, future: F) -> F::Output {
    PROMPT.scope(prompt, future).await
}

/// The prompt [`with_prompt`] set for the running task, if any.
pub fn scoped_prompt() -> Option<Arc<dyn AuthPrompt>> {
    PROMPT.try_with(Arc::clone).ok()
}

/// What the device authorization grant asks a person to do (RFC 8628 §3.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceCode {
    /// The code to enter.
    pub user_code: String,
    /// Where to enter it.
    pub verification_uri: String,
    /// The same page with the code filled in, when the server gives one.
    pub verification_uri_complete: Option<String>,
    /// How long the code is valid.
    pub expires_in: Duration,
}

/// A front end's part in a flow that needs a person.
pub trait AuthPrompt: Send + Sync {
    /// Whether a person can sign in in a browser here at all; `false` (a server) makes
    /// the authorization-code grant fail at once, saying so, rather than wait.
    fn has_browser(&self) -> bool {
        true
    }

    /// Opens `url` (an authorization request) in a browser; `false` when no browser
    /// could be opened (the URL is then shown, and the flow waits for the redirect).
    fn open_browser(&self, url: &str) -> bool;

    /// Shows a device flow's code and where to enter it.
    fn show_device_code(&self, code: &DeviceCode);
}

/// The prompt of a process no person sits at (`volley serve`): no browser, so the
/// authorization-code grant fails at once; a device code is written to stderr, the
/// server's log.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoBrowserPrompt;

impl AuthPrompt for NoBrowserPrompt {
    fn has_browser(&self) -> bool {
        false
    }

    fn open_browser(&self, _: &str) -> bool {
        false
    }

    fn show_device_code(&self, code: &DeviceCode) {
        CommandPrompt.show_device_code(code);
    }
}

/// The default prompt: a browser command, and stderr.
#[derive(Debug, Clone, Copy, Default)]
pub struct CommandPrompt;

impl AuthPrompt for CommandPrompt {
    fn open_browser(&self, url: &str) -> bool {
        let opened = browser_commands().into_iter().any(|command| spawn(&command, url));
        if !opened {
            eprintln!("volley: open this URL in a browser to sign in (no browser could be started): {url}");
        }
        opened
    }

    fn show_device_code(&self, code: &DeviceCode) {
        let complete = code.verification_uri_complete.as_deref().map(|url| format!(" ({url})")).unwrap_or_default();
        eprintln!(
            "volley: to sign in, open {}{complete} and enter the code {} (valid {} s)",
            code.verification_uri,
            code.user_code,
            code.expires_in.as_secs()
        );
    }
}

/// The commands tried, in order: `$VOLLEY_BROWSER`, `$BROWSER` (`:`-separated, as
/// Debian's `sensible-browser` reads it), then the platform's opener.
fn browser_commands() -> Vec<String> {
    let mut commands = Vec::new();
    if let Ok(command) = std::env::var("VOLLEY_BROWSER")
        && !command.trim().is_empty()
    {
        // Set: only this one, so a test's stand-in never falls through to a real browser.
        return vec![command];
    }
    if let Ok(list) = std::env::var("BROWSER") {
        commands.extend(list.split(':').filter(|command| !command.trim().is_empty()).map(str::to_owned));
    }
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    commands.push(opener.to_owned());
    commands
}

/// Starts `command` with `url` (in place of `%s`, else as the last argument), detached;
/// `true` when it started.
fn spawn(command: &str, url: &str) -> bool {
    let Some(words) = shlex::split(command) else { return false };
    let mut words: Vec<String> = words;
    if words.iter().any(|word| word.contains("%s")) {
        for word in &mut words {
            *word = word.replace("%s", url);
        }
    } else {
        words.push(url.to_owned());
    }
    let Some((program, arguments)) = words.split_first() else { return false };
    let child =
        Command::new(program).args(arguments).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).spawn();
    match child {
        Ok(mut child) => {
            // Reaped when it ends; a browser may outlive the flow.
            std::thread::spawn(move || child.wait());
            true
        }
        Err(_) => false,
    }
}
