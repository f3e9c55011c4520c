//! Which requests are refused, and why: the one rule every front end sends by (the CLI,
//! the engine, the language server, the execution server).
//!
//! A request is refused when it has errors of its own (inside its block, except on file
//! variable lines), or when it uses, directly or through other file variables, a file
//! variable declared on a line with errors. An error on a file variable line refuses the
//! requests that use the variable, wherever the line is, and no other request.

use std::collections::{BTreeMap, BTreeSet};

use crate::diagnostic::{Code, Diagnostic};
use crate::document::{Block, Document, Request, VariableDeclaration};
use crate::span::Span;
use crate::template::{Expression, Template};

/// Why a request is not sent: what [`Document::refusal_of`] finds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The request's own errors ([`Document::errors_of`]).
    pub errors: Vec<Diagnostic>,
    /// The file variables it uses that are declared on lines with errors, in the order
    /// the request uses them.
    pub broken_variables: Vec<BrokenVariable>,
}

impl Refusal {
    /// Every reason as a diagnostic: the errors, then one `broken-variable` error per
    /// broken variable, at the place the request uses it.
    pub fn diagnostics(&self) -> impl Iterator<Item = Diagnostic> + '_ {
        self.errors.iter().cloned().chain(self.broken_variables.iter().map(BrokenVariable::diagnostic))
    }

    /// [`Refusal::diagnostics`], collected.
    #[must_use]
    pub fn into_diagnostics(self) -> Vec<Diagnostic> {
        self.diagnostics().collect()
    }

    /// How many reasons there are.
    #[must_use]
    pub fn len(&self) -> usize {
        self.errors.len() + self.broken_variables.len()
    }

    /// `true` when there is no reason (never for a refusal [`Document::refusal_of`] gives).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A use of a file variable whose declaration has errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokenVariable {
    /// The broken variable.
    pub name: String,
    /// The variable the request uses, when it reaches `name` through it
    /// (`@auth = Bearer {{token}}`: `auth` for a broken `token`).
    pub through: Option<String>,
    /// Where the request uses it (directly, or through `through`).
    pub used_at: Span,
    /// The 1-based line of the declaration with errors.
    pub declared_line: u32,
}

impl BrokenVariable {
    /// What is wrong: ``` `auth` uses `token`, declared on line 2, which has errors```.
    #[must_use]
    pub fn message(&self) -> String {
        match &self.through {
            Some(through) => {
                format!("`{through}` uses `{}`, declared on line {}, which has errors", self.name, self.declared_line)
            }
            None => format!("`{}` is declared on line {}, which has errors", self.name, self.declared_line),
        }
    }

    /// The `broken-variable` error at [`BrokenVariable::used_at`].
    #[must_use]
    pub fn diagnostic(&self) -> Diagnostic {
        Diagnostic::new(Code::BrokenVariable, self.used_at, self.message()).with_hint(format!(
            "fix `@{}` on line {}; the requests that do not use it can still be sent",
            self.name, self.declared_line
        ))
    }
}

impl Document {
    /// Why `request` must not be sent, or `None` when it may be: its own errors
    /// ([`Document::errors_of`]) and the broken file variables it uses
    /// ([`Document::broken_variables_of`]).
    #[must_use]
    pub fn refusal_of(&self, request: &Request) -> Option<Refusal> {
        let mut errors: Vec<Diagnostic> = self.errors_of(request).cloned().collect();
        let (_, end) = self.owned_range(request);
        if let Some(first) = self.first_unlisted_error.as_ref().filter(|first| first.span.start < end) {
            errors.push(crate::listing::unlisted_reason(first));
        }
        let broken_variables = self.broken_variables_of(request);
        (!errors.is_empty() || !broken_variables.is_empty()).then_some(Refusal { errors, broken_variables })
    }

    /// The errors that belong to `request`: those inside its block (from its `###` line
    /// to the next), except on file variable lines, which refuse the requests that use
    /// the variable instead ([`Document::broken_variables_of`]).
    pub fn errors_of<'a>(&'a self, request: &'a Request) -> impl Iterator<Item = &'a Diagnostic> {
        let (start, end) = self.owned_range(request);
        // The diagnostics are in source order.
        let first = self.diagnostics.partition_point(|diagnostic| diagnostic.span.start < start);
        self.diagnostics[first..]
            .iter()
            .take_while(move |diagnostic| diagnostic.span.start < end)
            .filter(|diagnostic| diagnostic.is_error() && self.variable_on_line(line(diagnostic)).is_none())
    }

    /// The bytes whose errors belong to `request`: from the start of its block to the
    /// start of the next block (text after the block's last node that the grammar could
    /// not place is still the request's), or to the end of the file.
    fn owned_range(&self, request: &Request) -> (usize, usize) {
        match self.blocks.get(request.block) {
            Some(block) => {
                let end = self.blocks.get(request.block + 1).map_or(usize::MAX, |next| next.span.start);
                (block.span.start, end)
            }
            None => (request.span.start, request.span.end.max(request.span.start + 1)),
        }
    }

    /// The errors no request owns: on file variable lines, before the first request, in
    /// blocks without a request. Every error of the document is either one of these or
    /// in the [`Document::errors_of`] of exactly one request.
    pub fn unowned_errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|diagnostic| {
            diagnostic.is_error()
                && (self.variable_on_line(line(diagnostic)).is_some()
                    || self.owning_block(diagnostic).is_none_or(|block| block.request.is_none()))
        })
    }

    /// The file variables `request` uses (through other file variables too) whose
    /// declaration (the last of its name, the one the engine reads) is on a line with
    /// errors, in the order the request uses them.
    #[must_use]
    pub fn broken_variables_of(&self, request: &Request) -> Vec<BrokenVariable> {
        let broken_declarations: BTreeSet<usize> = self
            .diagnostics
            .iter()
            .filter(|diagnostic| diagnostic.is_error())
            .filter_map(|diagnostic| self.variable_on_line(line(diagnostic)))
            .collect();
        if broken_declarations.is_empty() {
            return Vec::new();
        }
        // The last declaration of each name, with its position among the declarations.
        let declarations: BTreeMap<&str, (usize, &VariableDeclaration)> = self
            .variables
            .iter()
            .enumerate()
            .map(|(position, declaration)| (declaration.name.value.as_str(), (position, declaration)))
            .collect();
        let mut found = Vec::new();
        let mut seen = BTreeSet::new();
        // (a variable, where the request uses it, the variable used there)
        let mut pending: Vec<(String, Span, Option<String>)> = Vec::new();
        request.for_each_template(&mut |template| uses(template, &mut |name, span| pending.push((name, span, None))));
        while let Some((name, used_at, through)) = pending.pop() {
            if !seen.insert(name.clone()) {
                continue;
            }
            let Some(&(position, declaration)) = declarations.get(name.as_str()) else { continue };
            if broken_declarations.contains(&position) {
                let declared_line = declaration.span.start_position.line + 1;
                found.push(BrokenVariable { name: name.clone(), through: through.clone(), used_at, declared_line });
            }
            // What it uses is reported where the request uses it.
            let through = through.unwrap_or(name);
            uses(&declaration.value, &mut |inner, _| pending.push((inner, used_at, Some(through.clone()))));
        }
        found.sort_by_key(|variable| (variable.used_at.start, variable.declared_line));
        found
    }

    /// The position among [`Document::variables`] of the declaration that spans the
    /// 0-based `line`.
    fn variable_on_line(&self, line: u32) -> Option<usize> {
        // Declarations are in file order, so their first lines are sorted.
        let after = self.variables.partition_point(|declaration| declaration.span.start_position.line <= line);
        let position = after.checked_sub(1)?;
        (self.variables[position].span.end_position.line >= line).then_some(position)
    }

    /// The block whose owned range (see `Document::owned_range`) holds the start of
    /// `diagnostic`: the last block that starts at or before it.
    fn owning_block(&self, diagnostic: &Diagnostic) -> Option<&Block> {
        self.block_at(diagnostic.span.start)
    }
}

fn line(diagnostic: &Diagnostic) -> u32 {
    diagnostic.span.start_position.line
}

/// The variable paths of a template (nested resolver arguments included).
fn uses(template: &Template, found: &mut impl FnMut(String, Span)) {
    template.walk(&mut |interpolation| {
        if let Some(Expression::Variable(name)) = &interpolation.expression {
            found(name.value.clone(), name.span);
        }
    });
}

#[cfg(test)]
mod tests {
    use crate::Code;

    /// `plain` has a broken variable in its block that it does not use; `uses` uses it
    /// through `auth`; `direct` uses it directly.
    const TEXT: &str = "@base = http://h\n@auth = Bearer {{token}}\n\n###\n# @name plain\n@token = {{unclosed\nGET {{base}}/a\n\n###\n# @name uses\nGET {{base}}/b\nAuthorization: {{auth}}\n\n###\n# @name direct\nGET {{base}}/c?t={{token}}\nX-Bad header\n";

    #[test]
    fn an_error_on_a_variable_line_refuses_the_requests_that_use_it_and_no_other() {
        let document = crate::parse(TEXT);
        let plain = document.request_named("plain").unwrap();
        assert_eq!(document.errors_of(plain).count(), 0, "the error is on a variable line");
        assert_eq!(document.refusal_of(plain), None);

        let refusal = document.refusal_of(document.request_named("uses").unwrap()).unwrap();
        assert!(refusal.errors.is_empty());
        let diagnostics = refusal.into_diagnostics();
        assert_eq!(diagnostics.len(), 1);
        assert_eq!(diagnostics[0].code, Code::BrokenVariable);
        assert_eq!(diagnostics[0].message, "`auth` uses `token`, declared on line 6, which has errors");
        assert_eq!(&TEXT[diagnostics[0].span.start..diagnostics[0].span.end], "auth");
        assert_eq!(
            diagnostics[0].hint.as_deref(),
            Some("fix `@token` on line 6; the requests that do not use it can still be sent")
        );

        let refusal = document.refusal_of(document.request_named("direct").unwrap()).unwrap();
        let codes: Vec<_> = refusal.diagnostics().map(|diagnostic| diagnostic.code).collect();
        assert_eq!(codes, [Code::MalformedHeader, Code::BrokenVariable], "its own errors first");
        assert_eq!(refusal.broken_variables[0].message(), "`token` is declared on line 6, which has errors");

        let unowned: Vec<_> = document.unowned_errors().map(|diagnostic| diagnostic.code).collect();
        assert_eq!(unowned, [Code::UnclosedVariable]);
    }

    #[test]
    fn only_the_last_declaration_of_a_name_counts() {
        let fixed = crate::parse("@token = {{unclosed\n@token = fine\nGET https://h/{{token}}\n");
        assert_eq!(fixed.refusal_of(fixed.request(0).unwrap()), None);
        let broken = crate::parse("@token = fine\n@token = {{unclosed\nGET https://h/{{token}}\n");
        assert_eq!(broken.broken_variables_of(broken.request(0).unwrap()).len(), 1);
    }

    #[test]
    fn errors_of_a_request_are_those_in_its_block() {
        let document = crate::parse("GET https://a/{{x\n###\nGET https://b\n");
        assert_eq!(document.errors_of(document.request(0).unwrap()).count(), 1);
        assert_eq!(document.errors_of(document.request(1).unwrap()).count(), 0);
        assert_eq!(document.unowned_errors().count(), 0);
    }
}
