//! The catalog of a server: every service it offers by reflection, kept per server. An
//! editor completes and checks a request whose schema comes from reflection against it
//! without calling the server on a keystroke: [`schema_of`](super::schema_of) reads it,
//! [`catalog_fetch`] gets it, in the background, at most once per lifetime per server.

use futures_util::future::BoxFuture;
use volley_grpc::{Schema, Target};

use super::connect::{settings, target_of};
use super::{Reflection, reflection_target};
use crate::client::Client;
use crate::prepared::{Exchange, PreparedRequest};

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
