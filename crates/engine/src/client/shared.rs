//! The caches a client shares with its forks (the execution server's sessions), beside
//! the state in `Inner`: compiled gRPC schemas, schemas got by reflection, and the
//! catalogs of servers for the language server (OAuth 2.0 tokens and discovery documents
//! are `volley_auth::oauth::TokenCache`).

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use volley_grpc::Schema;

use super::cache::MtimeCache;

/// How long a schema got by reflection is used again for calls to the same server.
const REFLECTION_LIFETIME: Duration = Duration::from_secs(30);

/// Compiled schemas by their proto files and import paths, while the files are unchanged.
pub(crate) type SchemaCache = MtimeCache<(Vec<PathBuf>, Vec<PathBuf>), Schema>;

/// Schemas got by reflection, by server and service, with when they were got.
#[derive(Default)]
pub(crate) struct ReflectionCache(Mutex<Vec<(String, String, Instant, Schema)>>);

impl ReflectionCache {
    pub(crate) fn get(&self, authority: &str, service: &str) -> Option<Schema> {
        let mut entries = self.0.lock();
        entries.retain(|(_, _, got, _)| got.elapsed() < REFLECTION_LIFETIME);
        entries
            .iter()
            .find(|(at, name, _, _)| at == authority && name == service)
            .map(|(_, _, _, schema)| schema.clone())
    }

    pub(crate) fn insert(&self, authority: &str, service: &str, schema: Schema) {
        let mut entries = self.0.lock();
        entries
            .retain(|(at, name, got, _)| got.elapsed() < REFLECTION_LIFETIME && !(at == authority && name == service));
        entries.push((authority.to_owned(), service.to_owned(), Instant::now(), schema));
    }
}

/// How long a catalog is used before it is asked for again (it is used meanwhile).
const CATALOG_LIFETIME: Duration = Duration::from_secs(30);
/// Servers whose catalogs are kept; the least recently asked goes first.
const MOST_SERVERS: usize = 64;

/// The catalogs, by the authority of the server asked.
#[derive(Default)]
pub(crate) struct Catalogs(Mutex<HashMap<String, Entry>>);

struct Entry {
    /// The last catalog got, if any.
    schema: Option<Schema>,
    /// When it was last asked for (got or not).
    asked: Instant,
}

impl Catalogs {
    pub(crate) fn get(&self, authority: &str) -> Option<Schema> {
        self.0.lock().get(authority).and_then(|entry| entry.schema.clone())
    }

    /// Marks `authority` as being asked now, when it was not within the lifetime.
    pub(crate) fn ask(&self, authority: &str) -> bool {
        let mut entries = self.0.lock();
        if entries.get(authority).is_some_and(|entry| entry.asked.elapsed() < CATALOG_LIFETIME) {
            return false;
        }
        if entries.len() >= MOST_SERVERS
            && !entries.contains_key(authority)
            && let Some(oldest) = entries.iter().min_by_key(|(_, entry)| entry.asked).map(|(key, _)| key.clone())
        {
            entries.remove(&oldest);
        }
        let schema = entries.remove(authority).and_then(|entry| entry.schema);
        entries.insert(authority.to_owned(), Entry { schema, asked: Instant::now() });
        true
    }

    /// Keeps `schema` for `authority`: `true` when it differs from the one kept.
    pub(crate) fn keep(&self, authority: &str, schema: Schema) -> bool {
        let mut entries = self.0.lock();
        let entry = entries.entry(authority.to_owned()).or_insert(Entry { schema: None, asked: Instant::now() });
        let changed = !entry.schema.as_ref().is_some_and(|kept| kept.same_as(&schema));
        entry.schema = Some(schema);
        changed
    }
}
