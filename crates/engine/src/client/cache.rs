//! One cache for whatever is read from files: each entry keeps the modification time of
//! every file it came from (`None` for a file that was missing, so that a new one is
//! seen), and is fresh while all of them are unchanged.

use std::collections::HashMap;
use std::hash::Hash;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use parking_lot::Mutex;

use crate::io::Io;

/// Files and the modification time each had when read.
pub(crate) type Sources = Vec<(PathBuf, Option<SystemTime>)>;

/// Values by key, each kept while the files it came from are unchanged.
pub(crate) struct MtimeCache<K, V> {
    /// Each value, its files, and when they were last found unchanged.
    entries: Mutex<HashMap<K, (V, Sources, Instant)>>,
}

impl<K, V> Default for MtimeCache<K, V> {
    fn default() -> Self {
        Self { entries: Mutex::new(HashMap::new()) }
    }
}

impl<K: Hash + Eq, V: Clone> MtimeCache<K, V> {
    /// The value of `key`, when none of its files changed since it was read.
    pub(crate) fn get(&self, io: &dyn Io, key: &K) -> Option<V> {
        self.get_within(io, Duration::ZERO, key)
    }

    /// The value of `key`, when none of its files changed since it was read, or when
    /// they were found unchanged less than `recheck` ago (a load run's requests would
    /// otherwise ask the filesystem about every file on every send).
    pub(crate) fn get_within(&self, io: &dyn Io, recheck: Duration, key: &K) -> Option<V> {
        let mut entries = self.entries.lock();
        let (value, sources, checked) = entries.get_mut(key)?;
        if !recheck.is_zero() && checked.elapsed() < recheck {
            return Some(value.clone());
        }
        let fresh = sources.iter().all(|(path, modified)| io.modified(path) == *modified);
        if fresh {
            *checked = Instant::now();
        }
        fresh.then(|| value.clone())
    }

    /// Keeps `value` for `key`, read from `sources`.
    pub(crate) fn insert(&self, key: K, value: V, sources: Sources) {
        self.entries.lock().insert(key, (value, sources, Instant::now()));
    }

    /// Forgets every entry.
    pub(crate) fn clear(&self) {
        self.entries.lock().clear();
    }
}

/// The modification times of `paths` now.
pub(crate) fn stamp<'a>(io: &dyn Io, paths: impl IntoIterator<Item = &'a PathBuf>) -> Sources {
    paths.into_iter().map(|path| (path.clone(), io.modified(path))).collect()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::io::MemoryFs;

    #[test]
    fn an_entry_is_fresh_until_one_of_its_files_changes() {
        let io = MemoryFs::new();
        io.insert("/p/a.txt", "1");
        let cache: MtimeCache<&str, u32> = MtimeCache::default();
        let sources = stamp(&io, [&Path::new("/p/a.txt").to_path_buf(), &PathBuf::from("/p/missing")]);
        cache.insert("key", 7, sources);
        assert_eq!(cache.get(&io, &"key"), Some(7));
        io.insert("/p/missing", "now here");
        assert_eq!(cache.get(&io, &"key"), None);
        cache.clear();
        assert_eq!(cache.get(&io, &"key"), None);
    }

    #[test]
    fn within_its_recheck_time_an_entry_is_trusted_then_checked_again() {
        let io = MemoryFs::new();
        io.insert("/p/a.txt", "1");
        let cache: MtimeCache<&str, u32> = MtimeCache::default();
        cache.insert("key", 7, stamp(&io, [&PathBuf::from("/p/missing")]));
        io.insert("/p/missing", "now here");
        assert_eq!(cache.get_within(&io, Duration::from_secs(3600), &"key"), Some(7));
        assert_eq!(cache.get_within(&io, Duration::ZERO, &"key"), None);
        cache.insert("key", 8, stamp(&io, [&PathBuf::from("/p/missing")]));
        std::thread::sleep(Duration::from_millis(20));
        io.insert("/p/missing", "changed");
        assert_eq!(cache.get_within(&io, Duration::from_millis(5), &"key"), None);
    }
}
