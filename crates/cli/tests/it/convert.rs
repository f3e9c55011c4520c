//! `volley export curl` then `volley import curl` gives a request that sends the same
//! thing: for every body form and auth pattern, the test server's `/echo` answers the
//! same method, URL, headers and body for the original request and the imported one,
//! and for the exported command run by the real curl.

#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use std::path::Path;
use std::process::Command;

use base64::Engine as _;
use serde_json::Value;
use volley_echo_server::TestServer;

fn volley(directory: &Path, args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_volley"))
        .args(args)
        .current_dir(directory)
        .env("NO_COLOR", "1")
        .env_remove("VOLLEY_PROFILE")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "volley {args:?}: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// What `/echo` received for the one request of `file`: method, URL, headers and body,
/// a multipart boundary replaced by `BOUNDARY` (each run draws its own).
fn received(directory: &Path, file: &str, name: Option<&str>) -> Value {
    let mut args = vec!["run", file, "--json", "--show-secrets"];
    if let Some(name) = name {
        args.extend(["--name", name]);
    }
    let record: Value = serde_json::from_str(volley(directory, &args).lines().next().unwrap()).unwrap();
    let body = record["response"]["body"].as_str().unwrap_or_else(|| panic!("no response: {record}"));
    normalize(&serde_json::from_str(body).unwrap())
}

/// What `/echo` answered, as compared: method, URL, headers and body, a multipart
/// boundary replaced by `BOUNDARY` (each client draws its own).
fn normalize(echo: &Value) -> Value {
    let mut headers: Vec<(String, String)> = serde_json::from_value(echo["headers"].clone()).unwrap();
    let mut body = base64::engine::general_purpose::STANDARD.decode(echo["body_base64"].as_str().unwrap()).unwrap();
    let boundary = headers.iter().find_map(|(_, value)| value.split_once("boundary=").map(|(_, b)| b.to_owned()));
    if let Some(boundary) = boundary {
        for (_, value) in &mut headers {
            *value = value.replace(&boundary, "BOUNDARY");
        }
        body = String::from_utf8(body).unwrap().replace(&boundary, "BOUNDARY").into_bytes();
        // The length counts the boundary: the bodies are compared instead.
        headers.retain(|(name, _)| name != "content-length");
    }
    // Headers of different names may come in another order (curl puts a form's type
    // last); their meaning does not depend on it.
    headers.sort_by(|a, b| a.0.cmp(&b.0));
    serde_json::json!({
        "method": echo["method"],
        "url": echo["url"],
        "headers": headers,
        "body": String::from_utf8_lossy(&body),
    })
}

/// What the real `curl` sends with `command` (`apt-get install curl`; `.ci/run`
/// installs it), as [`normalize`] shows it, without `Accept-Encoding`: the engine asks
/// for compressed responses, curl does not without `--compressed`.
fn sent_by_curl(command: &str) -> Value {
    let output = Command::new("sh")
        .arg("-c")
        .arg(format!("{command} --silent --show-error --max-time 20"))
        .output()
        .expect("sh runs");
    assert!(output.status.success(), "{command}: {}", String::from_utf8_lossy(&output.stderr));
    let echo: Value = serde_json::from_slice(&output.stdout).unwrap();
    without_accept_encoding(normalize(&echo))
}

fn without_accept_encoding(mut received: Value) -> Value {
    if let Some(headers) = received["headers"].as_array_mut() {
        headers.retain(|pair| pair[0] != "accept-encoding");
    }
    received
}

#[test]
fn export_then_import_sends_the_same_request() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(TestServer::start());
    let directory = std::env::temp_dir().join(format!("volley-convert-{}", std::process::id()));
    std::fs::create_dir_all(directory.join(".git")).unwrap();
    std::fs::write(directory.join("upload.txt"), "a file's text\nover two lines\n").unwrap();
    std::fs::write(directory.join("body.json"), "{\"from\": \"file\"}\n").unwrap();
    let original = format!(
        "@base = {base}\n@token = s3cr3t\n\n\
         ### none\nGET {{{{base}}}}/echo?q=a%20b&x=1\nX-Trace: it's \"quoted\" $HOME\n\n\
         ### text\nPUT {{{{base}}}}/echo/text\nContent-Type: text/plain\n\nline one\nline 'two' with $dollar\n\n\
         ### json\nPOST {{{{base}}}}/echo/json\nContent-Type: application/json\n\n{{\"name\": \"O'Hara\", \"n\": [1, 2]}}\n\n\
         ### json-file\nPOST {{{{base}}}}/echo/file\nContent-Type: application/json\n\n< ./body.json\n\n\
         ### urlencoded\nPOST {{{{base}}}}/echo/form\n\nname = Ada Lovelace\nrole = a&b=c\n\n\
         ### multipart\nPOST {{{{base}}}}/echo/upload\nContent-Type: multipart/form-data\n\n\
         title = Ada's notes\ndoc = @./upload.txt | notes.txt\n\n\
         ### basic\nGET {{{{base}}}}/echo/basic\nAuthorization: Basic ada:lovelace\n\n\
         ### bearer\nGET {{{{base}}}}/echo/bearer\nAuthorization: Bearer {{{{token}}}}\n\n\
         ### cookie\nGET {{{{base}}}}/echo/cookie\nCookie: session=abc; theme=dark\n",
        base = server.base_url()
    );
    std::fs::write(directory.join("original.http"), original).unwrap();
    let names = ["none", "text", "json", "json-file", "urlencoded", "multipart", "basic", "bearer", "cookie"];
    for name in names {
        let command = volley(&directory, &["export", "curl", "original.http", "--name", name, "--reveal"]);
        let imported = volley(&directory, &["import", "curl", command.trim_end()]);
        let file = format!("imported-{name}.http");
        std::fs::write(directory.join(&file), &imported).unwrap();
        let before = received(&directory, "original.http", Some(name));
        let after = received(&directory, &file, None);
        assert_eq!(before, after, "{name}: {command}\n{imported}");
        // The command itself, run by curl, sends what `volley run` sends.
        assert_eq!(without_accept_encoding(before), sent_by_curl(command.trim_end()), "{name}: {command}");
    }
    // The patterns written by hand in curl's own words are read as a request sends them.
    let base = server.base_url();
    let by_hand = [
        (format!("curl -u ada:lovelace {base}/echo/basic"), "Basic YWRhOmxvdmVsYWNl"),
        (format!("curl -b 'session=abc; theme=dark' {base}/echo/cookie"), "session=abc; theme=dark"),
    ];
    for (command, expected) in by_hand {
        std::fs::write(directory.join("hand.http"), volley(&directory, &["import", "curl", &command])).unwrap();
        let echo = received(&directory, "hand.http", None);
        assert!(echo["headers"].to_string().contains(expected), "{command}: {echo}");
    }
    std::fs::remove_dir_all(&directory).ok();
}

#[test]
fn export_redacts_secrets_unless_revealed() {
    let directory = std::env::temp_dir().join(format!("volley-export-redact-{}", std::process::id()));
    std::fs::create_dir_all(directory.join(".git")).unwrap();
    std::fs::write(
        directory.join("secret.http"),
        "GET https://example.com/me\nAuthorization: Bearer abc123\nX-Plain: visible\n",
    )
    .unwrap();
    let hidden = volley(&directory, &["export", "curl", "secret.http"]);
    assert!(!hidden.contains("abc123"), "{hidden}");
    assert!(hidden.contains("-H 'authorization: [REDACTED]'"), "{hidden}");
    assert!(hidden.contains("-H 'x-plain: visible'"), "{hidden}");
    let shown = volley(&directory, &["export", "curl", "secret.http", "--reveal"]);
    assert!(shown.contains("-H 'authorization: Bearer abc123'"), "{shown}");
    std::fs::remove_dir_all(&directory).ok();
}
