//! The redirect rules, as pure functions of a response and the request that got it:
//! which responses are followed, and what the next request changes (URL, method, body,
//! credentials across origins). The exchange applies them.

use http::header::LOCATION;
use http::{HeaderMap, Method, StatusCode};
use url::Url;

use crate::error::TransportError;

/// How many redirects are followed before giving up.
pub const MAX_REDIRECTS: usize = 10;

/// The request that follows a redirect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Hop {
    /// The location, resolved against the URL that was redirected.
    pub(super) url: Url,
    /// The method of the next request.
    pub(super) method: Method,
    /// The body (and its `Content-Type` and `Content-Length`) is not sent again.
    pub(super) drop_body: bool,
    /// The next URL is on another origin: credentials (`Authorization`, `Cookie`,
    /// Digest) are not sent there.
    pub(super) cross_origin: bool,
}

/// The `Location` of a response that is a redirect to follow: 301, 302, 303, 307 and
/// 308 (300, 304 and 305 are not).
pub(super) fn location(status: StatusCode, headers: &HeaderMap) -> Option<&str> {
    let location = headers.get(LOCATION).and_then(|value| value.to_str().ok())?;
    matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308).then_some(location)
}

/// The request that follows a `status` redirect to `location` of a `method` request
/// to `url`: 303 (and 301 or 302 after a POST) becomes a GET without a body (a HEAD
/// stays a HEAD); 307 and 308 repeat the request as it was.
pub(super) fn follow(status: StatusCode, location: &str, url: &Url, method: &Method) -> Result<Hop, TransportError> {
    let next = url.join(location).map_err(|error| TransportError::Other {
        message: format!("invalid redirect location `{location}`: {error}"),
    })?;
    let status = status.as_u16();
    let drop_body = status == 303 || (matches!(status, 301 | 302) && *method == Method::POST);
    let method = if drop_body && *method != Method::HEAD { Method::GET } else { method.clone() };
    let cross_origin = next.origin() != url.origin();
    Ok(Hop { url: next, method, drop_body, cross_origin })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(location: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(LOCATION, location.parse().unwrap());
        headers
    }

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    #[test]
    fn only_the_five_redirect_statuses_with_a_location_are_followed() {
        for status in [301, 302, 303, 307, 308] {
            let status = StatusCode::from_u16(status).unwrap();
            assert_eq!(location(status, &headers("/next")), Some("/next"));
            assert_eq!(location(status, &HeaderMap::new()), None);
        }
        for status in [200, 300, 304, 305, 404] {
            assert_eq!(location(StatusCode::from_u16(status).unwrap(), &headers("/next")), None);
        }
    }

    #[test]
    fn see_other_becomes_a_get_without_a_body() {
        let hop = follow(StatusCode::SEE_OTHER, "/done", &url("http://a.test/form"), &Method::PUT).unwrap();
        assert_eq!(
            hop,
            Hop { url: url("http://a.test/done"), method: Method::GET, drop_body: true, cross_origin: false }
        );
    }

    #[test]
    fn moved_after_a_post_becomes_a_get_and_other_methods_stay() {
        let from = url("http://a.test/x");
        for status in [StatusCode::MOVED_PERMANENTLY, StatusCode::FOUND] {
            let post = follow(status, "y", &from, &Method::POST).unwrap();
            assert_eq!((post.method, post.drop_body), (Method::GET, true));
            let put = follow(status, "y", &from, &Method::PUT).unwrap();
            assert_eq!((put.method, put.drop_body), (Method::PUT, false));
        }
    }

    #[test]
    fn temporary_and_permanent_redirects_repeat_the_request() {
        for status in [StatusCode::TEMPORARY_REDIRECT, StatusCode::PERMANENT_REDIRECT] {
            let hop = follow(status, "/y", &url("http://a.test/x"), &Method::POST).unwrap();
            assert_eq!((hop.method, hop.drop_body), (Method::POST, false));
        }
    }

    #[test]
    fn a_head_stays_a_head() {
        let hop = follow(StatusCode::SEE_OTHER, "/y", &url("http://a.test/x"), &Method::HEAD).unwrap();
        assert_eq!((hop.method, hop.drop_body), (Method::HEAD, true));
    }

    #[test]
    fn another_origin_is_marked_and_a_bad_location_is_an_error() {
        let from = url("http://a.test/x");
        assert!(follow(StatusCode::FOUND, "https://a.test/x", &from, &Method::GET).unwrap().cross_origin);
        assert!(follow(StatusCode::FOUND, "http://b.test/x", &from, &Method::GET).unwrap().cross_origin);
        assert!(!follow(StatusCode::FOUND, "//a.test/y", &from, &Method::GET).unwrap().cross_origin);
        assert!(follow(StatusCode::FOUND, "http://[::1", &from, &Method::GET).is_err());
    }
}
