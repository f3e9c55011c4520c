//! Reports against the test server: the reports merged from two runs of disjoint files
//! (as the shards of a CI matrix write them) equal the reports of one run of all the
//! files; the HTML report is one self-contained page that escapes what servers send
//! and never shows a secret; a file that is not a JSON report is refused, by name.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::LazyLock;

use regex::Regex;
use volley_echo_server::TestServer;

const A: &str = "@base = {{$env(BASE)}}

### passes
# @assert status == 200
# @assert jsonpath $.method == GET
GET {{base}}/echo

### fails
# @assert status == 201
GET {{base}}/status/200
";

const B: &str = "@base = {{$env(BASE)}}

### refused
GET http://127.0.0.1:1/refused

### off
# @disabled
GET {{base}}/echo
";

/// An unnamed request (its title is its request line) with a `#` in it.
const C: &str = "@base = {{$env(BASE)}}

###
# @assert status == 200
GET {{base}}/echo?tag=%23one
";

/// A folder of its own with the three files, removed on drop.
struct Suite(PathBuf);

impl Suite {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("volley-reports-{name}-{}", std::process::id()));
        std::fs::remove_dir_all(&dir).ok();
        std::fs::create_dir_all(dir.join(".git")).unwrap();
        for (file, text) in [("a.http", A), ("b.http", B), ("c.http", C)] {
            std::fs::write(dir.join(file), text).unwrap();
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

    fn read(&self, file: &str) -> String {
        std::fs::read_to_string(self.0.join(file)).unwrap_or_else(|error| panic!("{file}: {error}"))
    }
}

impl Drop for Suite {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.0).ok();
    }
}

/// Times and dates differ from run to run; nothing else may.
static VOLATILE: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    [
        (r"\d+(\.\d+)?( ms| s)\b", "T$2"),
        (r#"time="[0-9.]+""#, r#"time="T""#),
        (r#"(_ms"?:) ?[0-9.]+"#, "$1 T"),
        (r"(?m)^date: .*$", "date: D"),
        (r#""date",(\s*)"[^"]*""#, r#""date",$1"D""#),
        // When each run started: the merge keeps the earliest shard's.
        (r#""started_at": "[^"]*""#, r#""started_at": "S""#),
        (r"run on [0-9: -]+ UTC", "run on S UTC"),
    ]
    .into_iter()
    .map(|(pattern, replacement)| (Regex::new(pattern).unwrap(), replacement))
    .collect()
});

fn stable(text: &str) -> String {
    VOLATILE
        .iter()
        .fold(text.to_owned(), |text, (pattern, replacement)| pattern.replace_all(&text, *replacement).into_owned())
}

#[test]
fn merged_shards_equal_one_run_of_all_files() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(TestServer::start());
    let suite = Suite::new("merge");
    let every = ["--report", "json=all.json", "--report", "junit=all.xml", "--report", "tap=all.tap"];
    let whole = suite.volley(&server, &[&["run", "a.http", "b.http", "c.http", "-q"][..], &every[..]].concat());
    assert_eq!(whole.status.code(), Some(4), "{whole:?}");
    suite.volley(&server, &["run", "c.http", "a.http", "-q", "--report", "json=shard-1.json"]);
    suite.volley(&server, &["run", "b.http", "-q", "--report", "json=shard-2.json"]);
    // The shards in any order: the merge sorts the files.
    let merge = suite.volley(
        &server,
        &[
            "report",
            "merge",
            "shard-2.json",
            "shard-1.json",
            "--json",
            "m.json",
            "--junit",
            "m.xml",
            "--tap",
            "m.tap",
            "--html",
            "m.html",
        ],
    );
    assert_eq!(merge.status.code(), Some(0), "{merge:?}");
    assert_eq!(
        String::from_utf8_lossy(&merge.stderr),
        "merged 2 reports: 5 requests: 2 passed, 1 failed, 1 error, 1 skipped\n"
    );
    for (merged, whole) in [("m.json", "all.json"), ("m.xml", "all.xml"), ("m.tap", "all.tap")] {
        assert_eq!(stable(&suite.read(merged)), stable(&suite.read(whole)), "{merged} differs from {whole}");
    }
    // The HTML report of the run and of the merge: the same page.
    suite.volley(&server, &["run", "a.http", "b.http", "c.http", "-q", "--report", "html=all.html"]);
    assert_eq!(stable(&suite.read("m.html")), stable(&suite.read("all.html")));
    // The same with `--shard`, as a CI matrix runs it: the shards of the folder,
    // merged, are the run of the folder.
    suite.volley(&server, &["run", ".", "-q", "--report", "json=dir.json", "--report", "junit=dir.xml"]);
    for shard in ["1/2", "2/2"] {
        let report = format!("json=shard-{}.json", &shard[..1]);
        suite.volley(&server, &["run", ".", "-q", "--shard", shard, "--report", &report]);
    }
    let merge = suite
        .volley(&server, &["report", "merge", "shard-1.json", "shard-2.json", "--json", "s.json", "--junit", "s.xml"]);
    assert_eq!(merge.status.code(), Some(0), "{merge:?}");
    assert_eq!(stable(&suite.read("s.json")), stable(&suite.read("dir.json")));
    assert_eq!(stable(&suite.read("s.xml")), stable(&suite.read("dir.xml")));
    let tap = suite.read("m.tap");
    assert!(tap.starts_with("TAP version 14\n1..5\nok 1 - passes (a.http:6)\nnot ok 2 - fails (a.http:10)\n"), "{tap}");
    assert!(tap.contains("ok 4 - off (b.http:8) # SKIP not run: the request is disabled (`\\# @disabled`)\n"), "{tap}");
    assert!(tap.contains("ok 5 - GET {{base}}/echo?tag=%23one (c.http:5)\n"), "{tap}");
}

#[test]
fn the_html_report_is_self_contained_escaped_and_redacted() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(TestServer::start());
    let suite = Suite::new("html");
    let hostile = "@base = {{$env(BASE)}}
@apiToken = m4rk-html-token

### hostile
# @assert status == 201
POST {{base}}/echo?t={{apiToken}}
X-Token: {{apiToken}}
Content-Type: text/plain

</script><script>alert(1)</script>

### large
GET {{base}}/text/100000
";
    std::fs::write(suite.0.join("hostile.http"), hostile).unwrap();
    let run = suite.volley(&server, &["run", "hostile.http", "-q", "--report", "html=report.html"]);
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    let html = suite.read("report.html");
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert!(!html.contains("m4rk-html-token"), "the secret shows:\n{html}");
    assert!(html.contains("[REDACTED]"));
    assert!(!html.contains("<script"), "markup of the body is not escaped:\n{html}");
    assert!(html.contains("&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;"));
    // Nothing is fetched: no stylesheet, script, image or frame, inline or not.
    for tag in ["<link", "<script", "<img", "<iframe", "src=", "@import", "url("] {
        assert!(!html.contains(tag), "`{tag}` in the report");
    }
    let outside = Regex::new(r#"(href|src)="?https?://"#).unwrap();
    assert!(!outside.is_match(&html));
    // The failure, with what was expected and found, as values.
    assert!(html.contains("<code>status == 201</code></td><td>== 201</td><td>200</td>"), "{html}");
    assert!(html.contains("run on ") && html.contains(" UTC</p>"), "the date of the run: {html}");
    // The large body is cut, and says so.
    assert!(html.contains("the body is 97.7 KiB: only its first 64.0 KiB are shown"), "{html}");
}

#[test]
fn merge_refuses_what_is_not_a_json_report() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(TestServer::start());
    let suite = Suite::new("refuse");
    suite.volley(&server, &["run", "a.http", "-q", "--report", "json=a.json", "--report", "junit=a.xml"]);
    let refused = |report: &str| {
        let output = suite.volley(&server, &["report", "merge", "a.json", report, "--junit", "out.xml"]);
        assert_eq!(output.status.code(), Some(2), "{output:?}");
        assert!(!Path::new(&suite.0.join("out.xml")).exists(), "written despite the error");
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let xml = refused("a.xml");
    assert!(xml.starts_with("error: `a.xml` is not a Volley JSON report: it is not a JSON object ("), "{xml}");
    std::fs::write(suite.0.join("other.json"), r#"{"name": "x"}"#).unwrap();
    assert!(
        refused("other.json").starts_with("error: `other.json` is not a Volley JSON report: it has no `version` field")
    );
    assert!(refused("missing.json").starts_with("error: cannot read `missing.json`"));
}
