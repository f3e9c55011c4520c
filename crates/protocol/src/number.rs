//! Whole numbers as JSON Schema reads them: `5000` and `5000.0` are the same integer
//! (the `OpenAPI` document types these fields `integer`), so both are read; a fraction,
//! a negative number or one past `u64::MAX` is not.

use serde::{Deserialize as _, Deserializer};

/// 2^64: the first float past `u64::MAX`.
const PAST_MAX: f64 = 18_446_744_073_709_551_616.0;

/// An optional unsigned whole number, written with or without a zero fraction; use with
/// `#[serde(default, deserialize_with = "…")]`.
pub fn optional_whole<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u64>, D::Error> {
    let Some(number) = Option::<serde_json::Number>::deserialize(deserializer)? else { return Ok(None) };
    if let Some(whole) = number.as_u64() {
        return Ok(Some(whole));
    }
    match number.as_f64() {
        #[allow(clippy::cast_sign_loss)] // Checked: whole, not negative, below 2^64.
        Some(float) if float.fract() == 0.0 && (0.0..PAST_MAX).contains(&float) => Ok(Some(float as u64)),
        _ => Err(serde::de::Error::custom(format!("invalid value: {number}, expected a whole number of at least 0"))),
    }
}

#[cfg(test)]
mod tests {
    #[derive(serde::Deserialize)]
    struct Body {
        #[serde(default, deserialize_with = "super::optional_whole")]
        n: Option<u64>,
    }

    fn read(text: &str) -> Result<Option<u64>, String> {
        serde_json::from_str::<Body>(text).map(|body| body.n).map_err(|error| error.to_string())
    }

    #[test]
    fn whole_numbers_are_read_with_or_without_a_zero_fraction() {
        assert_eq!(read(r#"{"n": 5467}"#), Ok(Some(5467)));
        assert_eq!(read(r#"{"n": 5467.0}"#), Ok(Some(5467)));
        assert_eq!(read(r#"{"n": 5.467e3}"#), Ok(Some(5467)));
        assert_eq!(read(r#"{"n": 18446744073709551615}"#), Ok(Some(u64::MAX)));
        assert_eq!(read(r#"{"n": null}"#), Ok(None));
        assert_eq!(read("{}"), Ok(None));
        for refused in [r#"{"n": 1.5}"#, r#"{"n": -1}"#, r#"{"n": -1.0}"#, r#"{"n": 1.9e19}"#, r#"{"n": "1"}"#] {
            assert!(read(refused).is_err(), "{refused}");
        }
    }
}
