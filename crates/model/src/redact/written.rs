//! Secrets written in clear in the text of a `.http` file, hidden where that text is shown:
//! a URL's password, and the secrets of credential headers masked in place.

use std::borrow::Cow;

use super::names::is_client_certificate_header;

/// `text` with the password of every `scheme://user:password@` in it replaced by
/// `[REDACTED]`: for URLs shown as written (templates), where the password is not a
/// known secret value.
#[must_use]
pub fn redact_url_password(text: &str) -> Cow<'_, str> {
    if !text.contains('@') {
        return Cow::Borrowed(text);
    }
    let mut shown = String::new();
    let mut rest = text;
    let mut changed = false;
    while let Some(found) = rest.find("://") {
        let authority_start = found + 3;
        let authority_end = rest[authority_start..]
            .find(|character: char| matches!(character, '/' | '?' | '#') || character.is_whitespace())
            .map_or(rest.len(), |end| authority_start + end);
        let authority = &rest[authority_start..authority_end];
        if let Some(at) = authority.rfind('@')
            && let Some(colon) = authority[..at].find(':')
            && colon + 1 < at
        {
            shown.push_str(&rest[..=authority_start + colon]);
            shown.push_str("[REDACTED]");
            shown.push_str(&rest[authority_start + at..authority_end]);
            changed = true;
        } else {
            shown.push_str(&rest[..authority_end]);
        }
        rest = &rest[authority_end..];
    }
    if !changed {
        return Cow::Borrowed(text);
    }
    shown.push_str(rest);
    Cow::Owned(shown)
}

/// `text` (lines of a `.http` file, shown in an error's excerpt) with the secrets
/// written in clear masked by `*`, byte for byte, so that every offset into it still
/// holds: the password of a URL, the secret of `Authorization: Basic|Digest user
/// password`, a literal `Basic`/`Bearer` token, the secret key and session token of
/// `AWS …`, and a client certificate header's `passphrase:`. Templates (`{{…}}`) are
/// names, not values, and stay.
#[must_use]
pub fn mask_written_secrets(text: &str) -> Cow<'_, str> {
    let mut masked: Option<Vec<u8>> = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        for range in written_secrets(line) {
            let bytes = masked.get_or_insert_with(|| text.as_bytes().to_vec());
            bytes[offset + range.start..offset + range.end].fill(b'*');
        }
        offset += line.len();
    }
    // Whole words (between ASCII separators) became ASCII: still UTF-8.
    masked.map_or(Cow::Borrowed(text), |bytes| Cow::Owned(String::from_utf8_lossy(&bytes).into_owned()))
}

/// The byte ranges of the secrets written in clear in one line.
fn written_secrets(line: &str) -> Vec<std::ops::Range<usize>> {
    let mut ranges = Vec::new();
    // A URL's `user:password@`.
    let mut from = 0;
    while let Some(found) = line[from..].find("://") {
        let authority_start = from + found + 3;
        let authority_end = line[authority_start..]
            .find(|character: char| matches!(character, '/' | '?' | '#') || character.is_whitespace())
            .map_or(line.len(), |end| authority_start + end);
        let authority = &line[authority_start..authority_end];
        if let Some(at) = authority.rfind('@')
            && let Some(colon) = authority[..at].find(':')
            && !authority[colon..at].contains("{{")
        {
            ranges.push(authority_start + colon + 1..authority_start + at);
        }
        from = authority_end;
    }
    let Some((name, value)) = line.split_once(':') else { return ranges };
    let name = name.trim();
    // `{{…}}` templates, spaces and all (`{{$secret NAME}}`), are not words.
    let mut templates = Vec::new();
    let mut from = 0;
    while let Some(open) = value[from..].find("{{") {
        let start = from + open;
        let end = value[start..].find("}}").map_or(value.len(), |close| start + close + 2);
        templates.push(start..end);
        from = end;
    }
    let value_start = value.as_ptr() as usize - line.as_ptr() as usize;
    let in_template = |start: usize, end: usize| {
        templates.iter().any(|template| template.start + value_start < end && start < template.end + value_start)
    };
    // Words, a template being part of the word it is in (`{{$secret A}}` is one).
    let mut words: Vec<(usize, &str)> = Vec::new();
    let mut word_start = None;
    let mut index = 0;
    while index < value.len() {
        if let Some(template) = templates.iter().find(|template| template.start == index) {
            word_start.get_or_insert(index);
            index = template.end;
            continue;
        }
        let byte = value.as_bytes()[index];
        if byte.is_ascii_whitespace() {
            if let Some(start) = word_start.take() {
                words.push((value_start + start, &value[start..index]));
            }
        } else {
            word_start.get_or_insert(index);
        }
        index += 1;
    }
    if let Some(start) = word_start {
        words.push((value_start + start, &value[start..]));
    }
    let ranges_in = |ranges: &mut Vec<std::ops::Range<usize>>, range: std::ops::Range<usize>| {
        if !in_template(range.start, range.end) {
            ranges.push(range);
        }
    };
    let mask = |ranges: &mut Vec<_>, (start, word): (usize, &str)| ranges_in(ranges, start..start + word.len());
    if name.eq_ignore_ascii_case("authorization") || name.eq_ignore_ascii_case("proxy-authorization") {
        let Some(scheme) = value.split_ascii_whitespace().next() else { return ranges };
        let literal = words.iter().copied().skip_while(|(_, word)| *word == scheme);
        match scheme.to_ascii_lowercase().as_str() {
            // `Basic user password`, `Basic user:password`, `Basic <token>`; `Bearer <token>`.
            "basic" | "digest" | "bearer" => {
                let rest: Vec<_> = literal.collect();
                match rest.as_slice() {
                    [(start, word)] if scheme.eq_ignore_ascii_case("digest") => {
                        if let Some(colon) = word.find(':') {
                            mask(&mut ranges, (start + colon + 1, &word[colon + 1..]));
                        }
                    }
                    [only] => mask(&mut ranges, *only),
                    [_, password, ..] => mask(&mut ranges, *password),
                    [] => {}
                }
            }
            // REST Client's `COGNITO <user> <password> <region> <pool> <client>`.
            "cognito" => {
                if let Some(password) = literal.clone().nth(1) {
                    mask(&mut ranges, password);
                }
            }
            // `AWS <key> <secret> [token:…] …`.
            "aws" => {
                for (index, (start, word)) in literal.enumerate() {
                    if index == 1 {
                        mask(&mut ranges, (start, word));
                    } else if let Some(token) = word.strip_prefix("token:") {
                        mask(&mut ranges, (start + 6, token));
                    }
                }
            }
            _ => {}
        }
    } else if is_client_certificate_header(name) {
        let mut after_passphrase = false;
        for (start, word) in words {
            if after_passphrase {
                mask(&mut ranges, (start, word));
                after_passphrase = false;
            } else if word.eq_ignore_ascii_case("passphrase:") {
                after_passphrase = true;
            } else if let Some(passphrase) =
                word.strip_prefix("passphrase:").filter(|passphrase| !passphrase.is_empty())
            {
                mask(&mut ranges, (start + 11, passphrase));
            }
        }
    }
    ranges
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_passwords_are_redacted_in_text() {
        assert_eq!(
            redact_url_password("GET http://ada:lovelace@h:1/p?q=a:b@c and ws://u:p@x"),
            "GET http://ada:[REDACTED]@h:1/p?q=a:b@c and ws://u:[REDACTED]@x"
        );
        assert_eq!(redact_url_password("http://ada@h/ http://h/a:b@c"), "http://ada@h/ http://h/a:b@c");
        assert!(matches!(redact_url_password("{{base}}/x"), Cow::Borrowed(_)));
    }

    #[test]
    fn secrets_written_in_clear_are_masked_in_place() {
        let cases = [
            ("Authorization: AWS AKID s3cr3t region:x token:T0K", "Authorization: AWS AKID ****** region:x token:***"),
            ("Authorization: Basic ada lovelace", "Authorization: Basic ada ********"),
            ("Authorization: Basic YWRhOmx2", "Authorization: Basic ********"),
            ("authorization: Digest ada:pw", "authorization: Digest ada:**"),
            ("Authorization: Bearer abc.def", "Authorization: Bearer *******"),
            ("Authorization: Bearer {{token}}", "Authorization: Bearer {{token}}"),
            (
                "Authorization: AWS AKID {{$secret AWS_KEY}} token:T",
                "Authorization: AWS AKID {{$secret AWS_KEY}} token:*",
            ),
            ("Authorization: AWS {{$secret ID}} s3cr3t", "Authorization: AWS {{$secret ID}} ******"),
            ("Authorization: COGNITO ada lovelace eu-west-1 p c", "Authorization: COGNITO ada ******** eu-west-1 p c"),
            ("X-ClientCert: pfx: ./c.p12 passphrase: hunter2", "X-ClientCert: pfx: ./c.p12 passphrase: *******"),
            ("GET https://ada:pw@host/x", "GET https://ada:**@host/x"),
            ("GET https://ada:{{pw}}@host/x", "GET https://ada:{{pw}}@host/x"),
            ("Accept: text/plain", "Accept: text/plain"),
        ];
        for (written, shown) in cases {
            assert_eq!(super::mask_written_secrets(written), shown, "{written}");
        }
        let text = "GET http://h/x\nAuthorization: Basic ada é\n";
        assert_eq!(super::mask_written_secrets(text).len(), text.len());
    }
}
