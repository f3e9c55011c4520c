//! The token-refresh pattern: on a 401, run a refresh definition, store the new token
//! in a variable, and retry once.

pub use crate::oauth::{
    AuthPrompt, CommandPrompt, DeviceCode, NoBrowserPrompt, clear_token_cache, default_token_cache, with_prompt,
};

use crate::client::{Client, RunOptions};
use crate::error::Error;
use crate::remote::RemoteClient;
use crate::response::Response;

/// How to get a new token when a request answers 401.
///
/// ```no_run
/// # async fn example(client: volley_engine::Client) -> Result<(), volley_engine::Error> {
/// use volley_engine::RunOptions;
/// use volley_engine::auth::TokenRefresh;
///
/// let refresh = TokenRefresh {
///     definition: "POST {{host}}/oauth/refresh\n".to_owned(),
///     token_path: "$.access_token".to_owned(),
///     variable: "token".to_owned(),
/// };
/// let response = refresh
///     .run_string(&client, "GET {{host}}/me\nAuthorization: Bearer {{token}}\n", RunOptions::default())
///     .await?;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRefresh {
    /// The `.http` text of the refresh request.
    pub definition: String,
    /// JSONPath of the new token in the refresh response (`$.access_token`).
    pub token_path: String,
    /// The client variable the token is stored in (`token`).
    pub variable: String,
}

impl TokenRefresh {
    /// Runs the selected request of `content`; when it answers 401, runs the refresh
    /// definition, stores the token with [`Client::set_variable`], and runs the request
    /// once more. Returns the last response (a second 401 included: it retries once).
    pub async fn run_string(&self, client: &Client, content: &str, options: RunOptions) -> Result<Response, Error> {
        let first = client.run_string(content, options.clone()).await?;
        if first.status() != 401 {
            return Ok(first);
        }
        let refreshed = client.run_string(&self.definition, refresh_options(&options)).await?;
        let token = self.token_of(&refreshed).await?;
        client.set_variable(self.variable.clone(), token);
        client.run_string(content, options).await
    }

    /// [`run_string`](Self::run_string) through an execution server: the refresh
    /// definition runs there too, and the new token goes to the remote session.
    pub async fn run_string_remote(
        &self,
        client: &RemoteClient,
        content: &str,
        options: RunOptions,
    ) -> Result<Response, Error> {
        let first = client.run_string(content, options.clone()).await?;
        if first.status() != 401 {
            return Ok(first);
        }
        let refreshed = client.run_string(&self.definition, refresh_options(&options)).await?;
        let token = self.token_of(&refreshed).await?;
        client.set_variable(self.variable.clone(), token).await?;
        client.run_string(content, options).await
    }

    /// The token in a refresh response.
    async fn token_of(&self, refreshed: &Response) -> Result<serde_json::Value, Error> {
        let body: serde_json::Value = refreshed.json().await.map_err(|error| Error::TokenRefresh {
            message: format!("the refresh response ({}) is not JSON: {error}", refreshed.status()),
        })?;
        let path = volley_assert::parse_json_path(&self.token_path).map_err(|error| Error::TokenRefresh {
            message: format!("invalid JSONPath `{}`: {error}", self.token_path),
        })?;
        path.query(&body).first().map(|value| (*value).clone()).ok_or_else(|| Error::TokenRefresh {
            message: format!("`{}` matches nothing in the refresh response ({})", self.token_path, refreshed.status()),
        })
    }
}

/// The refresh definition runs where the request does, with nothing of its variables.
fn refresh_options(options: &RunOptions) -> RunOptions {
    RunOptions {
        source_path: options.source_path.clone(),
        cancel: options.cancel.clone(),
        cookie_jar: options.cookie_jar.clone(),
        ..RunOptions::default()
    }
}
