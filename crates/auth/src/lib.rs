//! The authentication schemes Volley computes itself, apart from the engine that uses
//! them: [`sigv4`] signs a request as httpyac's and REST Client's `Authorization: AWS …`
//! asks, [`digest`] answers a server's `WWW-Authenticate: Digest …` challenge. Both work
//! on the request as it goes on the wire (method, URL, headers, body) and know nothing of
//! `.http` files; the engine reads the credentials from a request and calls them when it
//! sends it. The OAuth 2.0 flows stay in the engine, since they run their token requests
//! through its client; what they keep and ask is [`oauth`] (the token, its cache on
//! disk, the prompt).

pub mod digest;
pub mod oauth;
pub mod sigv4;
