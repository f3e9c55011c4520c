//! The catalog of a server: every service it offers by reflection, kept per server. An
//! editor completes and checks a request whose schema comes from reflection against it
//! without calling the server on a keystroke: [`schema_of`](super::schema_of) reads it,
//! [`catalog_fetch`] gets it, in the background, at most once per lifetime per server.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use parking_lot::Mutex;
use volley_grpc::{Schema, Target};

use super::connect::{settings, target_of};
use super::{Reflection, reflection_target};
use crate::client::Client;
use crate::prepare::{Exchange, PreparedRequest};

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
    pub(super) fn get(&self, authority: &str) -> Option<Schema> {
        self.0.lock().get(authority).and_then(|entry| entry.schema.clone())
    }

    /// Marks `authority` as being asked now, when it was not within the lifetime.
    fn ask(&self, authority: &str) -> bool {
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
    fn keep(&self, authority: &str, schema: Schema) -> bool {
        let mut entries = self.0.lock();
        let entry = entries.entry(authority.to_owned()).or_insert(Entry { schema: None, asked: Instant::now() });
        let changed = !entry.schema.as_ref().is_some_and(|kept| kept.same_as(&schema));
        entry.schema = Some(schema);
        changed
    }
}

/// The server a reflection request's catalog is asked of, or `None` when its schema
/// does not come from reflection.
pub(super) fn catalog_target(prepared: &PreparedRequest) -> Option<Target> {
    let Exchange::Grpc(call) = &prepared.exchange else { return None };
    let reflection = call.schema.reflection.as_ref()?;
    let target = target_of(&prepared.url, call.line_span).ok()?;
    match reflection {
        Reflection::Called => Some(target),
        Reflection::Other(_) => reflection_target(call, &target).ok(),
    }
}

/// When `prepared`'s schema comes from reflection and its server's catalog was not
/// asked for within its lifetime: the fetch of that catalog, to run in the background.
/// It resolves to `true` when it got a catalog that differs from the one kept (what the
/// editor then checks its documents against again); a server that cannot be reached,
/// or offers no reflection, leaves the catalog as it was.
#[must_use]
pub fn catalog_fetch(client: &Client, prepared: &PreparedRequest) -> Option<BoxFuture<'static, bool>> {
    let target = catalog_target(prepared)?;
    let (settings, _) = settings(client, prepared, false).ok()?;
    if !client.inner.grpc_catalogs.ask(&target.authority) {
        return None;
    }
    let client = client.clone();
    Some(Box::pin(async move {
        match Schema::catalog_from_reflection(&target, &[], &settings).await {
            Ok(schema) => client.inner.grpc_catalogs.keep(&target.authority, schema),
            Err(error) => {
                tracing::debug!(server = %target.authority, "no gRPC catalog: {error}");
                false
            }
        }
    }))
}
