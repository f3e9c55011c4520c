//! What the engine's OAuth 2.0 flows keep and ask, apart from the flows themselves
//! (which send their token requests through the engine's client): a [`Token`] as the
//! authorization server gave it, the optional on-disk token cache ([`load`], [`save`],
//! [`clear_token_cache`]), and the [`AuthPrompt`] through which a person takes part.

mod prompt;
mod random;
mod store;
mod token;

pub use prompt::{AuthPrompt, CommandPrompt, DeviceCode, NoBrowserPrompt, scoped_prompt, with_prompt};
pub use random::random_text;
pub use store::{clear_token_cache, default_token_cache, load, save};
pub use token::Token;
