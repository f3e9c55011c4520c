//! POSIX shell quoting: a word in single quotes, which keep every byte as it is, a `'`
//! written `'\''` (close, an escaped quote, reopen).

/// `text` as one word of a POSIX shell command line. Words of only safe characters
/// (letters, digits, `-_./:=@,+%`) are left bare; anything else goes in single quotes.
///
/// ```
/// use volley_curl::quote;
///
/// assert_eq!(quote("-X"), "-X");
/// assert_eq!(quote("it's"), r"'it'\''s'");
/// assert_eq!(quote("a b"), "'a b'");
/// assert_eq!(quote(""), "''");
/// ```
#[must_use]
pub fn quote(text: &str) -> String {
    let safe = |character: char| character.is_ascii_alphanumeric() || "-_./:=@,+%".contains(character);
    if !text.is_empty() && text.chars().all(safe) {
        return text.to_owned();
    }
    let mut quoted = String::with_capacity(text.len() + 2);
    quoted.push('\'');
    for character in text.chars() {
        if character == '\'' {
            quoted.push_str(r"'\''");
        } else {
            quoted.push(character);
        }
    }
    quoted.push('\'');
    quoted
}

#[cfg(test)]
mod tests {
    use super::quote;

    #[test]
    fn quotes_what_the_shell_would_read() {
        assert_eq!(quote("https://example.com/a?b=1&c=2"), "'https://example.com/a?b=1&c=2'");
        assert_eq!(quote("https://example.com/a"), "https://example.com/a");
        assert_eq!(quote("$HOME `x` \"y\" \\z"), "'$HOME `x` \"y\" \\z'");
        assert_eq!(quote("''"), r"''\'''\'''");
        assert_eq!(quote("line\nbreak"), "'line\nbreak'");
        assert_eq!(quote("Content-Type: application/json"), "'Content-Type: application/json'");
    }

    /// A real shell reads every quoted word back as it was.
    #[test]
    fn sh_reads_the_words_back() {
        let words = ["plain", "it's", "a b", "", "$HOME", "`ls`", "\"q\"", "back\\slash", "new\nline", "'", "é 🦀"];
        let script: Vec<String> = words.iter().map(|word| quote(word)).collect();
        let output = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("printf '%s\\0' {}", script.join(" ")))
            .output()
            .expect("sh runs");
        let read: Vec<&str> =
            std::str::from_utf8(&output.stdout).expect("UTF-8").strip_suffix('\0').expect("NUL").split('\0').collect();
        assert_eq!(read, words);
    }
}
