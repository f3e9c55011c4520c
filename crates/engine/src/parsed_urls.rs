//! URLs parsed again cheaply. A load run or `--repeat` sends the same URL thousands of
//! times a second, and a file's requests mostly go to one server; the parse of a URL
//! is the largest part of building a request (the host alone is half of it). So each
//! thread keeps the last URLs it parsed by their text, and the last `scheme://authority`
//! prefixes: a URL of a known prefix is its path joined to that prefix's parse, which
//! the URL standard makes the same URL.

use std::cell::RefCell;

use url::Url;

/// How many URLs, and how many prefixes, each thread keeps.
const KEPT: usize = 4;

#[derive(Default)]
struct Kept {
    /// Whole URLs by their text, the newest last.
    urls: Vec<(Box<str>, Url)>,
    /// `scheme://authority` by its text, the newest last.
    prefixes: Vec<(Box<str>, Url)>,
}

thread_local! {
    static KEPT_HERE: RefCell<Kept> = RefCell::default();
}

/// `text` parsed as [`Url::parse`] parses it. Failures are not kept.
pub(crate) fn parse(text: &str) -> Result<Url, url::ParseError> {
    KEPT_HERE.with_borrow_mut(|kept| {
        if let Some((_, url)) = kept.urls.iter().find(|(kept, _)| **kept == *text) {
            return Ok(url.clone());
        }
        let url = match split(text) {
            Some((prefix, path)) => match prefix_of(&mut kept.prefixes, prefix) {
                Some(base) => base.join(path)?,
                None => Url::parse(text)?,
            },
            None => Url::parse(text)?,
        };
        keep(&mut kept.urls, text, url.clone());
        Ok(url)
    })
}

/// The parse of `prefix`, kept or made; `None` when it does not parse (the whole URL's
/// parse then says why).
fn prefix_of<'a>(prefixes: &'a mut Vec<(Box<str>, Url)>, prefix: &str) -> Option<&'a Url> {
    let index = if let Some(index) = prefixes.iter().position(|(kept, _)| **kept == *prefix) {
        index
    } else {
        keep(prefixes, prefix, Url::parse(prefix).ok()?);
        prefixes.len() - 1
    };
    Some(&prefixes[index].1)
}

fn keep(list: &mut Vec<(Box<str>, Url)>, text: &str, url: Url) {
    if list.len() == KEPT {
        list.remove(0);
    }
    list.push((text.into(), url));
}

/// `http://host:port` and `/path?query#fragment` of a URL whose path can be joined to
/// its prefix with the same result as its whole parse: a special scheme in lower case,
/// no byte the parser strips or trims (controls, spaces), and a path that starts with
/// one `/` (`//` or `/\` would start another authority).
fn split(text: &str) -> Option<(&str, &str)> {
    if text.bytes().any(|byte| byte <= b' ' || byte == 0x7f) {
        return None;
    }
    let after_scheme = ["http://", "https://", "ws://", "wss://"]
        .iter()
        .find_map(|scheme| text.strip_prefix(scheme).map(|rest| text.len() - rest.len()))?;
    let end = after_scheme + text[after_scheme..].find(['/', '\\', '?', '#'])?;
    let (prefix, path) = text.split_at(end);
    let second = path.as_bytes().get(1);
    (path.starts_with('/') && !matches!(second, Some(b'/' | b'\\'))).then_some((prefix, path))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn a_kept_url_is_the_parse_of_its_text() {
        let texts: Vec<String> = (0..KEPT + 2).map(|i| format!("http://EXAMPLE.com:80/a/../b{i}?q=a b")).collect();
        // Twice over more URLs than are kept: the second pass finds some, parses others.
        for text in texts.iter().chain(&texts).chain(texts.iter().rev()) {
            assert_eq!(parse(text), Url::parse(text));
        }
        for bad in ["http://exa mple.com/", "http://host:99999/", "http://host:99999/x", "http:///x"] {
            assert_eq!(parse(bad), Url::parse(bad));
        }
        KEPT_HERE.with_borrow(|kept| assert!(kept.urls.len() == KEPT && kept.prefixes.len() <= KEPT));
    }

    #[test]
    fn what_is_split_and_what_is_not() {
        assert_eq!(split("http://h:1/a?b#c"), Some(("http://h:1", "/a?b#c")));
        assert_eq!(split("wss://u:p@h/"), Some(("wss://u:p@h", "/")));
        for whole in [
            "http://h",
            "http://h?q",
            "http://h//x",
            "http://h/\\x",
            "http://h\\x",
            "ftp://h/x",
            "HTTP://h/x",
            "http://h/a b",
            "http://h/a\tb",
        ] {
            assert_eq!(split(whole), None, "{whole}");
        }
    }

    proptest! {
        /// Whatever the text, kept or not, joined or not: what the URL parser makes of it.
        #[test]
        fn every_text_parses_as_the_url_parser_parses_it(
            scheme in prop::sample::select(vec!["http://", "https://", "ws://", "wss://", "HTTP://", "http:", "ftp://"]),
            authority in "[a-zA-Z0-9.:@%\\[\\]_-]{0,12}|xn--bcher-kva\\.example|[üé]{1,3}\\.de|127\\.0\\.0\\.1(:[0-9]{1,6})?|\\[::1\\](:80)?",
            rest in "[/\\\\?#a-z0-9.%@:; \t~é-]{0,16}",
        ) {
            let text = format!("{scheme}{authority}{rest}");
            prop_assert_eq!(parse(&text), Url::parse(&text), "{}", text);
            // Again: from what is kept now.
            prop_assert_eq!(parse(&text), Url::parse(&text), "{}", text);
        }
    }
}
