//! The hover of a request line: its `# @description`, then the request as it would be
//! sent, resolved by the engine (variables, profile, defaults, file bodies), without
//! sending it. Secrets, sensitive
//! variables and credential headers are hidden by the engine's redaction policy (the
//! prepared request's redactor); requests that use command resolvers are not resolved
//! (a hover must not run programs).

use std::fmt::Write as _;
use std::path::Path;

use volley_engine::RunOptions;
use volley_engine::stages::Exchange;
use volley_syntax::{Document, Expression, Request};

use crate::scope::Scope;

/// The most of a body the preview shows.
const BODY_PREVIEW_BYTES: usize = 2048;

/// Markdown previewing `request` of `document` as it would be sent now.
pub(crate) async fn preview(
    engine: &volley_engine::Client,
    document: &Document,
    request: &Request,
    path: Option<&Path>,
    profile: Option<&str>,
    scope: &Scope,
) -> String {
    let heading = match profile {
        Some(profile) => format!("**Request preview** (profile `{profile}`)"),
        None => "**Request preview**".to_owned(),
    };
    // The request's `# @description` comes first, as written.
    let heading = match &request.description {
        Some(description) if !description.value.trim().is_empty() => {
            format!("{}\n\n{heading}", description.value.trim())
        }
        _ => heading,
    };
    if let Some(name) = command_resolver(request, scope) {
        return format!(
            "{heading}\n\nnot resolved: it uses `${name}`, a command resolver, which runs only when the request is sent"
        );
    }
    // A hover asks no one: a prompt is asked when the request is sent.
    let options = RunOptions::default().profile_or_default(profile).without_prompts();
    let prepared = match volley_engine::stages::prepare_request(engine, document, request, path, &options).await {
        Ok(prepared) => prepared,
        // The engine's errors come with the request's secrets hidden.
        Err(error) => return format!("{heading}\n\ncannot be resolved yet: {error}"),
    };
    // Everything shown goes through the request's redactor; a body before it is cut.
    let redactor = &prepared.redactor;
    let mut text = format!("{} {}\n", prepared.method, redactor.redact(prepared.url.as_str()));
    for (name, value) in redactor.headers(&prepared.headers) {
        let _ = writeln!(text, "{name}: {value}");
    }
    if !prepared.body.is_empty() {
        text.push('\n');
        match std::str::from_utf8(&prepared.body).map(|body| redactor.redact(body)) {
            Ok(body) if body.len() <= BODY_PREVIEW_BYTES => text.push_str(&body),
            Ok(body) => {
                let cut = (0..=BODY_PREVIEW_BYTES).rev().find(|&at| body.is_char_boundary(at)).unwrap_or(0);
                text.push_str(&body[..cut]);
                let _ = write!(text, "\n… ({} bytes in all)", prepared.body.len());
            }
            Err(_) => {
                let _ = write!(text, "({} bytes of binary data)", prepared.body.len());
            }
        }
        text.push('\n');
    }
    let fence = if text.contains("```") { "~~~~" } else { "```" };
    let mut markdown = format!("{heading}\n\n{fence}http\n{text}{fence}");
    match &prepared.exchange {
        Exchange::EventStream => markdown.push_str("\n\nan event stream (SSE)"),
        Exchange::WebSocket { .. } => markdown.push_str("\n\na WebSocket"),
        Exchange::Grpc(_) => markdown.push_str("\n\na gRPC call (the body is its messages, one per line)"),
        Exchange::Http => {}
    }
    let _ = write!(markdown, "\n\ntimeout {} ms", prepared.timeout.as_millis());
    markdown
}

/// The first resolver of the request that may be a command resolver: one of the
/// configuration's, or one Volley does not know (a refused resolver of another tool is
/// left to the engine, which says why).
fn command_resolver(request: &Request, scope: &Scope) -> Option<String> {
    let mut found = None;
    let mut visit = |interpolation: &volley_syntax::Interpolation| {
        // Prompts are left unanswered by the preview itself (`without_prompts`).
        let prompt = |name: &str| volley_engine::prompt::is_prompt(name);
        if let Some(Expression::Resolver(call)) = &interpolation.expression
            && found.is_none()
            && !prompt(&call.name.value)
            && (scope.resolvers.contains(&call.name.value)
                || volley_engine::resolvers::known_resolver(&call.name.value).is_none())
        {
            found = Some(call.name.value.clone());
        }
    };
    request.url.walk(&mut visit);
    for header in &request.headers {
        header.name.walk(&mut visit);
        header.value.walk(&mut visit);
    }
    request.body.for_each_template(&mut |template| template.walk(&mut visit));
    found
}
