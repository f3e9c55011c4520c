//! Request variables: `{{login.response.body.$.token}}`, `{{login.response.headers.X-Token}}`,
//! `{{login.response.status}}` and `{{login.response.body.*}}`, read from the last
//! response of the named request in the same client.

use bytes::Bytes;
use serde_json::Value;

/// What a client keeps of the last response of each named request.
#[derive(Debug, Clone)]
pub(crate) struct StoredResponse {
    pub(crate) status: u16,
    pub(crate) headers: http::HeaderMap,
    pub(crate) body: Bytes,
}

/// The hint of a value not found in the response of `request`, which ran: what it
/// answered, since a failed sign-in is the usual cause.
pub(crate) fn ran_hint(request: &str, response: &StoredResponse) -> String {
    let status = http::StatusCode::from_u16(response.status).map_or_else(
        |_| response.status.to_string(),
        |status| format!("{} {}", status.as_u16(), status.canonical_reason().unwrap_or_default()).trim().to_owned(),
    );
    if response.status >= 400 {
        format!("`{request}` ran and answered {status}: see why it failed above; its response has no such value")
    } else {
        format!("`{request}` ran and answered {status}: check the path against what it answered")
    }
}

/// The value of `segments` (what follows `name.response`) in a stored response, or why
/// there is none.
pub(crate) fn read(response: &StoredResponse, segments: &[&str]) -> Result<Value, String> {
    match segments {
        ["status"] => Ok(Value::from(response.status)),
        ["headers", name] => response
            .headers
            .get(*name)
            .map(|value| Value::String(String::from_utf8_lossy(value.as_bytes()).into_owned()))
            .ok_or_else(|| format!("the response has no `{name}` header")),
        ["body"] | ["body", "*"] => Ok(Value::String(String::from_utf8_lossy(&response.body).into_owned())),
        ["body", path] if path.starts_with('$') => json_path(&response.body, path),
        _ => Err(format!(
            "`response.{}` is not a response value: use `response.status`, `response.headers.<Name>`, \
             `response.body.*` or `response.body.$.<JSONPath>`",
            segments.join(".")
        )),
    }
}

/// httpyac's reading of a named request: `{{login}}` is its response body (parsed when
/// it is JSON), `{{login.token}}` and `{{login.items.0.id}}` go into it by property.
pub(crate) fn read_body_properties(response: &StoredResponse, properties: &[&str]) -> Result<Value, String> {
    if properties.is_empty() {
        return Ok(serde_json::from_slice(&response.body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&response.body).into_owned())));
    }
    let mut path = String::from("$");
    for property in properties {
        if property.parse::<usize>().is_ok() {
            path.push('[');
            path.push_str(property);
            path.push(']');
        } else {
            path.push('[');
            path.push_str(&Value::String((*property).to_owned()).to_string());
            path.push(']');
        }
    }
    json_path(&response.body, &path)
}

/// The first value `path` (RFC 9535 JSONPath) selects in a JSON body.
fn json_path(body: &[u8], path: &str) -> Result<Value, String> {
    let document: Value =
        serde_json::from_slice(body).map_err(|error| format!("the response body is not JSON ({error})"))?;
    let query =
        serde_json_path::JsonPath::parse(path).map_err(|error| format!("invalid JSONPath `{path}`: {error}"))?;
    query.query(&document).first().cloned().ok_or_else(|| format!("`{path}` matches nothing in the response body"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored() -> StoredResponse {
        let mut headers = http::HeaderMap::new();
        headers.insert("x-token", http::HeaderValue::from_static("abc"));
        StoredResponse { status: 201, headers, body: Bytes::from_static(br#"{"token": "t", "items": [{"id": 7}]}"#) }
    }

    #[test]
    fn reads_status_headers_and_body_paths() {
        let response = stored();
        assert_eq!(read(&response, &["status"]).unwrap(), 201);
        assert_eq!(read(&response, &["headers", "X-Token"]).unwrap(), "abc");
        assert_eq!(read(&response, &["body", "$.token"]).unwrap(), "t");
        assert_eq!(read(&response, &["body", "$.items[0].id"]).unwrap(), 7);
        assert!(read(&response, &["body", "*"]).unwrap().as_str().unwrap().contains("items"));
        assert!(read(&response, &["body", "$.missing"]).unwrap_err().contains("matches nothing"));
        assert!(read(&response, &["headers", "X-None"]).unwrap_err().contains("no `X-None`"));
        assert!(read(&response, &["cookies"]).unwrap_err().contains("not a response value"));
        let text = StoredResponse { body: Bytes::from_static(b"plain"), ..response };
        assert!(read(&text, &["body", "$.a"]).unwrap_err().contains("not JSON"));
    }

    #[test]
    fn reads_body_properties_as_httpyac_does() {
        let response = stored();
        assert_eq!(read_body_properties(&response, &["token"]).unwrap(), "t");
        assert_eq!(read_body_properties(&response, &["items", "0", "id"]).unwrap(), 7);
        assert_eq!(read_body_properties(&response, &[]).unwrap()["token"], "t");
        assert!(read_body_properties(&response, &["missing"]).unwrap_err().contains("matches nothing"));
        let text = StoredResponse { body: Bytes::from_static(b"plain"), ..response };
        assert_eq!(read_body_properties(&text, &[]).unwrap(), "plain");
    }
}
