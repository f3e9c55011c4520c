//! The observer page (`/`, `/ui`): static HTML, CSS and JavaScript compiled into the
//! binary, no build step and nothing fetched from elsewhere. These routes are the only
//! ones served without the token: they hold no data, and the page asks for the token
//! before it reads anything (a browser cannot add a bearer header to a navigation).

use axum::Router;
use axum::response::IntoResponse;
use axum::routing::get;
use http::{HeaderValue, header};

use crate::state::AppState;

const PAGE: &str = include_str!("../../ui/index.html");
const SCRIPT: &str = include_str!("../../ui/observer.js");
const STYLE: &str = include_str!("../../ui/observer.css");

/// Scripts and styles from this server only, no inline code, connections back to it.
const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; \
                      base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route("/", get(page))
        .route("/ui", get(page))
        .route("/ui/", get(page))
        .route("/ui/observer.js", get(script))
        .route("/ui/observer.css", get(style))
}

async fn page() -> impl IntoResponse {
    asset("text/html; charset=utf-8", PAGE)
}

async fn script() -> impl IntoResponse {
    asset("text/javascript; charset=utf-8", SCRIPT)
}

async fn style() -> impl IntoResponse {
    asset("text/css; charset=utf-8", STYLE)
}

fn asset(content_type: &'static str, body: &'static str) -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(content_type)),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
            (header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(POLICY)),
            (header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")),
            (header::REFERRER_POLICY, HeaderValue::from_static("no-referrer")),
        ],
        body,
    )
}
