//! OAuth 2.0 and `OpenID` Connect tokens for requests (httpyac's `Authorization: oauth2
//! [grant] [prefix]`, `openid …`, and configurations' `auth` entries): what a token is
//! got with ([`OAuthConfig`], [`Grant`], the [`PendingToken`] a request holds), the
//! grant flows that get it ([`Flow`]: the [`TokenCache`] and the optional on-disk cache,
//! refresh, client credentials, password, authorization code, device code, `OpenID`
//! discovery), a [`Token`] as the authorization server gave it, and the [`AuthPrompt`]
//! through which a person takes part. The flows reach the network only through
//! [`TokenTransport`], which the engine implements with its client (the request's TLS
//! settings, proxies and timeout); the engine reads the configurations from the
//! request's variables and puts the tokens in place.

mod config;
mod flow;
mod interactive;
mod prompt;
mod random;
mod store;
mod token;
mod transport;
mod wire;

pub use config::{Grant, OAuthConfig, PendingToken};
pub use flow::{Flow, FlowError, TokenCache};
pub use prompt::{AuthPrompt, CommandPrompt, DeviceCode, NoBrowserPrompt, scoped_prompt, with_prompt};
pub use random::random_text;
pub use store::{clear_token_cache, default_token_cache, load, save};
pub use token::Token;
pub use transport::{MAX_ANSWER_BYTES, SideAnswer, SideRequest, TokenTransport};
