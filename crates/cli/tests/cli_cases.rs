//! End-to-end cases for the `volley` binary, as data: every folder under `tests/cli/`
//! holds `args` (the arguments, one per line), the input files, and the expected
//! `stdout`, `stderr` and `exit`. The binary runs in the case folder.
//!
//! Re-bless after an intended change: `VOLLEY_BLESS=1 cargo test -p volley-cli --test cli_cases`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/cli")
}

#[test]
fn cli_cases() {
    let bless = std::env::var_os("VOLLEY_BLESS").is_some();
    let mut cases: Vec<PathBuf> = std::fs::read_dir(cases_dir())
        .expect("tests/cli exists")
        .map(|entry| entry.expect("readable entry").path())
        .filter(|path| path.join("args").is_file())
        .collect();
    cases.sort();
    assert!(!cases.is_empty(), "no cases found in tests/cli");
    let mut failures = Vec::new();
    for case in &cases {
        let args_text = std::fs::read_to_string(case.join("args")).expect("args is readable");
        let args: Vec<&str> = args_text.lines().filter(|line| !line.is_empty()).collect();
        let output = Command::new(env!("CARGO_BIN_EXE_volley"))
            .args(&args)
            .current_dir(case)
            .env("NO_COLOR", "1")
            .env_remove("CLICOLOR_FORCE")
            .output()
            .expect("the volley binary runs");
        let actual = [
            ("stdout", String::from_utf8_lossy(&output.stdout).into_owned()),
            ("stderr", String::from_utf8_lossy(&output.stderr).into_owned()),
            ("exit", format!("{}\n", output.status.code().map_or("signal".to_owned(), |code| code.to_string()))),
        ];
        for (name, actual) in actual {
            let path = case.join(name);
            if bless {
                std::fs::write(&path, &actual).expect("expected output is writable");
                continue;
            }
            let expected = std::fs::read_to_string(&path).unwrap_or_default();
            if expected != actual {
                failures.push(format!(
                    "{}/{name}:\n--- expected\n{expected}\n--- actual\n{actual}",
                    case.file_name().unwrap_or_default().to_string_lossy()
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches (re-bless with VOLLEY_BLESS=1):\n\n{}",
        failures.len(),
        failures.join("\n")
    );
}
