//! Command resolvers from the configuration: `"resolvers": {"token": {"type":
//! "command", "command": "pass show api/token"}}`.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use super::Environment;

/// A resolver that runs a shell command; its trimmed standard output is the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandResolver {
    /// The command line, run with `sh -c` (`cmd /C` on Windows). Arguments of the call
    /// are passed as positional parameters: `$1`, `$2`, ….
    pub command: String,
    /// The directory it runs in: the configuration file's.
    pub directory: PathBuf,
    /// How long it may run.
    pub timeout: Duration,
}

/// How long a command resolver may run unless its configuration says otherwise.
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

impl CommandResolver {
    /// Runs the command with `arguments` in what `environment` lets be read (see
    /// [`Environment::apply_to`]); the value, or a message saying why not.
    pub(crate) async fn run(&self, arguments: &[String], environment: &Environment) -> Result<String, String> {
        let mut command = if cfg!(windows) {
            let mut command = tokio::process::Command::new("cmd");
            command.arg("/C").arg(&self.command);
            command
        } else {
            let mut command = tokio::process::Command::new("sh");
            command.arg("-c").arg(&self.command).arg("volley");
            command
        };
        environment.apply_to(&mut command);
        command
            .args(arguments)
            .current_dir(&self.directory)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let child = command.spawn().map_err(|error| format!("cannot start `{}`: {error}", self.command))?;
        let output = match tokio::time::timeout(self.timeout, child.wait_with_output()).await {
            Ok(Ok(output)) => output,
            Ok(Err(error)) => return Err(format!("`{}` failed: {error}", self.command)),
            Err(_) => return Err(format!("`{}` did not finish within {} ms", self.command, self.timeout.as_millis())),
        };
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let detail = stderr.lines().rev().find(|line| !line.trim().is_empty()).unwrap_or("").trim();
            let status = output.status.code().map_or_else(|| "a signal".to_owned(), |code| format!("exit code {code}"));
            let detail = if detail.is_empty() { String::new() } else { format!(": {detail}") };
            return Err(format!("`{}` ended with {status}{detail}", self.command));
        }
        let stdout = String::from_utf8(output.stdout)
            .map_err(|_| format!("`{}` printed something that is not UTF-8", self.command))?;
        Ok(stdout.trim().to_owned())
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn resolver(command: &str, timeout: Duration) -> CommandResolver {
        CommandResolver { command: command.to_owned(), directory: std::env::temp_dir(), timeout }
    }

    #[tokio::test]
    async fn output_arguments_failures_and_timeouts() {
        let process = Environment::process();
        let echo = resolver("printf '  %s-%s  \\n' \"$1\" \"$2\"", DEFAULT_COMMAND_TIMEOUT);
        assert_eq!(echo.run(&["a".to_owned(), "b".to_owned()], &process).await.unwrap(), "a-b");
        let failing = resolver("echo nope >&2; exit 3", DEFAULT_COMMAND_TIMEOUT);
        let error = failing.run(&[], &process).await.unwrap_err();
        assert!(error.contains("exit code 3") && error.contains("nope"), "{error}");
        let slow = resolver("sleep 5", Duration::from_millis(100));
        assert!(slow.run(&[], &process).await.unwrap_err().contains("did not finish within 100 ms"));
    }

    #[tokio::test]
    async fn the_process_gets_what_the_environment_lets_be_read() {
        let home = std::env::var("HOME").expect("HOME is set for the tests");
        let show = &resolver("printf '%s|%s|%s' \"$HOME\" \"$GIVEN\" \"$OTHER\"", DEFAULT_COMMAND_TIMEOUT);
        let run = |environment: Environment| async move { show.run(&[], &environment).await.unwrap() };
        // The process environment, without what is hidden (by name, or by value).
        assert_eq!(run(Environment::process()).await, format!("{home}||"));
        assert_eq!(run(Environment::process().hiding(["HOME".to_owned()], [])).await, "||");
        assert_eq!(run(Environment::process().hiding([], [home.clone()])).await, "||");
        // Narrowed or fixed: the basics of the process, and what may be read.
        let fixed = || {
            Environment::fixed([("GIVEN".to_owned(), "given-value".to_owned()), ("OTHER".to_owned(), "o".to_owned())])
        };
        assert_eq!(run(fixed()).await, format!("{home}|given-value|o"));
        assert_eq!(run(fixed().allowing(["GIVEN".to_owned()])).await, format!("{home}|given-value|"));
        assert_eq!(run(fixed().hiding(["OTHER".to_owned()], ["given-value".to_owned()])).await, format!("{home}||"));
        assert_eq!(run(Environment::process().allowing(Vec::new())).await, format!("{home}||"));
        let path = &resolver("printf %s \"$PATH\"", DEFAULT_COMMAND_TIMEOUT);
        let narrowed = path.run(&[], &Environment::process().allowing(Vec::new())).await.unwrap();
        assert_eq!(narrowed, std::env::var("PATH").expect("PATH is set for the tests"));
    }
}
