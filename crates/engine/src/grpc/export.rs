//! A prepared gRPC request as the `grpcurl` command that makes the same call: what
//! `volley export` writes for it.

use std::path::PathBuf;

use super::{Exchange, Reflection, connect::target_of, metadata};
use crate::prepared::PreparedRequest;

/// A prepared gRPC request as a `grpcurl` command (what `volley export` writes for it):
/// its TLS settings, schema, metadata and messages, secrets hidden as `redactor` shows
/// them; with the warnings of what the command cannot say. `None` for other requests.
#[must_use]
pub fn grpcurl(prepared: &PreparedRequest, redactor: &crate::redact::Redactor) -> Option<(String, Vec<String>)> {
    use volley_curl::quote;
    let Exchange::Grpc(call) = &prepared.exchange else { return None };
    let target = target_of(&prepared.url, call.line_span).ok()?;
    let mut words: Vec<String> = vec!["grpcurl".to_owned()];
    let mut warnings = Vec::new();
    let mut flag = |name: &str, value: Option<String>| {
        words.push(name.to_owned());
        words.extend(value.map(|value| quote(&value)));
    };
    if prepared.url.scheme() == "https" {
        if !prepared.validate_ssl {
            flag("-insecure", None);
        }
        if let Some(network) = prepared.network.as_deref() {
            for ca in &network.ca {
                flag("-cacert", Some(ca.display().to_string()));
            }
            if let Some(host) = network.host_for(&prepared.url) {
                for ca in &host.ca {
                    flag("-cacert", Some(ca.display().to_string()));
                }
                if let (Some(cert), Some(key)) = (&host.cert, &host.key) {
                    flag("-cert", Some(cert.display().to_string()));
                    flag("-key", Some(key.display().to_string()));
                } else if host.pfx.is_some() {
                    warnings.push("grpcurl takes no PKCS#12 client certificate: give it `-cert` and `-key`".to_owned());
                }
            }
        }
    } else {
        flag("-plaintext", None);
    }
    match (&call.schema.reflection, &call.schema.protoset) {
        (Some(Reflection::Other(server)), _) => {
            warnings.push(format!("grpcurl asks the server called for its schema, not {server}"));
        }
        (Some(Reflection::Called), _) => {}
        (None, Some((path, _, _))) => flag("-protoset", Some(path.display().to_string())),
        (None, None) => {
            let mut directories = call.schema.imports.clone();
            for (proto, _) in &call.schema.protos {
                let parent = proto.parent().map(PathBuf::from).unwrap_or_default();
                if !call.schema.imports.iter().any(|import| proto.starts_with(import)) && !directories.contains(&parent)
                {
                    directories.push(parent);
                }
            }
            for directory in &directories {
                flag("-import-path", Some(directory.display().to_string()));
            }
            for (proto, _) in &call.schema.protos {
                // As grpcurl names it: from the import path that holds it.
                let named = directories
                    .iter()
                    .find_map(|directory| proto.strip_prefix(directory).ok())
                    .map_or_else(|| proto.display().to_string(), |name| name.display().to_string());
                flag("-proto", Some(named));
            }
        }
    }
    for (name, value) in metadata(&prepared.headers) {
        flag("-H", Some(format!("{name}: {}", redactor.header(&name, &value))));
    }
    if prepared.timeout != crate::client::DEFAULT_TIMEOUT {
        flag("-max-time", Some(format!("{}", prepared.timeout.as_secs_f64())));
    }
    if call.messages.iter().any(|message| message.wait_for_server > 0) {
        warnings.push("grpcurl sends every message at once: `=== wait-for-server` is left out".to_owned());
    }
    let messages: Vec<&str> =
        call.messages.iter().filter_map(|message| message.json.as_deref()).map(str::trim).collect();
    if !messages.is_empty() {
        flag("-d", Some(redactor.redact(&messages.join("\n")).into_owned()));
    }
    words.push(quote(&target.authority));
    words.push(quote(&format!("{}/{}", target.service, target.method)));
    Some((words.join(" "), warnings))
}
