//! Random values: our `$random(min, max)`, REST Client's `$randomInt min max`, and
//! JetBrains' `$randomInt`, `$random.integer`, `$random.float`, random strings and
//! `$random.email`. Each spelling keeps the range of the tool it comes from.

use rand::RngExt as _;

/// The range of JetBrains' `$randomInt` and of `$random.integer()` / `$random.float()`
/// without arguments: from 0 included to 1000 excluded.
const JETBRAINS_DEFAULT: (i64, i64) = (0, 1000);

fn integer(text: &str) -> Result<i64, String> {
    text.trim().parse::<i64>().map_err(|_| format!("`{text}` is not an integer"))
}

/// `$random(min, max)`: an integer from `min` to `max`, both included.
pub(crate) fn inclusive(min: &str, max: &str) -> Result<String, String> {
    let (min, max) = (integer(min)?, integer(max)?);
    if min > max {
        return Err(format!("the minimum {min} is greater than the maximum {max}"));
    }
    Ok(rand::random_range(min..=max).to_string())
}

/// An integer from `from` included to `to` excluded: REST Client's `{{$randomInt min
/// max}}` and JetBrains' `$random.integer(from, to)`; JetBrains' `$randomInt` and
/// `$random.integer()` without arguments take 0 to 1000.
pub(crate) fn half_open(arguments: &[String]) -> Result<String, String> {
    let (from, to) = match arguments {
        [] => JETBRAINS_DEFAULT,
        [from, to] => (integer(from)?, integer(to)?),
        _ => return Err("takes no arguments or two: a minimum (included) and a maximum (excluded)".to_owned()),
    };
    if from >= to {
        return Err(format!("the maximum {to} is excluded, so it must be greater than the minimum {from}"));
    }
    Ok(rand::random_range(from..to).to_string())
}

/// JetBrains' `$random.float(from, to)`: from `from` included to `to` excluded; 0 to
/// 1000 without arguments.
pub(crate) fn float(arguments: &[String]) -> Result<String, String> {
    let number = |text: &str| {
        text.trim().parse::<f64>().ok().filter(|value| value.is_finite()).ok_or(format!("`{text}` is not a number"))
    };
    let (from, to) = match arguments {
        #[allow(clippy::cast_precision_loss)] // 0 and 1000 are exact.
        [] => (JETBRAINS_DEFAULT.0 as f64, JETBRAINS_DEFAULT.1 as f64),
        [from, to] => (number(from)?, number(to)?),
        _ => return Err("takes no arguments or two: a minimum (included) and a maximum (excluded)".to_owned()),
    };
    if from >= to {
        return Err(format!("the maximum {to} is excluded, so it must be greater than the minimum {from}"));
    }
    Ok(rand::random_range(from..to).to_string())
}

/// Which characters a random string is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Alphabet {
    /// `A-Z a-z`.
    Letters,
    /// `A-Z a-z 0-9 _`.
    LettersDigitsUnderscore,
    /// `0-9 a-f`.
    Hexadecimal,
}

impl Alphabet {
    fn characters(self) -> &'static [u8] {
        match self {
            Alphabet::Letters => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
            Alphabet::LettersDigitsUnderscore => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_",
            Alphabet::Hexadecimal => b"0123456789abcdef",
        }
    }
}

/// The longest random string made: a typo (`$random.alphabetic(100000000)`) must not
/// build a request of gigabytes.
const LONGEST: usize = 1 << 20;

/// JetBrains' `$random.alphabetic(length)`, `$random.alphanumeric(length)` and
/// `$random.hexadecimal(length)`: `length` (at least 1) random characters.
pub(crate) fn string(alphabet: Alphabet, length: &str) -> Result<String, String> {
    let count: usize = length.trim().parse().map_err(|_| format!("the length `{length}` is not a whole number"))?;
    if count == 0 {
        return Err("the length must be greater than 0".to_owned());
    }
    if count > LONGEST {
        return Err(format!("the length {count} is more than {LONGEST}"));
    }
    Ok(random_string(alphabet, count))
}

fn random_string(alphabet: Alphabet, count: usize) -> String {
    let characters = alphabet.characters();
    let mut rng = rand::rng();
    (0..count).map(|_| char::from(characters[rng.random_range(0..characters.len())])).collect()
}

/// JetBrains' `$random.email`: a random address at `example.com` (a domain reserved for
/// examples, so a test never writes to a real mailbox).
pub(crate) fn email() -> String {
    let local = random_string(Alphabet::Letters, 10).to_ascii_lowercase();
    format!("{local}@example.com")
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    fn words(words: &[&str]) -> Vec<String> {
        words.iter().map(|&word| word.to_owned()).collect()
    }

    /// Every value `produce` gives in enough draws to see each of a few outcomes.
    fn seen(produce: impl Fn() -> String) -> HashSet<String> {
        (0..400).map(|_| produce()).collect()
    }

    #[test]
    fn ours_includes_both_ends() {
        assert_eq!(seen(|| inclusive("1", "3").unwrap()), HashSet::from(["1", "2", "3"].map(str::to_owned)));
        assert_eq!(inclusive("5", "5").unwrap(), "5");
        assert!(inclusive("9", "1").unwrap_err().contains("greater"));
        assert!(inclusive("a", "1").unwrap_err().contains("not an integer"));
    }

    #[test]
    fn rest_client_and_jetbrains_exclude_the_maximum() {
        let values = seen(|| half_open(&words(&["1", "4"])).unwrap());
        assert_eq!(values, HashSet::from(["1", "2", "3"].map(str::to_owned)), "4 is excluded");
        assert_eq!(half_open(&words(&["-2", "-1"])).unwrap(), "-2");
        assert!(half_open(&words(&["5", "5"])).unwrap_err().contains("must be greater than the minimum 5"));
        assert!(half_open(&words(&["1"])).unwrap_err().contains("no arguments or two"));
        for _ in 0..200 {
            let value: i64 = half_open(&[]).unwrap().parse().unwrap();
            assert!((0..1000).contains(&value), "{value}");
        }
    }

    #[test]
    fn floats_stay_in_their_range() {
        for _ in 0..200 {
            let value: f64 = float(&words(&["10.5", "20.25"])).unwrap().parse().unwrap();
            assert!((10.5..20.25).contains(&value), "{value}");
            let value: f64 = float(&[]).unwrap().parse().unwrap();
            assert!((0.0..1000.0).contains(&value), "{value}");
        }
        assert!(float(&words(&["1", "1"])).is_err());
        assert!(float(&words(&["x", "1"])).unwrap_err().contains("not a number"));
        assert!(float(&words(&["NaN", "1"])).is_err());
    }

    #[test]
    fn strings_have_their_length_and_alphabet() {
        let letters = string(Alphabet::Letters, "300").unwrap();
        assert_eq!(letters.len(), 300);
        assert!(letters.chars().all(|character| character.is_ascii_alphabetic()));
        assert!(letters.chars().any(|character| character.is_ascii_uppercase()));
        assert!(letters.chars().any(|character| character.is_ascii_lowercase()));
        let mixed = string(Alphabet::LettersDigitsUnderscore, "2000").unwrap();
        assert!(mixed.chars().all(|character| character.is_ascii_alphanumeric() || character == '_'));
        assert!(mixed.contains('_') && mixed.chars().any(|character| character.is_ascii_digit()));
        let hex = string(Alphabet::Hexadecimal, "64").unwrap();
        assert!(hex.chars().all(|character| matches!(character, '0'..='9' | 'a'..='f')), "{hex}");
        assert!(string(Alphabet::Letters, "0").unwrap_err().contains("greater than 0"));
        assert!(string(Alphabet::Letters, "-1").unwrap_err().contains("not a whole number"));
        assert!(string(Alphabet::Letters, "99999999999").unwrap_err().contains("more than"));
    }

    #[test]
    fn emails_are_at_example_com() {
        let address = email();
        let (local, domain) = address.split_once('@').unwrap();
        assert_eq!(domain, "example.com");
        assert_eq!(local.len(), 10);
        assert!(local.chars().all(|character| character.is_ascii_lowercase()));
        assert_ne!(email(), email());
    }
}
