//! Custom resolvers written in JavaScript: `{{$name(args)}}` calls back into Node
//! through one threadsafe function, the JavaScript layer's dispatcher, which finds the
//! function by name and always answers with a Promise of a string.

use std::sync::Arc;

use napi::Status;
use napi::bindgen_prelude::Promise;
use napi::threadsafe_function::ThreadsafeFunction;
use napi_derive::napi;
use volley_engine::Resolver;
use volley_engine::resolvers::ResolverResult;
use volley_engine::transport::BoxFuture;

/// One call of a custom resolver, as the dispatcher receives it.
#[napi(object)]
#[derive(Debug, Clone)]
pub struct NativeResolverCall {
    /// The resolver's name with its `$` (`"$token"`), as it is keyed in `resolvers`.
    pub name: String,
    /// The arguments, after their own `{{ }}` were substituted.
    pub arguments: Vec<String>,
}

/// The dispatcher: called with a [`NativeResolverCall`], resolves to the value. Weak,
/// so that a client kept alive does not keep Node's event loop alive; errors thrown
/// by it come back as `Err` (`call_async_catch`), never as a process abort.
pub(crate) type Dispatcher =
    ThreadsafeFunction<NativeResolverCall, Promise<String>, NativeResolverCall, Status, false, true>;

/// A custom resolver that asks the dispatcher for `name`.
pub(crate) struct JsResolver {
    pub(crate) name: String,
    pub(crate) dispatcher: Arc<Dispatcher>,
}

impl Resolver for JsResolver {
    fn resolve(&self, arguments: Vec<String>) -> BoxFuture<'_, ResolverResult> {
        let call = NativeResolverCall { name: self.name.clone(), arguments };
        let dispatcher = Arc::clone(&self.dispatcher);
        Box::pin(async move {
            let promise = dispatcher.call_async_catch(call).await.map_err(|error| error.reason.clone())?;
            promise.await.map_err(|error| error.reason.clone().into())
        })
    }
}
