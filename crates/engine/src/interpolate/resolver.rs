//! Resolver calls (`{{$name args}}`): their arguments substituted, then the client's
//! custom resolvers, the configuration's command resolvers, OAuth 2.0 tokens, prompts
//! and the built-ins, in that order.

use serde_json::Value;
use volley_syntax::{Arguments, ResolverCall, Span, Spanned};

use super::{Renderer, lookup, text_of};
use crate::error::BuildError;
use crate::resolvers::builtin::{self, BuiltinContext, call_builtin, refusal};
use crate::resolvers::{join_words, word_groups};

impl Renderer<'_> {
    /// The value of a resolver call (`{{$name args}}`): the client's custom resolvers,
    /// the configuration's commands, OAuth 2.0 tokens, prompts, then the built-ins.
    pub(super) async fn resolver(&mut self, call: &ResolverCall, span: Span) -> Result<String, BuildError> {
        let name = call.name.value.as_str();
        let arguments = self.arguments(call).await?;
        let failure = |message: String| BuildError::Resolver { name: name.to_owned(), message, span };
        // What acts, and the clock: a value of the time is taken when the request is
        // sent, not while the request before it may still take long.
        let acts = || {
            self.scope.custom.contains_key(&format!("${name}"))
                || self.scope.commands.contains_key(name)
                || name.starts_with("auth.")
                || builtin::reads_the_clock(name)
        };
        if self.scope.ahead && acts() {
            return Err(self.decline(span));
        }
        if let Some(custom) = self.scope.custom.get(&format!("${name}")) {
            return custom.resolve(arguments).await.map_err(|error| failure(error.to_string()));
        }
        if let Some(command) = self.scope.commands.get(name) {
            return command.run(&arguments, self.scope.environment).await.map_err(failure);
        }
        if matches!(name, "auth.token" | "auth.idToken" | "auth.aws") {
            return self.auth_token(name, &arguments, span).await;
        }
        // httpyac's `{{$index}}` in a `@loop`: the variable `$index` its iteration sets.
        if arguments.is_empty()
            && let Some(value) = self.scope.layers.iter().find_map(|layer| layer.get(&format!("${name}")))
        {
            return Ok(text_of(value));
        }
        if let Some((prompt, once)) = crate::prompt::parse(name, &arguments.join(" ")) {
            if self.scope.ahead {
                return Err(self.decline(span));
            }
            return self.prompted(name, prompt, once, span).await;
        }
        if let Some((message, instead)) = refusal(name) {
            return Err(BuildError::UnsupportedResolver { name: name.to_owned(), message, hint: instead, span });
        }
        match name {
            // REST Client: `{{$shared version}}` in an environment's value is the
            // `$shared` environment's `version`.
            "shared" if self.scope.expand_from.is_some() => {
                if arguments.len() != 1 {
                    return Err(failure("takes one name: `{{$shared name}}`".to_owned()));
                }
                let key = arguments[0].trim().to_owned();
                let shared = self.scope.layers.last().and_then(|layer| lookup(layer, &key, &[key.as_str()]));
                return match shared {
                    Some(Value::String(text)) if text.contains("{{") => {
                        self.expanded(&key, &text, span, "from the environment").await
                    }
                    Some(Value::String(text)) => Ok(text),
                    Some(value) => Ok(value.to_string()),
                    None => Err(failure(format!("`{key}` is not in the `$shared` environment"))),
                };
            }
            "processEnv" => {
                builtin::arity(name, &arguments).map_err(failure)?;
                let key = self.indirect(&arguments[0], span).await?;
                let value = self.scope.environment.get(&key).unwrap_or_default();
                self.reads.push((key, value.clone()));
                return Ok(value);
            }
            "dotenv" => {
                builtin::arity(name, &arguments).map_err(failure)?;
                let key = self.indirect(&arguments[0], span).await?;
                let dotenv = self.scope.dotenv.map_err(|error| failure(error.to_string()))?;
                let value = dotenv.get(&key).map(str::to_owned).ok_or_else(|| {
                    failure(format!("`{key}` is not in any .env file (looked at {})", dotenv.describe_candidates()))
                })?;
                self.reads.push((key, value.clone()));
                return Ok(value);
            }
            "secret" => {
                builtin::arity(name, &arguments).map_err(failure)?;
                let key = &arguments[0];
                let value = if let Some(value) = self.scope.environment.get(key) {
                    value
                } else {
                    let dotenv = self.scope.dotenv.map_err(|error| failure(error.to_string()))?;
                    dotenv.get(key).map(str::to_owned).ok_or_else(|| {
                        failure(format!("`{key}` is set neither in the environment nor in a .env file"))
                    })?
                };
                self.secrets.push(value.clone());
                return Ok(value);
            }
            _ => {}
        }
        let context = BuiltinContext { environment: self.scope.environment, now: None, local_offset: None };
        if let Some(result) = call_builtin(name, &arguments, &context) {
            let value = result.map_err(failure)?;
            // `$env(NAME)` and JetBrains' `$env.NAME`: an environment variable by name.
            if name == "env" {
                self.reads.push((arguments[0].clone(), value.clone()));
            } else if let Some(variable) = name.strip_prefix("env.") {
                self.reads.push((variable.to_owned(), value.clone()));
            }
            return Ok(value);
        }
        let custom = self.scope.custom.keys().map(|key| key.trim_start_matches('$'));
        let commands = self.scope.commands.keys().map(String::as_str);
        let candidates = builtin::names().chain(custom).chain(commands);
        let suggestion = volley_syntax::closest(name, candidates).map(str::to_owned);
        Err(BuildError::UnknownResolver { name: name.to_owned(), suggestion, span })
    }

    /// The answer to a prompt ([`crate::prompt::answer`]), given a variable named as its
    /// label; a password joins the run's secrets.
    async fn prompted(
        &mut self,
        name: &str,
        prompt: crate::prompt::Prompt,
        once: bool,
        span: Span,
    ) -> Result<String, BuildError> {
        let label = prompt.label.as_str();
        let given = self.scope.layers.iter().find_map(|layer| lookup(layer, label, &[label]));
        let asking = crate::prompt::Asking { answers: self.scope.answers, asker: self.scope.prompt, span };
        let answer = crate::prompt::answer(name, &prompt, once, given, asking).await?;
        if prompt.kind == crate::prompt::PromptKind::Password {
            self.secrets.push(answer.clone());
        }
        Ok(answer)
    }

    /// REST Client's `%NAME` argument of `$processEnv` and `$dotenv`: the value of the
    /// variable `NAME`, or `NAME` itself when no variable has that name. Without `%`, the
    /// argument as written.
    async fn indirect(&mut self, argument: &str, span: Span) -> Result<String, BuildError> {
        let Some(name) = argument.strip_prefix('%') else { return Ok(argument.to_owned()) };
        match self.variable(&Spanned::new(name.to_owned(), span)).await {
            Ok(value) => Ok(text_of(&value)),
            Err(BuildError::UndefinedVariable { .. }) => Ok(name.to_owned()),
            Err(error) => Err(error),
        }
    }

    /// The arguments of a call, substituted; a JSON array gives its elements.
    async fn arguments(&mut self, call: &ResolverCall) -> Result<Vec<String>, BuildError> {
        match &call.arguments {
            Arguments::None => Ok(Vec::new()),
            Arguments::List(list) => {
                let mut values = Vec::with_capacity(list.len());
                for argument in list {
                    values.push(self.render(argument).await?);
                }
                Ok(values)
            }
            Arguments::Words(words) => {
                let mut rendered = Vec::with_capacity(words.len());
                for word in words {
                    rendered.push(self.render(word).await?);
                }
                Ok(word_groups(words).into_iter().map(|group| join_words(words, &rendered, group)).collect())
            }
            Arguments::JsonArray(array) => {
                let text = self.render(array).await?;
                match serde_json::from_str::<Value>(&text) {
                    Ok(Value::Array(items)) => Ok(items.iter().map(text_of).collect()),
                    Ok(_) | Err(_) => Err(BuildError::Resolver {
                        name: call.name.value.clone(),
                        message: format!("the argument `{text}` is not a JSON array"),
                        span: array.span,
                    }),
                }
            }
        }
    }
}
