//! Tokens: the main bearer token (compared in constant time) and scoped tokens
//! `script.<base64url(claims)>.<base64url(HMAC-SHA256(main token, claims part))>`,
//! with revocation. The live tokens are in the server's [`TokenStore`]: with `--redis`
//! Redis keys, so that a token issued by one instance is accepted by every instance
//! given the same main token, and revoking it on one revokes it everywhere.

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::hmac;
use serde::{Deserialize, Serialize};

use crate::clock::{new_id, now_ms};
use crate::error::ApiError;
use crate::store::TokenStore;

/// Default lifetime of a scoped token (15 min).
pub(crate) const DEFAULT_TTL_MS: u64 = 900_000;
/// Longest lifetime of a scoped token (a day).
pub(crate) const MAX_TTL_MS: u64 = 86_400_000;

const PREFIX: &str = "script.";

/// What a scoped token allows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Claims {
    pub(crate) jti: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) flow_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) session_id: Option<String>,
    pub(crate) created_at: u64,
    pub(crate) expires_at: u64,
}

/// Why a presented token is not accepted (logged, never answered in detail).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rejected {
    Invalid,
    Expired,
    Revoked,
    /// The shared store could not be asked.
    Unavailable,
}

/// The server's tokens.
pub(crate) struct Tokens {
    key: Option<(hmac::Key, hmac::Tag)>,
    /// The scoped tokens issued and not revoked.
    store: Arc<dyn TokenStore>,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokens").field("enabled", &self.key.is_some()).finish_non_exhaustive()
    }
}

impl Tokens {
    pub(crate) fn new(main: Option<&str>, store: Arc<dyn TokenStore>) -> Self {
        let key = main.map(|main| {
            let key = hmac::Key::new(hmac::HMAC_SHA256, main.as_bytes());
            let tag = hmac::sign(&key, main.as_bytes());
            (key, tag)
        });
        Self { key, store }
    }

    pub(crate) fn enabled(&self) -> bool {
        self.key.is_some()
    }

    /// Whether `presented` is the main token, in constant time: `ring` compares the
    /// HMAC of what was presented with the main token's own, so neither its content
    /// nor its length leaks through timing.
    pub(crate) fn is_main(&self, presented: &str) -> bool {
        let Some((key, expected)) = &self.key else { return false };
        hmac::verify(key, presented.as_bytes(), expected.as_ref()).is_ok()
    }

    /// A new scoped token and its claims (`None` without a main token).
    pub(crate) async fn issue(
        &self,
        flow_id: Option<String>,
        session_id: Option<String>,
        ttl_ms: u64,
    ) -> Result<Option<(String, Claims)>, ApiError> {
        let Some((key, _)) = self.key.as_ref() else { return Ok(None) };
        let now = now_ms();
        let claims = Claims { jti: new_id("tok"), flow_id, session_id, created_at: now, expires_at: now + ttl_ms };
        let Ok(json) = serde_json::to_vec(&claims) else { return Ok(None) };
        let part = URL_SAFE_NO_PAD.encode(json);
        let signature = URL_SAFE_NO_PAD.encode(hmac::sign(key, part.as_bytes()).as_ref());
        self.store.issued(&claims.jti, claims.expires_at).await?;
        Ok(Some((format!("{PREFIX}{part}.{signature}"), claims)))
    }

    /// The claims of a valid, unexpired, unrevoked scoped token.
    pub(crate) async fn verify(&self, presented: &str) -> Result<Claims, Rejected> {
        let (key, _) = self.key.as_ref().ok_or(Rejected::Invalid)?;
        let rest = presented.strip_prefix(PREFIX).ok_or(Rejected::Invalid)?;
        let (part, signature) = rest.split_once('.').ok_or(Rejected::Invalid)?;
        let signature = URL_SAFE_NO_PAD.decode(signature).map_err(|_| Rejected::Invalid)?;
        hmac::verify(key, part.as_bytes(), &signature).map_err(|_| Rejected::Invalid)?;
        let claims: Claims = URL_SAFE_NO_PAD
            .decode(part)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .ok_or(Rejected::Invalid)?;
        if claims.expires_at <= now_ms() {
            return Err(Rejected::Expired);
        }
        if !self.store.live(&claims.jti).await.map_err(|_| Rejected::Unavailable)? {
            return Err(Rejected::Revoked);
        }
        Ok(claims)
    }

    /// Revokes the token `jti`; `false` when no live token has it.
    pub(crate) async fn revoke(&self, jti: &str) -> Result<bool, ApiError> {
        self.store.revoke(jti).await
    }

    /// Forgets expired tokens.
    pub(crate) fn sweep(&self, now: u64) {
        self.store.sweep(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MemoryTokens;

    fn in_memory(main: Option<&str>) -> Tokens {
        Tokens::new(main, Arc::new(MemoryTokens::default()))
    }

    #[test]
    fn main_token_matches_only_itself() {
        let tokens = in_memory(Some("s3cret"));
        assert!(tokens.is_main("s3cret"));
        for wrong in ["", "s3cre", "s3cret ", "S3CRET", "script.x.y"] {
            assert!(!tokens.is_main(wrong), "{wrong}");
        }
        assert!(!in_memory(None).is_main("anything"));
    }

    #[tokio::test]
    async fn scoped_tokens_verify_expire_and_revoke() {
        let tokens = in_memory(Some("main"));
        let (token, claims) =
            tokens.issue(Some("flow_1".to_owned()), None, 60_000).await.expect("issued").expect("a key");
        assert_eq!(tokens.verify(&token).await, Ok(claims.clone()));
        // Another server's key does not verify it.
        assert_eq!(in_memory(Some("other")).verify(&token).await, Err(Rejected::Invalid));
        // Tampered claims fail the signature.
        let (_, rest) = token.split_once('.').expect("prefix");
        let (_, signature) = rest.split_once('.').expect("signature");
        let forged =
            URL_SAFE_NO_PAD.encode(br#"{"jti":"x","flowId":"other","createdAt":0,"expiresAt":99999999999999}"#);
        assert_eq!(tokens.verify(&format!("script.{forged}.{signature}")).await, Err(Rejected::Invalid));
        assert!(tokens.revoke(&claims.jti).await.expect("revoked"));
        assert_eq!(tokens.verify(&token).await, Err(Rejected::Revoked));
        assert!(!tokens.revoke(&claims.jti).await.expect("answered"));
        let (expired, _) = tokens.issue(None, Some("ses_1".to_owned()), 0).await.expect("issued").expect("a key");
        assert_eq!(tokens.verify(&expired).await, Err(Rejected::Expired));
    }
}
