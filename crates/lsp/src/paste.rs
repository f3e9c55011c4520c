//! The code action "Convert cURL command to request": on a line that starts a `curl …`
//! command (continued over the following lines that end with `\`), the command read by
//! the engine's parser (`volley_engine::curl::parse_curl`) replaces those lines as a
//! `.http` request. The options it does not convert are named in `# ` comment lines
//! above the request. LSP types are built in `convert.rs`.

pub(crate) use crate::answers::Conversion;
use ropey::Rope;

/// The conversion of the curl command starting on `line` (0-based) of `rope`, when that
/// line starts one the parser reads.
pub(crate) fn conversion(rope: &Rope, line: usize) -> Option<Conversion> {
    if line >= rope.len_lines() {
        return None;
    }
    let first = rope.line(line).to_string();
    let command_start = first.trim_start().strip_prefix("$ ").unwrap_or(first.trim_start());
    let program = command_start.split_whitespace().next().unwrap_or_default();
    if !(program == "curl" || program == "curl.exe") {
        return None;
    }
    let mut command = command_start.to_owned();
    let mut last = line;
    while continues(&rope.line(last).to_string()) && last + 1 < rope.len_lines() {
        last += 1;
        command.push_str(&rope.line(last).to_string());
    }
    let parsed = volley_engine::curl::parse_curl(command.trim_end()).ok()?;
    let start = rope.line_to_byte(line);
    let end = if last + 1 < rope.len_lines() { rope.line_to_byte(last + 1) } else { rope.len_bytes() };
    let mut text = String::new();
    if needs_separator(rope, line) {
        text.push_str("###\n");
    }
    text.push_str(&parsed.to_http());
    // The replaced lines end without a line break only at the end of the text.
    let ends_with_break = rope.len_chars() > 0 && matches!(rope.char(rope.len_chars() - 1), '\n' | '\r');
    if end == rope.len_bytes() && !ends_with_break {
        text.pop();
    }
    Some(Conversion { replace: start..end, text })
}

/// The line (with its line break) ends with a `\` that continues it (or the `^` of
/// Windows `cmd`, the backtick of PowerShell).
fn continues(line: &str) -> bool {
    line.trim_end_matches(['\n', '\r']).ends_with(['\\', '^', '`'])
}

/// The request would join the one above it: the nearest line above that is not blank
/// is neither a comment, a directive nor a `###` separator.
fn needs_separator(rope: &Rope, line: usize) -> bool {
    (0..line).rev().map(|above| rope.line(above).to_string()).find(|text| !text.trim().is_empty()).is_some_and(|text| {
        let text = text.trim_start();
        !text.starts_with('#') && !text.starts_with("//")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn convert(text: &str, line: usize) -> Option<String> {
        let rope = Rope::from_str(text);
        conversion(&rope, line).map(|conversion| {
            let mut result = text.to_owned();
            result.replace_range(conversion.replace, &conversion.text);
            result
        })
    }

    #[test]
    fn replaces_the_command_and_its_continued_lines() {
        let text = "### first\nGET https://h/1\n\ncurl -X POST https://h/2 \\\n  -d 'a=1'\n# after\n";
        assert_eq!(
            convert(text, 3).as_deref(),
            Some(
                "### first\nGET https://h/1\n\n###\n# @no-redirect\nPOST https://h/2\n\
                 Content-Type: application/x-www-form-urlencoded\n\na=1\n# after\n"
            )
        );
        assert_eq!(convert(text, 4), None, "not on the first line of the command");
        assert_eq!(
            convert("### new\n$ curl https://h/\n", 1).as_deref(),
            Some("### new\n# @no-redirect\nGET https://h/\n")
        );
        assert_eq!(convert("curl https://h/", 0).as_deref(), Some("# @no-redirect\nGET https://h/"));
        assert_eq!(convert("curl 'unclosed\n", 0), None);
    }
}
