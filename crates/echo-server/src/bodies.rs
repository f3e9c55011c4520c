//! Bodies of a given kind and size, for clients that show, save or cut them: `/bytes/{n}`
//! (not UTF-8), `/text/{n}`, `/json/{n}`, `/html` and `/xml`.

use std::fmt::Write as _;

use axum::Router;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::response;
use crate::state::AppState;

/// The largest body `/bytes/{n}` and `/text/{n}` answer.
const MAX_BYTES: usize = 64 * 1024 * 1024;

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/bytes/{n}", get(bytes))
        .route("/text/{n}", get(text))
        .route("/json/{n}", get(json))
        .route("/html", get(|| async { typed("text/html; charset=utf-8", HTML.into()) }))
        .route("/xml", get(|| async { typed("application/xml", XML.into()) }))
}

const HTML: &str = "<!doctype html>\n<html>\n<body><p class=\"greeting\">hello</p></body>\n</html>\n";
const XML: &str = "<?xml version=\"1.0\"?>\n<order id=\"1\">\n  <item>SKU-1</item>\n</order>\n";

/// `n` bytes counting 0, 1, …, 255 and again: `application/octet-stream`, not UTF-8 from
/// the 129th byte on.
async fn bytes(Path(n): Path<usize>) -> Response {
    if n > MAX_BYTES {
        return too_large(n);
    }
    typed("application/octet-stream", (0..n).map(|index| (index % 256) as u8).collect())
}

/// `n` times `a`, `text/plain`.
async fn text(Path(n): Path<usize>) -> Response {
    if n > MAX_BYTES {
        return too_large(n);
    }
    typed("text/plain; charset=utf-8", vec![b'a'; n])
}

/// A JSON document of at least `n` bytes on one line, as APIs send them: `{"items":
/// [{"id": 0, "name": "item 0", "tags": ["a", "b"], "active": true}, …]}` with as many
/// items as it takes, then `"count"`.
async fn json(Path(n): Path<usize>) -> Response {
    if n > MAX_BYTES {
        return too_large(n);
    }
    let mut body = String::with_capacity(n + 128);
    body.push_str("{\"items\":[");
    let mut count = 0usize;
    while body.len() < n {
        if count > 0 {
            body.push(',');
        }
        let active = count.is_multiple_of(2);
        let _ = write!(body, "{{\"id\":{count},\"name\":\"item {count}\",\"tags\":[\"a\",\"b\"],\"active\":{active}}}");
        count += 1;
    }
    let _ = write!(body, "],\"count\":{count}}}");
    typed("application/json", body.into_bytes())
}

fn too_large(n: usize) -> Response {
    response::bad_request(format!("at most {MAX_BYTES} bytes, not {n}"))
}

fn typed(content_type: &'static str, body: Vec<u8>) -> Response {
    (StatusCode::OK, [(CONTENT_TYPE, content_type)], body).into_response()
}
