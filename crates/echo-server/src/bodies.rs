//! Bodies of a given kind and size, for clients that show, save or cut them: `/bytes/{n}`
//! (not UTF-8), `/text/{n}`, `/json/{n}`, `/html` and `/xml`; and `/stream/json/{n}`,
//! a JSON body of up to 4 GiB made as it is sent (never held whole), for large-body
//! tests and measurements.

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
        .route("/stream/json/{n}", get(stream_json))
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

/// The largest body `/stream/json/{n}` answers.
const MOST_STREAMED: u64 = 4 * 1024 * 1024 * 1024;

/// A JSON document of exactly `n` bytes (`n` ≥ 64), in chunks of 64 KiB made as they
/// are sent: `{"items":[{"id":0,"name":"item 0"},…],"pad":"xxx…"}`, the padding string
/// filling it to `n` bytes. `Content-Length` is `n`.
async fn stream_json(Path(n): Path<u64>) -> Response {
    if !(64..=MOST_STREAMED).contains(&n) {
        return response::bad_request(format!("between 64 and {MOST_STREAMED} bytes, not {n}"));
    }
    // The items take all but the last 64 bytes at most; the padding fills the rest.
    let items_end = n - 64;
    let state = (0u64, 0u64, false);
    let chunks = futures_util::stream::unfold(state, move |(written, next_id, done)| async move {
        if done {
            return None;
        }
        let mut chunk = String::with_capacity(CHUNK + 128);
        if written == 0 {
            chunk.push_str("{\"items\":[");
        }
        let mut id = next_id;
        let mut total = written + chunk.len() as u64;
        let mut last = false;
        while chunk.len() < CHUNK {
            let item = format!("{}{{\"id\":{id},\"name\":\"item {id}\"}}", if id > 0 { "," } else { "" });
            if total + item.len() as u64 > items_end {
                last = true;
                break;
            }
            total += item.len() as u64;
            chunk.push_str(&item);
            id += 1;
        }
        if last {
            // `],"pad":"` + padding + `"}` closes the document at exactly `n` bytes.
            let closing = "],\"pad\":\"";
            let padding = n - total - closing.len() as u64 - 2;
            chunk.push_str(closing);
            chunk.extend(std::iter::repeat_n('x', padding as usize));
            chunk.push_str("\"}");
        }
        let length = chunk.len() as u64;
        Some((Ok::<_, std::convert::Infallible>(chunk), (written + length, id, last)))
    });
    Response::builder()
        .status(StatusCode::OK)
        .header(CONTENT_TYPE, "application/json")
        .header(axum::http::header::CONTENT_LENGTH, n)
        .body(axum::body::Body::from_stream(chunks))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// The size of the chunks of `/stream/json/{n}`.
const CHUNK: usize = 64 * 1024;

fn too_large(n: usize) -> Response {
    response::bad_request(format!("at most {MAX_BYTES} bytes, not {n}"))
}

fn typed(content_type: &'static str, body: Vec<u8>) -> Response {
    (StatusCode::OK, [(CONTENT_TYPE, content_type)], body).into_response()
}
