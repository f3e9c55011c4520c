//! Runs the corpus in `test/corpus/` with the tree-sitter runtime, so the grammar's
//! tests run in `cargo test` without the tree-sitter CLI. The format is the CLI's:
//! a `===` header with the test name, the input, a `---` line, the expected tree.

use std::fmt::Write as _;
use std::path::Path;

struct Case {
    file: String,
    name: String,
    input: String,
    expected: String,
}

fn read_cases(dir: &Path) -> Vec<Case> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("test/corpus exists")
        .map(|entry| entry.expect("readable directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "txt"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("corpus files are UTF-8");
        let file = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let mut index = 0;
        while index < lines.len() {
            if !is_rule(lines[index]) {
                index += 1;
                continue;
            }
            let name = lines[index + 1].trim().to_owned();
            assert!(is_rule(lines[index + 2]), "{file}: header of `{name}` is not closed");
            let mut end = index + 3;
            while end < lines.len() && !is_rule(lines[end]) {
                end += 1;
            }
            let body: String = lines[index + 3..end].concat();
            let divider = body.rfind("\n---\n").or_else(|| body.starts_with("---\n").then_some(0));
            let divider = divider.unwrap_or_else(|| panic!("{file}: `{name}` has no `---` line"));
            let (input, expected) = if divider == 0 && body.starts_with("---\n") {
                ("", &body[4..])
            } else {
                (&body[..divider], &body[divider + 5..])
            };
            cases.push(Case { file: file.clone(), name, input: input.to_owned(), expected: expected.to_owned() });
            index = end;
        }
    }
    cases
}

fn is_rule(line: &str) -> bool {
    let line = line.trim_end();
    line.len() >= 3 && line.bytes().all(|byte| byte == b'=')
}

fn normalize(sexp: &str) -> String {
    sexp.split_whitespace().collect::<Vec<_>>().join(" ").replace("( ", "(").replace(" )", ")")
}

#[test]
fn corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test/corpus");
    let cases = read_cases(&dir);
    assert!(cases.len() >= 80, "the corpus has {} cases; it should keep at least 80", cases.len());
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&tree_sitter_volley_http::LANGUAGE.into()).expect("the grammar and the runtime share an ABI");
    let mut failures = String::new();
    for case in &cases {
        let tree = parser.parse(&case.input, None).expect("parsing succeeds");
        let actual = normalize(&tree.root_node().to_sexp());
        let expected = normalize(&case.expected);
        if actual != expected {
            let _ =
                writeln!(failures, "{} / {}:\n  expected: {expected}\n  actual:   {actual}\n", case.file, case.name);
        }
    }
    assert!(failures.is_empty(), "corpus mismatches:\n{failures}");
}
