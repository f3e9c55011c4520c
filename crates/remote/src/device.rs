//! Device codes of runs on a server: while a run that may take a token from a device
//! flow is under way, its flow's observer events are watched, and each `authDeviceCode`
//! is shown through the client's prompt (once per code), since the person who must
//! enter it sits here, not at the server.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt as _;
use http::header::ACCEPT;
use parking_lot::Mutex;
use volley_protocol::{AuthDeviceCode, ObserverEvent};

use super::server::Server;
use volley_auth::oauth::{AuthPrompt, DeviceCode};

/// The most an event may take before the watch gives up (events are small; a stream
/// that says otherwise is not one to keep reading).
const MAX_EVENT_BYTES: usize = 1 << 20;

/// A watch under way; dropping it stops it.
pub(super) struct Watch(tokio::task::JoinHandle<()>);

impl Drop for Watch {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Whether `content` may ask for a token from a flow (`$auth.token`, httpyac's
/// `oauth2`/`openid` headers and variables): only such runs are watched.
pub(super) fn may_need_a_person(content: &str) -> bool {
    let lower = content.to_ascii_lowercase();
    ["$auth", "oauth2", "openid"].iter().any(|word| lower.contains(word))
}

/// Watches the events of `flow` (`GET /event?flowId=`) and shows each device code not
/// in `shown` yet. Failures end the watch quietly: the run goes on, and its own answer
/// says how the flow ended.
pub(super) fn watch(
    server: &Server,
    flow: &str,
    prompt: Arc<dyn AuthPrompt>,
    shown: Arc<Mutex<HashSet<String>>>,
) -> Watch {
    let mut url = server.endpoint(&["event"]);
    url.query_pairs_mut().append_pair("flowId", flow);
    let request = server.request(http::Method::GET, url, None::<&()>).header(ACCEPT, "text/event-stream");
    Watch(tokio::spawn(async move {
        let Ok(Ok(answer)) = tokio::time::timeout(Duration::from_secs(10), request.send()).await else { return };
        if !answer.status().is_success() {
            return;
        }
        let mut stream = answer.bytes_stream();
        let mut buffer: Vec<u8> = Vec::new();
        while let Some(Ok(chunk)) = stream.next().await {
            buffer.extend_from_slice(&chunk);
            while let Some(end) = buffer.windows(2).position(|pair| pair == b"\n\n") {
                let block: Vec<u8> = buffer.drain(..end + 2).collect();
                if let Some(code) = device_code(&block)
                    && shown.lock().insert(code.user_code.clone())
                {
                    prompt.show_device_code(&code);
                }
            }
            if buffer.len() > MAX_EVENT_BYTES {
                return;
            }
        }
    }))
}

/// The device code of one Server-Sent Events block, when it is an `authDeviceCode`.
fn device_code(block: &[u8]) -> Option<DeviceCode> {
    let text = std::str::from_utf8(block).ok()?;
    let mut kind = None;
    let mut data = String::new();
    for line in text.lines() {
        if let Some(value) = line.strip_prefix("event:") {
            kind = Some(value.trim());
        } else if let Some(value) = line.strip_prefix("data:") {
            data.push_str(value.strip_prefix(' ').unwrap_or(value));
        }
    }
    if kind != Some("authDeviceCode") {
        return None;
    }
    let envelope: serde_json::Value = serde_json::from_str(&data).ok()?;
    let ObserverEvent::AuthDeviceCode(AuthDeviceCode {
        user_code,
        verification_uri,
        verification_uri_complete,
        expires_in,
    }) = ObserverEvent::from_parts("authDeviceCode", envelope.get("payload")?).ok()?
    else {
        return None;
    };
    Some(DeviceCode {
        user_code,
        verification_uri,
        verification_uri_complete,
        expires_in: Duration::from_secs(expires_in),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_device_code_events_are_read() {
        let block = b"event: authDeviceCode\nid: f:4\ndata: {\"type\":\"authDeviceCode\",\"payload\":{\"userCode\":\"AB-CD\",\"verificationUri\":\"https://id/device\",\"expiresIn\":60}}\n\n";
        let code = device_code(block).expect("a device code");
        assert_eq!(code.user_code, "AB-CD");
        assert_eq!(code.verification_uri, "https://id/device");
        assert_eq!(code.expires_in, Duration::from_secs(60));
        assert!(device_code(b"event: fetchStarted\ndata: {\"payload\":{}}\n\n").is_none());
        assert!(device_code(b"event: authDeviceCode\ndata: not json\n\n").is_none());
        assert!(may_need_a_person("GET /\nAuthorization: Bearer {{$auth.token(\"x\")}}"));
        assert!(may_need_a_person("GET /\nAuthorization: OAuth2 device_code"));
        assert!(!may_need_a_person("GET /\nAuthorization: Bearer {{token}}"));
    }
}
