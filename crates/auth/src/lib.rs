//! The authentication schemes Volley computes itself, apart from the engine that uses
//! them: [`sigv4`] signs a request as httpyac's and REST Client's `Authorization: AWS …`
//! asks, [`digest`] answers a server's `WWW-Authenticate: Digest …` challenge. Both work
//! on the request as it goes on the wire (method, URL, headers, body) and know nothing of
//! `.http` files; the engine reads the credentials from a request and calls them when it
//! sends it. [`oauth`] gets OAuth 2.0 tokens: the grant flows, their caches and prompt,
//! their requests sent through a [`TokenTransport`](oauth::TokenTransport) the engine
//! gives (its client, with the settings of the request that needs the token).

pub mod digest;
pub mod oauth;
pub mod sigv4;
