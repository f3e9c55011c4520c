//! A request written as code of another language, from the same [`CurlRequest`] "copy as
//! cURL" writes: JavaScript's `fetch`, Python's `requests` and Go's `net/http` (REST
//! Client's "Generate Code Snippet"). Strings are written as JSON string literals, which
//! each of the three languages reads as the same text. What a language's snippet cannot
//! say (a binary body, Digest credentials where the library has no helper) is a warning,
//! as for curl.

use std::fmt::Write as _;

use super::write::{CurlBody, CurlCommand, CurlRequest, to_curl};

/// The languages [`snippet`] writes: its id and a label for a picker.
pub const LANGUAGES: [(&str, &str); 4] =
    [("curl", "cURL"), ("fetch", "JavaScript (fetch)"), ("python", "Python (requests)"), ("go", "Go (net/http)")];

/// `request` as code of `language` (an id of [`LANGUAGES`]); `None` for another id.
#[must_use]
pub fn snippet(request: &CurlRequest, language: &str) -> Option<CurlCommand> {
    match language {
        "curl" => Some(to_curl(request)),
        "fetch" => Some(to_fetch(request)),
        "python" => Some(to_python(request)),
        "go" => Some(to_go(request)),
        _ => None,
    }
}

/// A string literal of JavaScript, Python and Go alike.
fn literal(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_owned())
}

fn binary_warning(warnings: &mut Vec<String>, bytes: usize, how: &str) {
    warnings.push(format!("the body ({bytes} bytes) is not text and is left out; {how}"));
}

/// The headers to write: a form's `multipart/form-data` type is the library's to set,
/// with its boundary.
fn headers(request: &CurlRequest) -> impl Iterator<Item = &(String, String)> {
    let form = matches!(request.body, CurlBody::Form(_));
    request.headers.iter().filter(move |(name, value)| {
        !(form && name.eq_ignore_ascii_case("content-type") && value.starts_with("multipart/form-data"))
    })
}

fn to_fetch(request: &CurlRequest) -> CurlCommand {
    let mut warnings = Vec::new();
    let mut code = String::new();
    let mut prelude = String::new();
    let mut options = vec![format!("  method: {},", literal(request.method.as_str()))];
    let written: Vec<String> =
        headers(request).map(|(name, value)| format!("    {}: {},", literal(name), literal(value))).collect();
    if !written.is_empty() {
        options.push(format!("  headers: {{\n{}\n  }},", written.join("\n")));
    }
    match &request.body {
        CurlBody::None => {}
        CurlBody::Text(text) => options.push(format!("  body: {},", literal(text))),
        CurlBody::File(path) => {
            prelude.push_str("import { readFile } from 'node:fs/promises';\n\n");
            options.push(format!("  body: await readFile({}),", literal(&path.display().to_string())));
        }
        CurlBody::Binary(bytes) => binary_warning(&mut warnings, bytes.len(), "read it from a file into `body`"),
        CurlBody::Form(fields) => {
            let mut form = String::from("const form = new FormData();\n");
            for field in fields {
                if field.file {
                    if !prelude.contains("openAsBlob") {
                        prelude.push_str("import { openAsBlob } from 'node:fs';\n\n");
                    }
                    let _ = write!(
                        form,
                        "form.append({}, await openAsBlob({})",
                        literal(&field.name),
                        literal(&field.value)
                    );
                    if let Some(filename) = &field.filename {
                        let _ = write!(form, ", {}", literal(filename));
                    }
                    form.push_str(");\n");
                } else {
                    let _ = writeln!(form, "form.append({}, {});", literal(&field.name), literal(&field.value));
                }
            }
            code.push_str(&form);
            code.push('\n');
            options.push("  body: form,".to_owned());
        }
    }
    if let Some((user, _)) = &request.digest {
        warnings.push(format!("fetch has no Digest authentication: the request for `{user}` is written without it"));
    }
    if request.insecure {
        warnings.push(
            "fetch cannot skip TLS certificate checks per request: in Node, run it with \
             NODE_TLS_REJECT_UNAUTHORIZED=0 (for testing only)"
                .to_owned(),
        );
    }
    let _ = write!(
        code,
        "const response = await fetch({}, {{\n{}\n}});\nconsole.log(response.status, await response.text());\n",
        literal(&request.url),
        options.join("\n")
    );
    CurlCommand { command: format!("{prelude}{code}"), warnings }
}

fn to_python(request: &CurlRequest) -> CurlCommand {
    let mut warnings = Vec::new();
    let mut code = String::from("import requests\n");
    let mut arguments = vec![literal(request.method.as_str()), literal(&request.url)];
    let written: Vec<String> =
        headers(request).map(|(name, value)| format!("    {}: {},", literal(name), literal(value))).collect();
    let mut setup = String::new();
    if !written.is_empty() {
        let _ = write!(setup, "headers = {{\n{}\n}}\n", written.join("\n"));
        arguments.push("headers=headers".to_owned());
    }
    match &request.body {
        CurlBody::None => {}
        CurlBody::Text(text) => arguments.push(format!("data={}.encode()", literal(text))),
        CurlBody::File(path) => {
            let _ = writeln!(
                setup,
                "with open({}, \"rb\") as file:\n    data = file.read()",
                literal(&path.display().to_string())
            );
            arguments.push("data=data".to_owned());
        }
        CurlBody::Binary(bytes) => binary_warning(&mut warnings, bytes.len(), "read it from a file into `data`"),
        CurlBody::Form(fields) => {
            let mut files = Vec::new();
            for field in fields {
                if field.file {
                    let filename = field.filename.clone().unwrap_or_else(|| {
                        std::path::Path::new(&field.value)
                            .file_name()
                            .map_or_else(|| field.value.clone(), |name| name.to_string_lossy().into_owned())
                    });
                    files.push(format!(
                        "    ({}, ({}, open({}, \"rb\"))),",
                        literal(&field.name),
                        literal(&filename),
                        literal(&field.value)
                    ));
                } else {
                    files.push(format!("    ({}, (None, {})),", literal(&field.name), literal(&field.value)));
                }
            }
            let _ = write!(setup, "files = [\n{}\n]\n", files.join("\n"));
            arguments.push("files=files".to_owned());
        }
    }
    if let Some((user, password)) = &request.digest {
        code.push_str("from requests.auth import HTTPDigestAuth\n");
        arguments.push(format!("auth=HTTPDigestAuth({}, {})", literal(user), literal(password)));
    }
    if request.insecure {
        arguments.push("verify=False".to_owned());
    }
    if request.version == Some(http::Version::HTTP_2) {
        warnings.push("requests speaks HTTP/1.1 only: the request line's HTTP/2 is not kept".to_owned());
    }
    // requests follows redirects unless told not to; Volley by default does not.
    arguments.push("allow_redirects=False".to_owned());
    code.push('\n');
    code.push_str(&setup);
    let _ = write!(
        code,
        "response = requests.request(\n    {},\n)\nprint(response.status_code, response.text)\n",
        arguments.join(",\n    ")
    );
    CurlCommand { command: code, warnings }
}

fn to_go(request: &CurlRequest) -> CurlCommand {
    let mut warnings = Vec::new();
    let mut imports = vec!["\"fmt\"", "\"io\"", "\"net/http\""];
    let mut setup = String::new();
    let body = match &request.body {
        CurlBody::None => "nil".to_owned(),
        CurlBody::Text(text) => {
            imports.push("\"strings\"");
            format!("strings.NewReader({})", literal(text))
        }
        CurlBody::File(path) => {
            imports.push("\"os\"");
            let _ = write!(
                setup,
                "\tbody, err := os.Open({})\n\tif err != nil {{\n\t\tpanic(err)\n\t}}\n\tdefer body.Close()\n",
                literal(&path.display().to_string())
            );
            "body".to_owned()
        }
        CurlBody::Binary(bytes) => {
            binary_warning(&mut warnings, bytes.len(), "open it with os.Open and pass it as the body");
            "nil".to_owned()
        }
        CurlBody::Form(fields) => {
            imports.extend(["\"bytes\"", "\"mime/multipart\""]);
            setup.push_str("\tvar form bytes.Buffer\n\twriter := multipart.NewWriter(&form)\n");
            for field in fields {
                if field.file {
                    if !imports.contains(&"\"os\"") {
                        imports.push("\"os\"");
                    }
                    let filename = field.filename.clone().unwrap_or_else(|| {
                        std::path::Path::new(&field.value)
                            .file_name()
                            .map_or_else(|| field.value.clone(), |name| name.to_string_lossy().into_owned())
                    });
                    let _ = write!(
                        setup,
                        "\tif part, err := writer.CreateFormFile({}, {}); err != nil {{\n\t\tpanic(err)\n\t}} else if \
                         file, err := os.ReadFile({}); err != nil {{\n\t\tpanic(err)\n\t}} else {{\n\t\tpart.Write(file)\n\t}}\n",
                        literal(&field.name),
                        literal(&filename),
                        literal(&field.value)
                    );
                } else {
                    let _ = writeln!(setup, "\twriter.WriteField({}, {})", literal(&field.name), literal(&field.value));
                }
            }
            setup.push_str("\twriter.Close()\n");
            "&form".to_owned()
        }
    };
    let mut code = String::new();
    let _ = write!(
        code,
        "\treq, err := http.NewRequest({}, {}, {body})\n\tif err != nil {{\n\t\tpanic(err)\n\t}}\n",
        literal(request.method.as_str()),
        literal(&request.url)
    );
    for (name, value) in headers(request) {
        // `Header.Set` would canonicalise the name: the map keeps it as written.
        let _ = writeln!(
            code,
            "\treq.Header[{}] = append(req.Header[{}], {})",
            literal(name),
            literal(name),
            literal(value)
        );
    }
    if matches!(request.body, CurlBody::Form(_)) {
        code.push_str("\treq.Header.Set(\"Content-Type\", writer.FormDataContentType())\n");
    }
    if let Some((user, _)) = &request.digest {
        warnings.push(format!("net/http has no Digest authentication: the request for `{user}` is written without it"));
    }
    let client = if request.insecure {
        imports.push("\"crypto/tls\"");
        "\tclient := &http.Client{\n\t\tTransport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},\n\t\tCheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },\n\t}\n"
    } else {
        "\tclient := &http.Client{\n\t\tCheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },\n\t}\n"
    };
    imports.sort_unstable();
    imports.dedup();
    let mut program = String::from("package main\n\nimport (\n");
    for import in &imports {
        let _ = writeln!(program, "\t{import}");
    }
    program.push_str(")\n\nfunc main() {\n");
    program.push_str(&setup);
    program.push_str(&code);
    program.push_str(client);
    program.push_str(
        "\tresp, err := client.Do(req)\n\tif err != nil {\n\t\tpanic(err)\n\t}\n\tdefer resp.Body.Close()\n\tdata, _ := io.ReadAll(resp.Body)\n\tfmt.Println(resp.Status, string(data))\n}\n",
    );
    CurlCommand { command: program, warnings }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FormField;

    fn request(body: CurlBody) -> CurlRequest {
        CurlRequest {
            method: http::Method::POST,
            url: "http://127.0.0.1:8088/echo?q=\"x\"".to_owned(),
            headers: vec![
                ("Content-Type".to_owned(), "application/json".to_owned()),
                ("X-Quote".to_owned(), "it's".to_owned()),
            ],
            body,
            version: None,
            digest: None,
            insecure: false,
        }
    }

    #[test]
    fn fetch_writes_method_headers_and_body_as_literals() {
        let code = snippet(&request(CurlBody::Text("{\"a\": \"b\\n\"}".to_owned())), "fetch").unwrap().command;
        assert_eq!(
            code,
            "const response = await fetch(\"http://127.0.0.1:8088/echo?q=\\\"x\\\"\", {\n  method: \"POST\",\n  headers: {\n    \"Content-Type\": \"application/json\",\n    \"X-Quote\": \"it's\",\n  },\n  body: \"{\\\"a\\\": \\\"b\\\\n\\\"}\",\n});\nconsole.log(response.status, await response.text());\n"
        );
    }

    #[test]
    fn python_keeps_redirects_off_and_writes_forms_as_files() {
        let form = CurlBody::Form(vec![
            FormField { name: "a".into(), value: "1".into(), file: false, filename: None },
            FormField { name: "f".into(), value: "/tmp/x.txt".into(), file: true, filename: None },
        ]);
        let mut with_form = request(form);
        with_form.headers[0] = ("Content-Type".into(), "multipart/form-data; boundary=x".into());
        let code = snippet(&with_form, "python").unwrap().command;
        assert!(
            code.contains(
                "files = [\n    (\"a\", (None, \"1\")),\n    (\"f\", (\"x.txt\", open(\"/tmp/x.txt\", \"rb\"))),\n]"
            ),
            "{code}"
        );
        assert!(!code.contains("multipart/form-data"), "{code}");
        assert!(code.contains("allow_redirects=False"), "{code}");
    }

    #[test]
    fn go_is_a_whole_program_and_binary_bodies_are_warned_about() {
        let snippet = snippet(&request(CurlBody::Binary(bytes::Bytes::from_static(&[0, 159]))), "go").unwrap();
        assert!(
            snippet.command.starts_with("package main\n\nimport (\n\t\"fmt\"\n\t\"io\"\n\t\"net/http\"\n)\n"),
            "{}",
            snippet.command
        );
        assert!(snippet.command.contains("req.Header[\"X-Quote\"] = append(req.Header[\"X-Quote\"], \"it's\")"));
        assert_eq!(snippet.warnings.len(), 1);
        assert!(snippet.warnings[0].contains("2 bytes"));
        assert!(snippet_or_none("cobol").is_none());
    }

    fn snippet_or_none(language: &str) -> Option<CurlCommand> {
        snippet(&request(CurlBody::None), language)
    }
}
