//! The boxed future of the transport's traits (`Transport`, `Outlet`).

use std::future::Future;
use std::pin::Pin;

/// A boxed future, as the transport's traits return it.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
