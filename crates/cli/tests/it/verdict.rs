//! `volley check` and `volley run` give one verdict: on a table of files, each broken
//! the way a newcomer breaks them, the errors `check` reports are the ones `run` refuses
//! before sending (same code, same line), a warning stops neither, and `check` fails
//! exactly when `run` refuses something. Files that are fine for a run (a variable set
//! by a script, another file's request, a `--var`, a profile given) pass both.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use volley_echo_server::TestServer;

const CONFIG: &str = r#"{
  "profiles": {"dev": {"variables": {"token": "dev-token"}}, "prod": {"variables": {"token": "prod-token"}}}
}"#;

/// What every file starts with: the test server's address. The lines of the cases are
/// counted after it.
const HEAD: &str = "@base = {{$env(BASE)}}\n\n";
const HEAD_LINES: u64 = 2;

/// `(name, files, extra arguments, the errors both must find as (code, file, line))`.
type Case = (
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static [&'static str],
    &'static [(&'static str, &'static str, u64)],
);

const CASES: &[Case] = &[
    (
        "undefined variable",
        &[("a.http", "GET {{base}}/echo/{{userId}}\n")],
        &[],
        &[("undefined-variable", "a.http", 1)],
    ),
    (
        "a profile's variable without -p",
        &[("a.http", "GET {{base}}/echo\nAuthorization: Bearer {{token}}\n")],
        &[],
        &[("undefined-variable", "a.http", 2)],
    ),
    (
        "a profile's variable with -p",
        &[("a.http", "GET {{base}}/echo\nAuthorization: Bearer {{token}}\n")],
        &["-p", "dev"],
        &[],
    ),
    ("a --var", &[("a.http", "GET {{base}}/echo/{{id}}\n")], &["--var", "id=7"], &[]),
    ("an unknown scheme", &[("a.http", "GET htp://127.0.0.1:1/echo\n")], &[], &[("invalid-url", "a.http", 1)]),
    ("a port out of range", &[("a.http", "GET http://127.0.0.1:99999/echo\n")], &[], &[("invalid-url", "a.http", 1)]),
    ("a space before the path", &[("a.http", "GET http://127.0.0.1:1 /echo\n")], &[], &[("invalid-url", "a.http", 1)]),
    ("a scheme without its colon", &[("a.http", "GET http//127.0.0.1:1/echo\n")], &[], &[("invalid-url", "a.http", 1)]),
    (
        "an invalid assertion",
        &[("a.http", "# @assert status = 200\nGET {{base}}/echo\n")],
        &[],
        &[("invalid-assertion", "a.http", 1)],
    ),
    (
        "a missing body file",
        &[("a.http", "POST {{base}}/echo\n\n< ./missing.json\n")],
        &[],
        &[("missing-file", "a.http", 3)],
    ),
    (
        "a body file outside the project",
        &[("a.http", "POST {{base}}/echo\n\n< ../../etc/hostname\n")],
        &[],
        &[("external-file", "a.http", 3)],
    ),
    (
        "a misspelt directive",
        &[("a.http", "# @asert status == 200\nGET {{base}}/echo\n")],
        &[],
        &[("misspelt-directive", "a.http", 1)],
    ),
    // A warning: shown by both, sent by the run, failing neither.
    (
        "an invalid JSON body",
        &[("a.http", "POST {{base}}/echo\nContent-Type: application/json\n\n{\"a\": 1,}\n")],
        &[],
        &[],
    ),
    (
        "a variable a script sets",
        &[(
            "a.http",
            "# @name login\nPOST {{base}}/echo\n\n> {%\nclient.global.set(\"session\", response.body.method);\n%}\n\n###\nGET {{base}}/echo/{{session}}\n",
        )],
        &[],
        &[],
    ),
    (
        "another file's request and script",
        &[
            ("1-auth.http", "# @name login\nPOST {{base}}/echo\n\n> {%\nclient.global.set('sid', 'abc');\n%}\n"),
            ("2-me.http", "GET {{base}}/echo/{{login.response.body.$.method}}/{{sid}}\n"),
        ],
        &[],
        &[],
    ),
];

/// A folder of its own (a `.git` marks its root), removed on drop.
struct Folder(PathBuf);

impl Folder {
    fn new(name: &str, files: &[(&str, &str)]) -> Self {
        let slug: String =
            name.chars().map(|character| if character.is_alphanumeric() { character } else { '-' }).collect();
        let dir = std::env::temp_dir().join(format!("volley-verdict-{slug}-{}", std::process::id()));
        std::fs::remove_dir_all(&dir).ok();
        std::fs::create_dir_all(dir.join(".git")).unwrap();
        std::fs::write(dir.join("volley.jsonc"), CONFIG).unwrap();
        for (file, text) in files {
            std::fs::write(dir.join(file), format!("{HEAD}{text}")).unwrap();
        }
        Self(dir)
    }

    fn volley(&self, server: &TestServer, arguments: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_volley"))
            .args(arguments)
            .current_dir(&self.0)
            .env("NO_COLOR", "1")
            .env("BASE", server.base_url())
            .env_remove("VOLLEY_PROFILE")
            .env_remove("VOLLEY_SERVER")
            .output()
            .unwrap()
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.0).ok();
    }
}

/// The errors of JSON lines, as `(code, file, line)`: `check --json`'s files, or
/// `run --json`'s diagnostics records.
fn errors(stdout: &[u8], kind: &str) -> BTreeSet<(String, String, u64)> {
    let mut found = BTreeSet::new();
    for line in String::from_utf8_lossy(stdout).lines() {
        let record: Value = serde_json::from_str(line).unwrap_or_else(|_| panic!("JSON line: {line}"));
        let (file, diagnostics) = match kind {
            "check" => (record["path"].as_str().unwrap().to_owned(), &record["diagnostics"]),
            _ if record["type"] == "diagnostics" => {
                (record["file"].as_str().unwrap().to_owned(), &record["diagnostics"])
            }
            _ => continue,
        };
        for diagnostic in diagnostics.as_array().unwrap() {
            if diagnostic["severity"] == "error" {
                let code = diagnostic["code"].as_str().unwrap().to_owned();
                found.insert((code, file.clone(), diagnostic["line"].as_u64().unwrap()));
            }
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread")]
async fn check_and_run_give_one_verdict() {
    let server = TestServer::start().await;
    for (name, files, extra, expected) in CASES {
        let folder = Folder::new(name, files);
        let names: Vec<&str> = files.iter().map(|(file, _)| *file).collect();
        let mut check_args = vec!["check", "--json"];
        check_args.extend(*extra);
        check_args.extend(&names);
        let mut run_args = vec!["run", "--json"];
        run_args.extend(*extra);
        run_args.extend(&names);
        let check = folder.volley(&server, &check_args);
        let run = folder.volley(&server, &run_args);
        let expected: BTreeSet<(String, String, u64)> = expected
            .iter()
            .map(|(code, file, line)| ((*code).to_owned(), (*file).to_owned(), line + HEAD_LINES))
            .collect();
        let context = format!(
            "{name} in {}\ncheck: {}\nrun: {}{}",
            folder.path().display(),
            String::from_utf8_lossy(&check.stdout),
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr)
        );
        assert_eq!(errors(&check.stdout, "check"), expected, "check, {context}");
        assert_eq!(errors(&run.stdout, "run"), expected, "run, {context}");
        let (checked, ran) = if expected.is_empty() { (0, 0) } else { (1, 3) };
        assert_eq!(check.status.code(), Some(checked), "check exit, {context}");
        assert_eq!(run.status.code(), Some(ran), "run exit, {context}");
    }
}

/// A text made to be slow to parse (millions of header lines: seconds per MiB in a debug
/// build) is not checked for minutes: `check` stops at the parse budget the execution
/// server has, says so, and fails.
#[test]
fn check_stops_at_the_parse_budget() {
    let folder = std::env::temp_dir().join(format!("volley-parse-budget-{}", std::process::id()));
    std::fs::create_dir_all(&folder).unwrap();
    let path = folder.join("junk.http");
    std::fs::write(&path, format!("GET http://127.0.0.1:1/\n{}", "a\n".repeat(2 * 1024 * 1024))).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_volley"))
        .args(["check", "junk.http"])
        .current_dir(&folder)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{said}");
    // Whichever limit comes first on this machine: the time, or the trees' memory.
    assert!(
        said.contains("`junk.http` was not checked: parsing it took longer than 5 s, the parse budget")
            || said.contains("`junk.http` was not checked: parsing it needed more than 512 MiB of syntax trees"),
        "{said}"
    );
    assert!(said.contains("megabytes of short lines"), "{said}");
    std::fs::remove_dir_all(&folder).unwrap();
}
