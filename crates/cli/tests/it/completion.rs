//! Shell completion in real shells: the script of `volley completions SHELL` sourced in
//! bash and zsh, its completion function called as the shell calls it, and what it
//! offers read back (zsh's `_describe` and `compdef` replaced by functions that print,
//! since they need an interactive completion system).
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A project with profiles and named requests in two files.
fn project(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("volley-completion-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    std::fs::write(
        dir.join("volley.jsonc"),
        r#"{ "profiles": { "dev": { "variables": { "host": "a" } }, "prod": {}, "staging": {} } }"#,
    )
    .unwrap();
    std::fs::write(dir.join("api.http"), "### login\nPOST http://x/login\n\n###\n# @name me\nGET http://x/me\n")
        .unwrap();
    std::fs::write(dir.join("other.http"), "# @name health\nGET http://x/health\n").unwrap();
    dir
}

/// `volley` on PATH, as the scripts call it by name.
fn path() -> String {
    let binary = Path::new(env!("CARGO_BIN_EXE_volley"));
    format!("{}:{}", binary.parent().unwrap().display(), std::env::var("PATH").unwrap_or_default())
}

/// What `shell` prints running `script` in `dir`.
fn shell(shell: &str, dir: &Path, script: &str) -> String {
    let mut command = Command::new(shell);
    if shell == "zsh" {
        command.arg("-f");
    }
    let output = command
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .env("PATH", path())
        .env_remove("VOLLEY_PROFILE")
        .output()
        .unwrap_or_else(|error| panic!("{shell} could not be started ({error}); scripts/test installs it"));
    assert!(output.status.success(), "{shell}: {output:?}");
    String::from_utf8(output.stdout).unwrap()
}

/// The candidates bash offers for `line` (the last word being completed).
fn bash(dir: &Path, line: &str) -> Vec<String> {
    let script = format!(
        r#"source <(volley completions bash) || exit 1
COMP_WORDS=({line}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); COMP_TYPE=9
_clap_complete_volley volley "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
printf '%s\n' "${{COMPREPLY[@]}}""#
    );
    shell("bash", dir, &script).lines().filter(|line| !line.is_empty()).map(str::to_owned).collect()
}

/// The candidates zsh offers for `line`, as `value:description`.
fn zsh(dir: &Path, line: &str) -> Vec<String> {
    let script = format!(
        r#"compdef() {{ : }}
_describe() {{ print -rl -- "${{(@P)3}}" }}
source <(volley completions zsh) || exit 1
words=({line}); CURRENT=${{#words}}
_clap_dynamic_completer_volley"#
    );
    shell("zsh", dir, &script).lines().filter(|line| !line.is_empty()).map(str::to_owned).collect()
}

#[test]
fn bash_completes_profiles_request_names_and_subcommands() {
    let dir = project("bash");
    assert_eq!(bash(&dir, "volley run -p ''"), ["dev", "prod", "staging"]);
    assert_eq!(bash(&dir, "volley check -p s"), ["staging"]);
    assert_eq!(bash(&dir, "volley run --profile=p"), ["--profile=prod"]);
    // The names of the files on the line; without files, of the files below.
    assert_eq!(bash(&dir, "volley run api.http -n ''"), ["login", "me"]);
    assert_eq!(bash(&dir, "volley run -n ''"), ["login", "me", "health"]);
    assert_eq!(bash(&dir, "volley export curl other.http -n ''"), ["health"]);
    assert_eq!(bash(&dir, "volley ru"), ["run"]);
    assert_eq!(bash(&dir, "volley run api.http --na"), ["--name"]);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn zsh_completes_profiles_and_request_names_with_their_request_line() {
    let dir = project("zsh");
    assert_eq!(zsh(&dir, "volley run -p ''"), ["dev", "prod", "staging"]);
    assert_eq!(zsh(&dir, "volley run api.http -n m"), ["me:GET http://x/me"]);
    assert_eq!(
        zsh(&dir, "volley run . -n ''"),
        ["login:POST http://x/login", "me:GET http://x/me", "health:GET http://x/health"]
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn every_shell_gets_a_script_that_calls_volley_back() {
    for (shell, marker) in [
        ("bash", "-F _clap_complete_volley volley"),
        ("zsh", "#compdef volley"),
        ("fish", "complete --keep-order --exclusive --command volley"),
        ("elvish", "set edit:completion:arg-completer[volley]"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_volley")).args(["completions", shell]).output().unwrap();
        assert!(output.status.success(), "{shell}: {output:?}");
        let script = String::from_utf8(output.stdout).unwrap();
        assert!(script.contains(marker), "{shell}: no `{marker}` in {script}");
        assert!(script.contains("COMPLETE"), "{shell}: the script does not call volley back: {script}");
    }
}
