//! Data-driven tests: every `fixtures/*.http` file is parsed and its typed document
//! rendered in a compact text form (requests, headers, bodies, directives, variables,
//! diagnostics) that is compared with the snapshot in `snapshots/`.
//!
//! After an intended change, re-bless with
//! `INSTA_UPDATE=always cargo test -p volley-syntax --test fixtures` and review the diff.

use std::fmt::Write as _;

use volley_syntax::{
    Arguments, Body, BodyPart, Document, Expression, FormValue, Interpolation, Part, Protocol, Span, Template, Timeout,
};

#[test]
fn fixtures() {
    let count = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/fixtures"))
        .expect("fixtures directory")
        .filter(|entry| entry.as_ref().is_ok_and(|entry| entry.path().extension().is_some_and(|ext| ext == "http")))
        .count();
    assert!(count >= 60, "there are {count} fixtures; keep at least 60");
    insta::glob!("fixtures/*.http", |path| {
        let text = std::fs::read_to_string(path).expect("fixture is readable UTF-8");
        let document = volley_syntax::parse(&text);
        insta::assert_snapshot!(render(&document));
    });
}

/// One fixture is also kept as the full serialized document, so the serde shape that
/// `volley check --json` and other tools see is under test too.
#[test]
fn serialized_document() {
    let text = include_str!("fixtures/jetbrains_full.http");
    insta::assert_yaml_snapshot!(volley_syntax::parse(text));
}

fn render(document: &Document) -> String {
    let mut out = String::new();
    for variable in &document.variables {
        let _ = writeln!(out, "@{} = {}  [{}]", variable.name.value, template(&variable.value), span(variable.span));
    }
    for block in &document.blocks {
        let _ = write!(out, "block {} [{}]", block.index, span(block.span));
        if let Some(separator) = &block.separator {
            match &separator.name {
                Some(name) => {
                    let _ = write!(out, " ### {:?}", name.value);
                }
                None => out.push_str(" ###"),
            }
        }
        out.push('\n');
        for directive in &block.orphan_directives {
            let _ = writeln!(out, "  orphan @{}", directive.name.value);
        }
        for command in &block.commands {
            let _ = match &command.kind {
                volley_syntax::CommandKind::Import(path) => {
                    writeln!(out, "  import {:?} [{}]", path.value, span(path.span))
                }
                volley_syntax::CommandKind::Run { target, variables } => {
                    let variables: Vec<String> = variables
                        .iter()
                        .map(|variable| {
                            format!(
                                "{}={:?} [{}]",
                                variable.name.value,
                                variable.value.value,
                                span(variable.value.span)
                            )
                        })
                        .collect();
                    let (kind, text) = match target {
                        volley_syntax::RunTarget::Request(name) => ("request", name),
                        volley_syntax::RunTarget::File(path) => ("file", path),
                    };
                    writeln!(out, "  run {kind} {:?} [{}] {}", text.value, span(text.span), variables.join(", "))
                }
            };
        }
        let Some(request) = &block.request else { continue };
        let _ = write!(out, "  request {} {} {}", request.index, request.method.value, template(&request.url));
        if let Some(version) = &request.http_version {
            let _ = write!(out, " {}", version.value);
        }
        let _ = writeln!(out, "  [{}]", span(request.line_span));
        if let Some(name) = &request.name {
            let _ = writeln!(out, "    name {:?}", name.value);
        }
        if let Some(description) = &request.description {
            let _ = writeln!(out, "    description {:?}", description.value);
        }
        for directive in &request.directives {
            let value = directive.value.as_ref().map_or(String::new(), |value| format!(" {}", template(value)));
            let _ = writeln!(out, "    @{} ({:?}){value}", directive.name.value, directive.kind);
        }
        for header in &request.headers {
            let _ = writeln!(out, "    header {}: {}", template(&header.name), template(&header.value));
        }
        match &request.body {
            Body::None => {}
            Body::Inline(body) => {
                let _ = writeln!(out, "    body inline [{}] {}", span(body.span), template(body));
            }
            Body::File(file) => {
                let _ = writeln!(
                    out,
                    "    body file {}{}{}",
                    template(&file.path),
                    if file.substitute { " (substitute variables)" } else { "" },
                    file.encoding.as_ref().map_or(String::new(), |encoding| format!(" encoding {encoding}"))
                );
            }
            Body::Form(form) => {
                let _ = writeln!(out, "    body form{}", if form.multipart { " multipart" } else { " urlencoded" });
                for field in &form.fields {
                    match &field.value {
                        FormValue::Text(value) => {
                            let _ = writeln!(out, "      {:?} = {}", field.name.value, template(value));
                        }
                        FormValue::File { path, filename } => {
                            let filename =
                                filename.as_ref().map_or(String::new(), |name| format!(" as {}", template(name)));
                            let _ = writeln!(out, "      {:?} = file {}{filename}", field.name.value, template(path));
                        }
                    }
                }
            }
            Body::Parts(parts) => {
                let _ = writeln!(out, "    body parts [{}]", span(parts.span));
                for part in &parts.parts {
                    match part {
                        BodyPart::Text(text) => {
                            let _ = writeln!(out, "      text [{}] {}", span(text.span), template(text));
                        }
                        BodyPart::File(file) => {
                            let substitute = if file.substitute { " (substitute variables)" } else { "" };
                            let _ = writeln!(out, "      file {}{substitute}", template(&file.path));
                        }
                    }
                }
            }
            Body::GraphQl(graphql) => {
                let name = graphql.operation_name.as_ref().map_or(String::new(), |name| format!(" operation {name:?}"));
                let _ =
                    writeln!(out, "    body graphql{name} [{}] query {}", span(graphql.span), template(&graphql.query));
                if let Some(variables) = &graphql.variables {
                    let _ = writeln!(out, "      variables [{}] {}", span(variables.span), template(variables));
                }
                for fragment in &graphql.fragments {
                    let _ = writeln!(out, "      fragment {fragment:?}");
                }
            }
        }
        match &request.protocol {
            Protocol::Http => {}
            Protocol::Sse(options) => {
                let last = options
                    .last_event_id
                    .as_ref()
                    .map_or(String::new(), |id| format!(" last-event-id {}", template(id)));
                let _ = writeln!(out, "    sse{last}");
            }
            Protocol::WebSocket(options) => {
                let protocols = options
                    .subprotocols
                    .as_ref()
                    .map_or(String::new(), |list| format!(" subprotocols {}", template(list)));
                let timeout = options
                    .connect_timeout
                    .as_ref()
                    .map_or(String::new(), |timeout| format!(" connect-timeout {}", duration(timeout)));
                let _ = writeln!(out, "    websocket{protocols}{timeout}");
            }
            Protocol::Grpc(options) => {
                let mut line = String::from("    grpc");
                for proto in &options.protos {
                    let _ = write!(line, " proto {}", template(proto));
                }
                for path in &options.import_paths {
                    let _ = write!(line, " import-path {}", template(path));
                }
                if let Some(protoset) = &options.protoset {
                    let _ = write!(line, " protoset {}", template(protoset));
                }
                if options.plaintext {
                    line.push_str(" plaintext");
                }
                if options.reflection {
                    line.push_str(" reflection");
                }
                if let Some(server) = &options.reflection_server {
                    let _ = write!(line, " {}", template(server));
                }
                for import in document.proto_imports_of(request) {
                    let _ = write!(line, " proto-import {:?} include {:?}", import.path.value, import.include_dirs);
                    if import.keep_case {
                        line.push_str(" keep-case");
                    }
                }
                let _ = writeln!(out, "{line}");
                if let volley_syntax::Body::Inline(body) = &request.body {
                    for message in volley_syntax::split_messages(body) {
                        let wait = message.wait_for_server;
                        let _ = writeln!(
                            out,
                            "      message [{}] wait {wait} {}",
                            span(message.body.span),
                            template(&message.body)
                        );
                    }
                }
            }
        }
        if let Some(timeout) = &request.timeout {
            let _ = writeln!(out, "    timeout {}", duration(timeout));
        }
        if request.no_redirect {
            out.push_str("    no-redirect\n");
        }
        if request.no_cookie_jar {
            out.push_str("    no-cookie-jar\n");
        }
        if request.disabled {
            out.push_str("    disabled\n");
        }
        if let Some(note) = &request.note {
            let _ = writeln!(out, "    note {:?}", note.value);
        }
        for script in &request.scripts {
            let _ = writeln!(out, "    script {:?} [{}]", script.kind, span(script.span));
        }
    }
    if !document.diagnostics.is_empty() {
        out.push_str("diagnostics\n");
        for diagnostic in &document.diagnostics {
            let _ = write!(
                out,
                "  {} {}[{}] {}",
                span(diagnostic.span),
                diagnostic.severity,
                diagnostic.code,
                diagnostic.message
            );
            if let Some(hint) = &diagnostic.hint {
                let _ = write!(out, " (hint: {hint})");
            }
            out.push('\n');
        }
    }
    out
}

fn span(span: Span) -> String {
    format!(
        "{}:{}-{}:{}",
        span.start_position.line + 1,
        span.start_position.column + 1,
        span.end_position.line + 1,
        span.end_position.column + 1
    )
}

/// Text parts quoted, interpolations in braces.
/// `5000ms` for a written duration, the template for one substituted when sent.
fn duration(timeout: &Timeout) -> String {
    match timeout {
        Timeout::Millis(millis) => format!("{}ms", millis.value),
        Timeout::Template(value) => template(value),
    }
}

fn template(template: &Template) -> String {
    if template.parts.is_empty() {
        return "\"\"".to_owned();
    }
    template
        .parts
        .iter()
        .map(|part| match part {
            Part::Text(text) => format!("{:?}", text.value),
            Part::Interpolation(interpolation) => interpolation_text(interpolation),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn interpolation_text(interpolation: &Interpolation) -> String {
    let inner = match &interpolation.expression {
        None => String::new(),
        Some(Expression::Variable(name)) => name.value.clone(),
        Some(Expression::JavaScript(code)) => format!("js {}", code.value),
        Some(Expression::Resolver(call)) => {
            let arguments = match &call.arguments {
                Arguments::None => String::new(),
                Arguments::List(list) => {
                    format!("({})", list.iter().map(template).collect::<Vec<_>>().join(", "))
                }
                Arguments::JsonArray(array) => format!("(json {})", template(array)),
                Arguments::Words(words) => {
                    format!(" words {}", words.iter().map(template).collect::<Vec<_>>().join(" "))
                }
            };
            format!("${}{arguments}", call.name.value)
        }
    };
    if interpolation.closed { format!("{{{{{inner}}}}}") } else { format!("{{{{{inner}…") }
}
