//! Which URLs a request can be sent to: one rule for a run's build and for the analysis
//! (`volley check`, the editors), so that both give the same verdict, with a guess at
//! what was meant when a URL cannot be sent.

/// The schemes a request can be sent to.
const SCHEMES: [&str; 4] = ["http", "https", "ws", "wss"];

/// Why the URL `written` (with its scheme, `candidate`) cannot be sent, and a guess at
/// what was meant: `None` when it is an http(s) or ws(s) URL. One rule for a run and for
/// the analysis (`volley check`, the editors), so that both give the same verdict.
pub(crate) fn url_problem(written: &str, candidate: &str) -> Option<(String, Option<String>)> {
    // The usual URL needs no parse to be judged (the analysis judges every request of a
    // file before a run sends the first).
    if let Some(typo) = scheme_typo(written) {
        return Some(typo);
    }
    if plainly_valid(candidate) {
        return None;
    }
    parse_problem(candidate, url::Url::parse(candidate).as_ref().map_err(|error| *error))
}

/// Whether `candidate` is, without a doubt, a URL that `url::Url::parse` takes with one of
/// [`SCHEMES`]: the scheme in lower case, a host of ASCII letters, digits, `-` and `.` (a
/// dotted IPv4 address, or a name whose last label is not a number), a port up to 65535,
/// then visible ASCII only. `false` says nothing: the parse decides. Much cheaper than
/// the parse, which walks the URL a character at a time and maps the host through IDNA.
fn plainly_valid(candidate: &str) -> bool {
    let Some((scheme, after)) = candidate.split_once("://") else { return false };
    if !SCHEMES.contains(&scheme) {
        return false;
    }
    let end = after.find(['/', '?', '#']).unwrap_or(after.len());
    let (authority, rest) = after.split_at(end);
    if !rest.bytes().all(|byte| byte.is_ascii_graphic()) {
        return false;
    }
    let (host, port) = match authority.split_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (authority, None),
    };
    if let Some(port) = port
        && !(matches!(port.len(), 1..=5)
            && port.bytes().all(|byte| byte.is_ascii_digit())
            && port.parse::<u32>().is_ok_and(|number| number <= 65_535))
    {
        return false;
    }
    let labels: Vec<&str> = host.split('.').collect();
    let plain_label = |label: &&str| {
        !label.is_empty()
            && label.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'-')
            && !label.starts_with('-')
            && !label.ends_with('-')
            && !label.contains("--")
    };
    if !labels.iter().all(plain_label) {
        return false;
    }
    let numeric = |label: &&str| label.bytes().all(|byte| byte.is_ascii_digit());
    match labels.last() {
        // A name: its last label neither a number nor hexadecimal (`0x…`), which would make
        // the host an IPv4 address in the URL standard's reading.
        Some(last) if !numeric(last) => !last.get(..2).is_some_and(|start| start.eq_ignore_ascii_case("0x")),
        // An IPv4 address written as four decimal numbers up to 255, without leading zeros.
        Some(_) => {
            labels.len() == 4
                && labels.iter().all(|label| {
                    numeric(label)
                        && label.len() <= 3
                        && (label.len() == 1 || !label.starts_with('0'))
                        && label.parse::<u16>().is_ok_and(|number| number <= 255)
                })
        }
        None => false,
    }
}

/// [`url_problem`] with `candidate` already parsed (a run's build parses it once).
pub(crate) fn url_problem_of(
    written: &str,
    candidate: &str,
    parsed: Result<&url::Url, url::ParseError>,
) -> Option<(String, Option<String>)> {
    scheme_typo(written).or_else(|| parse_problem(candidate, parsed))
}

/// What the parse of `candidate` says is wrong with it, and a guess at what was meant.
fn parse_problem(candidate: &str, parsed: Result<&url::Url, url::ParseError>) -> Option<(String, Option<String>)> {
    let error = match parsed {
        Ok(url) if SCHEMES.contains(&url.scheme()) => return None,
        Ok(url) => {
            let scheme = url.scheme();
            let hint = volley_syntax::closest(scheme, SCHEMES.iter().copied())
                .map(|close| format!("did you mean `{close}://`?"))
                .or_else(|| Some("write the URL with http://, https://, ws:// or wss://".to_owned()));
            return Some((format!("the scheme `{scheme}` is not http, https, ws or wss"), hint));
        }
        Err(error) => error,
    };
    let (scheme, after) = candidate.split_once("://").unwrap_or(("http", candidate));
    let authority = &after[..after.find(['/', '?', '#']).unwrap_or(after.len())];
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, host_port)| host_port);
    if authority.contains(char::is_whitespace) {
        let joined: String = authority.chars().filter(|character| !character.is_whitespace()).collect();
        let fixed = format!("{scheme}://{joined}{}", &after[authority.len()..]);
        return Some((
            format!("a space in the host and port `{}`", authority.trim_end()),
            Some(format!("remove the space: `{fixed}`")),
        ));
    }
    if error == url::ParseError::InvalidPort
        && let Some((host, port)) = host_port.rsplit_once(':')
    {
        let digits = port.len() - port.trim_start_matches(|character: char| character.is_ascii_digit()).len();
        if digits > 0 && digits < port.len() {
            let (number, rest) = port.split_at(digits);
            return Some((
                format!("the port `{port}` is not a number"),
                Some(format!("a `/` missing after the port? `{scheme}://{host}:{number}/{rest}…`")),
            ));
        }
        if digits == port.len() {
            return Some((
                format!("the port {port} is out of range"),
                Some("a port is a number from 1 to 65535".to_owned()),
            ));
        }
    }
    Some((error.to_string(), None))
}

/// `https//host`: a scheme written without its colon, and what was meant.
fn scheme_typo(written: &str) -> Option<(String, Option<String>)> {
    for scheme in ["https", "http", "wss", "ws"] {
        // `get`: a URL that starts with a character of several bytes is not cut inside it.
        if written.get(..scheme.len()).is_some_and(|start| start.eq_ignore_ascii_case(scheme))
            && written[scheme.len()..].starts_with("//")
        {
            return Some((
                format!("`{}//` has no `:` after the scheme", &written[..scheme.len()]),
                Some(format!("did you mean `{}:{}`?", &written[..scheme.len()], &written[scheme.len()..])),
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::{SCHEMES, plainly_valid, url_problem};

    #[test]
    fn a_scheme_without_its_colon_is_named_and_other_characters_are_not_cut() {
        let (reason, hint) = url_problem("https//example.com", "https//example.com").expect("a problem");
        assert_eq!(reason, "`https//` has no `:` after the scheme");
        assert_eq!(hint.as_deref(), Some("did you mean `https://example.com`?"));
        // `é` is two bytes: `wss` and `https` would end inside one.
        assert!(url_problem("éé//x", "éé//x").is_some_and(|(reason, _)| !reason.contains("after the scheme")));
        // Judged without a parse, the typo is still named.
        assert!(url_problem("https//example.com", "http://https//example.com").is_some());
    }

    #[test]
    fn the_usual_urls_are_judged_without_a_parse_and_the_doubtful_ones_are_not() {
        for plain in [
            "http://127.0.0.1:8080/status/200?i=1",
            "https://api.example.com/users/{id}?q=a%20b#top",
            "ws://localhost:3000/socket",
            "wss://echo.example-host.org",
            "http://10.0.0.1:65535/",
        ] {
            assert!(plainly_valid(plain), "{plain}");
        }
        for doubtful in [
            "http://1.2.3.256/",
            "http://0x7f.1/",
            "http://example.0x10/",
            "http://example.123/",
            "http://01.2.3.4/",
            "http://1.2.3/",
            "http://a..b/",
            "http://xn--a/",
            "http://-a.com/",
            "http://host:65536/",
            "http://host:/",
            "http://user@host/",
            "http://[::1]/",
            "http://héllo.com/",
            "http://host/a b",
            "HTTP://host/",
            "ftp://host/",
            "http:///path",
        ] {
            assert!(!plainly_valid(doubtful), "{doubtful}");
        }
    }

    proptest::proptest! {
        /// What is judged without a parse is what the parse takes, with a scheme a request
        /// can be sent to.
        #[test]
        fn what_is_plainly_valid_parses(
            scheme in "(http|https|ws|wss|HTTP|ftp)",
            host in "[a-z0-9.x-]{0,12}",
            port in proptest::option::of("[0-9]{0,6}"),
            rest in "[/?#a-z0-9%. -]{0,8}",
        ) {
            let candidate = match port {
                Some(port) => format!("{scheme}://{host}:{port}{rest}"),
                None => format!("{scheme}://{host}{rest}"),
            };
            if plainly_valid(&candidate) {
                let parsed = url::Url::parse(&candidate);
                proptest::prop_assert!(parsed.is_ok(), "{candidate}: {parsed:?}");
                let parsed = parsed.unwrap();
                proptest::prop_assert!(SCHEMES.contains(&parsed.scheme()), "{candidate}");
            }
        }
    }
}
