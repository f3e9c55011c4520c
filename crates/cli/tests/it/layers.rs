//! The crates depend on each other as docs/ARCHITECTURE.md ("What may depend on what")
//! says, and only so: an edge the map does not list (a crate reaching up, or a new
//! link nobody wrote down) fails here, and so does a listed edge the manifests lost.
//! Test-only dependencies (the echo server as a test server) are not edges.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

type Edges = BTreeSet<(String, String)>;

/// `volley-engine` → `engine`; the grammar's crate by its directory's name.
fn short(name: &str) -> String {
    match name {
        "tree-sitter-volley-http" => "tree-sitter-http".to_owned(),
        other => other.strip_prefix("volley-").unwrap_or(other).to_owned(),
    }
}

/// The edges between the workspace's crates, from `cargo metadata`: normal and build
/// dependencies.
fn manifest_edges(root: &Path) -> (Edges, BTreeSet<String>) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .args(["metadata", "--no-deps", "--format-version", "1", "--offline"])
        .current_dir(root)
        .output()
        .unwrap();
    assert!(output.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&output.stderr));
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let packages = metadata["packages"].as_array().unwrap();
    let members: BTreeSet<String> =
        packages.iter().map(|package| package["name"].as_str().unwrap().to_owned()).collect();
    let mut edges = Edges::new();
    for package in packages {
        let from = short(package["name"].as_str().unwrap());
        for dependency in package["dependencies"].as_array().unwrap() {
            let name = dependency["name"].as_str().unwrap();
            if members.contains(name) && dependency["kind"].as_str() != Some("dev") {
                edges.insert((from.clone(), short(name)));
            }
        }
    }
    (edges, members.iter().map(|name| short(name)).collect())
}

/// The edges the map lists, and the crates it names: lines `a -> b, c` (two to a line,
/// apart by two spaces or more), `a, b -> none`.
fn documented_edges(map: &str) -> (Edges, BTreeSet<String>) {
    let section = map.split("## What may depend on what").nth(1).expect("the section");
    let block = section.split("```").nth(1).expect("its code block");
    let (mut edges, mut named) = (Edges::new(), BTreeSet::new());
    for line in block.lines() {
        let mut rest = line.trim();
        // Two rules on a line: the second starts after the last run of two spaces or more
        // before its `->`.
        let mut rules = Vec::new();
        while let Some(arrow) = rest.find("->") {
            let after = &rest[arrow + 2..];
            let next = after.find("->").map(|second| {
                let before = after[..second].trim_end();
                before.rfind("  ").unwrap_or(before.len())
            });
            let (rule, remaining) = match next {
                Some(end) => (&rest[..arrow + 2 + end], &after[end..]),
                None => (rest, ""),
            };
            rules.push(rule.trim());
            rest = remaining.trim();
        }
        for rule in rules {
            let (from, to) = rule.split_once("->").unwrap();
            for source in from.split(',').map(str::trim) {
                named.insert(source.to_owned());
                for target in to.split(',').map(str::trim).filter(|target| *target != "none") {
                    named.insert(target.to_owned());
                    edges.insert((source.to_owned(), target.to_owned()));
                }
            }
        }
    }
    (edges, named)
}

#[test]
fn crates_depend_on_each_other_as_the_architecture_map_says() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let map = std::fs::read_to_string(root.join("docs/ARCHITECTURE.md")).unwrap();
    let (documented, named) = documented_edges(&map);
    let (actual, crates) = manifest_edges(&root);
    let unlisted: Vec<_> = actual.difference(&documented).collect();
    let lost: Vec<_> = documented.difference(&actual).collect();
    assert!(
        unlisted.is_empty(),
        "dependencies docs/ARCHITECTURE.md does not allow (a crate reaching up, or a new edge to write \
         down in \"What may depend on what\"): {unlisted:?}"
    );
    assert!(lost.is_empty(), "edges docs/ARCHITECTURE.md lists that no manifest has: {lost:?}");
    let unnamed: Vec<_> = crates.iter().filter(|name| !named.contains(*name)).collect();
    assert!(unnamed.is_empty(), "crates the map does not place (give them a line, `-> none` if so): {unnamed:?}");
}

#[test]
fn the_map_reader_reads_two_rules_to_a_line() {
    let map = "## What may depend on what\n```\na  ->  b, c\nd -> e      f, g -> none\n```\n";
    let (edges, named) = documented_edges(map);
    let pairs: Vec<(&str, &str)> = edges.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    assert_eq!(pairs, [("a", "b"), ("a", "c"), ("d", "e")]);
    assert_eq!(named.into_iter().collect::<Vec<_>>(), ["a", "b", "c", "d", "e", "f", "g"]);
}
