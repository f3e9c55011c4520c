//! One cache for whatever is read from files: each entry keeps the modification time of
//! every file it came from (`None` for a file that was missing, so that a new one is
//! seen), and is fresh while all of them are unchanged.

use std::collections::HashMap;
use std::hash::Hash;
use std::path::PathBuf;
use std::time::SystemTime;

use parking_lot::Mutex;

use crate::io::Io;

/// Files and the modification time each had when read.
pub(crate) type Sources = Vec<(PathBuf, Option<SystemTime>)>;

/// Values by key, each kept while the files it came from are unchanged.
pub(crate) struct MtimeCache<K, V> {
    entries: Mutex<HashMap<K, (V, Sources)>>,
}

impl<K, V> Default for MtimeCache<K, V> {
    fn default() -> Self {
        Self { entries: Mutex::new(HashMap::new()) }
    }
}

impl<K: Hash + Eq, V: Clone> MtimeCache<K, V> {
    /// The value of `key`, when none of its files changed since it was read.
    pub(crate) fn get(&self, io: &dyn Io, key: &K) -> Option<V> {
        let entries = self.entries.lock();
        let (value, sources) = entries.get(key)?;
        sources.iter().all(|(path, modified)| io.modified(path) == *modified).then(|| value.clone())
    }

    /// Keeps `value` for `key`, read from `sources`.
    pub(crate) fn insert(&self, key: K, value: V, sources: Sources) {
        self.entries.lock().insert(key, (value, sources));
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
}
