//! AWS Signature Version 4 in the `Authorization` header, as httpyac and REST Client
//! run `Authorization: AWS <accessKey> <secretKey> [token:…] [region:…] [service:…]`:
//! the request is signed exactly as it goes on the wire, after every variable, header
//! and body is final. Written by hand on `ring`'s HMAC-SHA256 and SHA-256 (the SDK's
//! `aws-sigv4` brings the AWS runtime crates with it), checked against AWS's published
//! test vectors and against the `aws4` library httpyac and REST Client sign with.
//!
//! Canonical request: the method; the path with `.`/`..` and repeated `/` resolved and
//! each segment encoded once more (S3: decoded and encoded once, not resolved); the
//! query's pairs decoded and encoded with RFC 3986's unreserved characters, sorted; the
//! signed headers, lower case, values trimmed with inner runs of spaces made one, the
//! values of a repeated header joined with `,`; the SHA-256 of the body.

use std::fmt::Write as _;

use http::HeaderMap;
use http::header::{AUTHORIZATION, HeaderValue};
use ring::{digest, hmac};

/// What `Authorization: AWS …` says: the keys, and the scope when written.
#[derive(Clone, PartialEq, Eq)]
pub struct AwsCredentials {
    pub access_key: String,
    pub secret_key: String,
    pub session_token: Option<String>,
    pub region: Option<String>,
    pub service: Option<String>,
}

impl std::fmt::Debug for AwsCredentials {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("AwsCredentials")
            .field("access_key", &self.access_key)
            .field("region", &self.region)
            .field("service", &self.service)
            .finish_non_exhaustive()
    }
}

impl AwsCredentials {
    /// The words after `AWS`: the access key, the secret key, then `token:`, `region:`
    /// and `service:` in any order. `None` when there are not two keys.
    pub fn parse(rest: &str) -> Result<Option<AwsCredentials>, String> {
        let mut words = rest.split_whitespace();
        let (Some(access_key), Some(secret_key)) = (words.next(), words.next()) else { return Ok(None) };
        let mut credentials = AwsCredentials {
            access_key: access_key.to_owned(),
            secret_key: secret_key.to_owned(),
            session_token: None,
            region: None,
            service: None,
        };
        for word in words {
            let (key, value) = word.split_once(':').unwrap_or((word, ""));
            let slot = match key.to_ascii_lowercase().as_str() {
                "token" => &mut credentials.session_token,
                "region" => &mut credentials.region,
                "service" => &mut credentials.service,
                _ => {
                    return Err(format!("`{word}` after the AWS keys is not `token:…`, `region:…` or `service:…`"));
                }
            };
            if value.is_empty() {
                return Err(format!("`{key}:` has no value"));
            }
            *slot = Some(value.to_owned());
        }
        Ok(Some(credentials))
    }

    /// The secret parts, to keep out of what is shown.
    pub fn secrets(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.secret_key.as_str()).chain(self.session_token.as_deref())
    }
}

/// Headers never signed: those the transport may change or add after signing
/// (`Cookie` takes the jar's cookies at send time), and those AWS's SDKs leave out.
const UNSIGNED: [&str; 8] =
    ["authorization", "connection", "x-amzn-trace-id", "user-agent", "expect", "presigned-expires", "range", "cookie"];

/// The service and region of an `*.amazonaws.com` host (`sqs.eu-west-1.amazonaws.com`,
/// `my-bucket.s3.eu-west-1.amazonaws.com`, `s3-eu-west-1.amazonaws.com`), as `aws4`
/// reads them.
fn scope_of_host(host: &str) -> (Option<String>, Option<String>) {
    let host = host.trim_end_matches(".cn");
    let Some(prefix) = host.strip_suffix(".amazonaws.com") else { return (None, None) };
    let mut labels: Vec<&str> = prefix.rsplit('.').take(2).collect();
    labels.reverse();
    let (mut service, mut region) = match labels.as_slice() {
        [service, region] => (Some((*service).to_owned()), Some((*region).to_owned())),
        [service] => (Some((*service).to_owned()), None),
        _ => (None, None),
    };
    // `search-domain.eu-west-1.es.amazonaws.com`: the other way round.
    if matches!(region.as_deref(), Some("es" | "aoss")) {
        std::mem::swap(&mut service, &mut region);
    }
    if region.as_deref() == Some("s3") {
        return (Some("s3".to_owned()), Some("us-east-1".to_owned()));
    }
    for label in [service.clone(), region.clone()].into_iter().flatten() {
        if let Some(rest) = label.strip_prefix("s3-") {
            return (Some("s3".to_owned()), Some(rest.to_owned()));
        }
    }
    if service.as_deref() == Some("email") {
        service = Some("ses".to_owned());
    }
    (service, region)
}

/// Signs the request: adds `x-amz-date` (unless written), `x-amz-security-token` with a
/// session token, `x-amz-content-sha256` for S3, and the `Authorization` header. `now`
/// is `YYYYMMDDTHHMMSSZ`. An error says what the signature lacks.
pub fn sign(
    method: &http::Method,
    url: &url::Url,
    headers: &mut HeaderMap,
    body: &[u8],
    credentials: &AwsCredentials,
    now: &str,
) -> Result<(), String> {
    let host = if let Some(host) = headers.get(http::header::HOST).and_then(|host| host.to_str().ok()) {
        host.trim().to_owned()
    } else {
        let name = url.host_str().ok_or("the URL has no host to sign")?;
        match url.port() {
            Some(port) => format!("{name}:{port}"),
            None => name.to_owned(),
        }
    };
    let (host_service, host_region) = scope_of_host(url.host_str().unwrap_or_default());
    let service =
        credentials.service.clone().or(host_service).ok_or_else(|| {
            format!("the service to sign for is not known: `{host}` is not an `*.amazonaws.com` host")
        })?;
    let region = credentials.region.clone().or(host_region).unwrap_or_else(|| "us-east-1".to_owned());

    headers.remove(AUTHORIZATION);
    let datetime = if let Some(written) = headers.get("x-amz-date").and_then(|value| value.to_str().ok()) {
        written.trim().to_owned()
    } else {
        headers.insert("x-amz-date", header_value(now)?);
        now.to_owned()
    };
    if datetime.len() < 8 {
        return Err(format!("`x-amz-date: {datetime}` is not a date like 20150830T123600Z"));
    }
    if let Some(token) = &credentials.session_token
        && !headers.contains_key("x-amz-security-token")
    {
        headers.insert("x-amz-security-token", header_value(token)?);
    }
    let s3 = service == "s3";
    if s3 && !headers.contains_key("x-amz-content-sha256") {
        headers.insert("x-amz-content-sha256", header_value(&hex(digest::digest(&digest::SHA256, body).as_ref()))?);
    }
    let payload = match headers.get("x-amz-content-sha256").and_then(|value| value.to_str().ok()) {
        Some(written) => written.trim().to_owned(),
        None => hex(digest::digest(&digest::SHA256, body).as_ref()),
    };

    let (canonical_headers, signed_headers) = canonical_headers(headers, &host);
    let canonical = format!(
        "{}\n{}\n{}\n{canonical_headers}\n{signed_headers}\n{payload}",
        method.as_str(),
        canonical_path(url.path(), s3),
        canonical_query(url.query().unwrap_or_default()),
    );
    let date = &datetime[..8];
    let scope = format!("{date}/{region}/{service}/aws4_request");
    let to_sign = format!(
        "AWS4-HMAC-SHA256\n{datetime}\n{scope}\n{}",
        hex(digest::digest(&digest::SHA256, canonical.as_bytes()).as_ref())
    );
    let mut key = format!("AWS4{}", credentials.secret_key).into_bytes();
    for part in [date, &region, &service, "aws4_request"] {
        key = hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, &key), part.as_bytes()).as_ref().to_vec();
    }
    let signature = hex(hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, &key), to_sign.as_bytes()).as_ref());
    let authorization = format!(
        "AWS4-HMAC-SHA256 Credential={}/{scope}, SignedHeaders={signed_headers}, Signature={signature}",
        credentials.access_key
    );
    headers.insert(AUTHORIZATION, header_value(&authorization)?);
    Ok(())
}

fn header_value(text: &str) -> Result<HeaderValue, String> {
    HeaderValue::from_str(text).map_err(|_| format!("`{text}` cannot be a header value"))
}

#[must_use]
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut text, byte| {
        let _ = write!(text, "{byte:02x}");
        text
    })
}

/// The canonical headers (each `name:value` and a line break) and the signed headers'
/// names (`host;x-amz-date`).
fn canonical_headers(headers: &HeaderMap, host: &str) -> (String, String) {
    let mut entries: Vec<(String, String)> = vec![("host".to_owned(), host.to_owned())];
    for name in headers.keys() {
        let lower = name.as_str();
        if lower == "host" || UNSIGNED.contains(&lower) {
            continue;
        }
        let values: Vec<String> = headers
            .get_all(name)
            .iter()
            .map(|value| String::from_utf8_lossy(value.as_bytes()).split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
        entries.push((lower.to_owned(), values.join(",")));
    }
    entries.sort();
    let canonical = entries.iter().fold(String::new(), |mut text, (name, value)| {
        let _ = writeln!(text, "{name}:{value}");
        text
    });
    let signed = entries.iter().map(|(name, _)| name.as_str()).collect::<Vec<_>>().join(";");
    (canonical, signed)
}

/// RFC 3986's unreserved characters stay; every other byte is `%XX`.
fn encode(text: &[u8]) -> String {
    let mut encoded = String::with_capacity(text.len());
    for &byte in text {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            encoded.push(char::from(byte));
        } else {
            let _ = write!(encoded, "%{byte:02X}");
        }
    }
    encoded
}

fn decode(text: &str) -> Vec<u8> {
    percent_encoding::percent_decode_str(text).collect()
}

/// The path as signed: `path` is as it goes on the wire (already percent-encoded).
fn canonical_path(path: &str, s3: bool) -> String {
    if path.is_empty() || path == "/" {
        return "/".to_owned();
    }
    let mut segments: Vec<String> = Vec::new();
    let pieces: Vec<&str> = path.split('/').collect();
    for (index, piece) in pieces.iter().enumerate() {
        if s3 {
            segments.push(encode(&decode(piece)));
            continue;
        }
        let last = index + 1 == pieces.len();
        match *piece {
            "." if !last => {}
            ".." => {
                segments.pop();
            }
            "" if index > 0 && !last => {}
            "." => segments.push(String::new()),
            piece => segments.push(encode(piece.as_bytes())),
        }
    }
    let mut joined = segments.join("/");
    if !joined.starts_with('/') {
        joined.insert(0, '/');
    }
    if !s3 && path.ends_with('/') && !joined.ends_with('/') {
        joined.push('/');
    }
    joined
}

/// The query as signed: pairs decoded (`+` is a space), encoded, sorted by key then
/// value; a pair without a key is left out.
fn canonical_query(query: &str) -> String {
    let mut pairs: Vec<(String, String)> = query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .filter_map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let key = encode(&decode(&key.replace('+', " ")));
            let value = encode(&decode(&value.replace('+', " ")));
            (!key.is_empty()).then_some((key, value))
        })
        .collect();
    pairs.sort();
    pairs.iter().map(|(key, value)| format!("{key}={value}")).collect::<Vec<_>>().join("&")
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::header::HeaderName;

    /// The credentials and scope of AWS's published Signature V4 test suite.
    fn suite_credentials() -> AwsCredentials {
        AwsCredentials {
            access_key: "AKIDEXAMPLE".to_owned(),
            secret_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".to_owned(),
            session_token: None,
            region: Some("us-east-1".to_owned()),
            service: Some("service".to_owned()),
        }
    }

    /// Signs `method target` with `headers` (and the suite's `X-Amz-Date`) and `body`;
    /// the `Signature=` it gets.
    fn signature(method: &str, target: &str, headers: &[(&str, &str)], body: &str) -> String {
        let url = url::Url::parse(&format!("https://example.amazonaws.com{target}")).unwrap();
        let mut map = HeaderMap::new();
        map.insert("host", HeaderValue::from_static("example.amazonaws.com"));
        map.insert("x-amz-date", HeaderValue::from_static("20150830T123600Z"));
        for (name, value) in headers {
            map.append(HeaderName::from_bytes(name.as_bytes()).unwrap(), HeaderValue::from_str(value).unwrap());
        }
        let method = http::Method::from_bytes(method.as_bytes()).unwrap();
        sign(&method, &url, &mut map, body.as_bytes(), &suite_credentials(), "20990101T000000Z").unwrap();
        let authorization = map[AUTHORIZATION].to_str().unwrap().to_owned();
        assert!(
            authorization
                .starts_with("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "),
            "{authorization}"
        );
        authorization.rsplit("Signature=").next().unwrap().to_owned()
    }

    // Each expected signature is the `.authz` of the case of the same name in AWS's
    // Signature V4 test suite (aws-sig-v4-test-suite).
    #[test]
    fn published_test_vectors() {
        // (case, method, target, headers, body, signature)
        type Case<'a> = (&'a str, &'a str, &'a str, &'a [(&'a str, &'a str)], &'a str, &'a str);
        let cases: [Case<'_>; 12] = [
            ("get-vanilla", "GET", "/", &[], "", "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"),
            (
                "get-vanilla-query-order-key-case",
                "GET",
                "/?Param2=value2&Param1=value1",
                &[],
                "",
                "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500",
            ),
            (
                "get-vanilla-query-order-value",
                "GET",
                "/?Param1=value2&Param1=value1",
                &[],
                "",
                "5772eed61e12b33fae39ee5e7012498b51d56abc0abb7c60486157bd471c4694",
            ),
            (
                "get-unreserved",
                "GET",
                "/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
                &[],
                "",
                "07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f",
            ),
            (
                "get-vanilla-utf8-query",
                "GET",
                "/?ሴ=bar",
                &[],
                "",
                "2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04",
            ),
            (
                "get-header-value-trim",
                "GET",
                "/",
                &[("My-Header1", " value1"), ("My-Header2", " \"a   b   c\"")],
                "",
                "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736",
            ),
            (
                "get-header-key-duplicate",
                "GET",
                "/",
                &[("My-Header1", "value2"), ("My-Header1", "value2"), ("My-Header1", "value1")],
                "",
                "c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea",
            ),
            (
                "post-vanilla-query",
                "POST",
                "/?Param1=value1",
                &[],
                "",
                "28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11",
            ),
            (
                "post-x-www-form-urlencoded",
                "POST",
                "/",
                &[("Content-Type", "application/x-www-form-urlencoded")],
                "Param1=value1",
                "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a",
            ),
            (
                "post-sts-header-after",
                "POST",
                "/",
                &[],
                "",
                "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b",
            ),
            (
                "get-relative-relative",
                "GET",
                "/example1/example2/../..",
                &[],
                "",
                "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
            ),
            (
                "get-slashes",
                "GET",
                "//example//",
                &[],
                "",
                "9a624bd73a37c9a373b5312afbebe7a714a789de108f0bdfe846570885f57e84",
            ),
        ];
        for (name, method, target, headers, body, expected) in cases {
            assert_eq!(signature(method, target, headers, body), expected, "{name}");
        }
    }

    #[test]
    fn the_written_form_is_read_in_any_order() {
        let parsed = AwsCredentials::parse("AK SK region:eu-west-1 token:T service:s3").unwrap().unwrap();
        assert_eq!(parsed.session_token.as_deref(), Some("T"));
        assert_eq!(parsed.region.as_deref(), Some("eu-west-1"));
        assert_eq!(parsed.service.as_deref(), Some("s3"));
        assert!(AwsCredentials::parse("AK").unwrap().is_none());
        assert_eq!(
            AwsCredentials::parse("AK SK zone:x").unwrap_err(),
            "`zone:x` after the AWS keys is not `token:…`, `region:…` or `service:…`"
        );
        assert_eq!(AwsCredentials::parse("AK SK region:").unwrap_err(), "`region:` has no value");
        assert!(!format!("{parsed:?}").contains("SK"), "the secret key is not in Debug");
    }

    #[test]
    fn the_scope_comes_from_an_amazonaws_host() {
        let scope = |host: &str| scope_of_host(host);
        let pair = |service: &str, region: &str| (Some(service.to_owned()), Some(region.to_owned()));
        assert_eq!(scope("sqs.eu-west-1.amazonaws.com"), pair("sqs", "eu-west-1"));
        assert_eq!(scope("bucket.s3.eu-west-1.amazonaws.com"), pair("s3", "eu-west-1"));
        assert_eq!(scope("s3.amazonaws.com"), (Some("s3".to_owned()), None));
        assert_eq!(scope("bucket.s3.amazonaws.com"), pair("s3", "us-east-1"));
        assert_eq!(scope("s3-eu-west-1.amazonaws.com"), pair("s3", "eu-west-1"));
        assert_eq!(scope("search-x.eu-west-1.es.amazonaws.com"), pair("es", "eu-west-1"));
        assert_eq!(scope("email.eu-west-1.amazonaws.com"), pair("ses", "eu-west-1"));
        assert_eq!(scope("api.example.com"), (None, None));
    }

    #[test]
    fn session_tokens_s3_hashes_and_missing_services() {
        let url = url::Url::parse("https://bucket.s3.eu-west-1.amazonaws.com/a%20b/c").unwrap();
        let mut headers = HeaderMap::new();
        let mut credentials = suite_credentials();
        credentials.service = None;
        credentials.region = None;
        credentials.session_token = Some("TOKEN".to_owned());
        sign(&http::Method::PUT, &url, &mut headers, b"hello", &credentials, "20240102T030405Z").unwrap();
        assert_eq!(headers["x-amz-date"], "20240102T030405Z");
        assert_eq!(headers["x-amz-security-token"], "TOKEN");
        assert_eq!(headers["x-amz-content-sha256"], "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
        let authorization = headers[AUTHORIZATION].to_str().unwrap();
        assert!(authorization.contains("/20240102/eu-west-1/s3/aws4_request, "), "{authorization}");
        assert!(
            authorization.contains("SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token,"),
            "{authorization}"
        );
        let other = url::Url::parse("http://127.0.0.1:8080/x").unwrap();
        let error = sign(&http::Method::GET, &other, &mut HeaderMap::new(), b"", &credentials, "20240102T030405Z");
        assert_eq!(
            error.unwrap_err(),
            "the service to sign for is not known: `127.0.0.1:8080` is not an `*.amazonaws.com` host"
        );
    }

    #[test]
    fn paths_are_encoded_once_more_except_for_s3() {
        assert_eq!(canonical_path("/a%20b/c", false), "/a%2520b/c");
        assert_eq!(canonical_path("/a%20b/c", true), "/a%20b/c");
        assert_eq!(canonical_path("/a/./b/../c/", false), "/a/c/");
        assert_eq!(canonical_path("/a//b", true), "/a//b");
        assert_eq!(canonical_query("b=2&a=1&a=0&=x&c"), "a=0&a=1&b=2&c=");
        assert_eq!(canonical_query("q=a+b%2Bc&x=%7e"), "q=a%20b%2Bc&x=~");
    }
}
