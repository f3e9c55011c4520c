//! Compiles the generated C parser into the crate.

fn main() {
    let src_dir = std::path::Path::new("src");
    let mut build = cc::Build::new();
    build
        .std("c11")
        .include(src_dir)
        .file(src_dir.join("parser.c"))
        // Generated code: its warnings are not ours to fix.
        .warnings(false);
    // The parser is the hot path of every front end: optimise it even in debug builds,
    // where an unoptimised parser.c makes the test suite several times slower.
    build.opt_level(2);
    build.compile("tree-sitter-volley-http");
    println!("cargo:rerun-if-changed=src/parser.c");
    println!("cargo:rerun-if-changed=src/tree_sitter/parser.h");
}
