//! The HTML report: one self-contained file (inline CSS, no script, nothing fetched)
//! to open from a CI artifact. A summary, then each file and its requests: status,
//! timing, the assertions with what was expected and found, the request as sent and
//! the response. Everything comes from the JSON report, so secrets are already
//! redacted; every text is escaped, since bodies and titles come from servers and
//! files nobody vetted.

use std::fmt::Write as _;

use super::model::{Body, Entry};
use super::{Report, seconds};
use volley_engine::report::escape_html as escape;

/// Bodies longer than this are cut, with a note of their size: a report must open
/// quickly even when a response was large.
const BODY_LIMIT: usize = 64 * 1024;

const STYLE: &str = "
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:72rem;padding:1rem 2rem;color:#1f2328}
h1{font-size:1.4rem}h2{font-size:1.1rem;margin-top:2rem;border-bottom:1px solid #d0d7de}
.summary span{margin-right:1rem}
details{border:1px solid #d0d7de;border-radius:6px;margin:.4rem 0;padding:.3rem .7rem}
summary{cursor:pointer}summary .meta{color:#57606a;margin-left:.5rem}
.passed .mark{color:#1a7f37}.failed .mark,.error .mark{color:#cf222e}.skipped .mark{color:#57606a}
.failed,.error{border-color:#cf222e}
pre{background:#f6f8fa;padding:.5rem;overflow:auto;white-space:pre-wrap;word-break:break-all}
table{border-collapse:collapse;margin:.3rem 0}td,th{border:1px solid #d0d7de;padding:.2rem .5rem;text-align:left;vertical-align:top}
.ok{color:#1a7f37}.ko{color:#cf222e}.muted{color:#57606a}.note{color:#57606a;font-style:italic}
";

pub(super) fn render(report: &Report) -> String {
    let mut html = String::from("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    html.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    html.push_str("<title>Volley report</title>\n");
    let _ = writeln!(html, "<style>{STYLE}</style>\n</head>\n<body>\n<h1>Volley report</h1>");
    let mut context = Vec::new();
    if let Some(started) = &report.started_at {
        // `2026-11-28T18:30:05.123Z` → `2026-11-28 18:30:05 UTC`.
        let shown = started.get(..19).unwrap_or(started).replace('T', " ");
        context.push(format!("run on {} UTC", escape(&shown)));
    }
    if let Some(profile) = &report.profile {
        context.push(format!("profile <b>{}</b>", escape(profile)));
    }
    if !context.is_empty() {
        let _ = writeln!(html, "<p class=\"note\">{}</p>", context.join(" · "));
    }
    // Red only for what went wrong: zero failures is no alarm.
    let red = |count: usize| if count > 0 { "ko" } else { "muted" };
    let (failed, errors) = (report.count("failed"), report.count("error"));
    let _ = writeln!(
        html,
        "<p class=\"summary\"><span>{}</span><span class=\"ok\">{} passed</span>\
         <span class=\"{}\">{failed} failed</span><span class=\"{}\">{}</span><span>{} skipped</span>\
         <span>in {} s</span></p>",
        super::counted(report.requests.len(), "request"),
        report.count("passed"),
        red(failed),
        red(errors),
        super::counted(errors, "error"),
        report.count("skipped"),
        seconds(report.duration_ms)
    );
    for file in report.files() {
        let _ = writeln!(html, "<h2>{}</h2>", escape(file));
        for entry in report.entries().filter(|entry| entry.file == file) {
            request(&mut html, entry);
        }
    }
    html.push_str("</body>\n</html>\n");
    html
}

fn request(html: &mut String, entry: &Entry) {
    let mark = match entry.outcome.as_str() {
        "passed" => "✓",
        "skipped" => "-",
        _ => "✗",
    };
    let open = if matches!(entry.outcome.as_str(), "failed" | "error") { " open" } else { "" };
    // Status, assertions and time for an exchange; the outcome alone otherwise.
    let mut meta = vec![escape(&entry.outcome)];
    if let Some(response) = &entry.response {
        let (passed, total) = entry.assertion_counts();
        meta.push(response.status.to_string());
        meta.push(format!("{passed}/{total} assertions"));
        meta.push(format!("{} ms", entry.millis()));
    }
    if entry.attempts > 1 {
        meta.push(format!("after {} attempts", entry.attempts));
    }
    meta.push(format!("{}:{}", escape(&entry.file), entry.line));
    let _ = writeln!(
        html,
        "<details class=\"{}\"{open}><summary><span class=\"mark\">{mark}</span> <b>{}</b>\
         <span class=\"meta\">{}</span></summary>",
        escape(&entry.outcome),
        escape(&entry.title()),
        meta.join(" · ")
    );
    if let Some(description) = &entry.description {
        let _ = writeln!(html, "<p>{}</p>", escape(description));
    }
    if entry.outcome == "skipped" {
        let _ = writeln!(html, "<p class=\"note\">{}</p>", escape(entry.skip_reason()));
    }
    if let Some(error) = &entry.error {
        let _ = writeln!(
            html,
            "<p class=\"ko\"><b>error[{}]</b> {} <span class=\"note\">({}:{}:{})</span></p>",
            escape(&error.code),
            escape(&error.message),
            escape(&entry.file),
            error.line,
            error.column
        );
        if let Some(hint) = &error.hint {
            let _ = writeln!(html, "<p class=\"note\">help: {}</p>", escape(hint));
        }
    }
    assertions(html, entry);
    if let Some(sent) = &entry.request {
        let _ = write!(html, "<h3>Request</h3>\n<pre>{} {}", escape(&sent.method), escape(&sent.url));
        headers(html, &sent.headers);
        html.push_str("\n</pre>\n");
        body(html, &sent.body);
    }
    if let Some(response) = &entry.response {
        let status = match &response.grpc {
            Some(grpc) => format!("gRPC {} ({}) {}", grpc.code, grpc.number, grpc.message),
            None => format!("{} {} {}", response.http_version, response.status, response.status_text),
        };
        let _ = write!(html, "<h3>Response</h3>\n<pre>{}", escape(&status));
        headers(html, &response.headers);
        html.push_str("\n</pre>\n");
        body(html, &response.body);
    }
    if let Some(stream) = &entry.stream {
        let counts = if stream.kind == "websocket" {
            format!("WebSocket: {} messages received, {} sent", stream.received, stream.sent)
        } else {
            format!("event stream: {} events received", stream.received)
        };
        let _ = writeln!(
            html,
            "<p class=\"note\">{counts} in {} ms; ended: {}</p>",
            stream.duration_ms,
            escape(&stream.ended)
        );
        for error in &stream.errors {
            let _ = writeln!(html, "<p class=\"ko\">{}</p>", escape(error));
        }
    }
    if let Some(timing) = entry.timing {
        let _ = writeln!(
            html,
            "<p class=\"note\">first byte after {} ms, complete after {} ms</p>",
            timing.ttfb_ms, timing.total_ms
        );
    }
    if !entry.logs.is_empty() {
        let logs: Vec<String> = entry.logs.iter().map(|line| escape(line)).collect();
        let _ = writeln!(html, "<h3>Logs</h3>\n<pre>{}</pre>", logs.join("\n"));
    }
    html.push_str("</details>\n");
}

fn assertions(html: &mut String, entry: &Entry) {
    if entry.assertions.is_empty() {
        return;
    }
    html.push_str("<table>\n<tr><th></th><th>assertion</th><th>expected</th><th>actual</th><th>line</th></tr>\n");
    for assertion in &entry.assertions {
        let (mark, class) = if assertion.passed() { ("✓", "ok") } else { ("✗", "ko") };
        let (expected, actual) = match (&assertion.expected, &assertion.actual) {
            (Some(expected), Some(actual)) => (escape(&expected_value(expected)), escape(actual)),
            _ => (String::new(), assertion.message.as_deref().map(escape).unwrap_or_default()),
        };
        let _ = writeln!(
            html,
            "<tr><td class=\"{class}\">{mark}</td><td><code>{}</code></td><td>{expected}</td><td>{actual}</td>\
             <td>{}:{}</td></tr>",
            escape(&assertion.expression),
            assertion.line,
            assertion.column
        );
    }
    html.push_str("</table>\n");
}

/// What an assertion expected, as a value: `== 201` of `status == 201` (the operator
/// and what follows it), the expression itself when no operator is found.
fn expected_value(expected: &str) -> String {
    const OPERATORS: [&str; 11] =
        [" == ", " != ", " >= ", " <= ", " > ", " < ", " not-contains ", " contains ", " matches ", " exists", " ?? "];
    OPERATORS
        .iter()
        .filter_map(|operator| expected.find(operator))
        .min()
        .map_or_else(|| expected.to_owned(), |at| expected[at..].trim().to_owned())
}

fn headers(html: &mut String, headers: &[(String, String)]) {
    for (name, value) in headers {
        let _ = write!(html, "\n{}: {}", escape(name), escape(value));
    }
}

fn body(html: &mut String, body: &Body) {
    match (&body.body, &body.body_base64) {
        (Some(text), _) if text.is_empty() => {}
        (Some(text), _) => {
            // JSON as a person reads it: indented (what does not parse, as it came).
            let pretty = (text.len() <= BODY_LIMIT)
                .then(|| serde_json::from_str::<serde_json::Value>(text).ok())
                .flatten()
                .filter(|value| value.is_object() || value.is_array())
                .and_then(|value| serde_json::to_string_pretty(&value).ok());
            let text = pretty.as_deref().unwrap_or(text);
            let end = (0..=BODY_LIMIT.min(text.len())).rev().find(|&end| text.is_char_boundary(end)).unwrap_or(0);
            let _ = writeln!(html, "<pre>{}</pre>", escape(&text[..end]));
            if end < text.len() {
                let _ = writeln!(
                    html,
                    "<p class=\"note\">the body is {}: only its first {} are shown</p>",
                    size(text.len()),
                    size(end)
                );
            }
        }
        (None, Some(_)) => {
            let _ = writeln!(html, "<p class=\"note\">[binary body: {}]</p>", size(body.size()));
        }
        (None, None) => {}
    }
}

/// `512 bytes`, `64.0 KiB`, `1.5 MiB`.
fn size(bytes: usize) -> String {
    #[allow(clippy::cast_precision_loss)] // Shown with one decimal.
    let value = bytes as f64;
    if bytes < 1024 {
        format!("{bytes} bytes")
    } else if bytes < 1024 * 1024 {
        format!("{:.1} KiB", value / 1024.0)
    } else {
        format!("{:.1} MiB", value / (1024.0 * 1024.0))
    }
}

#[cfg(test)]
mod tests {
    use super::{escape, expected_value, size};

    #[test]
    fn escapes_markup() {
        assert_eq!(
            escape("</script><script>alert('x')</script>&"),
            "&lt;/script&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;"
        );
    }

    #[test]
    fn the_expected_column_shows_the_expected_value() {
        assert_eq!(expected_value("status == 201"), "== 201");
        assert_eq!(expected_value("jsonpath $.name != \"Ada\""), "!= \"Ada\"");
        assert_eq!(expected_value("header Content-Type contains json"), "contains json");
        assert_eq!(expected_value("body not-contains error"), "not-contains error");
        assert_eq!(expected_value("authenticated"), "authenticated");
    }

    #[test]
    fn sizes_read_as_people_count() {
        assert_eq!(size(12), "12 bytes");
        assert_eq!(size(65536), "64.0 KiB");
    }
}
