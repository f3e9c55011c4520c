//! The exchange of one request: the transport's request and response, the redirects
//! (followed here, not by the transport) with the cookies of every hop, a Digest
//! challenge answered once per URL, one timeout over the whole exchange, cancellation;
//! and the WebSocket handshake.

use std::time::Instant;

use bytes::{Bytes, BytesMut};
use futures_util::StreamExt as _;
use http::header::{AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, COOKIE, SET_COOKIE};
use tokio_util::sync::CancellationToken;

use super::Client;
use super::redirect::{self, MAX_REDIRECTS};
use crate::error::{Error, TransportError};
use crate::prepared::{Exchange, PreparedRequest, add_jar_cookies};
use crate::redact::{Redactor, Secrets};
use crate::response::{Body, Pending, Response, SentRequest, Timing};
use crate::transport::TransportRequest;
use volley_auth::digest::Challenge;

impl Client {
    /// Sends a prepared request: redirects, cookies of every hop, the timeout over the
    /// whole exchange (body included), cancellation.
    ///
    /// The exchange's state (2.9 KB) is boxed, and `prepared` moved into it before the
    /// future is made: the futures above this one neither carry nor copy it.
    pub(crate) fn exchange<'a>(
        &'a self,
        prepared: PreparedRequest,
        cancel: Option<&'a CancellationToken>,
    ) -> impl Future<Output = Result<Response, Error>> + 'a {
        let timeout = prepared.timeout;
        let work = Box::pin(self.exchange_inner(prepared, cancel.cloned()));
        async move {
            let cancelled = async {
                match cancel {
                    Some(token) => token.cancelled().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                result = tokio::time::timeout(timeout, work) => match result {
                    Ok(result) => result,
                    Err(_) => Err(Error::Transport(TransportError::Timeout { after: timeout })),
                },
                () = cancelled => Err(Error::Cancelled),
            }
        }
    }

    async fn exchange_inner(
        &self,
        prepared: PreparedRequest,
        cancel: Option<CancellationToken>,
    ) -> Result<Response, Error> {
        let started = Instant::now();
        let jar = prepared.cookie_jar.as_ref().filter(|_| prepared.use_cookies);
        let redactor = prepared.redactor;
        let secrets = prepared.secrets;
        let mut method = prepared.method;
        let mut url = prepared.url;
        let mut headers = prepared.headers;
        let mut body = prepared.body;
        let mut hops = 0;
        // Digest: the request goes without credentials; a challenge is answered once
        // per URL of the chain, and never across origins.
        let mut digest = prepared.digest;
        let mut digest_answered = false;
        loop {
            // The headers as they go out (with the jar's cookies); `headers` stays as
            // written for the next hop of a redirect.
            let mut sent_headers = headers.clone();
            add_jar_cookies(&mut sent_headers, jar, &url);
            let request = TransportRequest {
                method: method.clone(),
                url: url.clone(),
                headers: sent_headers.clone(),
                body: body.clone(),
                validate_ssl: prepared.validate_ssl,
                version: prepared.version,
                network: prepared.network.clone(),
            };
            let response = self.inner.transport.send(request).await?;
            let ttfb = started.elapsed();
            if let Some(jar) = jar {
                let values = response.headers.get_all(SET_COOKIE).iter().filter_map(|value| value.to_str().ok());
                jar.store(&url, values);
            }
            if response.status == http::StatusCode::UNAUTHORIZED
                && !digest_answered
                && let Some(credentials) = &digest
                && let Some(challenge) = Challenge::best(&response.headers)
            {
                // Read to the end, so that the connection serves the answer.
                let mut rest = response.body;
                while let Some(chunk) = rest.next().await {
                    chunk?;
                }
                let target = match url.query() {
                    Some(query) => format!("{}?{query}", url.path()),
                    None => url.path().to_owned(),
                };
                let answer = challenge.answer(credentials, method.as_str(), &target, &body);
                let value = http::HeaderValue::from_str(&answer).map_err(|_| TransportError::Other {
                    message: "the server's Digest challenge has characters a header cannot carry".to_owned(),
                })?;
                headers.insert(AUTHORIZATION, value);
                digest_answered = true;
                continue;
            }
            if let Some(location) = redirect::location(response.status, &response.headers)
                && prepared.follow_redirects
            {
                if hops == MAX_REDIRECTS {
                    return Err(TransportError::TooManyRedirects { limit: MAX_REDIRECTS }.into());
                }
                hops += 1;
                let hop = redirect::follow(response.status, location, &url, &method)?;
                method = hop.method;
                if hop.drop_body {
                    body = Bytes::new();
                    headers.remove(CONTENT_TYPE);
                    headers.remove(CONTENT_LENGTH);
                }
                if hop.cross_origin {
                    headers.remove(AUTHORIZATION);
                    headers.remove(COOKIE);
                    digest = None;
                }
                if digest.is_some() && digest_answered {
                    // The answer was for the previous URL: the next one is challenged anew.
                    headers.remove(AUTHORIZATION);
                    digest_answered = false;
                }
                url = hop.url;
                continue;
            }
            let event_stream = prepared.exchange == Exchange::EventStream
                && response
                    .headers
                    .get(CONTENT_TYPE)
                    .and_then(|value| value.to_str().ok())
                    .is_some_and(|value| value.trim().to_ascii_lowercase().starts_with("text/event-stream"));
            let mut truncated = false;
            let mut body_file = None;
            let (body_read, total) = if event_stream {
                // The body streams past the timeout; cancellation ends it cleanly.
                let stream: crate::transport::BodyStream = match cancel {
                    Some(token) => Box::pin(response.body.take_until(token.cancelled_owned())),
                    None => response.body,
                };
                (Body::Streaming(Pending::new(stream)), ttfb)
            } else {
                let limit = prepared.max_body_bytes.unwrap_or(usize::MAX);
                let mut stream = response.body;
                // One chunk (the usual case for small bodies) is kept as is, without a copy.
                let mut first: Option<Bytes> = None;
                let mut collected = BytesMut::new();
                let mut kept = 0usize;
                while let Some(chunk) = stream.next().await {
                    let mut chunk = chunk?;
                    if kept + chunk.len() > limit {
                        if let Some(dir) = &prepared.spill_dir {
                            let before = first.as_ref().map_or(&collected[..], |first| &first[..]);
                            body_file = Box::pin(spill(dir, before, &chunk, &mut stream)).await?;
                        }
                        // Else the rest is left unread: the connection is dropped with the stream.
                        chunk.truncate(limit - kept);
                        truncated = true;
                    }
                    kept += chunk.len();
                    match first.take() {
                        None if collected.is_empty() => first = Some(chunk),
                        None => collected.extend_from_slice(&chunk),
                        Some(previous) => {
                            collected.extend_from_slice(&previous);
                            collected.extend_from_slice(&chunk);
                        }
                    }
                    if truncated {
                        break;
                    }
                }
                (Body::Read(first.map_or_else(|| collected.freeze(), owned)), started.elapsed())
            };
            let response_headers = owned_headers(response.headers);
            let redactor =
                response_redactor(redactor, &secrets, (&headers, &sent_headers), &response_headers, &body_read);
            return Ok(Response {
                status: response.status,
                version: response.version,
                headers: response_headers,
                url: url.clone(),
                redirected: hops > 0,
                body: body_read,
                truncated,
                body_file,
                timing: Timing { ttfb, total },
                request: SentRequest { method, url, headers: sent_headers, body },
                redactor,
                assertions: Vec::new(),
                logs: Vec::new(),
                grpc: None,
            });
        }
    }

    /// The handshake of a WebSocket request: cookies of the jar for its URL, the
    /// connect timeout, cancellation; the response is the handshake's.
    pub(crate) async fn connect_websocket(
        &self,
        prepared: PreparedRequest,
        cancel: Option<&CancellationToken>,
    ) -> Result<Response, Error> {
        let started = Instant::now();
        let messages = match &prepared.exchange {
            crate::prepared::Exchange::WebSocket { messages, .. } => messages.clone(),
            _ => Vec::new(),
        };
        let jar = prepared.cookie_jar.as_ref().filter(|_| prepared.use_cookies);
        // Cookies belong to http(s) origins: ws(s) URLs look them up as http(s).
        let mut cookie_url = prepared.url.clone();
        let _ = cookie_url.set_scheme(if prepared.url.scheme() == "wss" { "https" } else { "http" });
        let mut headers = prepared.headers.clone();
        add_jar_cookies(&mut headers, jar, &cookie_url);
        let connecting = self.inner.transport.websocket(crate::websocket::WsConnect {
            url: &prepared.url,
            headers: &headers,
            validate_ssl: prepared.validate_ssl,
            network: prepared.network.as_deref(),
            timeout: prepared.timeout,
        });
        let handshake = match cancel {
            Some(token) => tokio::select! {
                result = connecting => result,
                () = token.cancelled() => return Err(Error::Cancelled),
            },
            None => connecting.await,
        }
        .map_err(crate::error::TransportError::from)?;
        if let Some(jar) = jar {
            let values = handshake.headers.get_all(SET_COOKIE).iter().filter_map(|value| value.to_str().ok());
            jar.store(&cookie_url, values);
        }
        let elapsed = started.elapsed();
        let redactor = prepared.redactor;
        Ok(Response {
            status: handshake.status,
            version: http::Version::HTTP_11,
            headers: handshake.headers,
            url: prepared.url.clone(),
            redirected: false,
            body: Body::WebSocket(Pending::new(handshake.socket.sending(messages))),
            truncated: false,
            body_file: None,
            timing: Timing { ttfb: elapsed, total: elapsed },
            request: SentRequest { method: http::Method::GET, url: prepared.url, headers, body: prepared.body },
            redactor,
            assertions: Vec::new(),
            logs: Vec::new(),
            grpc: None,
        })
    }
}

/// Writes a body that is longer than what is kept to a new file in `dir`: the bytes
/// read so far (`before`, then `chunk`), then the rest of `stream` as it arrives. A file
/// that cannot be written is no error of the exchange: the body is cut as without a
/// `dir` (`None`). A failure of the stream is the exchange's.
async fn spill(
    dir: &std::path::Path,
    before: &[u8],
    chunk: &[u8],
    stream: &mut crate::transport::BodyStream,
) -> Result<Option<crate::response::BodyFile>, Error> {
    use tokio::io::AsyncWriteExt as _;
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let number = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let millis =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |since| since.as_millis());
    let path = dir.join(format!("body-{millis}-{}-{number}", std::process::id()));
    let opened = async {
        tokio::fs::create_dir_all(dir).await?;
        let mut file = tokio::io::BufWriter::with_capacity(256 * 1024, tokio::fs::File::create(&path).await?);
        file.write_all(before).await?;
        file.write_all(chunk).await?;
        Ok::<_, std::io::Error>(file)
    };
    let Ok(mut file) = opened.await else { return Ok(None) };
    let mut size = (before.len() + chunk.len()) as u64;
    let mut writable = true;
    while let Some(next) = stream.next().await {
        let next = next?;
        size += next.len() as u64;
        if writable && file.write_all(&next).await.is_err() {
            writable = false;
        }
    }
    if !writable || file.flush().await.is_err() {
        let _ = tokio::fs::remove_file(&path).await;
        return Ok(None);
    }
    Ok(Some(crate::response::BodyFile { path, size }))
}

/// The redactor of a response: the request's secrets, and those the exchange showed
/// (the jar's cookies it sent, the cookies it set, the credential fields of its JSON
/// body), so that the same value is hidden wherever the run shows it. Built anew only
/// when the exchange added something.
fn response_redactor(
    redactor: Redactor,
    secrets: &Secrets,
    (written, sent): (&http::HeaderMap, &http::HeaderMap),
    headers: &http::HeaderMap,
    body: &Body,
) -> Redactor {
    if redactor.reveals_all() {
        return redactor;
    }
    let mut found = Secrets::new();
    if sent.get(COOKIE) != written.get(COOKIE) {
        let mut cookies = http::HeaderMap::new();
        for value in sent.get_all(COOKIE) {
            cookies.append(COOKIE, value.clone());
        }
        found.add_headers(&cookies);
    }
    let bytes = match body {
        Body::Read(bytes) => &bytes[..],
        _ => &[],
    };
    found.add_response(headers, bytes);
    if found.is_empty() {
        return redactor;
    }
    let mut all = secrets.clone();
    all.extend(&found);
    all.redactor()
}

/// Below this size, a body read in one chunk is copied: the chunk is a slice of the
/// connection's read buffer, and kept as it is it would keep the whole buffer (8 KB
/// and more) alive for as long as the response is kept — a run keeps its responses
/// for its reports, so memory grew by that much per request.
const COPIED_BODY_BYTES: usize = 64 * 1024;

/// `chunk`, copied when it is small (see [`COPIED_BODY_BYTES`]).
fn owned(chunk: Bytes) -> Bytes {
    if chunk.len() < COPIED_BODY_BYTES { Bytes::copy_from_slice(&chunk) } else { chunk }
}

/// The headers with values of their own: as parsed, each value is a slice of the
/// connection's read buffer and would keep it alive with the response.
fn owned_headers(mut headers: http::HeaderMap) -> http::HeaderMap {
    // Each value replaced in place: the map is not built again (its names hashed anew).
    for value in headers.values_mut() {
        if let Ok(mut copy) = http::HeaderValue::from_bytes(value.as_bytes()) {
            copy.set_sensitive(value.is_sensitive());
            *value = copy;
        }
    }
    headers
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    /// A kept response does not keep the connection's read buffer alive through its
    /// headers: every value, repeated ones too, is copied out of it, in its place.
    #[test]
    fn header_values_are_copied_out_of_the_read_buffer() {
        let buffer = Bytes::from(b"text/plain; charset=utf-8abc".repeat(300));
        let inside = |value: &http::HeaderValue| buffer.as_ptr_range().contains(&value.as_bytes().as_ptr());
        let slice = |range: std::ops::Range<usize>| {
            http::HeaderValue::from_maybe_shared(buffer.slice(range)).expect("a header value")
        };
        let mut headers = http::HeaderMap::new();
        headers.insert(http::header::CONTENT_TYPE, slice(0..25));
        headers.append("x-repeated", slice(25..28));
        let mut secret = slice(0..10);
        secret.set_sensitive(true);
        headers.append("x-repeated", secret);
        assert!(headers.values().all(inside));
        let owned = super::owned_headers(headers);
        assert!(owned.values().all(|value| !inside(value)));
        assert_eq!(owned[http::header::CONTENT_TYPE], "text/plain; charset=utf-8");
        let repeated: Vec<_> = owned.get_all("x-repeated").iter().collect();
        assert_eq!(repeated, ["abc", "text/plain"]);
        assert!(!repeated[0].is_sensitive() && repeated[1].is_sensitive());
    }
}
