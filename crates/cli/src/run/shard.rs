//! `--shard K/N`: the files of a run split between N machines, shard K taking its
//! part. The split depends on the files' paths only (as given, relative to the working
//! directory, `./` dropped), never on their order on the command line or on where the
//! checkout lives: every machine of a CI matrix computes the same split, and the N
//! shards run every file exactly once between them.

use std::collections::BTreeSet;
use std::path::{Component, Path};

/// Shard `index` (1-based) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shard {
    pub(crate) index: usize,
    pub(crate) count: usize,
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// `K/N` with 1 ≤ K ≤ N.
pub(crate) fn parse(text: &str) -> Result<Shard, String> {
    let usage = || format!("expected K/N with 1 <= K <= N, like 2/5, got `{text}`");
    let (index, count) = text.split_once('/').ok_or_else(usage)?;
    let index: usize = index.trim().parse().map_err(|_| usage())?;
    let count: usize = count.trim().parse().map_err(|_| usage())?;
    if index == 0 || count == 0 || index > count {
        return Err(usage());
    }
    Ok(Shard { index, count })
}

/// The files of `shard` (each known by the path `path` gives), in the order given: the
/// distinct keys of all files sorted, the i-th (from 0) going to shard `i % count + 1`.
/// Sorting keeps shards within one file of each other in size and independent of the
/// order of the arguments.
pub(crate) fn select<T>(files: Vec<T>, path: impl Fn(&T) -> &Path, shard: Shard) -> Vec<T> {
    let working = std::env::current_dir().ok();
    let keys: Vec<String> = files.iter().map(|file| key(path(file), working.as_deref())).collect();
    let sorted: BTreeSet<&str> = keys.iter().map(String::as_str).collect();
    let position = |key: &str| sorted.iter().position(|candidate| *candidate == key).unwrap_or(0);
    files
        .into_iter()
        .zip(&keys)
        .filter(|(_, key)| position(key) % shard.count + 1 == shard.index)
        .map(|(file, _)| file)
        .collect()
}

/// The path a file is known by for the split: relative to `working` when under it,
/// `.` components dropped, `/` as the separator.
fn key(path: &Path, working: Option<&Path>) -> String {
    let relative = working.and_then(|working| path.strip_prefix(working).ok()).unwrap_or(path);
    let parts: Vec<String> = relative
        .components()
        .filter(|component| !matches!(component, Component::CurDir))
        .map(|component| component.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::path::PathBuf;

    use super::{Shard, parse};

    fn select(files: Vec<PathBuf>, shard: Shard) -> Vec<PathBuf> {
        super::select(files, PathBuf::as_path, shard)
    }

    #[test]
    fn shards_are_parsed_and_checked() {
        assert_eq!(parse("2/5"), Ok(Shard { index: 2, count: 5 }));
        for wrong in ["0/3", "4/3", "1/0", "3", "a/b", "1/2/3", ""] {
            assert!(parse(wrong).is_err(), "{wrong}");
        }
    }

    #[test]
    fn a_leading_dot_does_not_change_the_split() {
        let plain: Vec<PathBuf> = ["a.http", "b.http", "c.http"].iter().map(PathBuf::from).collect();
        let dotted: Vec<PathBuf> = ["./a.http", "./b.http", "./c.http"].iter().map(PathBuf::from).collect();
        let shard = Shard { index: 2, count: 2 };
        assert_eq!(select(plain, shard), vec![PathBuf::from("b.http")]);
        assert_eq!(select(dotted, shard), vec![PathBuf::from("./b.http")]);
    }

    proptest::proptest! {
        /// For N = 1..5 machines, whatever the files and their order on each machine,
        /// the shards 1..N together run every file exactly once.
        #[test]
        fn every_file_runs_exactly_once_across_the_shards(
            names in proptest::collection::btree_set("[a-z]{1,6}(/[a-z]{1,6}){0,2}\\.http", 0..40),
            count in 1_usize..=5,
            seed in proptest::prelude::any::<u64>(),
        ) {
            let files: Vec<PathBuf> = names.iter().map(PathBuf::from).collect();
            let mut runs: HashMap<PathBuf, usize> = HashMap::new();
            for index in 1..=count {
                // Each machine lists the files in an order of its own.
                let mut order = files.clone();
                let mut state = seed.wrapping_add(index as u64);
                for i in (1..order.len()).rev() {
                    state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                    let j = usize::try_from(state >> 33).unwrap_or(0) % (i + 1);
                    order.swap(i, j);
                }
                for file in select(order, Shard { index, count }) {
                    *runs.entry(file).or_default() += 1;
                }
            }
            proptest::prop_assert_eq!(runs.len(), files.len());
            proptest::prop_assert!(runs.values().all(|times| *times == 1), "{:?}", runs);
            // The shards' sizes differ by one file at most.
            let sizes: Vec<usize> = (1..=count).map(|index| select(files.clone(), Shard { index, count }).len()).collect();
            let (smallest, largest) = (sizes.iter().min().copied().unwrap_or(0), sizes.iter().max().copied().unwrap_or(0));
            proptest::prop_assert!(largest - smallest <= 1, "{:?}", sizes);
        }
    }
}
