//! Resolvers: `{{$name(args)}}` — the built-ins (ours, REST Client's and JetBrains'),
//! custom functions given to the client, and command resolvers from the configuration.

pub(crate) mod builtin;
mod command;
mod datetime;
mod random;

use std::fmt;
use std::future::Future;
use std::ops::Range;
use std::sync::Arc;

pub use command::{CommandResolver, DEFAULT_COMMAND_TIMEOUT};

use volley_syntax::{Part, Template};

use crate::transport::BoxFuture;

/// A built-in resolver as editors show it (aliases included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuiltinResolver {
    /// The name without `$`.
    pub name: &'static str,
    /// The parameter list as documentation writes it (`(min, max)`).
    pub parameters: &'static str,
    /// The argument counts it takes (several when some are optional).
    pub arities: &'static [usize],
    /// One-line documentation (Markdown).
    pub doc: &'static str,
}

/// What Volley makes of a resolver name, as editors explain it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KnownResolver {
    /// A built-in (its documentation).
    Builtin(BuiltinResolver),
    /// JetBrains' `$env.NAME`: the environment variable `NAME`.
    EnvironmentVariable(String),
    /// A resolver of another tool that Volley refuses by name: why, and what to do
    /// instead.
    Refused {
        /// Why it is refused (names the tool).
        message: String,
        /// What to write instead.
        instead: String,
    },
}

/// What `name` (without `$`) is to Volley apart from the configuration's command
/// resolvers; `None` for a name it does not know.
#[must_use]
pub fn known_resolver(name: &str) -> Option<KnownResolver> {
    if let Some(builtin) = builtin_resolvers().find(|resolver| resolver.name == name) {
        return Some(KnownResolver::Builtin(builtin));
    }
    if builtin::is_builtin(name) {
        let variable = name.split_once('.').map_or(name, |(_, variable)| variable);
        return Some(KnownResolver::EnvironmentVariable(variable.to_owned()));
    }
    builtin::refusal(name).map(|(message, instead)| KnownResolver::Refused { message, instead })
}

/// Every built-in resolver, aliases included, in documentation order.
pub fn builtin_resolvers() -> impl Iterator<Item = BuiltinResolver> {
    builtin::names().map(|name| BuiltinResolver {
        name,
        parameters: builtin::signature(name),
        arities: builtin::expected_arguments(name).unwrap_or(&[0]),
        doc: builtin::doc(name),
    })
}

/// What a resolver returns: the value, or why it has none.
pub type ResolverResult = Result<String, Box<dyn std::error::Error + Send + Sync>>;

/// A function behind `{{$name(args)}}`. Arguments arrive after their own `{{ }}` are
/// substituted, one string per argument (a JSON-array argument arrives as its
/// elements). Build one with [`resolver`] or [`async_resolver`].
pub trait Resolver: Send + Sync {
    /// Computes the value for `arguments`.
    fn resolve(&self, arguments: Vec<String>) -> BoxFuture<'_, ResolverResult>;
}

impl fmt::Debug for dyn Resolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Resolver")
    }
}

struct SyncResolver<F>(F);

impl<F> Resolver for SyncResolver<F>
where
    F: Fn(&[String]) -> ResolverResult + Send + Sync,
{
    fn resolve(&self, arguments: Vec<String>) -> BoxFuture<'_, ResolverResult> {
        let result = (self.0)(&arguments);
        Box::pin(std::future::ready(result))
    }
}

struct AsyncResolver<F>(F);

impl<F, Fut> Resolver for AsyncResolver<F>
where
    F: Fn(Vec<String>) -> Fut + Send + Sync,
    Fut: Future<Output = ResolverResult> + Send + 'static,
{
    fn resolve(&self, arguments: Vec<String>) -> BoxFuture<'_, ResolverResult> {
        Box::pin((self.0)(arguments))
    }
}

/// A resolver from a function.
///
/// ```
/// use volley_engine::resolvers::resolver;
///
/// let shout = resolver(|arguments| Ok(arguments.join(" ").to_uppercase()));
/// ```
pub fn resolver<F>(function: F) -> Arc<dyn Resolver>
where
    F: Fn(&[String]) -> ResolverResult + Send + Sync + 'static,
{
    Arc::new(SyncResolver(function))
}

/// A resolver from an async function (a token fetched over the network, a vault read).
///
/// ```
/// use volley_engine::resolvers::async_resolver;
///
/// let token = async_resolver(|arguments| async move { Ok(format!("token-for-{}", arguments.join(","))) });
/// ```
pub fn async_resolver<F, Fut>(function: F) -> Arc<dyn Resolver>
where
    F: Fn(Vec<String>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ResolverResult> + Send + 'static,
{
    Arc::new(AsyncResolver(function))
}

pub use volley_model::environment::Environment;

/// How the space-separated words of `{{$name a b c}}` make arguments: each word is one,
/// except that a word opening a single quote (`'DD MMM`) runs through the word that
/// closes it (`YYYY'`), as REST Client reads `{{$datetime 'DD MMM YYYY'}}`. An unclosed
/// quote leaves the words as they are.
pub(crate) fn word_groups(words: &[Template]) -> Vec<Range<usize>> {
    fn text(part: Option<&Part>) -> Option<&str> {
        match part {
            Some(Part::Text(text)) => Some(text.value.as_str()),
            _ => None,
        }
    }
    let opens = |word: &Template| text(word.parts.first()).is_some_and(|first| first.starts_with('\''));
    let closes = |word: &Template| text(word.parts.last()).is_some_and(|last| last.ends_with('\''));
    // `'x'` and `'{{a}}'` close themselves; `'` alone opens.
    let closes_itself = |word: &Template| {
        closes(word) && (word.parts.len() > 1 || text(word.parts.last()).is_some_and(|t| t.len() > 1))
    };
    let mut groups = Vec::with_capacity(words.len());
    let mut index = 0;
    while index < words.len() {
        let end = if opens(&words[index]) && !closes_itself(&words[index]) {
            (index + 1..words.len()).find(|&next| closes(&words[next])).unwrap_or(index)
        } else {
            index
        };
        groups.push(index..end + 1);
        index = end + 1;
    }
    groups
}

/// The arguments of a word group once each word is rendered: the words joined by as
/// many spaces as separated them, without the single quotes around a quoted group.
pub(crate) fn join_words(words: &[Template], rendered: &[String], group: Range<usize>) -> String {
    let mut joined = String::new();
    for index in group.clone() {
        if index > group.start {
            let gap = words[index].span.start.saturating_sub(words[index - 1].span.end).max(1);
            joined.extend(std::iter::repeat_n(' ', gap));
        }
        joined.push_str(&rendered[index]);
    }
    match joined.strip_prefix('\'').and_then(|rest| rest.strip_suffix('\'')) {
        Some(inner) if joined.len() >= 2 => inner.to_owned(),
        _ => joined,
    }
}

#[cfg(test)]
mod tests {
    use volley_syntax::{Arguments, Expression};

    use super::*;

    /// The word groups of the first resolver call of `GET http://h/{{…}}`, as the
    /// literal text of each group's words.
    fn groups(call: &str) -> Vec<String> {
        let document = volley_syntax::parse(&format!("GET http://h/{call}\n"));
        let request = document.requests().next().expect("a request");
        let Some(Part::Interpolation(interpolation)) = request.url.parts.last() else { panic!("{call}") };
        let Some(Expression::Resolver(resolver)) = &interpolation.expression else { panic!("{call}") };
        let Arguments::Words(words) = &resolver.arguments else { panic!("{call}: {:?}", resolver.arguments) };
        let rendered: Vec<String> = words.iter().map(Template::to_source).collect();
        word_groups(words).into_iter().map(|group| join_words(words, &rendered, group)).collect()
    }

    #[test]
    fn single_quotes_join_words_and_go_away() {
        assert_eq!(groups("{{$datetime 'DD MMM  YYYY' -1 d}}"), ["DD MMM  YYYY", "-1", "d"], "spaces kept");
        assert_eq!(groups("{{$datetime 'YYYY-MM-DD'}}"), ["YYYY-MM-DD"]);
        assert_eq!(groups("{{$datetime \"DD MM\" 1 y}}"), ["DD MM", "1", "y"]);
        assert_eq!(groups("{{$datetime ' HH' x}}"), [" HH", "x"], "a lone quote opens");
        assert_eq!(groups("{{$x 'open and never closed}}"), ["'open", "and", "never", "closed"]);
        assert_eq!(groups("{{$x '{{a}} b' c}}"), ["{{a}} b", "c"]);
        assert_eq!(groups("{{$x it's ok}}"), ["it's", "ok"]);
    }
}
