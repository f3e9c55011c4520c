//! CORS: preflights and the headers of answers.

use super::*;

fn preflight(origin: &str) -> Request<Body> {
    Request::builder()
        .method(Method::OPTIONS)
        .uri("/execute")
        .header(header::ORIGIN, origin)
        .header(header::ACCESS_CONTROL_REQUEST_METHOD, "POST")
        .header(header::ACCESS_CONTROL_REQUEST_HEADERS, "authorization, content-type")
        .body(Body::empty())
        .expect("request")
}

#[tokio::test]
async fn a_local_preflight_needs_no_token() {
    let api = Api::secured();
    for origin in ["http://localhost:5173", "http://127.0.0.1:8080", "http://localhost"] {
        let response = api.raw(preflight(origin)).await;
        assert!(response.status().is_success(), "{origin}: {}", response.status());
        let headers = response.headers();
        assert_eq!(header_value(headers, "access-control-allow-origin"), Some(origin));
        let methods = header_value(headers, "access-control-allow-methods").unwrap_or_default().to_ascii_uppercase();
        assert!(methods.contains("POST"), "{methods}");
        let allowed = header_value(headers, "access-control-allow-headers").unwrap_or_default().to_ascii_lowercase();
        assert!(allowed.contains("authorization") && allowed.contains("content-type"), "{allowed}");
    }
    // The actual request still needs the token, and carries the CORS headers.
    let unauthorized =
        Request::get("/health").header(header::ORIGIN, "http://localhost:5173").body(Body::empty()).expect("request");
    let response = api.raw(unauthorized).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(header_value(response.headers(), "access-control-allow-origin"), Some("http://localhost:5173"));
    let authorized = Request::get("/health")
        .header(header::ORIGIN, "http://localhost:5173")
        .header(header::AUTHORIZATION, format!("Bearer {MAIN}"))
        .body(Body::empty())
        .expect("request");
    let response = api.raw(authorized).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(header_value(response.headers(), "access-control-allow-origin"), Some("http://localhost:5173"));
}

#[tokio::test]
async fn a_foreign_origin_is_not_allowed() {
    let api = Api::secured();
    for origin in ["http://evil.example", "https://localhost:5173", "http://localhost.evil.example"] {
        let response = api.raw(preflight(origin)).await;
        assert!(response.headers().get("access-control-allow-origin").is_none(), "{origin}");
    }
}

#[tokio::test]
async fn a_configured_origin_is_allowed() {
    let api = Api::with(|config| {
        config.token = Some(MAIN.to_owned());
        config.cors = vec!["https://app.example.com".to_owned()];
    });
    let response = api.raw(preflight("https://app.example.com")).await;
    assert_eq!(header_value(response.headers(), "access-control-allow-origin"), Some("https://app.example.com"));
    let response = api.raw(preflight("https://other.example.com")).await;
    assert!(response.headers().get("access-control-allow-origin").is_none());
}
