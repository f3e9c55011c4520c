//! Module circles inside a crate: the groups of top-level modules that reach each other
//! through `crate::…` paths and calls of methods spread over modules (tests aside) are
//! exactly those [`KNOWN`] lists. A new
//! circle, or a module that joins one, fails here; a cut that breaks one up fails too,
//! until the list says so, so that it only ever shrinks (docs/ARCHITECTURE.md, "What
//! may depend on what").
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The circles as they stand, by crate: each a group of top-level modules (a file or a
/// directory under `src/`) that reach each other. None is left: the engine's last one
/// (`client`, `compose`, `grpc`, `oauth`, `prepare`) was cut by taking what a prepared
/// request is into `prepared` and the running of a request into `run`.
const KNOWN: &[(&str, &[&str])] = &[];

type Graph = BTreeMap<String, BTreeSet<String>>;

/// The top-level modules of a crate's `src/` and the modules each depends on: those it
/// names through `crate::…` paths, and those whose methods it calls on a type whose
/// methods are spread over several modules (the engine's `Client`, written as
/// `impl Client` blocks in each part): a call `self.prepare_request(…)` or
/// `client.exchange(…)` depends on the module that defines that method as much as a
/// path does. Method names defined more than once in the crate are left out, so the
/// second kind is a lower bound.
fn module_graph(src: &Path) -> Graph {
    let texts = module_texts(src);
    let modules: BTreeSet<String> = texts.keys().cloned().collect();
    let methods = spread_methods(&texts);
    let mut graph = Graph::new();
    for (module, text) in &texts {
        let named = graph.entry(module.clone()).or_default();
        for (at, _) in text.match_indices("crate::") {
            let name = identifier(&text[at + "crate::".len()..]);
            // `volley_crate::x` is another crate's path.
            let other_crate = text[..at].ends_with(|character: char| character.is_alphanumeric() || character == '_');
            if !other_crate && &name != module && modules.contains(&name) {
                named.insert(name);
            }
        }
        for receiver in ["self.", "client."] {
            for (at, _) in text.match_indices(receiver) {
                let before = text[..at].chars().next_back();
                if before.is_some_and(|character| character.is_alphanumeric() || character == '_') {
                    continue;
                }
                let rest = &text[at + receiver.len()..];
                let name = identifier(rest);
                let called = rest[name.len()..].starts_with('(') || rest[name.len()..].starts_with("::<");
                if let Some(defined) = methods.get(&name).filter(|defined| called && *defined != module) {
                    named.insert(defined.clone());
                }
            }
        }
    }
    graph
}

/// The text of each top-level module (its files joined), without unit tests and
/// comments: a file's unit tests are not its dependencies, nor are its comments (a doc
/// link names a module without using it).
fn module_texts(src: &Path) -> BTreeMap<String, String> {
    let mut texts: BTreeMap<String, String> = BTreeMap::new();
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
            let text = std::fs::read_to_string(&path).unwrap();
            let text = text.split("#[cfg(test)]\nmod tests").next().unwrap_or_default();
            let joined = texts.entry(module).or_default();
            for line in text.lines().filter(|line| !line.trim_start().starts_with("//")) {
                joined.push_str(line);
                joined.push('\n');
            }
        }
    }
    texts
}

/// The methods of types whose inherent `impl` blocks stand in more than one module, by
/// name, with the module that defines each; a name defined twice in the crate is left
/// out (a call could not be told apart).
fn spread_methods(texts: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let mut by_type: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for (module, text) in texts {
        // Methods (of any type or trait) stand four spaces in; a free function of the
        // same name is no method and cannot be called on `self`.
        for line in text.lines() {
            if let Some(signature) = line.strip_prefix("    ")
                && signature.starts_with(['f', 'p', 'a', 'c'])
                && let Some(name) = signature.split("fn ").nth(1).map(identifier)
                && !name.is_empty()
            {
                *counts.entry(name).or_default() += 1;
            }
        }
        let mut current: Option<String> = None;
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("impl ")
                && !rest.contains(" for ")
                && rest.trim_end().ends_with('{')
            {
                // `impl Client {` or `impl crate::client::Client {`: the type's own name.
                let path = rest.split([' ', '{', '<']).next().unwrap_or_default();
                current = Some(identifier(path.rsplit("::").next().unwrap_or_default()));
            } else if line.starts_with('}') {
                current = None;
            } else if let Some(owner) = &current
                && let Some(signature) = line.strip_prefix("    ")
                && !signature.starts_with(' ')
                && let Some(name) = signature.split("fn ").nth(1).map(identifier)
            {
                by_type.entry(owner.clone()).or_default().push((name, module.clone()));
            }
        }
    }
    let mut methods = BTreeMap::new();
    for defined in by_type.values() {
        let spread: BTreeSet<&String> = defined.iter().map(|(_, module)| module).collect();
        if spread.len() < 2 {
            continue;
        }
        for (name, module) in defined {
            if counts.get(name) == Some(&1) {
                methods.insert(name.clone(), module.clone());
            }
        }
    }
    methods
}

/// The identifier `text` starts with.
fn identifier(text: &str) -> String {
    text.chars().take_while(|character| character.is_ascii_alphanumeric() || *character == '_').collect()
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

/// Methods of one type written in two modules that call each other make a circle no
/// path shows; a method name defined twice in the crate is not counted.
#[test]
fn calls_of_methods_spread_over_modules_are_edges() {
    let src = std::env::temp_dir().join(format!("volley-modules-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&src);
    std::fs::create_dir_all(src.join("b")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod a;\nmod b;\nmod c;\n").unwrap();
    std::fs::write(
        src.join("a.rs"),
        "pub struct State;\n\nimpl State {\n    pub(crate) fn run(&self) {\n        self.prepare();\n    }\n}\n",
    )
    .unwrap();
    std::fs::write(
        src.join("b/mod.rs"),
        "impl crate::a::State {\n    pub(crate) async fn prepare(&self) {\n        self.run();\n        self.len();\n    }\n}\n",
    )
    .unwrap();
    std::fs::write(
        src.join("c.rs"),
        "impl Other {\n    fn len(&self) -> usize {\n        // self.run() in a comment is no call\n        0\n    }\n}\nimpl State {\n    fn len(&self) {}\n}\n",
    )
    .unwrap();
    let graph = module_graph(&src);
    std::fs::remove_dir_all(&src).unwrap();
    let set = |names: &[&str]| names.iter().map(|name| (*name).to_owned()).collect::<BTreeSet<_>>();
    assert_eq!(graph["a"], set(&["b"]), "{graph:?}");
    assert_eq!(graph["b"], set(&["a"]), "`len` is defined twice: {graph:?}");
    assert_eq!(graph["c"], set(&[]), "{graph:?}");
    assert_eq!(circles(&graph), BTreeSet::from([set(&["a", "b"])]));
}
