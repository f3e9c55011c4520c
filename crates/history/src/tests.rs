use std::path::PathBuf;

use super::*;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("volley-history-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    dir
}

fn request(index: usize, name: Option<&str>) -> RequestRef {
    RequestRef { index, name: name.map(str::to_owned), method: "GET".into(), url: "{{host}}/a".into(), line: 2 }
}

fn response<'a>(headers: &'a [(String, String)], body: &'a [u8]) -> Response<'a> {
    Response { status: 200, status_text: "OK", http_version: "HTTP/1.1", headers, body, truncated: false }
}

#[test]
fn records_are_listed_newest_first_and_read_back_as_text() {
    let dir = scratch("list");
    let store = Store::new(dir.clone(), Limits::default());
    let file = Path::new("/p/api.http");
    let headers = vec![("content-type".to_owned(), "application/json".to_owned())];
    let first = store
        .record(&Record {
            source: Source::Editor,
            file,
            request: request(0, Some("login")),
            outcome: Ok(response(&headers, br#"{"a":1,"b":[1,2],"c":{}}"#)),
            duration_ms: Some(3.5),
        })
        .unwrap();
    let second = store
        .record(&Record {
            source: Source::Cli,
            file,
            request: request(1, None),
            outcome: Err(Failure { kind: "connection_refused".into(), message: "refused".into() }),
            duration_ms: None,
        })
        .unwrap();
    let all = store.list(&Filter::default()).unwrap();
    assert_eq!(all.iter().map(|entry| entry.id.as_str()).collect::<Vec<_>>(), [second.id.as_str(), first.id.as_str()]);
    let named = store.list(&Filter { name: Some("login"), ..Filter::default() }).unwrap();
    assert_eq!(named, vec![first.clone()]);
    let stored = store.get(&first.id).unwrap().unwrap();
    assert_eq!(
        fs::read_to_string(stored.text).unwrap(),
        "HTTP/1.1 200 OK\ncontent-type: application/json\n\n{\n  \"a\": 1,\n  \"b\": [\n    1,\n    2\n  ],\n  \"c\": {}\n}\n"
    );
    let failed = store.get(&second.id).unwrap().unwrap();
    assert_eq!(fs::read_to_string(failed.text).unwrap(), "error (connection_refused): refused\n");
    assert!(failed.body.is_none());
    assert!(store.get("nope").unwrap().is_none());
    assert_eq!(store.clear(Some(file)).unwrap(), 2);
    assert!(store.list(&Filter::default()).unwrap().is_empty());
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_last_n_per_request_and_the_byte_bound_are_kept() {
    let dir = scratch("bound");
    let store = Store::new(dir.clone(), Limits { per_request: 3, max_bytes: 1000, max_body: 300 });
    let file = Path::new("/p/api.http");
    let body = vec![b'x'; 400];
    let mut ids = Vec::new();
    for _ in 0..5 {
        let entry = store
            .record(&Record {
                source: Source::Editor,
                file,
                request: request(0, None),
                outcome: Ok(response(&[], &body)),
                duration_ms: None,
            })
            .unwrap();
        assert!(entry.truncated, "cut at max_body");
        assert_eq!(entry.body_bytes, 300);
        ids.push(entry.id);
    }
    let kept: Vec<String> = store.list(&Filter::default()).unwrap().into_iter().map(|entry| entry.id).collect();
    assert_eq!(kept, [ids[4].clone(), ids[3].clone(), ids[2].clone()]);
    // Files of dropped entries are gone.
    assert!(!dir.join(format!("{}.body", ids[0])).exists());
    // Another request's bodies push the oldest out to stay under 1000 bytes.
    for index in 1..3 {
        store
            .record(&Record {
                source: Source::Editor,
                file,
                request: request(index, None),
                outcome: Ok(response(&[], &body)),
                duration_ms: None,
            })
            .unwrap();
    }
    let entries = store.list(&Filter::default()).unwrap();
    assert!(entries.iter().map(|entry| entry.stored_bytes).sum::<u64>() <= 1000);
    assert_eq!(entries.len(), 3);
    assert_eq!(entries[0].request.index, 2);
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_project_root_is_marked_by_config_or_git() {
    let dir = scratch("root");
    fs::create_dir_all(dir.join("api/nested")).unwrap();
    fs::write(dir.join("volley.jsonc"), "{}").unwrap();
    assert_eq!(project_root(&dir.join("api/nested/x.http")), dir);
    fs::remove_file(dir.join("volley.jsonc")).unwrap();
    // Without a marker above it (none in the temporary directory), the file's directory.
    assert_eq!(project_root(&dir.join("api/nested/x.http")), dir.join("api/nested"));
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn json_is_indented_in_the_order_written() {
    assert_eq!(pretty_json(r#"{"z":"a,b:{","a":[]}"#).unwrap(), "{\n  \"z\": \"a,b:{\",\n  \"a\": []\n}");
    assert!(pretty_json("{").is_none());
    assert_eq!(pretty_json(r#""\"x""#).unwrap(), r#""\"x""#);
}
