//! httpyac's JavaScript configuration (`httpyac.config.js`, `.httpyac.js`, …), evaluated
//! for its data only by `volley_script::evaluate_config`; its failures as configuration
//! errors of the file.

use std::path::Path;

use serde_json::Value;

use super::invalid;
use crate::error::ConfigError;
use crate::resolvers::Environment;

/// Evaluates the configuration `code` read from `path`; its exports as JSON.
pub(super) fn evaluate(code: &str, path: &Path, environment: &Environment) -> Result<Value, ConfigError> {
    let variables = environment.variables().into_iter().map(|(name, value)| (name, Value::String(value))).collect();
    volley_script::evaluate_config(code, variables).map_err(|message| {
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
    })
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
