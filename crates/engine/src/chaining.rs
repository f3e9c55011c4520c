//! Request variables: `{{login.response.body.$.token}}`, `{{login.response.headers.X-Token}}`,
//! `{{login.response.status}}` and `{{login.response.body.*}}`, read from the last
//! response of the named request in the same client.

use std::collections::{BTreeMap, HashMap};

use bytes::Bytes;
use serde_json::Value;

/// How many named responses a client keeps for chaining: a long-lived client (an
/// execution server's session, an editor) that runs many differently named requests
/// would otherwise keep every one of them.
pub const MAX_CHAINED_RESPONSES: usize = 1_000;
/// How many bytes of them (bodies and headers) it keeps.
pub const MAX_CHAINED_BYTES: usize = 64 << 20;

/// The named responses a client keeps, bounded by [`MAX_CHAINED_RESPONSES`] and
/// [`MAX_CHAINED_BYTES`]: over either bound, the response stored longest ago goes. The
/// newest is always kept, whatever its size (a body is already bounded by the run's
/// body limit).
#[derive(Debug, Clone, Default)]
pub(crate) struct Chain {
    responses: HashMap<String, (u64, StoredResponse)>,
    /// Names by when they were stored, oldest first.
    order: BTreeMap<u64, String>,
    next: u64,
    bytes: usize,
    /// `true` once a response was let go for the bounds.
    dropped: bool,
}

impl Chain {
    /// The last response of the request `name`, while kept.
    pub(crate) fn get(&self, name: &str) -> Option<&StoredResponse> {
        self.responses.get(name).map(|(_, response)| response)
    }

    /// `true` when the last response of `name` is kept.
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.responses.contains_key(name)
    }

    /// `true` when a response was let go to keep the bounds: a name not found may have
    /// run long ago.
    pub(crate) fn dropped_some(&self) -> bool {
        self.dropped
    }

    /// Keeps `response` as the last of `name`, letting the oldest go while over a bound.
    pub(crate) fn insert(&mut self, name: String, response: StoredResponse) {
        self.remove(&name);
        let stamp = self.next;
        self.next += 1;
        self.bytes += response.size();
        self.order.insert(stamp, name.clone());
        self.responses.insert(name, (stamp, response));
        while self.responses.len() > MAX_CHAINED_RESPONSES
            || (self.bytes > MAX_CHAINED_BYTES && self.responses.len() > 1)
        {
            let Some((_, oldest)) = self.order.pop_first() else { break };
            if let Some((_, gone)) = self.responses.remove(&oldest) {
                self.bytes -= gone.size();
                self.dropped = true;
            }
        }
    }

    fn remove(&mut self, name: &str) {
        if let Some((stamp, gone)) = self.responses.remove(name) {
            self.order.remove(&stamp);
            self.bytes -= gone.size();
        }
    }
}

impl FromIterator<(String, StoredResponse)> for Chain {
    fn from_iter<T: IntoIterator<Item = (String, StoredResponse)>>(responses: T) -> Self {
        let mut chain = Chain::default();
        for (name, response) in responses {
            chain.insert(name, response);
        }
        chain
    }
}

/// What a client keeps of the last response of each named request.
#[derive(Debug, Clone)]
pub(crate) struct StoredResponse {
    pub(crate) status: u16,
    pub(crate) headers: http::HeaderMap,
    pub(crate) body: Bytes,
}

impl StoredResponse {
    /// The bytes it holds, as the bounds of a [`Chain`] count them.
    fn size(&self) -> usize {
        self.body.len() + self.headers.iter().map(|(name, value)| name.as_str().len() + value.len()).sum::<usize>()
    }
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
    let query = volley_assert::parse_json_path(path).map_err(|error| format!("invalid JSONPath `{path}`: {error}"))?;
    query.query(&document).first().cloned().ok_or_else(|| format!("`{path}` matches nothing in the response body"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sized(bytes: usize) -> StoredResponse {
        StoredResponse { status: 200, headers: http::HeaderMap::new(), body: Bytes::from(vec![b'x'; bytes]) }
    }

    /// The bound of the `jsonpath` fuzz target's finding holds for `{{login.response.body.$…}}`
    /// too: a path nested too deeply is refused before it is read.
    #[test]
    fn a_chained_jsonpath_nested_too_deeply_is_refused_before_it_is_read() {
        let depth = volley_assert::MAX_JSONPATH_NESTING + 4;
        let path = format!("${}{}", ".a[?@.a".repeat(depth), " == 1]".repeat(depth));
        let response = StoredResponse { status: 200, headers: http::HeaderMap::new(), body: Bytes::from_static(b"{}") };
        let error = read(&response, &["body", &path]).expect_err("refused");
        assert!(error.contains("nest 12 deep"), "{error}");
    }

    #[test]
    fn a_client_keeps_the_newest_named_responses_within_a_count_and_a_size() {
        let mut chain = Chain::default();
        for n in 0..=MAX_CHAINED_RESPONSES {
            chain.insert(format!("r{n}"), sized(1));
        }
        assert!(!chain.contains("r0"), "the oldest goes past the count");
        assert!(chain.contains("r1") && chain.contains(&format!("r{MAX_CHAINED_RESPONSES}")));
        assert!(chain.dropped_some());

        let mut chain = Chain::default();
        let mib = 1 << 20;
        chain.insert("first".to_owned(), sized(mib));
        chain.insert("again".to_owned(), sized(mib));
        chain.insert("first".to_owned(), sized(mib)); // stored anew: now the newest
        for n in 0..(MAX_CHAINED_BYTES / mib - 2) {
            chain.insert(format!("r{n}"), sized(mib));
        }
        assert!(!chain.dropped_some(), "64 responses of 1 MiB fit");
        chain.insert("one more".to_owned(), sized(mib));
        assert!(!chain.contains("again"), "the one stored longest ago goes first");
        assert!(chain.contains("first") && chain.contains("one more"));
        assert!(chain.bytes <= MAX_CHAINED_BYTES);

        chain.insert("huge".to_owned(), sized(MAX_CHAINED_BYTES + 1));
        assert_eq!(chain.responses.len(), 1, "a response larger than the bound is kept alone");
        assert!(chain.contains("huge"));
    }

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
