//! One cache for whatever is read from files: each entry keeps the modification time of
//! every file it came from (`None` for a file that was missing, so that a new one is
//! seen), and is fresh while all of them are unchanged.

use std::borrow::Borrow;
use std::hash::Hash;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use hashbrown::{Equivalent, HashMap};
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
    pub(crate) fn get<Q: Hash + Equivalent<K> + ?Sized>(&self, io: &dyn Io, key: &Q) -> Option<V> {
        self.get_within(io, Duration::ZERO, key)
    }

    /// The value of `key`, when none of its files changed since it was read, or when
    /// they were found unchanged less than `recheck` ago (a load run's requests would
    /// otherwise ask the filesystem about every file on every send).
    /// `key` may be borrowed ([`Lookup`]): each request of a run looks its settings up.
    pub(crate) fn get_within<Q: Hash + Equivalent<K> + ?Sized>(
        &self,
        io: &dyn Io,
        recheck: Duration,
        key: &Q,
    ) -> Option<V> {
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

/// A key of `(owned, profile)` as a lookup borrows it, without copying it: it hashes as
/// the owned key does (`PathBuf` as `Path`, `Vec<T>` as `[T]`, `String` as `str`) and
/// equals it when both parts do.
#[derive(Hash)]
pub(crate) struct Lookup<'a, T: ?Sized>(pub(crate) &'a T, pub(crate) Option<&'a str>);

impl<T: ?Sized + Eq, O: Borrow<T>> Equivalent<(O, Option<String>)> for Lookup<'_, T> {
    fn equivalent(&self, key: &(O, Option<String>)) -> bool {
        key.0.borrow() == self.0 && key.1.as_deref() == self.1
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
    fn a_borrowed_key_finds_its_owned_entry_and_no_other() {
        let io = MemoryFs::new();
        let paths: MtimeCache<(PathBuf, Option<String>), u32> = MtimeCache::default();
        paths.insert((PathBuf::from("/p/a"), Some("dev".to_owned())), 1, Vec::new());
        paths.insert((PathBuf::from("/p/a"), None), 2, Vec::new());
        assert_eq!(paths.get(&io, &Lookup(Path::new("/p/a"), Some("dev"))), Some(1));
        assert_eq!(paths.get(&io, &Lookup(Path::new("/p/a"), None)), Some(2));
        assert_eq!(paths.get(&io, &Lookup(Path::new("/p/a"), Some("prod"))), None);
        assert_eq!(paths.get(&io, &Lookup(Path::new("/p/b"), None)), None);
        let lists: MtimeCache<(Vec<PathBuf>, Option<String>), u32> = MtimeCache::default();
        let directories = vec![PathBuf::from("/p/a"), PathBuf::from("/p")];
        lists.insert((directories.clone(), None), 3, Vec::new());
        assert_eq!(lists.get(&io, &Lookup(directories.as_slice(), None)), Some(3));
        assert_eq!(lists.get(&io, &Lookup(&directories[..1], None)), None);
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
