//! Keeps `docs/diagnostics.md` in step with the code: every code has a section, every
//! section's example produces its code, and the severity table matches.

use volley_syntax::Code;

const DOC: &str = include_str!("../../../../docs/diagnostics.md");

/// `(code, example)` for every code section (a `## ` heading) and its first `http` code block.
fn sections() -> Vec<(String, String)> {
    let mut sections = Vec::new();
    for part in DOC.split("\n## `").skip(1) {
        let code = part.split('`').next().unwrap_or_default().to_owned();
        let example = part
            .split("```http\n")
            .nth(1)
            .and_then(|rest| rest.split("```").next())
            .unwrap_or_else(|| panic!("section `{code}` has no ```http example"))
            .to_owned();
        sections.push((code, example));
    }
    sections
}

#[test]
fn every_code_is_documented_and_nothing_else() {
    let documented: Vec<String> = sections().into_iter().map(|(code, _)| code).collect();
    let known: Vec<String> = Code::ALL.iter().map(|code| code.as_str().to_owned()).collect();
    assert_eq!(documented, known, "docs/diagnostics.md sections must list Code::ALL in order");
}

#[test]
fn every_example_produces_its_code() {
    for (code, example) in sections() {
        if Code::from_name(&code).is_some_and(Code::is_semantic) {
            continue; // Produced by the engine's analysis: crates/engine/tests/it/analysis.rs.
        }
        let document = volley_syntax::parse(&example);
        // The parser's diagnostics, and the reasons why its requests are refused.
        let mut codes: Vec<&str> = document.diagnostics.iter().map(|diagnostic| diagnostic.code.as_str()).collect();
        for request in document.requests() {
            let refusal = document.refusal_of(request).into_iter().flat_map(volley_syntax::Refusal::into_diagnostics);
            codes.extend(refusal.map(|diagnostic| diagnostic.code.as_str()));
        }
        assert!(codes.contains(&code.as_str()), "the example of `{code}` gives {codes:?}");
    }
}

#[test]
fn the_severity_table_matches() {
    for code in Code::ALL {
        let row = format!("| `{}` | {} |", code.as_str(), code.severity());
        assert!(DOC.contains(&row), "docs/diagnostics.md lacks the row {row}");
    }
}
