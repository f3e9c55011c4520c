//! httpyac's JavaScript configuration (`httpyac.config.js`, `.httpyac.js`, …) evaluated
//! for its data only: in a QuickJS runtime of its own with a memory limit and a
//! deadline, with `module.exports`, `exports` and `process.env` (the run's environment)
//! and nothing else of Node: `require` throws, naming the module. The exported object
//! (or what an exported function returns) is taken as JSON.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rquickjs::{Context, Runtime};
use serde_json::Value;

use super::invalid;
use crate::error::ConfigError;
use crate::resolvers::Environment;

/// How long a configuration may run.
const DEADLINE: Duration = Duration::from_secs(2);
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

/// Evaluates the configuration `code` read from `path`; its exports as JSON.
pub(super) fn evaluate(code: &str, path: &Path, environment: &Environment) -> Result<Value, ConfigError> {
    let failed = |message: String| {
        invalid(
            path,
            "",
            format!("the JavaScript configuration could not be read: {message}"),
            Some(
                "Volley runs it for its data only (no `require`, no Node): keep the environments as plain data, or \
                 move them to `.httpyac.json`"
                    .to_owned(),
            ),
        )
    };
    let runtime = Runtime::new().map_err(|error| failed(error.to_string()))?;
    runtime.set_memory_limit(MEMORY);
    runtime.set_max_stack_size(512 * 1024);
    let deadline = Instant::now() + DEADLINE;
    let expired = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&expired);
    runtime.set_interrupt_handler(Some(Box::new(move || {
        let over = Instant::now() > deadline;
        if over {
            flag.store(true, Ordering::Relaxed);
        }
        over
    })));
    let context = Context::full(&runtime).map_err(|error| failed(error.to_string()))?;
    let variables: serde_json::Map<String, Value> =
        environment.variables().into_iter().map(|(name, value)| (name, Value::String(value))).collect();
    let text = context.with(|ctx| {
        let thrown = |ctx: &rquickjs::Ctx<'_>| {
            let caught = ctx.catch();
            caught
                .as_exception()
                .and_then(rquickjs::Exception::message)
                .or_else(|| caught.as_string().and_then(|text| text.to_string().ok()))
                .unwrap_or_else(|| "it threw".to_owned())
        };
        ctx.globals().set("__volley_environment", Value::Object(variables).to_string()).map_err(|_| thrown(&ctx))?;
        ctx.eval::<(), _>(PRELUDE).map_err(|_| thrown(&ctx))?;
        ctx.eval::<(), _>(code).map_err(|_| thrown(&ctx))?;
        ctx.eval::<String, _>(EPILOGUE).map_err(|_| thrown(&ctx))
    });
    let text = text.map_err(|message| {
        if expired.load(Ordering::Relaxed) {
            failed(format!("it ran longer than {} s", DEADLINE.as_secs()))
        } else {
            failed(message)
        }
    })?;
    serde_json::from_str(&text).map_err(|error| failed(error.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn environment() -> Environment {
        Environment::fixed([("API_TOKEN".to_owned(), "t0k3n".to_owned())])
    }

    #[test]
    fn exports_an_object_or_a_function_with_the_environment() {
        let path = Path::new("/p/httpyac.config.js");
        let code = "module.exports = { environments: { dev: { token: process.env.API_TOKEN, n: 1 + 1 } } };";
        let value = evaluate(code, path, &environment()).unwrap();
        assert_eq!(value["environments"]["dev"]["token"], "t0k3n");
        assert_eq!(value["environments"]["dev"]["n"], 2);
        let code = "module.exports = () => ({ environments: { prod: { host: 'https://example.com' } } });";
        assert_eq!(
            evaluate(code, path, &environment()).unwrap()["environments"]["prod"]["host"],
            "https://example.com"
        );
    }

    #[test]
    fn node_modules_and_endless_code_are_refused_by_name() {
        let path = Path::new("/p/httpyac.config.js");
        let error = evaluate("const fs = require('fs');", path, &environment()).unwrap_err().to_string();
        assert!(error.contains("require('fs') is not available"), "{error}");
        assert!(error.contains("httpyac.config.js"), "{error}");
        let error = evaluate("while (true) {}", path, &environment()).unwrap_err().to_string();
        assert!(error.contains("longer than 2 s"), "{error}");
    }
}
