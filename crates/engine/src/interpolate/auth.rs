//! The `$auth.*` resolvers of JetBrains and Kulala: a named `auth` configuration of
//! volley.jsonc or http-client.env.json read while the request is built. An OAuth 2.0
//! one (`$auth.token`, `$auth.idToken`) leaves a placeholder for its token, got when the
//! request is sent; AWS keys (`$auth.aws`) become the `Authorization` value the build
//! signs with.

use volley_auth::oauth::PendingToken;
use volley_syntax::Span;

use super::{Renderer, oauth};
use crate::error::BuildError;

impl Renderer<'_> {
    /// JetBrains' and Kulala's `{{$auth.token("id")}}` (and `$auth.idToken`): the named
    /// configuration read, its token left to get when the request is sent; a placeholder
    /// stands for it until then.
    pub(super) async fn auth_token(
        &mut self,
        name: &str,
        arguments: &[String],
        span: Span,
    ) -> Result<String, BuildError> {
        let failure = |message: String| BuildError::Resolver { name: name.to_owned(), message, span };
        let [id] = arguments else {
            return Err(failure(format!("`${name}` takes one argument, the configuration's name: `${name}(\"id\")`")));
        };
        let Some(entry) = self.scope.auth.get(id).cloned() else {
            let known: Vec<&str> = self.scope.auth.keys().map(String::as_str).collect();
            let hint = match volley_syntax::closest(id, known.iter().copied()) {
                Some(close) => format!("did you mean `{close}`?"),
                None if known.is_empty() => "define it in volley.jsonc `auth` or in http-client.env.json \
                                             `Security.Auth`"
                    .to_owned(),
                None => format!("configurations: {}", known.join(", ")),
            };
            return Err(failure(format!("no auth configuration named `{id}` ({hint})")));
        };
        if entry.aws != (name == "auth.aws") {
            let (what, instead) = if entry.aws {
                ("AWS keys", "`{{$auth.aws(\"id\")}}` as the `Authorization` value")
            } else {
                ("an OAuth 2.0 configuration", "`Bearer {{$auth.token(\"id\")}}`")
            };
            return Err(failure(format!("`{id}` is {what}: use {instead}")));
        }
        if entry.aws {
            return Box::pin(self.aws_authorization(&entry, span)).await;
        }
        let config = oauth::read_entry(id, &entry, self, span).await?;
        let token = PendingToken::new(config, name == "auth.idToken");
        let placeholder = token.placeholder.clone();
        self.tokens.push((token, span));
        Ok(placeholder)
    }

    /// The field `name` of a named `auth` entry, rendered and trimmed; `None` when it is
    /// not set or empty.
    pub(crate) async fn auth_field(
        &mut self,
        entry: &crate::config::AuthEntry,
        name: &str,
    ) -> Result<Option<String>, BuildError> {
        let Some(text) = entry.fields.get(name) else { return Ok(None) };
        let value = self.render_text(text).await?;
        Ok(Some(value.trim().to_owned()).filter(|value| !value.is_empty()))
    }

    /// `{{$auth.aws("id")}}`: the AWS keys of a volley.jsonc `"type": "aws"` entry as the
    /// `Authorization: AWS <key> <secret> …` value the build signs with; the secret key
    /// and the session token are secrets.
    async fn aws_authorization(&mut self, entry: &crate::config::AuthEntry, span: Span) -> Result<String, BuildError> {
        let mut values = Vec::new();
        for field in crate::config::auth::AWS_FIELDS {
            values.push(self.auth_field(entry, field).await?);
        }
        let mut values = values.into_iter();
        let mut next = || values.next().flatten();
        let (access, secret, token, region, service) = (next(), next(), next(), next(), next());
        let (Some(access), Some(secret)) = (access, secret) else {
            return Err(BuildError::Resolver {
                name: "auth.aws".to_owned(),
                message: "an AWS configuration needs `accessKey` and `secretKey`".to_owned(),
                span,
            });
        };
        self.secrets.push(secret.clone());
        self.secrets.extend(token.clone());
        let mut value = format!("AWS {access} {secret}");
        for (key, part) in [("token", token), ("region", region), ("service", service)] {
            if let Some(part) = part {
                value = format!("{value} {key}:{part}");
            }
        }
        Ok(value)
    }
}
