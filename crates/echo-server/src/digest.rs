//! `/digest-auth`: the server side of HTTP Digest authentication (RFC 7616), written
//! from the RFC so that the engine's client side is checked against an independent
//! implementation: nonces it issued, counts that only go up, the request target, the
//! realm, the opaque value and the response hash with [`USER`] and [`PASSWORD`].

use std::collections::HashMap;
use std::fmt::Write as _;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::header::{AUTHORIZATION, WWW_AUTHENTICATE};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use axum::routing::any;
use md5::Digest as _;
use serde_json::json;

use crate::response;
use crate::state::AppState;
use crate::{PASSWORD, USER};

/// The realm of `/digest-auth`.
pub const DIGEST_REALM: &str = "volley@127.0.0.1";
/// The opaque value of `/digest-auth`'s challenges.
const OPAQUE: &str = "b3BhcXVlLXZvbGxleQ";

pub(crate) fn routes() -> Router<AppState> {
    Router::new().route("/digest-auth", any(digest_auth))
}

/// The challenge's settings, from the query: `algorithm` (`MD5`, the default, `SHA-256`,
/// `SHA-512-256`, each also `-sess`; several comma-separated give one challenge each, in
/// that order), `qop` (`auth`, the default, `auth-int`, `auth,auth-int`, or `none` for
/// an RFC 2069 challenge) and `userhash=true`.
struct Settings {
    algorithms: Vec<String>,
    qop: Option<String>,
    userhash: bool,
}

impl Settings {
    fn from_query(query: &HashMap<String, String>) -> Result<Settings, String> {
        let algorithms: Vec<String> = query
            .get("algorithm")
            .map_or("MD5", String::as_str)
            .split(',')
            .map(|algorithm| algorithm.trim().to_owned())
            .collect();
        if let Some(unknown) = algorithms.iter().find(|algorithm| hash(algorithm, b"").is_none()) {
            return Err(format!("unknown algorithm: {unknown:?}"));
        }
        let qop = match query.get("qop").map_or("auth", String::as_str) {
            "none" => None,
            qop => Some(qop.to_owned()),
        };
        Ok(Settings { algorithms, qop, userhash: query.get("userhash").is_some_and(|value| value == "true") })
    }

    /// One `WWW-Authenticate` value per algorithm, all with the same fresh nonce.
    fn challenges(&self, state: &AppState) -> Vec<String> {
        let nonce = state.issue_digest_nonce();
        self.algorithms
            .iter()
            .map(|algorithm| {
                let qop = self.qop.as_ref().map_or_else(String::new, |qop| format!(", qop=\"{qop}\""));
                let userhash = if self.userhash { ", userhash=true" } else { "" };
                format!(
                    "Digest realm=\"{DIGEST_REALM}\"{qop}, algorithm={algorithm}, nonce=\"{nonce}\", \
                     opaque=\"{OPAQUE}\"{userhash}"
                )
            })
            .collect()
    }
}

/// 200 `{"authenticated": true, "user", "algorithm", "qop"}` for a correct answer to a
/// challenge of this server; otherwise 401 `{"authenticated": false, "reason"}` with new
/// challenges. 400 for a query it does not understand.
async fn digest_auth(
    State(state): State<AppState>,
    Query(query): Query<HashMap<String, String>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let settings = match Settings::from_query(&query) {
        Ok(settings) => settings,
        Err(message) => return response::bad_request(message),
    };
    let reason = match check(&state, &settings, &method, &uri, &headers, &body) {
        Ok((algorithm, qop)) => {
            return response::json(
                StatusCode::OK,
                json!({"authenticated": true, "user": USER, "algorithm": algorithm, "qop": qop}),
            );
        }
        Err(reason) => reason,
    };
    let answer = response::json(StatusCode::UNAUTHORIZED, json!({"authenticated": false, "reason": reason}));
    settings
        .challenges(&state)
        .iter()
        .fold(answer, |answer, challenge| response::with_header(answer, WWW_AUTHENTICATE, challenge))
}

/// The algorithm and qop of a correct answer, or why it is not one.
fn check(
    state: &AppState,
    settings: &Settings,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<(String, Option<String>), String> {
    let value = headers.get(AUTHORIZATION).ok_or("no Authorization header")?;
    let value = value.to_str().map_err(|_| "the Authorization header is not ASCII")?;
    let (scheme, rest) = value.split_once(' ').ok_or("no credentials")?;
    if !scheme.eq_ignore_ascii_case("digest") {
        return Err(format!("scheme {scheme:?}, not Digest"));
    }
    let fields = parameters(rest)?;
    let field = |name: &str| fields.get(name).map(String::as_str).ok_or(format!("no `{name}`"));
    let algorithm = fields.get("algorithm").map_or("MD5", String::as_str);
    if !settings.algorithms.iter().any(|offered| offered.eq_ignore_ascii_case(algorithm)) {
        return Err(format!("algorithm {algorithm:?} was not offered"));
    }
    let h = |data: &str| hash(algorithm, data.as_bytes()).unwrap_or_default();
    if field("realm")? != DIGEST_REALM {
        return Err("wrong realm".to_owned());
    }
    if field("opaque")? != OPAQUE {
        return Err("wrong opaque".to_owned());
    }
    let target = uri.path_and_query().map_or("/", |target| target.as_str());
    if field("uri")? != target {
        return Err(format!("uri {:?} is not the request target {target:?}", field("uri")?));
    }
    let expected_user = if settings.userhash { h(&format!("{USER}:{DIGEST_REALM}")) } else { USER.to_owned() };
    if field("username")? != expected_user {
        return Err("unknown user".to_owned());
    }
    let nonce = field("nonce")?;
    let qop = fields.get("qop").cloned();
    let offered = settings.qop.as_deref().unwrap_or_default();
    let (nc, cnonce) = match &qop {
        Some(qop) if offered.split(',').any(|item| item.trim() == qop) => {
            let nc = u32::from_str_radix(field("nc")?, 16).map_err(|_| "`nc` is not 8 hex digits")?;
            (Some(nc), Some(field("cnonce")?))
        }
        Some(qop) => return Err(format!("qop {qop:?} was not offered")),
        None if settings.qop.is_some() => return Err("no `qop` though the challenge offered it".to_owned()),
        None => (None, None),
    };
    let mut ha1 = h(&format!("{USER}:{DIGEST_REALM}:{PASSWORD}"));
    if algorithm.to_ascii_uppercase().ends_with("-SESS") {
        ha1 = h(&format!("{ha1}:{nonce}:{}", cnonce.unwrap_or_default()));
    }
    let ha2 = if qop.as_deref() == Some("auth-int") {
        h(&format!("{method}:{target}:{}", hash(algorithm, body).unwrap_or_default()))
    } else {
        h(&format!("{method}:{target}"))
    };
    let expected = match (&qop, nc, cnonce) {
        (Some(qop), Some(nc), Some(cnonce)) => h(&format!("{ha1}:{nonce}:{nc:08x}:{cnonce}:{qop}:{ha2}")),
        _ => h(&format!("{ha1}:{nonce}:{ha2}")),
    };
    if field("response")? != expected {
        return Err("wrong response (user or password)".to_owned());
    }
    state.use_digest_nonce(nonce, nc)?;
    Ok((algorithm.to_owned(), qop))
}

/// The lowercase hex hash of `data` by the algorithm named `algorithm` (`-sess` or not).
fn hash(algorithm: &str, data: &[u8]) -> Option<String> {
    let upper = algorithm.to_ascii_uppercase();
    let bytes: Vec<u8> = match upper.strip_suffix("-SESS").unwrap_or(&upper) {
        "MD5" => md5::Md5::digest(data).to_vec(),
        "SHA-256" => ring::digest::digest(&ring::digest::SHA256, data).as_ref().to_vec(),
        "SHA-512-256" => ring::digest::digest(&ring::digest::SHA512_256, data).as_ref().to_vec(),
        _ => return None,
    };
    Some(bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut text, byte| {
        let _ = write!(text, "{byte:02x}");
        text
    }))
}

/// `name=value, name="quoted \"value\""` as a map (names lowercase).
fn parameters(text: &str) -> Result<HashMap<String, String>, String> {
    let mut fields = HashMap::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        let (name, after) = rest.split_once('=').ok_or_else(|| format!("expected name=value at {rest:?}"))?;
        let name = name.trim().to_ascii_lowercase();
        let after = after.trim_start();
        let (value, after) = if let Some(quoted) = after.strip_prefix('"') {
            let mut value = String::new();
            let mut end = None;
            let mut escaped = false;
            for (index, character) in quoted.char_indices() {
                match (escaped, character) {
                    (false, '\\') => escaped = true,
                    (false, '"') => {
                        end = Some(index);
                        break;
                    }
                    _ => {
                        value.push(character);
                        escaped = false;
                    }
                }
            }
            let end = end.ok_or_else(|| format!("unclosed quote in `{name}`"))?;
            (value, &quoted[end + 1..])
        } else {
            let end = after.find(',').unwrap_or(after.len());
            (after[..end].trim().to_owned(), &after[end..])
        };
        fields.insert(name, value);
        rest = after.trim_start().trim_start_matches(',').trim_start();
    }
    Ok(fields)
}
