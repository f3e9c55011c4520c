//! `volley run` signing in with httpyac's `Authorization: oauth2 authorization_code`
//! against the tests' real `OpenID` provider (oidc-provider, `tests/oidc/`), the browser
//! being what `VOLLEY_BROWSER` names: the stand-in `tests/oidc/browser.sh`, which signs
//! in and follows the redirects to Volley's loopback listener.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use std::process::Command;

use volley_echo_server::{OidcProvider, TestServer};

#[tokio::test]
async fn run_signs_in_through_volley_browser_and_sends_the_bearer_token() {
    let provider = OidcProvider::start(None);
    let server = TestServer::start().await;
    let scratch = std::env::temp_dir().join(format!("volley-oauth-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    std::fs::write(scratch.join(".git"), "").unwrap();
    let text = format!(
        "@oauth2_issuer = {}\n@oauth2_clientId = code-public\n@oauth2_usePkce = true\n@oauth2_scope = openid api:read\n\
         @oauth2_redirectUri = http://127.0.0.1/callback\n\n### me\nGET {}\nAuthorization: oauth2 authorization_code\n\n\
         ### again\nGET {}\nAuthorization: oauth2 code\n",
        provider.issuer,
        server.url("/echo"),
        server.url("/echo")
    );
    std::fs::write(scratch.join("api.http"), text).unwrap();
    let output = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_volley"))
            .args(["run", "api.http", "--json"])
            .current_dir(&scratch)
            .env("VOLLEY_BROWSER", volley_echo_server::stand_in_browser())
            .env_remove("BROWSER")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    let records: Vec<serde_json::Value> = stdout
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .filter(|record: &serde_json::Value| record["type"] == "request")
        .collect();
    assert_eq!(records.len(), 2, "{stdout}");
    for record in &records {
        assert_eq!(record["outcome"], "passed", "{record}");
        let sent = record["request"]["headers"].to_string();
        assert!(sent.contains(r#"["authorization","[REDACTED]"]"#), "the token is shown redacted: {sent}");
    }
    // One sign-in for both requests: the token is kept for the run.
    let stats = provider.stats();
    assert_eq!((stats["authorization"].as_u64(), stats["token"]["authorization_code"].as_u64()), (Some(1), Some(1)));
}

#[tokio::test]
async fn token_cache_keeps_a_sign_in_between_runs_until_auth_clear() {
    let provider = OidcProvider::start(None);
    let server = TestServer::start().await;
    let scratch = std::env::temp_dir().join(format!("volley-token-cache-{}", std::process::id()));
    let cache_home = scratch.join("cache-home");
    std::fs::create_dir_all(&scratch).unwrap();
    std::fs::write(scratch.join(".git"), "").unwrap();
    let text = format!(
        "@oauth2_issuer = {}\n@oauth2_clientId = code-public\n@oauth2_usePkce = true\n@oauth2_scope = openid api:read\n\
         @oauth2_redirectUri = http://127.0.0.1/callback\n\nGET {}\nAuthorization: oauth2 code\n",
        provider.issuer,
        server.url("/echo")
    );
    std::fs::write(scratch.join("api.http"), text).unwrap();
    let volley = |args: &'static [&'static str]| {
        let (scratch, cache_home) = (scratch.clone(), cache_home.clone());
        tokio::task::spawn_blocking(move || {
            Command::new(env!("CARGO_BIN_EXE_volley"))
                .args(args)
                .current_dir(&scratch)
                .env("VOLLEY_BROWSER", volley_echo_server::stand_in_browser())
                .env("XDG_CACHE_HOME", &cache_home)
                .output()
                .unwrap()
        })
    };
    for _ in 0..2 {
        let output = volley(&["run", "api.http", "--token-cache", "-q"]).await.unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    }
    assert_eq!(provider.stats()["authorization"], 1, "the second run used the cached token");
    let file = cache_home.join("volley/tokens.json");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
    }
    let cleared = volley(&["auth", "clear"]).await.unwrap();
    assert_eq!(String::from_utf8_lossy(&cleared.stdout).trim(), format!("removed {}", file.display()));
    assert!(!file.exists());
    // Signed in again after the cache is gone.
    let output = volley(&["run", "api.http", "--token-cache", "-q"]).await.unwrap();
    assert!(output.status.success());
    assert_eq!(provider.stats()["authorization"], 2);
    let _ = std::fs::remove_dir_all(&scratch);
}
