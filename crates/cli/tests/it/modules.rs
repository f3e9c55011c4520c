//! Module circles inside a crate: the groups of top-level modules that reach each other
//! through `crate::…` paths (tests aside) are exactly those [`KNOWN`] lists. A new
//! circle, or a module that joins one, fails here; a cut that breaks one up fails too,
//! until the list says so, so that it only ever shrinks (docs/ARCHITECTURE.md, "What
//! may depend on what").
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The circles as they stand, by crate: each a group of top-level modules (a file or a
/// directory under `src/`) that reach each other. The debt issue 43 asks to pay off.
const KNOWN: &[(&str, &[&str])] = &[("engine", &["client", "compose", "grpc", "oauth", "prepare"])];

type Graph = BTreeMap<String, BTreeSet<String>>;

/// The top-level modules of a crate's `src/` and the `crate::…` modules each names.
fn module_graph(src: &Path) -> Graph {
    let mut files: BTreeMap<String, Vec<std::path::PathBuf>> = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let relative = path.strip_prefix(src).unwrap();
            let first = relative.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
            let is_test = path.file_name().is_some_and(|name| name == "tests.rs")
                || relative.components().any(|part| part.as_os_str() == "tests");
            if path.extension().is_none_or(|extension| extension != "rs")
                || first == "lib.rs"
                || first == "main.rs"
                || is_test
            {
                continue;
            }
            let module = first.strip_suffix(".rs").unwrap_or(&first).to_owned();
            files.entry(module).or_default().push(path);
        }
    }
    let modules: BTreeSet<String> = files.keys().cloned().collect();
    let mut graph = Graph::new();
    for (module, paths) in &files {
        let named = graph.entry(module.clone()).or_default();
        for path in paths {
            let text = std::fs::read_to_string(path).unwrap();
            // A file's unit tests are not its dependencies, nor are its comments (a doc
            // link names a module without using it).
            let text = text.split("#[cfg(test)]\nmod tests").next().unwrap_or_default();
            let text: String = text
                .lines()
                .filter(|line| !line.trim_start().starts_with("//"))
                .flat_map(|line| [line, "\n"])
                .collect();
            for (at, _) in text.match_indices("crate::") {
                let rest = &text[at + "crate::".len()..];
                let name: String = rest
                    .chars()
                    .take_while(|character| character.is_ascii_alphanumeric() || *character == '_')
                    .collect();
                // `volley_crate::x` is another crate's path.
                let other_crate =
                    text[..at].ends_with(|character: char| character.is_alphanumeric() || character == '_');
                if !other_crate && &name != module && modules.contains(&name) {
                    named.insert(name);
                }
            }
        }
    }
    graph
}

/// The groups of two or more modules that reach each other (strongly connected).
fn circles(graph: &Graph) -> BTreeSet<BTreeSet<String>> {
    let reach = |from: &String| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(module) = stack.pop() {
            for next in graph.get(&module).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<String>> = graph.keys().map(|module| (module, reach(module))).collect();
    let mut groups = BTreeSet::new();
    for (module, reached) in &reaches {
        let group: BTreeSet<String> = reached
            .iter()
            .filter(|other| reaches.get(other).is_some_and(|back| back.contains(*module)))
            .cloned()
            .chain(std::iter::once((*module).clone()))
            .collect();
        if group.len() > 1 {
            groups.insert(group);
        }
    }
    groups
}

#[test]
fn module_circles_are_those_the_list_knows() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut found = BTreeSet::new();
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let dir = entry.unwrap().path();
        let crate_name = dir.file_name().unwrap().to_string_lossy().into_owned();
        if !dir.join("src").is_dir() {
            continue;
        }
        for group in circles(&module_graph(&dir.join("src"))) {
            found.insert((crate_name.clone(), group));
        }
    }
    let known: BTreeSet<(String, BTreeSet<String>)> = KNOWN
        .iter()
        .map(|(name, group)| ((*name).to_owned(), group.iter().map(|module| (*module).to_owned()).collect()))
        .collect();
    let new: Vec<_> = found.difference(&known).collect();
    let gone: Vec<_> = known.difference(&found).collect();
    assert!(
        new.is_empty(),
        "modules that reach each other in a circle, new or grown (cut the edge that closes it): {new:?}"
    );
    assert!(gone.is_empty(), "circles the list knows that are no longer there (take them out of KNOWN): {gone:?}");
}

#[test]
fn circles_are_found_and_chains_are_not() {
    let graph = |edges: &[(&str, &str)]| {
        let mut graph = Graph::new();
        for (from, to) in edges {
            graph.entry((*from).to_owned()).or_default().insert((*to).to_owned());
            graph.entry((*to).to_owned()).or_default();
        }
        graph
    };
    let set = |names: &[&str]| names.iter().map(|name| (*name).to_owned()).collect::<BTreeSet<_>>();
    assert!(circles(&graph(&[("a", "b"), ("b", "c")])).is_empty());
    let found = circles(&graph(&[("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("d", "e"), ("e", "d")]));
    assert_eq!(found, BTreeSet::from([set(&["a", "b", "c"]), set(&["d", "e"])]));
}
