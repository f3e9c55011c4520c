//! The authentication schemes Volley computes itself, apart from the engine that uses
//! them: [`sigv4`] signs a request as httpyac's and REST Client's `Authorization: AWS …`
//! asks, [`digest`] answers a server's `WWW-Authenticate: Digest …` challenge. Both work
//! on the request as it goes on the wire (method, URL, headers, body) and know nothing of
//! `.http` files; the engine reads the credentials from a request and calls them when it
//! sends it. [`oauth`] gets OAuth 2.0 tokens: the grant flows, their caches and prompt,
//! their requests sent through a [`TokenTransport`](oauth::TokenTransport) the engine
//! gives (its client, with the settings of the request that needs the token).
//! [`basic_token`] is HTTP Basic's, for both.

pub mod digest;
pub mod oauth;
pub mod sigv4;

use base64::Engine as _;

/// The token of HTTP Basic (RFC 7617): `user:password` in base64, what follows `Basic `.
#[must_use]
pub fn basic_token(user: &[u8], password: &[u8]) -> String {
    let mut pair = Vec::with_capacity(user.len() + 1 + password.len());
    pair.extend_from_slice(user);
    pair.push(b':');
    pair.extend_from_slice(password);
    base64::engine::general_purpose::STANDARD.encode(pair)
}
