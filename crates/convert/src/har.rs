//! HAR 1.2 (HTTP Archive, as browsers' developer tools save a capture): every entry's
//! request becomes one request of one `.http` file, in the order captured. What a
//! `.http` file cannot hold is reported: the responses and timings, HTTP/2
//! pseudo-headers, the `Content-Length` Volley computes itself, a browser's
//! `Accept-Encoding`, the bytes of uploaded files (not in a HAR).

use serde_json::Value;

use super::http::{HttpBody, HttpField, HttpRequest, http_text};
use super::{Conversion, ConvertError, Notes, parse_json, str_at};

pub(super) fn import(source: &str, stem: &str) -> Result<Conversion, ConvertError> {
    let har = parse_json(source, "a HAR file")?;
    let entries = har
        .pointer("/log/entries")
        .and_then(Value::as_array)
        .ok_or_else(|| ConvertError::new("not a HAR file: it has no `log.entries` list"))?;
    let mut notes = Notes::default();
    let mut requests = Vec::with_capacity(entries.len());
    for (index, entry) in entries.iter().enumerate() {
        let location = format!("log.entries[{index}]");
        let Some(request) = entry.get("request") else {
            notes.add(&location, "an entry without a request: not converted");
            continue;
        };
        requests.push(convert_request(request, entry, &location, &mut notes));
    }
    let responses = entries.iter().filter(|entry| entry.get("response").is_some()).count();
    if responses > 0 {
        notes.add("log.entries", format!("{responses} responses and their timings: a .http file holds requests only"));
    }
    let mut conversion = Conversion::default();
    conversion.files.insert(format!("{stem}.http"), http_text(&requests));
    conversion.unconverted = notes.into_vec();
    Ok(conversion)
}

fn convert_request(request: &Value, entry: &Value, location: &str, notes: &mut Notes) -> HttpRequest {
    let method = str_at(request, "method").unwrap_or("GET");
    let url = str_at(request, "url").unwrap_or_default();
    let mut converted = HttpRequest::new(method, url);
    let path = url::Url::parse(url).map_or_else(|_| url.to_owned(), |parsed| parsed.path().to_owned());
    converted.title = Some(format!("{method} {path}"));
    for comment in [str_at(entry, "comment"), str_at(request, "comment")].into_iter().flatten() {
        if !comment.is_empty() {
            converted.comments.push(comment.to_owned());
        }
    }
    for header in request.get("headers").and_then(Value::as_array).into_iter().flatten() {
        let (Some(name), Some(value)) = (str_at(header, "name"), str_at(header, "value")) else { continue };
        if name.starts_with(':') {
            let reason = notes.add(location, format!("the HTTP/2 pseudo-header `{name}` is not a header: left out"));
            converted.comments.push(reason);
        } else if name.eq_ignore_ascii_case("content-length") {
            let reason = notes.add(location, "`Content-Length` left out: Volley computes it from the body");
            converted.comments.push(reason);
        } else if name.eq_ignore_ascii_case("accept-encoding") {
            // A browser's list (`zstd`, …) may name encodings Volley cannot decode.
            let reason = notes.add(
                location,
                format!("`Accept-Encoding: {value}` left out: Volley asks for the encodings it decodes"),
            );
            converted.comments.push(reason);
        } else {
            converted.headers.push((name.to_owned(), value.to_owned()));
        }
    }
    let cookies: Vec<String> = request
        .get("cookies")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|cookie| Some(format!("{}={}", str_at(cookie, "name")?, str_at(cookie, "value")?)))
        .collect();
    if !cookies.is_empty() && !converted.has_header("cookie") {
        converted.headers.push(("Cookie".to_owned(), cookies.join("; ")));
    }
    if let Some(post) = request.get("postData") {
        converted.body = body(post, &mut converted, location, notes);
    }
    converted
}

/// `postData`: its `text` as sent, else its `params` as a form.
fn body(post: &Value, request: &mut HttpRequest, location: &str, notes: &mut Notes) -> HttpBody {
    let mime = str_at(post, "mimeType").unwrap_or_default();
    if let Some(text) = str_at(post, "text").filter(|text| !text.is_empty()) {
        if !mime.is_empty() && !request.has_header("content-type") {
            request.headers.push(("Content-Type".to_owned(), mime.to_owned()));
        }
        return HttpBody::Text(text.to_owned());
    }
    let params = post.get("params").and_then(Value::as_array).cloned().unwrap_or_default();
    if params.is_empty() {
        return HttpBody::None;
    }
    let mut fields = Vec::with_capacity(params.len());
    for param in &params {
        let name = str_at(param, "name").unwrap_or_default();
        match str_at(param, "fileName") {
            Some(file) => {
                let reason = notes.add(
                    location,
                    format!("the file of the form field `{name}` is not in the capture: `./{file}` must be put there"),
                );
                request.comments.push(reason);
                fields.push(HttpField { name: name.to_owned(), value: file.to_owned(), file: true, filename: None });
            }
            None => fields.push(HttpField::text(name, str_at(param, "value").unwrap_or_default())),
        }
    }
    // A form's type is written by the form itself (multipart with its boundary).
    request.headers.retain(|(name, _)| !name.eq_ignore_ascii_case("content-type"));
    if mime.starts_with("multipart/") {
        request.headers.push(("Content-Type".to_owned(), "multipart/form-data".to_owned()));
    }
    HttpBody::Form(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_har_file() {
        let har = include_str!("../tests/fixtures/import/capture.har");
        let conversion = import(har, "capture").unwrap();
        assert_eq!(conversion.files["capture.http"], include_str!("../tests/fixtures/import/capture.http"));
        let unconverted: Vec<String> = conversion.unconverted.iter().map(ToString::to_string).collect();
        assert_eq!(
            unconverted,
            [
                "log.entries[0]: the HTTP/2 pseudo-header `:authority` is not a header: left out",
                "log.entries[0]: `Accept-Encoding: gzip, deflate, br, zstd` left out: Volley asks for the encodings it decodes",
                "log.entries[1]: `Content-Length` left out: Volley computes it from the body",
                "log.entries[2]: the file of the form field `avatar` is not in the capture: `./me.png` must be put there",
                "log.entries: 3 responses and their timings: a .http file holds requests only",
            ]
        );
        assert!(import("{}", "x").is_err());
        assert!(import("not json", "x").is_err());
    }
}
