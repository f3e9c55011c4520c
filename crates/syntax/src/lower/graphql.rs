//! GraphQL requests: how a request is known to be one, its body split into query and
//! variables, and the file's fragments joined to the queries that spread them.

use std::collections::{HashMap, HashSet};

use tree_sitter::Node;

use super::body::Line;
use super::{Lowerer, Mark};
use crate::document::{Body, Document, GraphQlBody, Header};
use crate::span::Position;

impl Lowerer<'_> {
    /// httpyac reads a body whose first line starts with `query` or `mutation` as a
    /// GraphQL query.
    pub(super) fn starts_graphql(&self, body: Node<'_>) -> bool {
        let text = self.node_text(body).trim_start();
        ["query", "mutation"].iter().any(|keyword| {
            text.strip_prefix(keyword)
                .is_some_and(|rest| rest.starts_with(|c: char| c.is_whitespace() || c == '{' || c == '('))
        })
    }

    /// A GraphQL body: the query, and the JSON object of variables after its last blank
    /// line when the text there starts with `{` (REST Client, JetBrains, httpyac).
    pub(super) fn graphql_body(
        &mut self,
        node: Node<'_>,
        start: Mark,
        end: Mark,
        lines: &[(usize, usize, Line<'_>)],
    ) -> GraphQlBody {
        let row_mark = |row: usize, offset: usize, column: usize| Mark {
            offset,
            position: Position::new(start.position.line + row as u32, column as u32),
        };
        // The last blank line with query text before it and `{` after it.
        let split = lines.iter().enumerate().rposition(|(row, (_, _, line))| {
            matches!(line, Line::Blank)
                && lines[..row].iter().any(|(_, _, line)| !matches!(line, Line::Blank))
                && lines[row + 1..].iter().find(|(_, _, line)| !matches!(line, Line::Blank)).is_some_and(
                    |(line_start, line_end, _)| self.slice(*line_start, *line_end).trim_start().starts_with('{'),
                )
        });
        let (query, variables) = match split {
            Some(blank) => {
                let last_query = lines[..blank].iter().rposition(|(_, _, line)| !matches!(line, Line::Blank));
                let query_end = last_query.map_or(start, |row| {
                    let (line_start, line_end, _) = lines[row];
                    row_mark(row, line_end, line_end - line_start)
                });
                let first_variable = blank
                    + 1
                    + lines[blank + 1..].iter().position(|(_, _, line)| !matches!(line, Line::Blank)).unwrap_or(0);
                let variables_start = row_mark(first_variable, lines[first_variable].0, 0);
                (self.template_in(node, start, query_end), Some(self.template_in(node, variables_start, end)))
            }
            None => (self.template_in(node, start, end), None),
        };
        let operation_name = operation_name(&query.to_source());
        GraphQlBody { span: self.mark_span(start, end), query, variables, operation_name, fragments: Vec::new() }
    }
}

/// REST Client's `X-Request-Type: GraphQL` marks a GraphQL request; the header itself is
/// not sent. `true` when the headers had it (it is removed).
pub(super) fn take_graphql_marker(headers: &mut Vec<Header>) -> bool {
    let before = headers.len();
    headers.retain(|header| {
        !(header.is_named("x-request-type")
            && header.value.as_literal().is_some_and(|value| value.trim().eq_ignore_ascii_case("graphql")))
    });
    headers.len() != before
}

/// The name of the first named operation of a GraphQL document (`query GetUser(…) {`);
/// `None` when the first operation has no name (`query {`, `{`).
fn operation_name(query: &str) -> Option<String> {
    let is_name_char = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut rest = query;
    loop {
        rest = rest.trim_start();
        if rest.starts_with('#') {
            rest = crate::line_break::split_first_line(rest).map_or("", |(_, after)| after);
            continue;
        }
        let keyword = ["query", "mutation", "subscription"]
            .into_iter()
            .find(|keyword| rest.strip_prefix(keyword).is_some_and(|after| !after.starts_with(is_name_char)))?;
        let after = rest[keyword.len()..].trim_start();
        let name: String = after.chars().take_while(|&c| is_name_char(c)).collect();
        return (!name.is_empty() && !name.starts_with(|c: char| c.is_ascii_digit())).then_some(name);
    }
}

/// Gives every GraphQL body the fragments of the file it spreads (`...Parts`), directly
/// or through other fragments, in the order they are defined. A name defined twice
/// means its first definition.
pub(super) fn spread_fragments(document: &mut Document) {
    let fragments = std::mem::take(&mut document.fragments);
    let mut by_name: HashMap<&str, usize> = HashMap::with_capacity(fragments.len());
    for (index, fragment) in fragments.iter().enumerate() {
        by_name.entry(fragment.name.as_str()).or_insert(index);
    }
    for block in &mut document.blocks {
        let Some(request) = &mut block.request else { continue };
        let Body::GraphQl(graphql) = &mut request.body else { continue };
        // Only the fragments it spreads are visited: the cost follows the query, not the
        // number of fragments in the file.
        let mut used: Vec<usize> = Vec::new();
        let mut seen: HashSet<usize> = HashSet::new();
        let mut pending = vec![graphql.query.to_source()];
        while let Some(text) = pending.pop() {
            for name in spreads(&text) {
                let Some(&index) = by_name.get(name) else { continue };
                if seen.insert(index) {
                    used.push(index);
                    pending.push(fragments[index].text.clone());
                }
            }
        }
        used.sort_unstable();
        graphql.fragments = used.into_iter().map(|index| fragments[index].text.clone()).collect();
    }
    document.fragments = fragments;
}

/// The names spread in a GraphQL text: `Parts` of `...Parts` (not `... on Type`).
fn spreads(text: &str) -> impl Iterator<Item = &str> {
    text.match_indices("...").filter_map(|(at, _)| {
        let rest = text[at + 3..].trim_start();
        let name = &rest[..rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len())];
        (!name.is_empty() && name != "on").then_some(name)
    })
}
