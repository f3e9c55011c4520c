//! A read curl command written as `.http` text: the notes as `# curl:` comments, the
//! redirect and timeout directives, the request line, headers and body.

use std::fmt::Write as _;

use super::command::{ParsedBody, ParsedCurl};

impl ParsedCurl {
    /// The request as `.http` text, ending with a line break: a `# ` comment line naming
    /// each note, `# @no-redirect` when curl would not follow redirects, `# @timeout`,
    /// the request line (with the version), the headers, a blank line and the body.
    #[must_use]
    pub fn to_http(&self) -> String {
        let mut text = String::new();
        for note in &self.notes {
            let _ = writeln!(text, "# {}", one_line(&format!("curl: {note}")));
        }
        if self.text().contains("{{") {
            text.push_str("# curl: `{{` in the command is read by Volley as a variable\n");
        }
        if !self.follow_redirects {
            text.push_str("# @no-redirect\n");
        }
        if let Some(timeout) = &self.timeout {
            let _ = writeln!(text, "# @timeout {timeout} s");
        }
        let _ = write!(text, "{} {}", self.method, self.url);
        match self.version {
            Some(http::Version::HTTP_2) => text.push_str(" HTTP/2"),
            Some(http::Version::HTTP_11) => text.push_str(" HTTP/1.1"),
            _ => {}
        }
        text.push('\n');
        for (name, value) in &self.headers {
            let _ = writeln!(text, "{name}: {value}");
        }
        if let Some((user, password)) = &self.digest {
            let _ = writeln!(text, "Authorization: Digest {user} {password}");
        }
        match &self.body {
            ParsedBody::None => {}
            ParsedBody::Text(body) => {
                text.push('\n');
                text.push_str(body);
                if !body.ends_with('\n') {
                    text.push('\n');
                }
            }
            ParsedBody::File(path) => {
                let path = if path.starts_with('/') || path.starts_with("./") || path.starts_with("../") {
                    path.clone()
                } else {
                    format!("./{path}")
                };
                let _ = write!(text, "\n< {path}\n");
            }
            ParsedBody::Form(fields) => {
                text.push('\n');
                for field in fields {
                    match (&field.file, &field.filename) {
                        (true, Some(filename)) => {
                            let _ = writeln!(text, "{} = @{} | {filename}", field.name, field.value);
                        }
                        (true, None) => {
                            let _ = writeln!(text, "{} = @{}", field.name, field.value);
                        }
                        (false, _) => {
                            let _ = writeln!(text, "{} = {}", field.name, field.value);
                        }
                    }
                }
            }
        }
        text
    }

    /// Everything of the request written as text (to look for `{{`).
    fn text(&self) -> String {
        let mut text = self.url.clone();
        for (name, value) in &self.headers {
            text.push_str(name);
            text.push_str(value);
        }
        if let ParsedBody::Text(body) = &self.body {
            text.push_str(body);
        }
        text
    }
}

/// A note on one line: line breaks shown as `\n`.
fn one_line(text: &str) -> String {
    text.replace('\r', "\\r").replace('\n', "\\n")
}
