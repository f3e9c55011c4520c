//! Edits keep a syntax tree in step with a fresh parse: `cargo +nightly fuzz run edit`.
//! The input is a text, then edits of 4 bytes each (position, length, two bytes to insert).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let split = data.iter().position(|&byte| byte == 0).unwrap_or(data.len());
    let mut text = String::from_utf8_lossy(&data[..split]).into_owned();
    let mut tree = volley_syntax::SyntaxTree::with_chunk_size(&text, 16);
    for edit in data.get(split + 1..).unwrap_or_default().chunks_exact(4) {
        let mut start = usize::from(edit[0]) * text.len() / 256;
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = (start + usize::from(edit[1] % 16)).min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let insert = String::from_utf8_lossy(&edit[2..4]).into_owned();
        text.replace_range(start..end, &insert);
        tree.edit(start..end, &insert).expect("edit on character boundaries");
    }
    assert_eq!(tree.text(), text);
    assert_eq!(tree.document(), volley_syntax::parse(&text));
});
