//! The answers the connection layer gives by itself, outside the router: written straight
//! to the socket, in the error shape of every answer (`{"error": {"code", "message"}}`),
//! always with `Connection: close`.
//! No route gives them: only a connection that timed out in its request (`408
//! REQUEST_TIMEOUT`) or came from an address that holds its share of the connections
//! (`429 CONNECTION_LIMIT_REACHED`).

use serde_json::json;
use volley_protocol::ErrorCode;

/// The `408` of a connection whose request head or body stopped arriving.
pub(super) fn request_timeout() -> Vec<u8> {
    answer(
        "408 Request Timeout",
        ErrorCode::RequestTimeout,
        "the request did not arrive in time: its head took longer than the header timeout, or its body paused longer",
        &[],
    )
}

/// The `429` of a connection beyond its client address's share of the cap.
pub(super) fn too_many_connections(share: usize) -> Vec<u8> {
    let message =
        format!("this client address holds {share} connections, its share of the server's: close one, or retry later");
    answer("429 Too Many Requests", ErrorCode::ConnectionLimitReached, &message, &[("retry-after", "1")])
}

/// An HTTP/1.1 answer with a JSON error body that closes its connection.
fn answer(status: &str, code: ErrorCode, message: &str, headers: &[(&str, &str)]) -> Vec<u8> {
    let body = json!({ "error": { "code": code.as_str(), "message": message } }).to_string();
    let mut head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.extend([name, ": ", value, "\r\n"]);
    }
    head.push_str("\r\n");
    [head.into_bytes(), body.into_bytes()].concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_a_whole_http_message() {
        let answer = String::from_utf8(request_timeout()).expect("text");
        let (head, body) = answer.split_once("\r\n\r\n").expect("a head and a body");
        assert!(head.starts_with("HTTP/1.1 408 Request Timeout\r\n"), "{head}");
        assert!(head.contains(&format!("content-length: {}\r\n", body.len())), "{head}");
        let json: serde_json::Value = serde_json::from_str(body).expect("JSON");
        assert_eq!(json["error"]["code"], "REQUEST_TIMEOUT");
        let answer = String::from_utf8(too_many_connections(4)).expect("text");
        assert!(answer.starts_with("HTTP/1.1 429 Too Many Requests\r\n"), "{answer}");
        assert!(answer.contains("\r\nretry-after: 1\r\n"), "{answer}");
    }
}
