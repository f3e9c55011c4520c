//! "Did you mean": the closest known name to a misspelt one.

/// The candidate closest to `input` (ASCII case ignored), when it is close enough to be
/// a plausible typo: at most one edit for short names, two for longer ones. Of equally
/// close ones the first in byte order, whatever order they come in: the language server
/// gathers a file's names per chunk, and its hints must not depend on where chunks are
/// cut (they are `volley check`'s).
#[must_use]
pub fn closest<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let input = input.to_ascii_lowercase();
    let limit = if input.chars().count() <= 4 { 1 } else { 2 };
    candidates
        .into_iter()
        .map(|candidate| (edit_distance(&input, &candidate.to_ascii_lowercase()), candidate))
        .filter(|(distance, _)| *distance <= limit)
        .min_by_key(|&(distance, candidate)| (distance, candidate))
        .map(|(_, candidate)| candidate)
}

/// Optimal string alignment distance: insertions, deletions, substitutions and
/// transpositions of neighbours each cost one.
#[must_use]
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    let mut rows = vec![0usize; (a.len() + 1) * width];
    for (j, cell) in rows.iter_mut().enumerate().take(width) {
        *cell = j;
    }
    for i in 1..=a.len() {
        rows[i * width] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[(i - 1) * width + j] + 1)
                .min(rows[i * width + j - 1] + 1)
                .min(rows[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[(i - 2) * width + j - 2] + 1);
            }
            rows[i * width + j] = best;
        }
    }
    rows[a.len() * width + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_typos_and_rejects_strangers() {
        assert_eq!(edit_distance("gett", "get"), 1);
        assert_eq!(edit_distance("psot", "post"), 1);
        assert_eq!(closest("GETT", ["GET", "POST"]), Some("GET"));
        assert_eq!(closest("PSOT", ["GET", "POST"]), Some("POST"));
        assert_eq!(closest("timout", ["timeout", "name"]), Some("timeout"));
        assert_eq!(closest("FETCH", ["GET", "POST", "PATCH"]), Some("PATCH"));
        assert_eq!(closest("banana", ["GET", "POST"]), None);
        // Equally close: the same answer in any order.
        assert_eq!(closest("create", ["creat]e", "Creat"]), Some("Creat"));
        assert_eq!(closest("create", ["Creat", "creat]e"]), Some("Creat"));
    }
}
