//! The analysis of a resolver call (`{{$name …}}`): a resolver that is not built in or
//! declared, another tool's that Volley refuses by name, a named OAuth 2.0 configuration
//! that does not exist, and a count of arguments the resolver does not take.

use volley_syntax::{Arguments, Code, Diagnostic, Listing, ResolverCall, Span};

use super::Walker;
use crate::resolvers::builtin::{self, describe_counts, expected_arguments, refusal, signature};
use crate::resolvers::word_groups;

impl Walker<'_> {
    /// The diagnostics of `call`, written at `span` (the whole `{{…}}`).
    pub(super) fn resolver_call(&self, call: &ResolverCall, span: Span, out: &mut Listing) {
        let name = call.name.value.as_str();
        if self.resolvers.contains(name) || self.looping.borrow().iter().any(|set| set.strip_prefix('$') == Some(name))
        {
            return;
        }
        // JetBrains' and Kulala's named OAuth 2.0 configurations: a name written
        // out must be one of the configuration's (a run refuses the request).
        if matches!(name, "auth.token" | "auth.idToken" | "auth.aws") {
            if let [argument] = call.arguments.templates()
                && let Some(id) = argument.as_literal()
                && !self.auth.as_ref().is_some_and(|names| names.contains(id.as_str()))
            {
                let names = self.auth.iter().flatten().copied();
                let hint = match volley_syntax::closest(&id, names) {
                    Some(close) => format!("did you mean `{close}`?"),
                    None => "define it in volley.jsonc `auth` or in http-client.env.json `Security.Auth`".to_owned(),
                };
                out.push(
                    Diagnostic::new(Code::ResolverArguments, span, format!("no auth configuration named `{id}`"))
                        .with_hint(hint),
                );
            }
            return;
        }
        if let Some((message, instead)) = refusal(name) {
            out.push(Diagnostic::new(Code::UnknownResolver, call.name.span, message).with_hint(instead));
            return;
        }
        // httpyac's prompts (`$input`, `$password`, `$pick`): asked when the request runs.
        if crate::prompt::parse(name, "").is_some() {
            return;
        }
        if !builtin::is_builtin(name) {
            let candidates = builtin::names().chain(self.resolvers.iter().copied());
            let mut diagnostic =
                Diagnostic::new(Code::UnknownResolver, call.name.span, format!("unknown resolver `${name}`"));
            diagnostic = match volley_syntax::closest(name, candidates) {
                Some(suggestion) => diagnostic.with_hint(format!("did you mean `${suggestion}`?")),
                None => diagnostic.with_hint(
                    "built-ins: $uuid, $timestamp, $timestampMs, $isoTimestamp, $datetime, $random, $env, \
                     $dotenv, $secret, $basicAuth, $base64 and those of REST Client and JetBrains; custom \
                     ones are declared in volley.jsonc `resolvers`",
                ),
            };
            out.push(diagnostic);
            return;
        }
        let count = match &call.arguments {
            Arguments::Words(words) => Some(word_groups(words).len()),
            other => other.count(),
        };
        if let (Some(count), Some(expected)) = (count, expected_arguments(name))
            && !expected.contains(&count)
        {
            out.push(
                Diagnostic::new(
                    Code::ResolverArguments,
                    span,
                    format!("`${name}` takes {}, got {count}", describe_counts(expected)),
                )
                .with_hint(format!("write `{{{{${name}{}}}}}`", signature(name))),
            );
        }
    }
}
