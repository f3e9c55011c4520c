//! `path` executions: paths confined to the workspace.

use super::*;

#[tokio::test]
async fn absolute_and_escaping_paths_are_refused() {
    let api = Api::open();
    api.workspace.write("a/inside.http", "GET http://127.0.0.1:9/\n");
    let outside = api.workspace.base.join("outside.http").display().to_string();
    for path in
        ["/etc/passwd", "../x.http", "a/../../x.http", "../outside.http", "a/../../outside.http", outside.as_str()]
    {
        let reply = api.execute(json!({ "path": path })).await;
        expect_error(&reply, StatusCode::FORBIDDEN, "PATH_OUTSIDE_WORKSPACE");
        let message = reply.2["error"]["message"].as_str().unwrap_or_default();
        assert!(!message.contains(&api.workspace.root.display().to_string()), "the workspace does not leak: {message}");
    }
}

#[cfg(unix)]
#[tokio::test]
async fn a_symlink_out_of_the_workspace_is_refused() {
    let api = Api::open();
    std::os::unix::fs::symlink(api.workspace.base.join("outside.http"), api.workspace.root.join("link.http"))
        .expect("symlink");
    std::os::unix::fs::symlink(&api.workspace.base, api.workspace.root.join("up")).expect("symlink");
    for path in ["link.http", "up/outside.http"] {
        expect_error(&api.execute(json!({ "path": path })).await, StatusCode::FORBIDDEN, "PATH_OUTSIDE_WORKSPACE");
    }
    // A body file reached through the symlinked directory.
    let content = "POST http://127.0.0.1:9/\n\n< ./up/outside.txt\n";
    expect_error(&api.execute(json!({ "content": content })).await, StatusCode::FORBIDDEN, "PATH_OUTSIDE_WORKSPACE");
}

#[tokio::test]
async fn a_missing_file_is_404() {
    let api = Api::open();
    expect_error(&api.execute(json!({ "path": "missing.http" })).await, StatusCode::NOT_FOUND, "FILE_NOT_FOUND");
    expect_error(&api.execute(json!({ "path": "no/such/dir.http" })).await, StatusCode::NOT_FOUND, "FILE_NOT_FOUND");
}

#[tokio::test]
async fn body_files_outside_the_workspace_are_refused() {
    let api = Api::open();
    for reference in ["< ../outside.txt", "< /etc/hostname", "<@ ../outside.txt", "< ./sub/../../outside.txt"] {
        let content = format!("POST http://127.0.0.1:9/\n\n{reference}\n");
        let reply = api.execute(json!({ "content": content })).await;
        expect_error(&reply, StatusCode::FORBIDDEN, "PATH_OUTSIDE_WORKSPACE");
    }
}

#[tokio::test]
async fn a_base_path_outside_the_workspace_is_refused() {
    let api = Api::open();
    let content = "GET http://127.0.0.1:9/";
    for base in ["../", "..", "/etc", "a/../.."] {
        let reply = api.execute(json!({ "content": content, "basePath": base })).await;
        expect_error(&reply, StatusCode::FORBIDDEN, "PATH_OUTSIDE_WORKSPACE");
    }
    let reply = api.execute(json!({ "content": content, "basePath": "missing" })).await;
    expect_error(&reply, StatusCode::NOT_FOUND, "FILE_NOT_FOUND");
}

#[tokio::test]
async fn certificate_files_outside_the_workspace_are_not_read() {
    let api = Api::open();
    for tls in [r#"{"ca": "../outside.txt"}"#, r#"{"hosts": {"*": {"cert": "/etc/hostname"}}}"#] {
        api.workspace.write("volley.jsonc", &format!(r#"{{"tls": {tls}}}"#));
        let reply = api.execute(json!({ "content": "GET https://127.0.0.1:9/\n" })).await;
        expect_error(&reply, StatusCode::FORBIDDEN, "PATH_OUTSIDE_WORKSPACE");
    }
    // Inside the workspace, a file that is no certificate: named without the workspace's path.
    api.workspace.write("certs/ca.pem", "not a certificate");
    api.workspace.write("volley.jsonc", r#"{"tls": {"ca": "certs/ca.pem"}}"#);
    let reply = api.execute(json!({ "content": "GET https://127.0.0.1:9/\n" })).await;
    expect_error(&reply, StatusCode::BAD_REQUEST, "EXECUTE_ERROR");
    let message = reply.2["error"]["message"].as_str().unwrap_or_default();
    assert!(message.starts_with("ca.pem: the CA bundle holds no certificate"), "{message}");
    assert!(!message.contains(&api.workspace.root.display().to_string()), "{message}");
    assert_eq!(reply.2["error"]["details"]["kind"], "certificate");
}
