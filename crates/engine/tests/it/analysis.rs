//! Semantic diagnostics: the documented examples of docs/diagnostics.md, and what the
//! analysis takes into account (configuration, profiles, request names, files, client
//! variables and resolvers).
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use crate::support;

use std::path::Path;
use std::sync::Arc;

use support::config;
use volley_engine::io::MemoryFs;
use volley_engine::resolvers::resolver;
use volley_engine::{Client, ClientConfig};
use volley_syntax::{Code, Diagnostic};

const DOC: &str = include_str!("../../../../docs/diagnostics.md");

fn client(files: &MemoryFs) -> Client {
    Client::new(ClientConfig { io: Arc::new(files.clone()), config: volley_engine::ConfigSource::Discover, ..config() })
}

fn analyze(files: &MemoryFs, text: &str) -> Vec<Diagnostic> {
    let client = client(files);
    let document = volley_syntax::parse(text);
    let analysis =
        volley_engine::analysis::Analyzer::new(&client).analyze(&document, text, Some(Path::new("/project/api.http")));
    assert!(analysis.config_error.is_none(), "{:?}", analysis.config_error);
    analysis.diagnostics
}

fn codes(diagnostics: &[Diagnostic]) -> Vec<&'static str> {
    diagnostics.iter().map(|diagnostic| diagnostic.code.as_str()).collect()
}

#[test]
fn every_semantic_example_of_the_docs_produces_its_code() {
    let mut seen = 0;
    for part in DOC.split("\n## `").skip(1) {
        let code = part.split('`').next().unwrap();
        if !Code::from_name(code).unwrap().is_semantic() {
            continue;
        }
        let example = part.split("```http\n").nth(1).and_then(|rest| rest.split("```").next()).unwrap();
        let diagnostics = analyze(&MemoryFs::new(), example);
        assert_eq!(codes(&diagnostics), [code], "the example of `{code}`: {diagnostics:#?}");
        seen += 1;
    }
    assert_eq!(seen, Code::ALL.iter().filter(|code| code.is_semantic()).count());
}

#[test]
fn variables_from_every_source_count_as_defined() {
    let files = MemoryFs::new();
    files.insert(
        "/project/volley.jsonc",
        r#"{
            // Configuration variables, nested ones, and a profile's.
            "variables": {"host": "http://localhost", "api": {"version": "v1"}},
            "profiles": {"prod": {"variables": {"token": "t"}}},
            "resolvers": {"sign": {"type": "command", "command": "echo s"}}
        }"#,
    );
    let text = "@id = 7\n\
                # @name login\n\
                POST {{host}}/{{api.version}}/login?id={{id}}\n\
                Authorization: Bearer {{token}}\n\
                X-Sig: {{$sign()}}\n\
                \n\
                ###\n\
                GET {{host}}/me?t={{login.response.body.$.token}}&v={{api.missing}}&u={{logn.response.status}}\n\
                X-Other: {{nowhere}}\n";
    let diagnostics = analyze(&files, text);
    let found: Vec<(&str, &str)> =
        diagnostics.iter().map(|diagnostic| (diagnostic.code.as_str(), diagnostic.message.as_str())).collect();
    assert_eq!(
        found,
        [
            ("undefined-variable", "undefined variable `api.missing`"),
            ("undefined-variable", "no request named `logn` in this file for `logn.response.status`"),
            ("undefined-variable", "undefined variable `nowhere`"),
        ]
    );
    assert_eq!(diagnostics[1].hint.as_deref(), Some("did you mean `login`?"));
    // Spans point at the name, as the parser reports them: line 8.
    assert_eq!(diagnostics[0].span.start_position.line, 7);
}

#[test]
fn client_variables_and_resolvers_count_too() {
    let files = MemoryFs::new();
    let mut client_config = ClientConfig { io: Arc::new(files.clone()), ..config() };
    client_config.resolvers.insert("$tenant".to_owned(), resolver(|_| Ok("acme".to_owned())));
    let client = Client::new(client_config);
    client.set_variable("base", "http://localhost");
    let text = "GET {{base}}/{{$tenant()}}/{{$tenat()}}\n";
    let document = volley_syntax::parse(text);
    let diagnostics = volley_engine::analysis::Analyzer::new(&client).analyze(&document, text, None).diagnostics;
    assert_eq!(codes(&diagnostics), ["unknown-resolver"]);
    assert_eq!(diagnostics[0].hint.as_deref(), Some("did you mean `$tenant`?"));
}

#[test]
fn files_are_looked_up_next_to_the_http_file() {
    let files = MemoryFs::new();
    files.insert("/project/data/user.json", "{}");
    files.insert("/project/avatar.png", "png");
    let text = "POST http://localhost/a\nContent-Type: application/json\n\n< ./data/user.json\n\n###\n\
                POST http://localhost/b\nContent-Type: multipart/form-data; boundary=x\n\n\
                avatar = @./avatar.png\nother = @./other.png\n\n###\n\
                @dir = data\nPOST http://localhost/c\n\n< ./{{dir}}/missing.json\n";
    let diagnostics = analyze(&files, text);
    assert_eq!(codes(&diagnostics), ["missing-file"], "paths with variables are checked at run time");
    assert_eq!(diagnostics[0].message, "file `./other.png` not found");
    assert!(diagnostics[0].hint.as_deref().unwrap().contains("/project/other.png"));
}

#[test]
fn json_bodies_allow_interpolations_and_point_at_the_error() {
    let files = MemoryFs::new();
    let valid = "POST http://localhost\nContent-Type: application/json; charset=utf-8\n\n\
                 {\"id\": {{$random(1, 9)}}, \"name\": \"{{$uuid()}}\", \"tags\": [{{$timestamp()}}]}\n";
    assert_eq!(codes(&analyze(&files, valid)), Vec::<&str>::new());
    let invalid = "POST http://localhost\nContent-Type: application/vnd.api+json\n\n{\n  \"a\": 1\n  \"b\": 2\n}\n";
    let diagnostics = analyze(&files, invalid);
    assert_eq!(codes(&diagnostics), ["invalid-json-body"]);
    assert_eq!(diagnostics[0].message, "the JSON body is not valid: expected `,` or `}`");
    assert_eq!(diagnostics[0].span.start_position, volley_syntax::Position::new(5, 2), "at the second key");
    let not_json = "POST http://localhost\nContent-Type: text/plain\n\n{oops\n";
    assert!(analyze(&files, not_json).is_empty(), "only JSON content types are checked");
}

#[test]
fn a_json_error_at_a_character_of_several_bytes_is_placed_on_it() {
    // serde_json places some errors after the first byte of a character: the span
    // starts on the character, not inside it (a panic once).
    let files = MemoryFs::new();
    for body in ["{\"a\": é}", "{\"a\": 1 é}", "{\"é\": 1, é}", "[1, 2\n é]", "{\"a\": \"x\"é}"] {
        let text = format!("POST http://localhost\nContent-Type: application/json\n\n{body}\n");
        let diagnostics = analyze(&files, &text);
        assert_eq!(codes(&diagnostics), ["invalid-json-body"], "{body}");
        let span = diagnostics[0].span;
        assert!(text.is_char_boundary(span.start) && text.is_char_boundary(span.end), "{body}: {span:?}");
    }
}

#[test]
fn assertions_and_resolver_arguments_are_checked() {
    let text = "# @assert status == 200\n\
                # @assert header X-Id resembles 1\n\
                # @assert jsonpath $.a == {{expected}}\n\
                GET http://localhost/{{$base64()}}/{{$datetime iso8601}}/{{$datetime iso8601 1}}\n";
    let diagnostics = analyze(&MemoryFs::new(), text);
    assert_eq!(
        codes(&diagnostics),
        ["invalid-assertion", "undefined-variable", "resolver-arguments", "resolver-arguments"]
    );
    assert_eq!(diagnostics[0].message, "`resembles` is not a header check");
    assert_eq!(diagnostics[0].span.text(text), "resembles");
    assert_eq!(diagnostics[2].message, "`$base64` takes 1 argument, got 0");
    assert_eq!(diagnostics[3].hint.as_deref(), Some("write `{{$datetime(format[, offset, unit])}}`"));
}

#[test]
fn streaming_directive_values_are_checked_too() {
    let text = "# @sse\n# @lastEventId {{lastId}}\nGET http://localhost/events\n\n###\n\
                # @ws-subprotocols {{protocols}}\nGET ws://localhost/socket\n";
    let diagnostics = analyze(&MemoryFs::new(), text);
    let messages: Vec<_> = diagnostics.iter().map(|diagnostic| diagnostic.message.as_str()).collect();
    assert_eq!(messages, ["undefined variable `lastId`", "undefined variable `protocols`"]);
}

#[test]
fn timeout_values_with_variables_are_checked_too() {
    let text = "@known = 5 s\n# @timeout {{known}}\nGET http://localhost/a\n\n###\n\
                # @timeout {{patience}}\n# @ws-connect-timeout {{handshake}}\nGET ws://localhost/socket\n";
    let diagnostics = analyze(&MemoryFs::new(), text);
    let messages: Vec<_> = diagnostics.iter().map(|diagnostic| diagnostic.message.as_str()).collect();
    assert_eq!(messages, ["undefined variable `patience`", "undefined variable `handshake`"]);
}

/// `text` parsed with its `# @assert` lines read as httpyac's `?? …` lines (an assert
/// directive named `??`, as the syntax crate lowers them).
fn analyze_httpyac(text: &str) -> Vec<Diagnostic> {
    let mut document = volley_syntax::parse(text);
    for request in document.blocks.iter_mut().filter_map(|block| block.request.as_mut()) {
        for directive in &mut request.directives {
            if directive.kind == volley_syntax::DirectiveKind::Assert {
                "??".clone_into(&mut directive.name.value);
            }
        }
    }
    let analysis = volley_engine::analysis::Analyzer::new(&client(&MemoryFs::new())).analyze(
        &document,
        text,
        Some(Path::new("/project/api.http")),
    );
    analysis.diagnostics
}

#[test]
fn httpyac_assertions_are_checked_in_their_own_syntax() {
    let text = "# @assert status == 200\n\
                # @assert body items[0].id == 7\n\
                # @assert body name == \"Ada\"\n\
                # @assert header content-type includes json\n\
                # @assert duration < 300\n\
                # @assert js response.parsedBody.id == 7\n\
                # @assert js\n\
                # @assert xpath /slideshow/@title == Sample\n\
                # @assert status Equals 200\n\
                # @assert duration tls < 10\n\
                # @assert body tags.map(tag => tag.id) isArray\n\
                # @assert body matches (\n\
                # @assert body sha256 {{digest}}\n\
                GET http://localhost/items\n";
    let diagnostics = analyze_httpyac(text);
    let found: Vec<_> = diagnostics
        .iter()
        .map(|diagnostic| (diagnostic.code.as_str(), diagnostic.message.as_str(), diagnostic.span.text(text)))
        .collect();
    assert_eq!(
        found,
        [
            ("invalid-assertion", "a `js` assertion needs a JavaScript expression", "js"),
            ("invalid-assertion", "httpyac `xpath` assertions are not supported", "xpath"),
            ("invalid-assertion", "`Equals` is not a known operator", "Equals"),
            ("invalid-assertion", "the `tls` timing is not measured", "tls"),
            (
                "invalid-assertion",
                "`tags.map(tag => tag.id)` is not a property Volley can read",
                "tags.map(tag => tag.id)"
            ),
            ("invalid-assertion", "invalid regular expression: unclosed group", "("),
            ("undefined-variable", "undefined variable `digest`", "digest"),
        ]
    );
    assert_eq!(diagnostics[2].hint.as_deref(), Some("did you mean `equals`? operators are case-sensitive"));
    assert!(diagnostics[0].hint.as_deref().unwrap().contains("?? js response.parsedBody"));
    // The same lines as `# @assert` are Volley's language: `body <property>` is not in it.
    let volley = analyze(&MemoryFs::new(), "# @assert body items[0].id == 7\nGET http://localhost/items\n");
    assert_eq!(volley[0].message, "`items[0].id` is not a body check");
}

#[test]
fn resolvers_of_other_tools_are_known_with_their_argument_forms() {
    let text = "GET http://localhost/{{$datetime 'DD MMM YYYY' 1 d}}/{{$localDatetime \"YYYY\" -1 y}}\n\
                X-A: {{$randomInt 1 10}} {{$randomInt}} {{$timestamp -1 d}} {{$timestamp}}\n\
                X-B: {{$processEnv %keyName}} {{$dotenv TOKEN}} {{$env.HOME}} {{$guid}}\n\
                X-C: {{$random.integer(1, 5)}} {{$random.float}} {{$random.hexadecimal(8)}} {{$random.email}}\n\
                X-D: {{$random.alphabetic}} {{$timestamp 1}} {{$datetime 'DD MMM YYYY' 1}}\n";
    let diagnostics = analyze(&MemoryFs::new(), text);
    assert_eq!(codes(&diagnostics), ["resolver-arguments"; 3], "{diagnostics:#?}");
    assert_eq!(diagnostics[0].message, "`$random.alphabetic` takes 1 argument, got 0");
    assert_eq!(diagnostics[1].message, "`$timestamp` takes no arguments or 2 arguments, got 1");
    assert_eq!(diagnostics[2].message, "`$datetime` takes 1 or 3 arguments, got 2", "a quoted format is one");
}

#[test]
fn resolvers_volley_does_not_support_are_refused_with_the_tool_they_come_from() {
    let text = "GET http://localhost\nAuthorization: {{$aadToken new public}}\nX-Server: {{$exampleServer}}\n";
    let diagnostics = analyze(&MemoryFs::new(), text);
    assert_eq!(codes(&diagnostics), ["unknown-resolver", "unknown-resolver"]);
    assert_eq!(
        diagnostics[0].message,
        "`$aadToken` (REST Client: an Azure Active Directory token, signed in from the editor) is not supported by \
         Volley"
    );
    assert_eq!(diagnostics[0].span.text(text), "aadToken");
    assert!(diagnostics[0].hint.as_deref().unwrap().contains("command resolver `aadToken`"));
    assert!(diagnostics[1].message.starts_with("`$exampleServer` (JetBrains: "), "{}", diagnostics[1].message);
    assert!(diagnostics[1].hint.as_deref().unwrap().contains("volley echo-server"));

    // A resolver of the configuration with that name is the user's own: not refused.
    let files = MemoryFs::new();
    files.insert("/project/volley.jsonc", r#"{"resolvers": {"aadToken": {"type": "command", "command": "echo t"}}}"#);
    assert!(analyze(&files, text).iter().all(|diagnostic| !diagnostic.message.contains("aadToken")));
}

#[test]
fn dotenv_variables_count_as_defined_and_a_broken_file_is_reported() {
    let files = MemoryFs::new();
    files.insert("/project/.env", "TOKEN=t\nexport REGION=eu\n");
    let text = "GET http://localhost/{{REGION}}\nAuthorization: Bearer {{TOKEN}}\nX: {{MISSING}}\n";
    assert_eq!(codes(&analyze(&files, text)), ["undefined-variable"]);

    files.insert("/project/.env", "TOKEN=t\nbroken line\n");
    let document = volley_syntax::parse(text);
    let analysis = volley_engine::analysis::Analyzer::new(&client(&files)).analyze(
        &document,
        text,
        Some(Path::new("/project/api.http")),
    );
    let error = analysis.config_error.unwrap().to_string();
    assert_eq!(error, "`/project/.env`:2:1: expected `KEY=value`");
}

#[test]
fn auth_token_names_a_configuration_there_is() {
    let files = MemoryFs::new();
    files.insert(
        "/project/volley.jsonc",
        r#"{"auth": {"api": {"grant": "client_credentials", "clientId": "c", "tokenEndpoint": "http://127.0.0.1:9/t"}},
            "profiles": {"dev": {"auth": {"dev-only": {"grant": "password", "clientId": "d"}}}}}"#,
    );
    let known = "GET http://127.0.0.1:9/x\nAuthorization: Bearer {{$auth.token(\"api\")}}\nX-Id: {{$auth.idToken(\"dev-only\")}}\n";
    assert_eq!(codes(&analyze(&files, known)), Vec::<&str>::new());
    let misspelt = "GET http://127.0.0.1:9/x\nAuthorization: Bearer {{$auth.token(\"apj\")}}\n";
    let diagnostics = analyze(&files, misspelt);
    assert_eq!(codes(&diagnostics), ["resolver-arguments"]);
    assert_eq!(diagnostics[0].message, "no auth configuration named `apj`");
    assert_eq!(diagnostics[0].hint.as_deref(), Some("did you mean `api`?"));
}
