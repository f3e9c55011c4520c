//! Where the live scoped tokens are kept: their ids (`jti`) with their expiry. A token
//! verifies only while its id is live here, so revoking it is removing the id.

use std::collections::HashMap;

use futures_util::future::BoxFuture;
use parking_lot::Mutex;

use crate::error::ApiError;

/// The live scoped tokens of a server, or of every instance of a cluster.
pub(crate) trait TokenStore: Send + Sync {
    /// Keeps `jti` live until `expires_at` (Unix milliseconds).
    fn issued<'a>(&'a self, jti: &'a str, expires_at: u64) -> BoxFuture<'a, Result<(), ApiError>>;

    /// Whether `jti` is live: issued and neither revoked nor forgotten.
    fn live<'a>(&'a self, jti: &'a str) -> BoxFuture<'a, Result<bool, ApiError>>;

    /// Revokes `jti`; `false` when no live token has it.
    fn revoke<'a>(&'a self, jti: &'a str) -> BoxFuture<'a, Result<bool, ApiError>>;

    /// Forgets the tokens expired at `now` (Unix milliseconds), where they do not expire
    /// by themselves.
    fn sweep(&self, now: u64);
}

/// The tokens of one server, in its memory.
#[derive(Debug, Default)]
pub(crate) struct MemoryTokens {
    /// By `jti`, with the expiry; revoked ones are removed.
    issued: Mutex<HashMap<String, u64>>,
}

impl TokenStore for MemoryTokens {
    fn issued<'a>(&'a self, jti: &'a str, expires_at: u64) -> BoxFuture<'a, Result<(), ApiError>> {
        self.issued.lock().insert(jti.to_owned(), expires_at);
        Box::pin(std::future::ready(Ok(())))
    }

    fn live<'a>(&'a self, jti: &'a str) -> BoxFuture<'a, Result<bool, ApiError>> {
        let live = self.issued.lock().contains_key(jti);
        Box::pin(std::future::ready(Ok(live)))
    }

    fn revoke<'a>(&'a self, jti: &'a str) -> BoxFuture<'a, Result<bool, ApiError>> {
        let removed = self.issued.lock().remove(jti).is_some();
        Box::pin(std::future::ready(Ok(removed)))
    }

    fn sweep(&self, now: u64) {
        self.issued.lock().retain(|_, expires_at| *expires_at > now);
    }
}

/// The behaviour every [`TokenStore`] has, run against each implementation (the Redis
/// one in `cluster/tests.rs`).
#[cfg(test)]
pub(crate) async fn check_token_store(store: &dyn TokenStore) {
    let now = crate::clock::now_ms();
    let (a, b) = (crate::clock::new_id("tok"), crate::clock::new_id("tok"));
    assert!(!store.live(&a).await.expect("answered"), "nothing is live before it is issued");
    store.issued(&a, now + 60_000).await.expect("kept");
    store.issued(&b, now + 60_000).await.expect("kept");
    assert!(store.live(&a).await.expect("answered") && store.live(&b).await.expect("answered"));
    assert!(store.revoke(&a).await.expect("answered"), "a live token is revoked");
    assert!(!store.live(&a).await.expect("answered"), "a revoked token is not live");
    assert!(!store.revoke(&a).await.expect("answered"), "a second revocation finds nothing");
    store.sweep(now);
    assert!(store.live(&b).await.expect("answered"), "a sweep keeps what has not expired");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn memory_tokens_keep_what_is_live() {
        let store = MemoryTokens::default();
        check_token_store(&store).await;
        // Expired ones are forgotten by the sweep.
        store.issued("old", 5).await.expect("kept");
        store.sweep(5);
        assert!(!store.live("old").await.expect("answered"));
    }
}
