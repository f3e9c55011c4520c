//! The meta directives (`# @name value`): which exist, what they take, what they mean.
//!
//! The table here is the one source for the typed model, `volley check`, and the
//! language server's completion and hover.

use serde::Serialize;

/// What a directive name means to Volley.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DirectiveKind {
    /// `@name`.
    Name,
    /// `@description`.
    Description,
    /// `@timeout`.
    Timeout,
    /// `@assert`.
    Assert,
    /// `@sse`.
    Sse,
    /// `@lastEventId`.
    LastEventId,
    /// `@ws`.
    Ws,
    /// `@ws-subprotocols`.
    WsSubprotocols,
    /// `@ws-connect-timeout`.
    WsConnectTimeout,
    /// `@no-redirect` (from the JetBrains client).
    NoRedirect,
    /// `@no-cookie-jar` (from the JetBrains client and REST Client).
    NoCookieJar,
    /// `@disabled` (httpyac): the request is skipped.
    Disabled,
    /// `@note` (REST Client): ask for confirmation before sending.
    Note,
    /// `@graphql` (Kulala): a GraphQL request.
    GraphQl,
    /// `@jq` (Kulala): the editors show the response body through a jq filter.
    Jq,
    /// `@grpc-proto` (Kulala): a proto file of a gRPC request.
    GrpcProto,
    /// `@grpc-import-path` (Kulala): where a gRPC request's proto imports are found.
    GrpcImportPath,
    /// `@grpc-protoset` (Kulala): a compiled descriptor set.
    GrpcProtoset,
    /// `@grpc-plaintext` (Kulala): no TLS.
    GrpcPlaintext,
    /// `@grpc-reflection [server]` (httpyac): the schema by server reflection.
    GrpcReflection,
    /// `@sleep` (httpyac): wait before sending.
    Sleep,
    /// `@ref name` (httpyac): run the named request first, unless it already ran.
    Ref,
    /// `@forceRef name` (httpyac): run the named request first, every time.
    ForceRef,
    /// `@prompt name [description]` (REST Client): the variable `name` is asked for.
    Prompt,
    /// `@import ./file.http` (httpyac): the file's named requests and variables are
    /// available to this one.
    Import,
    /// `@ratelimit` (httpyac): the sends of a slot are spaced.
    RateLimit,
    /// `@load p95<200ms, errors<1%`: thresholds a `volley load` run that sends the request
    /// must hold.
    Load,
    /// `@loop for 3` / `@loop for item of items` (httpyac): the request is sent once per
    /// iteration.
    Loop,
    /// A directive of another tool that Volley reads and ignores.
    Ignored,
    /// Not a directive anyone defines.
    Unknown,
}

/// Whether a directive takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ValueRule {
    /// A value is required.
    Required,
    /// The directive is a flag; a value is a mistake.
    None,
    /// Either.
    Optional,
}

/// One entry of the directive table.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct DirectiveInfo {
    /// The name as written after `@`.
    pub name: &'static str,
    /// What it means.
    pub kind: DirectiveKind,
    /// Whether it takes a value.
    pub value: ValueRule,
    /// A placeholder for the value, for completion (`<milliseconds>`).
    pub placeholder: &'static str,
    /// One-paragraph documentation (Markdown).
    pub doc: &'static str,
}

/// The directives Volley acts on, in documentation order.
pub const SUPPORTED: &[DirectiveInfo] = &[
    DirectiveInfo {
        name: "name",
        kind: DirectiveKind::Name,
        value: ValueRule::Required,
        placeholder: "<request name>",
        doc: "Names the request, for `volley run --name` and for request variables \
              (`{{name.response.body.$.field}}`). Wins over the text of the `###` line.",
    },
    DirectiveInfo {
        name: "description",
        kind: DirectiveKind::Description,
        value: ValueRule::Required,
        placeholder: "<text>",
        doc: "A human-readable description, shown in reports and the editor.",
    },
    DirectiveInfo {
        name: "timeout",
        kind: DirectiveKind::Timeout,
        value: ValueRule::Required,
        placeholder: "<milliseconds>",
        doc: "Request timeout in milliseconds (`5000`; `5 s` and `2 m` work too). For an \
              SSE request it is the connection timeout (default 30000 ms).",
    },
    DirectiveInfo {
        name: "sleep",
        kind: DirectiveKind::Sleep,
        value: ValueRule::Required,
        placeholder: "<milliseconds>",
        doc: "Waits this long before sending (httpyac; `500`, `2 s`). Cancelling the run \
              ends the wait.",
    },
    DirectiveInfo {
        name: "loop",
        kind: DirectiveKind::Loop,
        value: ValueRule::Required,
        placeholder: "for <count> | for <name> of <list>",
        doc: "Sends the request once per iteration (httpyac): `for 3` three times, `for item of \
              items` once per element of a list (a variable, or a JavaScript expression), the \
              element in `{{item}}`; `{{$index}}` counts from 0. Each response is kept under \
              the request's name and the name with the index (`login0`, `login1`). `while` \
              loops are refused.",
    },
    DirectiveInfo {
        name: "ratelimit",
        kind: DirectiveKind::RateLimit,
        value: ValueRule::Required,
        placeholder: "[slot <name>] [minIdleTime <ms>] [max <n> expire <ms>]",
        doc: "Spaces the sends (httpyac): the requests of a slot (named, else of the same origin) wait \
              `minIdleTime` milliseconds after the last one, and until fewer than `max` went in the last \
              `expire` milliseconds.",
    },
    DirectiveInfo {
        name: "load",
        kind: DirectiveKind::Load,
        value: ValueRule::Required,
        placeholder: "<threshold>[, <threshold> …]",
        doc: "Thresholds a `volley load` run that sends this request must hold, as its \
              `--threshold` options: `p95<200ms, errors<1%, rate>500/s`. They are checked \
              against the whole run; one that fails makes `volley load` exit 1. Other runs \
              ignore them.",
    },
    DirectiveInfo {
        name: "import",
        kind: DirectiveKind::Import,
        value: ValueRule::Required,
        placeholder: "<./file.http>",
        doc: "Makes the named requests and the file variables of another `.http` file \
              available to this one (httpyac): `@ref` and `run #name` find its requests, \
              `{{name}}` its variables (this file's win). The path is relative to this file.",
    },
    DirectiveInfo {
        name: "ref",
        kind: DirectiveKind::Ref,
        value: ValueRule::Required,
        placeholder: "<request name>",
        doc: "Runs the named request of the file (or of a file it imports) first, unless it \
              already ran in this client (httpyac): its response is then there for `{{name.response…}}`.",
    },
    DirectiveInfo {
        name: "forceRef",
        kind: DirectiveKind::ForceRef,
        value: ValueRule::Required,
        placeholder: "<request name>",
        doc: "Runs the named request of the file first, every time (httpyac).",
    },
    DirectiveInfo {
        name: "prompt",
        kind: DirectiveKind::Prompt,
        value: ValueRule::Required,
        placeholder: "<name> [description]",
        doc: "Asks for the variable `name` when the request runs, unless a variable has it \
              (REST Client): in a terminal, or `--prompt name=value`. A name that says \
              secret (`password`, `token`, …) is typed hidden and redacted.",
    },
    DirectiveInfo {
        name: "assert",
        kind: DirectiveKind::Assert,
        value: ValueRule::Required,
        placeholder: "<expression>",
        doc: "An assertion on the response, may repeat: `status == 200`, \
              `header Content-Type contains json`, `body contains \"ok\"`, \
              `jsonpath $.id exists`.",
    },
    DirectiveInfo {
        name: "sse",
        kind: DirectiveKind::Sse,
        value: ValueRule::None,
        placeholder: "",
        doc: "Marks the request as a Server-Sent Events stream (as does an \
              `Accept: text/event-stream` header).",
    },
    DirectiveInfo {
        name: "lastEventId",
        kind: DirectiveKind::LastEventId,
        value: ValueRule::Required,
        placeholder: "<event id>",
        doc: "Resumes an SSE stream: sent as the `Last-Event-ID` header.",
    },
    DirectiveInfo {
        name: "ws",
        kind: DirectiveKind::Ws,
        value: ValueRule::None,
        placeholder: "",
        doc: "Marks the request as a WebSocket connection (as does a `ws://`/`wss://` URL \
              or the `WEBSOCKET` method). A WebSocket request has no body.",
    },
    DirectiveInfo {
        name: "ws-subprotocols",
        kind: DirectiveKind::WsSubprotocols,
        value: ValueRule::Required,
        placeholder: "<protocol, protocol>",
        doc: "Comma-separated subprotocols offered in the WebSocket handshake.",
    },
    DirectiveInfo {
        name: "ws-connect-timeout",
        kind: DirectiveKind::WsConnectTimeout,
        value: ValueRule::Required,
        placeholder: "<milliseconds>",
        doc: "WebSocket connect timeout in milliseconds (default 30000).",
    },
    DirectiveInfo {
        name: "no-redirect",
        kind: DirectiveKind::NoRedirect,
        value: ValueRule::None,
        placeholder: "",
        doc: "Do not follow redirects for this request.",
    },
    DirectiveInfo {
        name: "no-cookie-jar",
        kind: DirectiveKind::NoCookieJar,
        value: ValueRule::None,
        placeholder: "",
        doc: "Neither send cookies from the jar nor store the cookies of the response.",
    },
    DirectiveInfo {
        name: "disabled",
        kind: DirectiveKind::Disabled,
        value: ValueRule::None,
        placeholder: "",
        doc: "Skips the request: runs report it as skipped and send nothing (httpyac).",
    },
    DirectiveInfo {
        name: "graphql",
        kind: DirectiveKind::GraphQl,
        value: ValueRule::None,
        placeholder: "",
        doc: "Marks a GraphQL request (Kulala), as the `GRAPHQL` method and an \
              `X-Request-Type: GraphQL` header do: the body is the query and an optional JSON \
              object of variables.",
    },
    DirectiveInfo {
        name: "jq",
        kind: DirectiveKind::Jq,
        value: ValueRule::Required,
        placeholder: "<jq filter>",
        doc: "Shows the response body through a jq filter in the editors (as Kulala does): \
              `.items[] | {id, name}`. What is sent, the assertions and `volley run` are \
              unchanged.",
    },
    DirectiveInfo {
        name: "grpc-proto",
        kind: DirectiveKind::GrpcProto,
        value: ValueRule::Required,
        placeholder: "<./file.proto>",
        doc: "A proto file of a gRPC request (Kulala), compiled when the request runs; \
              repeat it for several files. httpyac writes `proto < ./file.proto` above the \
              request (or above the first `###`, for every request of the file).",
    },
    DirectiveInfo {
        name: "grpc-import-path",
        kind: DirectiveKind::GrpcImportPath,
        value: ValueRule::Required,
        placeholder: "<./directory>",
        doc: "A directory where the imports of a gRPC request's proto files are found \
              (Kulala); repeat it for several. The directory of each proto file is searched \
              too, and Google's well-known types are built in.",
    },
    DirectiveInfo {
        name: "grpc-protoset",
        kind: DirectiveKind::GrpcProtoset,
        value: ValueRule::Required,
        placeholder: "<./file.protoset>",
        doc: "A compiled descriptor set (`protoc --include_imports --descriptor_set_out`) \
              that describes a gRPC request's service (Kulala).",
    },
    DirectiveInfo {
        name: "grpc-plaintext",
        kind: DirectiveKind::GrpcPlaintext,
        value: ValueRule::None,
        placeholder: "",
        doc: "Calls a gRPC target written grpcurl's way (`GRPC host:port package.Service/Method`, \
              Kulala) without TLS; without it such a call uses TLS, as grpcurl does.",
    },
    DirectiveInfo {
        name: "grpc-reflection",
        kind: DirectiveKind::GrpcReflection,
        value: ValueRule::Optional,
        placeholder: "<host:port>",
        doc: "Asks the server for the gRPC request's schema by server reflection (httpyac), \
              even when proto files are given; the value names another server to ask. A \
              gRPC request without proto files uses reflection anyway.",
    },
    DirectiveInfo {
        name: "note",
        kind: DirectiveKind::Note,
        value: ValueRule::Optional,
        placeholder: "<text>",
        doc: "Asks for confirmation before the request is sent (REST Client): `volley run` \
              asks in a terminal and refuses without one, unless `--yes` is given. The \
              value, when there is one, is shown with the question.",
    },
];

/// Spellings other tools use for directives Volley supports.
const ALIASES: &[(&str, DirectiveKind)] = &[
    ("noRedirect", DirectiveKind::NoRedirect),
    ("noCookieJar", DirectiveKind::NoCookieJar),
    ("title", DirectiveKind::Description),
];

/// Directives of other tools (the JetBrains HTTP Client, REST Client, httpyac, Kulala) that
/// Volley reads without acting on them, so that such files run unchanged.
pub const IGNORED: &[&str] = &[
    "no-log",
    "noLog",
    "no-auto-encoding",
    "connection-timeout",
    "use-os-credentials",
    "http-version",
    "save",
    "openWith",
    "keepStreaming",
    "verbose",
    "debug",
    "noStreamingLog",
    "noRejectUnauthorized",
    "no-reject-unauthorized",
    "injectVariables",
    "jwt",
    "responseRef",
    "curl-global",
    "curl-compressed",
    "curl-location",
    "curl-insecure",
    "no-client-cert",
    "noClientCert",
    "proxy",
    "no-proxy",
    "noProxy",
    "extension",
    "no-response-view",
    "noResponseView",
    "metaDataLogging",
    "post-redirect-get",
    "lang",
    "language",
    // Kulala's
    "accept",
    "env-stdin-cmd",
    "env-json-key",
    "env-header-key",
];

/// Families of directives of other tools, read and ignored: Kulala's `curl-*`, `grpc-*`
/// and `kulala-*` options.
pub const IGNORED_PREFIXES: &[&str] = &["curl-", "grpc-", "kulala-"];

/// The kind of a directive name (exact spelling; directive names are case-sensitive).
#[must_use]
pub fn kind_of(name: &str) -> DirectiveKind {
    if let Some(info) = SUPPORTED.iter().find(|info| info.name == name) {
        return info.kind;
    }
    if let Some((_, kind)) = ALIASES.iter().find(|(alias, _)| *alias == name) {
        return *kind;
    }
    if IGNORED.contains(&name) || IGNORED_PREFIXES.iter().any(|prefix| name.starts_with(prefix)) {
        return DirectiveKind::Ignored;
    }
    DirectiveKind::Unknown
}

/// The table entry of a supported kind.
#[must_use]
pub fn info(kind: DirectiveKind) -> Option<&'static DirectiveInfo> {
    SUPPORTED.iter().find(|info| info.kind == kind)
}

/// What to write instead of an invalid duration, for messages of every front end.
pub const DURATION_HINT: &str = "write a positive number of milliseconds, e.g. `5000` (or `5 s`, `2 m`)";

/// Reads a duration: a positive integer of milliseconds, optionally with a unit
/// (`ms`, `s`, `m`), spaces allowed between number and unit. Returns milliseconds.
#[must_use]
pub fn parse_duration_ms(text: &str) -> Option<u64> {
    let text = text.trim();
    let digits_end = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (digits, unit) = text.split_at(digits_end);
    let number: u64 = digits.parse().ok()?;
    let factor = match unit.trim_start() {
        "" | "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        _ => return None,
    };
    let millis = number.checked_mul(factor)?;
    (millis > 0).then_some(millis)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ms("5000"), Some(5000));
        assert_eq!(parse_duration_ms(" 250ms "), Some(250));
        assert_eq!(parse_duration_ms("5 s"), Some(5000));
        assert_eq!(parse_duration_ms("2m"), Some(120_000));
        assert_eq!(parse_duration_ms("0"), None);
        assert_eq!(parse_duration_ms("-1"), None);
        assert_eq!(parse_duration_ms("1.5"), None);
        assert_eq!(parse_duration_ms("fast"), None);
        assert_eq!(parse_duration_ms("99999999999999999999"), None);
    }

    #[test]
    fn kinds() {
        assert_eq!(kind_of("ws-connect-timeout"), DirectiveKind::WsConnectTimeout);
        assert_eq!(kind_of("noRedirect"), DirectiveKind::NoRedirect);
        assert_eq!(kind_of("prompt"), DirectiveKind::Prompt);
        assert_eq!(kind_of("nmae"), DirectiveKind::Unknown);
    }
}
