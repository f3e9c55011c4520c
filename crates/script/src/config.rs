//! httpyac's JavaScript configuration (`httpyac.config.js`, `.httpyac.js`, …) evaluated
//! for its data only: in a QuickJS runtime of its own with a memory limit and a
//! deadline, with `module.exports`, `exports` and `process.env` (the run's environment)
//! and nothing else of Node: `require` throws, naming the module. The exported object
//! (or what an exported function returns) is taken as JSON.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rquickjs::{Context, Runtime};
use serde_json::{Map, Value};

/// How long a configuration may run.
const CONFIG_DEADLINE: Duration = Duration::from_secs(2);
/// How much memory it may use.
const MEMORY: usize = 32 << 20;

/// What the configuration sees before its code runs.
const PRELUDE: &str = r"
var module = { exports: {} };
var exports = module.exports;
var process = { env: JSON.parse(__volley_environment), platform: 'volley', cwd: function () { return '.'; } };
function require(name) {
  throw new Error('require(\'' + name + '\') is not available: Volley reads a JavaScript httpyac configuration for its data only, without Node modules');
}
";

/// What runs after it: the exports as JSON text.
const EPILOGUE: &str = r"
(function () {
  var exported = module.exports;
  if (typeof exported === 'function') { exported = exported(); }
  if (exported && typeof exported.then === 'function') {
    throw new Error('the configuration exports a promise: Volley reads only what a configuration exports at once');
  }
  return JSON.stringify(exported === undefined ? {} : exported);
})()
";

/// Evaluates the configuration `code` with `environment` as `process.env`: its exports
/// as JSON, or why it could not be read (a message to put after "could not be read: ").
pub fn evaluate_config(code: &str, environment: Map<String, Value>) -> Result<Value, String> {
    let runtime = Runtime::new().map_err(|error| error.to_string())?;
    runtime.set_memory_limit(MEMORY);
    runtime.set_max_stack_size(512 * 1024);
    let deadline = Instant::now() + CONFIG_DEADLINE;
    let expired = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&expired);
    runtime.set_interrupt_handler(Some(Box::new(move || {
        let over = Instant::now() > deadline;
        if over {
            flag.store(true, Ordering::Relaxed);
        }
        over
    })));
    let context = Context::full(&runtime).map_err(|error| error.to_string())?;
    let text = context.with(|ctx| {
        let thrown = |ctx: &rquickjs::Ctx<'_>| {
            let caught = ctx.catch();
            caught
                .as_exception()
                .and_then(rquickjs::Exception::message)
                .or_else(|| caught.as_string().and_then(|text| text.to_string().ok()))
                .unwrap_or_else(|| "it threw".to_owned())
        };
        ctx.globals().set("__volley_environment", Value::Object(environment).to_string()).map_err(|_| thrown(&ctx))?;
        ctx.eval::<(), _>(PRELUDE).map_err(|_| thrown(&ctx))?;
        ctx.eval::<(), _>(code).map_err(|_| thrown(&ctx))?;
        ctx.eval::<String, _>(EPILOGUE).map_err(|_| thrown(&ctx))
    });
    let text = text.map_err(|message| {
        if expired.load(Ordering::Relaxed) {
            format!("it ran longer than {} s", CONFIG_DEADLINE.as_secs())
        } else {
            message
        }
    })?;
    serde_json::from_str(&text).map_err(|error| error.to_string())
}
