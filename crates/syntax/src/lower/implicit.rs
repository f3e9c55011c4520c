//! Requests written one after the other without `###` between them, as httpyac reads
//! them: which lines are request lines, and how the text after one is lowered as
//! requests of their own.

use super::body::line_end_from;
use super::{Block, Lowered, Lowerer, lower_with};
use crate::chunk::Chunk;
use crate::diagnostic::{Code, Diagnostic};
use crate::method::Method;

impl Lowerer<'_> {
    /// Requests written one after the other without `###` (httpyac reads them so): from
    /// `from`, where a request line was found inside the request before it, to `to`,
    /// every line that reads as a request line starts a request of its own. Each such
    /// part is parsed on its own (the same grammar, the same lowering) and placed after
    /// the current block; the current block and request end at `from`. Every byte is
    /// parsed once more at most, so the cost stays linear.
    pub(crate) fn split_requests(&mut self, from: usize, to: usize) {
        let mut starts = vec![from];
        let after_first = self.skip_newline(line_end_from(self.text.as_bytes(), from, to)) - from;
        starts.extend(
            request_line_starts(&self.text.as_bytes()[from..to]).filter(|&at| at >= after_first).map(|at| from + at),
        );
        self.block_end = Some(from);
        // Syntax errors of this text were found in the whole block's tree too: the parts'
        // own parses report them again. One pass, whatever the number of parts.
        let range = self.base + from..self.base + to;
        self.diagnostics
            .retain(|diagnostic| diagnostic.code != Code::SyntaxError || !range.contains(&diagnostic.span.start));
        for (index, &start) in starts.iter().enumerate() {
            let end = starts.get(index + 1).copied().unwrap_or(to);
            let position = self.place(self.lines.position(start));
            let chunk = Chunk::parse(self.slice(start, end));
            let sub = Lowerer::placed(&chunk, self.base + start, position.line, position.column);
            let mut lowered = lower_with(sub, &chunk.tree());
            // One note for the block: a file written without any `###` is read so on purpose.
            if index == 0
                && let Some(request) = lowered.document.blocks.first().and_then(|block| block.request.as_ref())
            {
                lowered.diagnostics.push(
                    Diagnostic::new(
                        Code::RequestLineInBody,
                        request.line_span,
                        "a request line without `###` before it starts a new request",
                    )
                    .with_hint(
                        "so do the request lines after it up to the next `###`; write `###` above each, as \
                         every `.http` tool reads it",
                    ),
                );
            }
            self.implicit.push(lowered);
        }
    }

    /// Appends the blocks of requests split off the block just lowered.
    pub(super) fn place_implicit(&mut self, blocks: &mut Vec<Block>) {
        for Lowered { document, diagnostics } in std::mem::take(&mut self.implicit) {
            let offset = blocks.len();
            for mut block in document.blocks {
                block.index += offset;
                if let Some(request) = &mut block.request {
                    request.block = block.index;
                    request.index = self.next_request_index();
                }
                blocks.push(block);
            }
            self.variables.extend(document.variables.into_iter().map(|mut variable| {
                variable.block += offset;
                variable
            }));
            self.diagnostics.extend(diagnostics);
            self.fragments.extend(document.fragments);
        }
    }
}

/// `true` when a line reads as a request line written where a body is: an upper-case
/// registered method (or `WEBSOCKET`, `GRAPHQL`), spaces, and a target that starts like
/// a URL (`http://`, `https://`, `ws://`, `wss://`, `/` or `{{`), as httpyac splits
/// requests.
pub(crate) fn is_request_line(line: &str) -> bool {
    // Upper-case letters and `-`, then a space: most lines (and every header) fail here,
    // at their first lower-case letter or `:`.
    let bytes = line.as_bytes();
    let method_end = bytes.iter().position(|byte| !(byte.is_ascii_uppercase() || *byte == b'-')).unwrap_or(bytes.len());
    if method_end == 0 || !matches!(bytes.get(method_end), Some(b' ' | b'\t')) {
        return false;
    }
    let (method, rest) = line.trim_end().split_at(method_end);
    let registered = Method::KNOWN.contains(&method)
        || Method::REGISTERED.contains(&method)
        || method == "WEBSOCKET"
        || method == "GRAPHQL";
    let target = rest.trim_start();
    // httpyac writes gRPC calls one after the other too: `GRPC host:port/Service/Method`.
    if method == "GRPC" {
        return !target.is_empty() && !target.starts_with(['{', '[', '"']) || target.starts_with("{{");
    }
    registered && ["http://", "https://", "ws://", "wss://", "/", "{{"].iter().any(|prefix| target.starts_with(prefix))
}

/// The offsets of the lines of `text` that are request lines (see [`is_request_line`]):
/// one pass, each line tested from its first byte (most fail there).
fn request_line_starts(text: &[u8]) -> impl Iterator<Item = usize> + '_ {
    let mut line_start = Some(0);
    std::iter::from_fn(move || {
        while let Some(start) = line_start {
            let line_end = memchr::memchr2(b'\n', b'\r', &text[start..]).map_or(text.len(), |at| start + at);
            line_start = (line_end < text.len()).then_some(line_end + 1);
            if text.get(start).is_some_and(u8::is_ascii_uppercase)
                && std::str::from_utf8(&text[start..line_end]).is_ok_and(is_request_line)
            {
                return Some(start);
            }
        }
        None
    })
}

/// `true` when some line of `text` is a request line: the cheap test that lets plain
/// text bodies skip the line by line reading.
pub(super) fn has_request_line(text: &[u8]) -> bool {
    request_line_starts(text).next().is_some()
}
