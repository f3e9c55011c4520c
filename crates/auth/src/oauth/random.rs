//! Random text for an OAuth flow: the `state` and PKCE verifier of an authorization,
//! the placeholder a pending token stands in for.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// A random URL-safe string of `bytes` random bytes (state, PKCE verifier).
#[must_use]
pub fn random_text(bytes: usize) -> String {
    use ring::rand::SecureRandom as _;
    let mut buffer = vec![0_u8; bytes];
    // The system's generator; should it ever fail, the thread's (also cryptographic).
    if ring::rand::SystemRandom::new().fill(&mut buffer).is_err() {
        for byte in &mut buffer {
            *byte = rand::random();
        }
    }
    URL_SAFE_NO_PAD.encode(buffer)
}
