//! JSONPath (RFC 9535) queries, read by `serde_json_path` once their nesting is bounded:
//! its parser backtracks, so the time to read a path about doubles with each level of
//! brackets or parentheses nested in it (a path of 253 bytes took 14 seconds; found by
//! the `jsonpath` fuzz target).

use serde_json_path::JsonPath;

/// The deepest a JSONPath may nest brackets and parentheses (`$.a[?@.b[?length(@.c) > 1]]`
/// nests 3): far more than paths people write, little enough to read in milliseconds.
pub const MAX_JSONPATH_NESTING: usize = 8;

/// `path`, read; or why it cannot be (nested too deeply, or not a JSONPath). Every
/// JSONPath Volley reads goes through here (assertions, chained responses, token paths).
pub fn parse_json_path(path: &str) -> Result<JsonPath, String> {
    let depth = nesting(path);
    if depth > MAX_JSONPATH_NESTING {
        return Err(format!(
            "its brackets and parentheses nest {depth} deep, more than the {MAX_JSONPATH_NESTING} a JSONPath may"
        ));
    }
    JsonPath::parse(path).map_err(|error| error.to_string())
}

/// How deep `[` and `(` nest in `path`, outside quoted names and strings (an unclosed
/// one counts as open to the end).
fn nesting(path: &str) -> usize {
    let (mut depth, mut deepest) = (0_usize, 0_usize);
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for character in path.chars() {
        match quote {
            Some(_) if escaped => escaped = false,
            Some(_) if character == '\\' => escaped = true,
            Some(open) if character == open => quote = None,
            Some(_) => {}
            None => match character {
                '\'' | '"' => quote = Some(character),
                '[' | '(' => {
                    depth += 1;
                    deepest = deepest.max(depth);
                }
                ']' | ')' => depth = depth.saturating_sub(1),
                _ => {}
            },
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_counts_brackets_and_parentheses_outside_strings() {
        assert_eq!(nesting("$.a.b"), 0);
        assert_eq!(nesting("$.a[0][1]['x']"), 1);
        assert_eq!(nesting("$.a[?@.b[?length(@.c) > 1]]"), 3);
        assert_eq!(nesting(r#"$["[[[(" ]"#), 1);
        assert_eq!(nesting(r"$['it\'s [[[']"), 1);
        assert_eq!(nesting("$[?@[?@[?@"), 3);
    }
}
