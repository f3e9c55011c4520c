//! Parses the first 400 KiB of a file 20 times on one thread, for counting the
//! instructions of the parser under callgrind:
//! `cargo run --release -p volley-syntax --features mimalloc --example parse_profile -- FILE [trees|full]`.
//! `trees` builds the syntax trees only, `full` (the default) the typed document too.

#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: parse_profile FILE [trees|full]");
    let trees_only = match args.next().as_deref() {
        None | Some("full") => false,
        Some("trees") => true,
        Some(other) => panic!("unknown mode `{other}`: trees or full"),
    };
    #[cfg(feature = "mimalloc")]
    #[allow(unsafe_code)] // Before any tree-sitter use, as the function requires.
    // SAFETY: nothing has touched tree-sitter yet in this process.
    unsafe {
        volley_syntax::allocator::use_mimalloc_for_trees();
    }
    let text = std::fs::read_to_string(path).expect("readable UTF-8 file");
    // Below the size at which parsing spreads over threads.
    let text: String = text.chars().take(400 * 1024).collect();
    let start = std::time::Instant::now();
    let mut count = 0;
    for _ in 0..20 {
        count += if trees_only {
            volley_syntax::SyntaxTree::new(&text).chunks().count()
        } else {
            volley_syntax::parse(&text).requests().count()
        };
    }
    eprintln!("{count} {} in {:?}", if trees_only { "chunks" } else { "requests" }, start.elapsed());
}
