//! The differential test of incremental edits: long random edit sequences (typing,
//! deleting, pasting, undoing, changing line breaks) sent to a document as `didChange`
//! sends them, each compared with the same text opened afresh: the text, the trees, the
//! typed document and the diagnostics with their positions.
//!
//! A run makes 600 edits, a few seconds of `cargo test`. A long hunt, which goes on
//! after a failure and lists every failing seed at its end:
//! `VOLLEY_RANDOM_EDITS=1000000 cargo test --profile bench -p volley-lsp --lib random_edits`
//! (`VOLLEY_RANDOM_EDITS_SEED` starts the seeds elsewhere). A failure prints the
//! shortest failing end of its sequence as a [`REGRESSIONS`] entry to add.

#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use std::fmt::Write as _;
use std::sync::Arc;

use futures_util::FutureExt as _;
use tower_lsp_server::ls_types::{Diagnostic, Position, Range, TextDocumentContentChangeEvent, Uri};
use volley_engine::io::MemoryFs;

use crate::convert;
use crate::diagnostics::{Environment, compute};
use crate::documents::Documents;

mod generate;

use generate::{Inverse, Lines, Random, apply, edit, file};

/// An edit as the wire has it: `(start line, start character, end line, end character)`
/// in UTF-16 units, and the new text.
type Change = ((u32, u32, u32, u32), &'static str);

/// Sequences that failed once: a text opened, then `didChange` notifications of one or
/// more changes each.
const REGRESSIONS: &[(&str, &[&[Change]])] = &[
    // Seed 1000050 of the first long run: an error kept over `{{$rdom(1#,{$>` that a
    // fresh parse reads otherwise (chunk.rs parses a tree with errors afresh).
    (
        "### Get on}rs/{{$rdom(1#,{$> {% clienon/json\rTT{{create.response.body.$.id}}hot(rs/{{id}0}]\r\nGT},/}(r\ns/{t.global.set(1\"id\", responsebody.id); %}\r\nndom(1,10)}}TTP</1ho{s%t},/}(sers,/{{id}}\r\nGET {{hos\"t}$}/users/{{$random(1,10)a}} HTTP//1.1\r\nxET},/}(r\ns/{t.global.set(1\"id\", response\n red\"irec\r\nDELEGET {{host}}/usandom(1,{$random(1,10)}} HContent-Type: application/json\rTT{{Authorization: Bearer {{token}}\n.response.body.$.id}}hot(rs/{{id}0é}]\r\nGET},/}(r\ns/{{id}0}\r\nGET {{hos>t}/uss/{{$random(1,ers/{{$rdom(1#,{$> {% clson\rTT{{create.response.body.$.id}}hot(rs/{{id}0}]\r\nGET},/}(r\ns/{t.global.set(1\"id\", response.body.id); %}\r\nndom(1,10)}}TTP</1ho{s%t},/}(sers,/{{id}}\r\nGET {{host}$}/users/{{$random(1,10)a}} HTTP//1.1\r\nx",
        &[
            &[((0, 19, 1, 19), "😀"), ((18, 33, 18, 35), "")],
            &[((4, 51, 5, 0), "\n\r"), ((11, 31, 11, 31), "0"), ((6, 8, 7, 0), "")],
        ],
    ),
    // Seed 1000115: two request names equally close to `create`; the hint named the
    // first found, which depended on where the chunks were cut (suggest.rs).
    (
        "GET {{host}}/uss/{{create.response.body.$.id}}\r\nAccept: application/json\r\n\r\n### \n# @name creat]e\n# @timeout 5 s\r\nPOST {{host}}/users?id={{$random(1,10)}} HTTP/ &size={{$random(1,10)}}\nAccept: */*\n\n### Login\r\n// a commeant\nGET https://example.com/[items?page=1\r\n    &size={{{$random(1,10)}}\r\nAccept: */*\n\r\n### C1.1\r\nContent-Type: {applicatio$n/json\r\n\r\nAuthorizati on: Bearer {{token}}\r\n\r{\n  \"name\": \"{{$randomInt 1 9}}\",\n  \"tags\": [\"a\", )\"b\"],\r\n  \"n\"\": {{$random(1, 10)}}\r\n}\r\n> {% client.global.set(\"id\", response.body.id); %\r\n{\"n.ame\": \"{{name}}\", \"id😀\": {{$random(1, 10)}}}\r\r}\r\n\r\n### Get one\r// a comment\r\nGET https://examp=1\n    &size={{$random(1,10)}}\nAccept: */*\n\r### Login\r\n// a commeant\nGET https://example.com/[items?page={1\r\n    &size={{{$random(1,10)}}\r\nAccept:/*\n\r\n### Creat\ne user\nGET {{.host}}/users/{{create.response.body.$.id}}\nAccept: application/json\r\n}\r\n### Create user\n\rPUT {{host}}/users/1\rCont-Type: application/json\n\r{\"name\": \"{{name}}\", \"age\": {{$random(18,\r99)}}}\r\n\r\n",
        &[&[((52, 29, 55, 0), "")]],
    ),
];

/// Edits in a run of `cargo test`: a few seconds of a debug build.
const DEFAULT_EDITS: usize = 600;

/// Edits per sequence (a new file after each).
const SEQUENCE_EDITS: usize = 200;

#[test]
fn regressions_match_a_fresh_open() {
    for (index, (text, notifications)) in REGRESSIONS.iter().enumerate() {
        let notifications: Vec<Vec<TextDocumentContentChangeEvent>> =
            notifications.iter().map(|changes| changes.iter().map(|&change| event(change)).collect()).collect();
        if let Err(failure) = replay(text, &notifications) {
            panic!("regression {index}: {failure}");
        }
    }
}

/// Issue 44: the `\r\n` ending a line made a lone `\r` (the `\n` deleted), and the
/// diagnostics of the blocks after it; then the same break named with a character past
/// the end of its line, which LSP clamps to the line's end (the whole break goes).
#[test]
fn a_line_break_made_a_lone_carriage_return_keeps_later_diagnostics_in_place() {
    let text =
        "GET https://example.com/a\r\nX-A: 1\r\n\r\n###\r\nGET https://example.com/{{\r\n###\r\nGET {{$nope()}}\r\n";
    for change in [((0, 25, 1, 0), "\r"), ((0, 26, 1, 0), ""), ((0, 25, 0, 99), "\r")] {
        replay(text, &[vec![event(change)]]).unwrap();
    }
}

#[test]
fn random_edits_match_a_fresh_open() {
    let total: usize =
        std::env::var("VOLLEY_RANDOM_EDITS").ok().and_then(|value| value.parse().ok()).unwrap_or(DEFAULT_EDITS);
    let first_seed: u64 =
        std::env::var("VOLLEY_RANDOM_EDITS_SEED").ok().and_then(|value| value.parse().ok()).unwrap_or(1);
    let started = std::time::Instant::now();
    let mut done = 0;
    let mut seed = first_seed;
    let mut failed = Vec::new();
    while done < total {
        let edits = SEQUENCE_EDITS.min(total - done);
        match sequence(seed, edits) {
            Ok(()) => done += edits,
            Err((made, failure)) => {
                eprintln!("seed {seed}, edit {made}: {failure}");
                failed.push(seed);
                done += made;
            }
        }
        seed += 1;
        if (seed - first_seed).is_multiple_of(500) {
            eprintln!(
                "random edits: {done} edits so far, {:.0} s, {} failed",
                started.elapsed().as_secs_f64(),
                failed.len()
            );
        }
    }
    eprintln!(
        "random edits: {done} edits in {} sequences (seeds {first_seed}..{seed}) in {:.1} s, {} failed",
        seed - first_seed,
        started.elapsed().as_secs_f64(),
        failed.len()
    );
    assert!(failed.is_empty(), "seeds {failed:?} differ from a fresh open (their sequences are printed above)");
}

/// One random sequence: a file, then `edits` edits; on a mismatch, the edits made and
/// the shortest failing end of the sequence, written as a [`REGRESSIONS`] entry.
fn sequence(seed: u64, edits: usize) -> Result<(), (usize, String)> {
    let mut random = Random::new(seed);
    let text = file(&mut random);
    let server = Server::open(&text);
    let mut texts = vec![text];
    let mut notifications: Vec<Vec<TextDocumentContentChangeEvent>> = Vec::new();
    let mut undo: Vec<Inverse> = Vec::new();
    for step in 0..edits {
        let mut current = texts.last().unwrap().clone();
        let count = if random.below(12) == 0 { 2 + random.below(2) } else { 1 };
        let mut changes = Vec::with_capacity(count);
        for _ in 0..count {
            let change = edit(&mut random, &current, &mut undo);
            apply(&mut current, &change);
            changes.push(change);
        }
        let version = i32::try_from(step).unwrap() + 2;
        let checked = caught(|| server.change(version, &changes).and_then(|()| server.check(&current)));
        notifications.push(changes);
        texts.push(current);
        if let Err(failure) = checked {
            return Err((step + 1, format!("{failure}\n{}", shortest(&texts, &notifications))));
        }
    }
    Ok(())
}

/// The shortest end of a failing sequence that still fails (replayed from the text
/// before it, opened afresh), as a [`REGRESSIONS`] entry.
fn shortest(texts: &[String], notifications: &[Vec<TextDocumentContentChangeEvent>]) -> String {
    let last = notifications.len();
    let from = (0..last).rev().find(|&from| replay(&texts[from], &notifications[from..]).is_err()).unwrap_or(0);
    let mut entry = format!("    (\n        {:?},\n        &[\n", texts[from]);
    for changes in &notifications[from..] {
        entry.push_str("            &[");
        for change in changes {
            let range = change.range.unwrap();
            let _ = write!(
                entry,
                "(({}, {}, {}, {}), {:?}), ",
                range.start.line, range.start.character, range.end.line, range.end.character, change.text
            );
        }
        entry.push_str("],\n");
    }
    entry.push_str("        ],\n    ),\n");
    format!("shortest failing sequence ({} notifications), for REGRESSIONS:\n{entry}", last - from)
}

/// Opens `text`, sends `notifications` and checks after each.
fn replay(text: &str, notifications: &[Vec<TextDocumentContentChangeEvent>]) -> Result<(), String> {
    let server = Server::open(text);
    let mut current = text.to_owned();
    for (version, changes) in (2..).zip(notifications) {
        for change in changes {
            apply(&mut current, change);
        }
        caught(|| server.change(version, changes).and_then(|()| server.check(&current)))?;
    }
    Ok(())
}

/// The result of `check`, a panic in it made a failure: the hunt goes on, and the
/// sequence that panicked is shortened like any other.
fn caught(check: impl FnOnce() -> Result<(), String>) -> Result<(), String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(check)).unwrap_or_else(|panic| {
        let message = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|message| (*message).to_owned()))
            .unwrap_or_default();
        Err(format!("panicked: {message}"))
    })
}

fn event(((start_line, start_character, end_line, end_character), text): Change) -> TextDocumentContentChangeEvent {
    TextDocumentContentChangeEvent {
        range: Some(Range::new(Position::new(start_line, start_character), Position::new(end_line, end_character))),
        range_length: None,
        text: text.to_owned(),
    }
}

/// One open document of the language server's document map, and what its checks need.
struct Server {
    documents: Documents,
    engine: volley_engine::Client,
    uri: Uri,
}

impl Server {
    fn open(text: &str) -> Server {
        let server = Server { documents: Documents::new(MemoryFs::new()), engine: engine(), uri: uri() };
        server.documents.open(&server.uri, 1, text.to_owned());
        server
    }

    fn change(&self, version: i32, changes: &[TextDocumentContentChangeEvent]) -> Result<(), String> {
        if self.documents.change(&self.uri, version, changes) { Ok(()) } else { Err("the document is not open".into()) }
    }

    /// Compares the document with `expected` (the text the edits make, as the client
    /// applies them) opened afresh in another document map.
    fn check(&self, expected: &str) -> Result<(), String> {
        let edited = self.documents.snapshot(&self.uri).now_or_never().flatten().ok_or("no snapshot")?;
        let text = edited.rope.to_string();
        if text != expected {
            return Err(format!("the text is {text:?}, the client has {expected:?}"));
        }
        let tree = self.documents.tree(&self.uri).ok_or("no tree")?;
        if let Some((index, kept, fresh)) = tree.trees_unlike_a_fresh_parse().into_iter().next() {
            return Err(format!(
                "in {expected:?}, chunk {index} kept the tree\n{kept}\nwhere a fresh parse gives\n{fresh}"
            ));
        }
        let parsed = volley_syntax::parse(expected);
        if tree.document() != parsed {
            return Err(format!("the typed document of {expected:?} is not a fresh parse's"));
        }
        let lines = Lines::of(expected);
        for placed in &edited.model.parts {
            let (line, column) = lines.line_and_byte_column(placed.start);
            if (placed.start_position.line, placed.start_position.column) != (line, column) {
                return Err(format!(
                    "in {expected:?}, the part at byte {} is placed at {:?}, the client counts {line}:{column}",
                    placed.start, placed.start_position
                ));
            }
        }
        let fresh = Server::open(expected);
        let opened = fresh.documents.snapshot(&fresh.uri).now_or_never().flatten().ok_or("no snapshot")?;
        // Every layer's line breaks are the client's: the rope's positions, and the
        // syntax crate's of every diagnostic.
        for diagnostic in &parsed.diagnostics {
            let span = diagnostic.span;
            for (offset, position) in [(span.start, span.start_position), (span.end, span.end_position)] {
                let (line, column) = lines.line_and_byte_column(offset);
                if (position.line, position.column) != (line, column) {
                    return Err(format!(
                        "in {expected:?}, byte {offset} is at {position:?}, the client counts {line}:{column}"
                    ));
                }
                let client = lines.position(expected, offset);
                let rope = convert::position(&opened.rope, offset);
                if rope != client {
                    return Err(format!(
                        "in {expected:?}, the rope puts byte {offset} at {rope:?}, the client at {client:?}"
                    ));
                }
            }
        }
        let environment = Environment::default();
        let incremental = compute(&edited, &self.engine, &environment);
        let afresh = compute(&opened, &fresh.engine, &environment);
        // Past 200 diagnostics of one code in a chunk, the analysis lists them per chunk
        // (the engine's `Listing`), so which are listed depends on where chunks are cut,
        // and an edited document's are cut where its edits left them: not compared.
        let capped = |diagnostics: &[Diagnostic]| {
            diagnostics.iter().any(|diagnostic| diagnostic.message.contains(" are not listed"))
        };
        if incremental != afresh && !capped(&incremental) && !capped(&afresh) {
            return Err(format!(
                "in {expected:?}, the diagnostics after the edits are\n{}\nthose of a fresh open\n{}",
                summary(&incremental),
                summary(&afresh)
            ));
        }
        Ok(())
    }
}

fn summary(diagnostics: &[Diagnostic]) -> String {
    diagnostics
        .iter()
        .map(|diagnostic| {
            let range = diagnostic.range;
            format!(
                "  {}:{}-{}:{} {:?} {:?} {:?}",
                range.start.line,
                range.start.character,
                range.end.line,
                range.end.character,
                diagnostic.severity,
                diagnostic.code,
                diagnostic.message
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn engine() -> volley_engine::Client {
    volley_engine::Client::new(volley_engine::ClientConfig {
        io: Arc::new(MemoryFs::new()),
        ..volley_engine::ClientConfig::default()
    })
}

fn uri() -> Uri {
    "file:///project/api.http".parse().unwrap()
}
