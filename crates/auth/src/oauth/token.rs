//! A token as the authorization server gave it, and when it stops being usable.

use std::time::{Duration, Instant};

use serde_json::Value;

/// An access token with what came with it.
#[derive(Clone, PartialEq, Eq)]
pub struct Token {
    pub access: String,
    pub refresh: Option<String>,
    pub id: Option<String>,
    /// When `expires_in` says it expires; `None` when the answer did not say.
    pub expires_at: Option<Instant>,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Token")
            .field("refresh", &self.refresh.is_some())
            .field("id", &self.id.is_some())
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

impl Token {
    /// The token of a successful answer of a token endpoint (RFC 6749 §5.1), got at
    /// `now`; `None` without an `access_token`.
    pub fn from_answer(answer: Option<&Value>, now: Instant) -> Option<Token> {
        let answer = answer?;
        let text = |name: &str| answer.get(name).and_then(Value::as_str).filter(|text| !text.is_empty());
        let access = text("access_token")?.to_owned();
        // A number, or a number in a string (some servers send `"3600"`).
        let expires_in = answer.get("expires_in").and_then(|value| match value {
            Value::Number(number) => number.as_f64(),
            Value::String(text) => text.trim().parse().ok(),
            _ => None,
        });
        let expires_at = expires_in
            .filter(|seconds| seconds.is_finite() && *seconds >= 0.0)
            .map(|seconds| now + Duration::from_secs_f64(seconds.min(10.0 * 365.0 * 86_400.0)));
        Some(Token {
            access,
            refresh: text("refresh_token").map(str::to_owned),
            id: text("id_token").map(str::to_owned),
            expires_at,
        })
    }

    /// Whether the token can still be sent at `now`: it does not expire within `margin`.
    #[must_use]
    pub fn fresh(&self, now: Instant, margin: Duration) -> bool {
        self.expires_at.is_none_or(|at| at > now + margin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn answers_give_tokens_that_expire_with_a_margin() {
        let now = Instant::now();
        let answer = json!({"access_token": "a", "expires_in": 60, "refresh_token": "r", "token_type": "Bearer"});
        let token = Token::from_answer(Some(&answer), now).unwrap();
        assert_eq!((token.access.as_str(), token.refresh.as_deref()), ("a", Some("r")));
        assert!(token.fresh(now, Duration::from_secs(30)));
        assert!(!token.fresh(now + Duration::from_secs(31), Duration::from_secs(30)));
        let as_text = Token::from_answer(Some(&json!({"access_token": "a", "expires_in": "2"})), now).unwrap();
        assert!(!as_text.fresh(now, Duration::from_secs(30)));
        let forever = Token::from_answer(Some(&json!({"access_token": "a"})), now).unwrap();
        assert!(forever.fresh(now + Duration::from_secs(86_400), Duration::from_secs(30)));
        assert!(Token::from_answer(Some(&json!({"error": "invalid_client"})), now).is_none());
        assert!(Token::from_answer(Some(&json!({"access_token": ""})), now).is_none());
        assert!(!format!("{token:?}").contains("\"a\""), "the token is not in Debug");
    }
}
