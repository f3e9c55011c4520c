//! A curl command read back into a request: the words split by the `shlex` crate (POSIX
//! shell rules), the options mapped here into a [`ParsedCurl`] (written as `.http` text by
//! `to_http.rs`). Every option that is not converted is named in a note, never dropped in
//! silence.

use super::command::{CurlParseError, FormField, ParsedBody, ParsedCurl};
use super::shells;

/// Options that take an argument, besides those converted: skipped with their argument.
const WITH_ARGUMENT: &[&str] = &[
    "-o",
    "--output",
    "-w",
    "--write-out",
    "--connect-timeout",
    "-x",
    "--proxy",
    "-U",
    "--proxy-user",
    "-E",
    "--cert",
    "--cacert",
    "--capath",
    "--key",
    "--cert-type",
    "--key-type",
    "-r",
    "--range",
    "-C",
    "--continue-at",
    "--retry",
    "--retry-delay",
    "--retry-max-time",
    "--resolve",
    "--connect-to",
    "-K",
    "--config",
    "-D",
    "--dump-header",
    "-c",
    "--cookie-jar",
    "--limit-rate",
    "-y",
    "--speed-time",
    "-Y",
    "--speed-limit",
    "-z",
    "--time-cond",
    "--interface",
    "--proto",
    "--proto-redir",
    "--max-redirs",
    "--max-filesize",
    "-Q",
    "--quote",
    "--aws-sigv4",
    "--ciphers",
    "--dns-servers",
    "--local-port",
    "--trace",
    "--trace-ascii",
    "--stderr",
    "--unix-socket",
    "--abstract-unix-socket",
    "--noproxy",
    "--pinnedpubkey",
    "--preproxy",
    "--request-target",
    "--sasl-authzid",
    "--service-name",
    "-P",
    "--ftp-port",
    "--mail-from",
    "--mail-rcpt",
    "--netrc-file",
    "--output-dir",
    "--variable",
    "--expand-url",
    "--header-file",
    "--happy-eyeballs-timeout-ms",
    "--tls-max",
    "--curves",
];

/// Short options that take an argument (`-XPOST` or `-X POST`).
const SHORT_WITH_ARGUMENT: &str = "XHdFuAebTmowxUErCKDcyYzQP";

/// Reads a curl command (`curl` or `curl.exe` first), quoted for a POSIX shell (lines
/// continued with `\`), Windows `cmd` (`^`) or PowerShell (a backtick): see `shells.rs`.
///
/// ```
/// use volley_curl::parse_curl;
///
/// let parsed = parse_curl("curl -sS https://example.com/users -H 'Accept: application/json' -d 'a=1'").unwrap();
/// assert_eq!(parsed.method, http::Method::POST);
/// assert_eq!(
///     parsed.to_http(),
///     "# @no-redirect\nPOST https://example.com/users\nAccept: application/json\n\
///      Content-Type: application/x-www-form-urlencoded\n\na=1\n"
/// );
/// ```
pub fn parse_curl(command: &str) -> Result<ParsedCurl, CurlParseError> {
    let error = |message: &str| CurlParseError { message: message.to_owned() };
    let words = shells::split(command, shells::Shell::guess(command))
        .ok_or_else(|| error("the command has an unclosed quote"))?;
    let mut words = words.into_iter();
    match words.next() {
        Some(first) if first == "curl" || first.ends_with("/curl") || first == "curl.exe" => {}
        _ => return Err(error("not a curl command: it does not start with `curl`")),
    }
    let mut reader = Reader::default();
    let mut words = words.peekable();
    while let Some(word) = words.next() {
        if word == "--" {
            reader.urls.extend(words.by_ref());
            break;
        }
        if let Some(long) = word.strip_prefix("--").filter(|long| !long.is_empty()) {
            let option = format!("--{long}");
            let takes = Reader::long_takes_argument(&option);
            let argument = if takes { words.next() } else { None };
            if takes && argument.is_none() {
                return Err(error(&format!("`{option}` needs an argument")));
            }
            reader.option(&option, argument);
        } else if word.len() > 1 && word.starts_with('-') {
            for (at, letter) in word[1..].char_indices() {
                let option = format!("-{letter}");
                if SHORT_WITH_ARGUMENT.contains(letter) {
                    let rest = &word[1 + at + letter.len_utf8()..];
                    let argument = if rest.is_empty() { words.next() } else { Some(rest.to_owned()) };
                    if argument.is_none() {
                        return Err(error(&format!("`{option}` needs an argument")));
                    }
                    reader.option(&option, argument);
                    break;
                }
                reader.option(&option, None);
            }
        } else {
            reader.urls.push(word);
        }
    }
    reader.finish()
}

/// What the options said so far.
// Each flag is one curl switch, independent of the others: a state machine would not
// make it clearer.
#[allow(clippy::struct_excessive_bools)]
#[derive(Debug, Default)]
struct Reader {
    method: Option<String>,
    head: bool,
    get: bool,
    urls: Vec<String>,
    version: Option<http::Version>,
    headers: Vec<(String, String)>,
    /// Names of `-H 'Name:'`: curl leaves its own header of that name out.
    removed: Vec<String>,
    data: Vec<String>,
    json: bool,
    data_file: Option<String>,
    upload: Option<String>,
    form: Vec<FormField>,
    user: Option<String>,
    digest: bool,
    insecure: bool,
    follow_redirects: bool,
    timeout: Option<String>,
    notes: Vec<String>,
}

impl Reader {
    fn long_takes_argument(option: &str) -> bool {
        matches!(
            option,
            "--request"
                | "--header"
                | "--data"
                | "--data-raw"
                | "--data-ascii"
                | "--data-binary"
                | "--data-urlencode"
                | "--json"
                | "--form"
                | "--form-string"
                | "--user"
                | "--user-agent"
                | "--referer"
                | "--cookie"
                | "--url"
                | "--upload-file"
                | "--max-time"
                | "--oauth2-bearer"
        ) || WITH_ARGUMENT.contains(&option)
    }

    fn note(&mut self, note: String) {
        if !self.notes.contains(&note) {
            self.notes.push(note);
        }
    }

    /// One option and its argument (`Some` exactly for the options that take one).
    fn option(&mut self, option: &str, argument: Option<String>) {
        let value = argument.clone().unwrap_or_default();
        match option {
            "-X" | "--request" => self.method = Some(value),
            "-I" | "--head" => self.head = true,
            "-G" | "--get" => self.get = true,
            "--url" => self.urls.push(value),
            "-H" | "--header" => self.header(&value),
            "-A" | "--user-agent" => self.headers.push(("User-Agent".to_owned(), value)),
            "-e" | "--referer" => self.headers.push(("Referer".to_owned(), value)),
            "-b" | "--cookie" if value.contains('=') => self.headers.push(("Cookie".to_owned(), value)),
            "-b" | "--cookie" => self.note(format!("`{option} {value}`: cookies read from a file are not converted")),
            "--oauth2-bearer" => self.headers.push(("Authorization".to_owned(), format!("Bearer {value}"))),
            "-u" | "--user" => self.user = Some(value),
            "--digest" => self.digest = true,
            "--basic" => {}
            "-d" | "--data" | "--data-ascii" | "--data-binary" => match value.strip_prefix('@') {
                Some(path) => {
                    if option != "--data-binary" {
                        self.note(format!(
                            "`{option} @{path}`: curl removes the file's line breaks; the request sends the file as it is"
                        ));
                    }
                    self.data_file = Some(path.to_owned());
                }
                None => self.data.push(value),
            },
            "--data-raw" => self.data.push(value),
            "--json" => {
                self.json = true;
                match value.strip_prefix('@') {
                    Some(path) => self.data_file = Some(path.to_owned()),
                    None => self.data.push(value),
                }
            }
            "--data-urlencode" => self.data_urlencode(&value),
            "-F" | "--form" | "--form-string" => self.form_field(option, &value),
            "-T" | "--upload-file" => self.upload = Some(value),
            "--http1.0" | "--http1.1" => self.version = Some(http::Version::HTTP_11),
            "--http2" | "--http2-prior-knowledge" => self.version = Some(http::Version::HTTP_2),
            "--http3" | "--http3-only" => {
                self.note(format!("`{option}`: Volley does not send HTTP/3; the request goes over HTTP/1.1 or HTTP/2"));
            }
            "--compressed" => {
                // Volley asks for compressed responses and decompresses them already.
            }
            "-k" | "--insecure" => {
                self.insecure = true;
                self.note(format!(
                    "`{option}`: curl does not check TLS certificates; Volley does unless told not to \
                     (`volley run --insecure`)"
                ));
            }
            "-L" | "--location" => {
                self.follow_redirects = true;
                self.note(format!("`{option}`: redirects are followed, as Volley does by default"));
            }
            "-m" | "--max-time" => self.timeout = Some(value),
            // Output and diagnostics: the request is the same.
            "-s"
            | "--silent"
            | "-S"
            | "--show-error"
            | "-v"
            | "--verbose"
            | "-i"
            | "--include"
            | "-f"
            | "--fail"
            | "--fail-with-body"
            | "-#"
            | "--progress-bar"
            | "-N"
            | "--no-buffer"
            | "-O"
            | "--remote-name"
            | "-J"
            | "--remote-header-name"
            | "-o"
            | "--output"
            | "-w"
            | "--write-out"
            | "-D"
            | "--dump-header"
            | "--no-progress-meter"
            | "-q"
            | "--disable" => {}
            _ => match argument {
                Some(argument) => self.note(format!("`{option} {argument}`")),
                None => self.note(format!("`{option}`")),
            },
        }
    }

    /// `-H 'Name: value'`; `-H 'Name:'` removes curl's own header; `-H 'Name;'` sends
    /// it empty.
    fn header(&mut self, header: &str) {
        if let Some((name, value)) = header.split_once(':') {
            let value = value.trim();
            if value.is_empty() {
                self.removed.push(name.trim().to_ascii_lowercase());
            } else {
                self.headers.push((name.trim().to_owned(), value.to_owned()));
            }
        } else if let Some(name) = header.strip_suffix(';') {
            self.headers.push((name.trim().to_owned(), String::new()));
        } else if let Some(path) = header.strip_prefix('@') {
            self.note(format!("`-H @{path}`: headers read from a file are not converted"));
        } else {
            self.note(format!("`-H {header}`: not a header"));
        }
    }

    /// `--data-urlencode`: `content`, `=content`, `name=content` (encoded), `@file` and
    /// `name@file` (not converted).
    fn data_urlencode(&mut self, value: &str) {
        let (name, content) = match value.find(['=', '@']) {
            Some(at) if value.as_bytes()[at] == b'@' => {
                self.note(format!("`--data-urlencode {value}`: data read from a file is not converted"));
                return;
            }
            Some(at) => (&value[..at], &value[at + 1..]),
            None => ("", value),
        };
        let encoded: String = url::form_urlencoded::byte_serialize(content.as_bytes()).collect();
        self.data.push(if name.is_empty() { encoded } else { format!("{name}={encoded}") });
    }

    /// `-F name=value`, `-F name=@file;filename=x;type=y`, `-F name=<file`.
    fn form_field(&mut self, option: &str, value: &str) {
        let Some((name, rest)) = value.split_once('=') else {
            self.note(format!("`{option} {value}`: not a form field"));
            return;
        };
        let mut field = FormField { name: name.to_owned(), value: rest.to_owned(), file: false, filename: None };
        if option != "--form-string" {
            if let Some(file) = rest.strip_prefix('@') {
                let mut parts = file.split(';');
                parts.next().unwrap_or_default().clone_into(&mut field.value);
                field.file = true;
                for part in parts {
                    match part.split_once('=') {
                        Some(("filename", filename)) => field.filename = Some(filename.trim_matches('"').to_owned()),
                        _ => self.note(format!("`{option} {value}`: `;{part}` is not converted")),
                    }
                }
            } else if rest.starts_with('<') {
                self.note(format!("`{option} {value}`: a field read from a file is not converted"));
                return;
            } else if let Some((text, extra)) = rest.split_once(";type=") {
                text.clone_into(&mut field.value);
                self.note(format!("`{option} {value}`: `;type={extra}` is not converted"));
            }
        }
        self.form.push(field);
    }

    fn finish(mut self) -> Result<ParsedCurl, CurlParseError> {
        let mut urls = std::mem::take(&mut self.urls).into_iter();
        let url = urls.next().ok_or_else(|| CurlParseError { message: "the curl command has no URL".to_owned() })?;
        for extra in urls {
            self.note(format!("`{extra}`: only the first URL is converted"));
        }
        let mut url = if url.contains("://") { url } else { format!("http://{url}") };
        let data = (!self.data.is_empty()).then(|| self.data.join(if self.json { "" } else { "&" }));
        let mut body = ParsedBody::None;
        let mut data_type = None;
        if self.get {
            if let Some(data) = &data {
                url.push(if url.contains('?') { '&' } else { '?' });
                url.push_str(data);
            }
            if self.data_file.is_some() {
                self.note("`-G` with data from a file: the file is not added to the URL".to_owned());
            }
        } else if let Some(path) = self.upload.clone() {
            body = ParsedBody::File(path);
        } else if let Some(path) = self.data_file.clone() {
            if data.is_some() {
                self.note("data given both in a file and in text: only the file is sent".to_owned());
            }
            body = ParsedBody::File(path);
            data_type = Some(if self.json { "application/json" } else { "application/x-www-form-urlencoded" });
        } else if let Some(data) = data {
            if !self.form.is_empty() {
                self.note("`-F` with `-d`: curl refuses the mix; only the data is sent".to_owned());
            }
            body = ParsedBody::Text(data);
            data_type = Some(if self.json { "application/json" } else { "application/x-www-form-urlencoded" });
        } else if !self.form.is_empty() {
            body = ParsedBody::Form(std::mem::take(&mut self.form));
            data_type = Some("multipart/form-data");
        }
        let has = |headers: &[(String, String)], name: &str| headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
        if let Some(content_type) = data_type
            && !has(&self.headers, "content-type")
            && !self.removed.iter().any(|name| name == "content-type")
        {
            self.headers.push(("Content-Type".to_owned(), content_type.to_owned()));
        }
        if self.json && !has(&self.headers, "accept") && !self.removed.iter().any(|name| name == "accept") {
            self.headers.push(("Accept".to_owned(), "application/json".to_owned()));
        }
        let mut digest = None;
        if let Some(user) = self.user.take() {
            let (name, password) = user.split_once(':').unwrap_or((&user, ""));
            if !user.contains(':') {
                self.note(format!("`-u {user}`: curl asks for the password; it is empty here"));
            }
            if self.digest {
                digest = Some((name.to_owned(), password.to_owned()));
            } else {
                self.headers.push(("Authorization".to_owned(), format!("Basic {name}:{password}")));
            }
        } else if self.digest {
            self.note("`--digest` without `-u`".to_owned());
        }
        let method = match self.method.take() {
            Some(method) => method,
            None if self.head => "HEAD".to_owned(),
            None if self.upload.is_some() => "PUT".to_owned(),
            None if !self.get && !matches!(body, ParsedBody::None) => "POST".to_owned(),
            None => "GET".to_owned(),
        };
        let method = http::Method::from_bytes(method.as_bytes())
            .map_err(|_| CurlParseError { message: format!("`{method}` is not a method") })?;
        Ok(ParsedCurl {
            method,
            url,
            version: self.version,
            headers: self.headers,
            body,
            digest,
            insecure: self.insecure,
            follow_redirects: self.follow_redirects,
            timeout: self.timeout,
            notes: self.notes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CurlBody, CurlRequest, to_curl};

    fn http(command: &str) -> String {
        parse_curl(command).unwrap_or_else(|error| panic!("{command}: {error}")).to_http()
    }

    #[test]
    fn methods_headers_and_bodies() {
        assert_eq!(
            http(
                "curl -X PUT 'https://api.example.com/users/1' -H 'Content-Type: application/json' --data-raw '{\"a\": 1}'"
            ),
            "# @no-redirect\nPUT https://api.example.com/users/1\nContent-Type: application/json\n\n{\"a\": 1}\n"
        );
        assert_eq!(http("curl example.com/x"), "# @no-redirect\nGET http://example.com/x\n");
        assert_eq!(http("curl -I https://h/"), "# @no-redirect\nHEAD https://h/\n");
        assert_eq!(
            http("curl -sSL -G https://h/search -d q=rust --data-urlencode 'tag=a b&c' --http2"),
            "# curl: `-L`: redirects are followed, as Volley does by default\nGET https://h/search?q=rust&tag=a+b%26c HTTP/2\n"
        );
        assert_eq!(
            http("curl --json '{\"x\":1}' https://h/ -A agent/1 -e https://from/ -b 'a=1; b=2' --compressed"),
            "# @no-redirect\nPOST https://h/\nUser-Agent: agent/1\nReferer: https://from/\nCookie: a=1; b=2\n\
             Content-Type: application/json\nAccept: application/json\n\n{\"x\":1}\n"
        );
    }

    #[test]
    fn users_files_forms_and_continued_lines() {
        assert_eq!(
            http("curl -u ada:lovelace https://h/basic"),
            "# @no-redirect\nGET https://h/basic\nAuthorization: Basic ada:lovelace\n"
        );
        assert_eq!(
            http("curl --digest --user 'ada:love lace' https://h/digest"),
            "# @no-redirect\nGET https://h/digest\nAuthorization: Digest ada love lace\n"
        );
        assert_eq!(
            http("curl \\\n  -X POST \\\n  --data-binary @body.json \\\n  https://h/up"),
            "# @no-redirect\nPOST https://h/up\nContent-Type: application/x-www-form-urlencoded\n\n< ./body.json\n"
        );
        assert_eq!(
            http("curl -F name=ada -F 'photo=@/tmp/me.png;filename=me.png' https://h/upload"),
            "# @no-redirect\nPOST https://h/upload\nContent-Type: multipart/form-data\n\nname = ada\n\
             photo = @/tmp/me.png | me.png\n"
        );
        assert_eq!(http("curl -T ./a.bin https://h/put"), "# @no-redirect\nPUT https://h/put\n\n< ./a.bin\n");
    }

    #[test]
    fn options_not_converted_are_named() {
        let text = http("curl -k --retry 3 -o out.json --proxy http://p:1 --frobnicate https://h/ https://other/");
        assert_eq!(
            text,
            "# curl: `-k`: curl does not check TLS certificates; Volley does unless told not to (`volley run --insecure`)\n\
             # curl: `--retry 3`\n# curl: `--proxy http://p:1`\n# curl: `--frobnicate`\n\
             # curl: `https://other/`: only the first URL is converted\n# @no-redirect\nGET https://h/\n"
        );
        assert!(parse_curl("wget https://h/").is_err());
        assert!(parse_curl("curl -H").is_err());
        assert!(parse_curl("curl 'unclosed").is_err());
        assert!(parse_curl("curl -s").is_err(), "no URL");
    }

    /// What `to_curl` writes is read back as the same request.
    #[test]
    fn round_trips_through_to_curl() {
        let requests = [
            CurlRequest {
                method: http::Method::POST,
                url: "https://example.com/a?b=1&c=it's".to_owned(),
                headers: vec![
                    ("content-type".to_owned(), "application/json".to_owned()),
                    ("x-odd".to_owned(), "$HOME `ls` \"q\" \\ it's".to_owned()),
                    ("x-odd".to_owned(), "again".to_owned()),
                ],
                body: CurlBody::Text("{\"name\": \"O'Hara\",\n \"price\": \"$5\"}".to_owned()),
                version: Some(http::Version::HTTP_2),
                digest: None,
                insecure: false,
            },
            CurlRequest {
                method: http::Method::HEAD,
                url: "http://127.0.0.1:8088/".to_owned(),
                headers: Vec::new(),
                body: CurlBody::None,
                version: Some(http::Version::HTTP_11),
                digest: Some(("ada".to_owned(), "pass word".to_owned())),
                insecure: true,
            },
            CurlRequest {
                method: http::Method::PATCH,
                url: "http://h/x".to_owned(),
                headers: vec![("user-agent".to_owned(), "volley/1".to_owned())],
                body: CurlBody::File("/tmp/a b.json".into()),
                version: None,
                digest: None,
                insecure: false,
            },
            CurlRequest {
                method: http::Method::GET,
                url: "http://h/x".to_owned(),
                headers: Vec::new(),
                body: CurlBody::Text("a body on a GET".to_owned()),
                version: None,
                digest: None,
                insecure: false,
            },
        ];
        for request in requests {
            let command = to_curl(&request).command;
            let parsed = parse_curl(&command).unwrap_or_else(|error| panic!("{command}: {error}"));
            assert_eq!(parsed.method, request.method, "{command}");
            assert_eq!(parsed.url, request.url, "{command}");
            assert_eq!(parsed.headers, request.headers, "{command}");
            assert_eq!(parsed.version, request.version, "{command}");
            assert_eq!(parsed.digest, request.digest, "{command}");
            assert_eq!(parsed.insecure, request.insecure, "{command}");
            let body = match &request.body {
                CurlBody::None => ParsedBody::None,
                CurlBody::Text(text) => ParsedBody::Text(text.clone()),
                CurlBody::File(path) => ParsedBody::File(path.display().to_string()),
                CurlBody::Form(fields) => ParsedBody::Form(fields.clone()),
                CurlBody::Binary(_) => unreachable!(),
            };
            assert_eq!(parsed.body, body, "{command}");
        }
    }
}
