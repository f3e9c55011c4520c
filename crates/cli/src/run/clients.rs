//! Who sends a run's requests: the local `Client` made from the run's flags (profile,
//! `--var`, TLS, proxy, cookies, token cache), or a `RemoteClient` for `--server`,
//! reached before anything is sent; and how many files go at once (`--jobs`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use volley_engine::{Client, ClientConfig, CookieJar, RemoteClient, RemoteConfig, RequestDefaults};

use super::{RunArgs, select};

/// How many files run at the same time: `--jobs`, else 1 (one client for every file,
/// in order, however the files are given). Through `--server` the run is one session
/// and its requests go one at a time.
pub(super) fn jobs(args: &RunArgs) -> Result<usize, select::Problem> {
    let given = args.jobs.map(usize::from);
    if args.server.is_some() {
        return match given {
            Some(jobs) if jobs > 1 => Err(select::Problem::usage(
                "--jobs with --server is not supported: the run is one server session, its requests sent one at a time",
                Some("drop --jobs, or run without --server"),
            )),
            _ => Ok(1),
        };
    }
    Ok(given.unwrap_or(1))
}

/// Reaches the server of `--server` before anything is sent: one error for a server that
/// cannot be reached or refuses the token (rather than one per request), and a profile
/// the server's configuration does not have refused as a local run refuses it (exit 2).
pub(super) async fn reach(remote: &RemoteClient, args: &RunArgs, files: &[select::File]) -> Option<select::Problem> {
    let server = remote.server_url().to_string();
    if let Err(error) = remote.connect().await {
        let message = format!("cannot use the execution server at {server}: {error}");
        return Some(match &error {
            volley_engine::Error::Server { status: 401 | 403, .. } => {
                select::Problem::usage(message, Some("pass the server's token with --token (or VOLLEY_TOKEN)"))
            }
            _ => select::Problem::transport(
                message,
                Some("is `volley serve` running there? check --server (or VOLLEY_SERVER), or run without it"),
            ),
        });
    }
    let profile = args.profile.as_deref()?;
    let path = files.first().map(|file| file.shown.replace('\\', "/"));
    (remote.has_profile(profile, path.as_deref()).await == Some(false)).then(|| {
        select::Problem::usage(
            format!("unknown profile `{profile}`: the execution server at {server} has no such profile"),
            Some("profiles are declared in the volley.jsonc the server reads; run without -p, or name one it has"),
        )
    })
}

/// The remote client of `--server`: a session and a flow labelled with the run.
pub(super) fn remote(args: &RunArgs, url: &str) -> Result<RemoteClient, select::Problem> {
    let files: Vec<String> = args.files.iter().map(|path| path.display().to_string()).collect();
    let mut config = RemoteConfig {
        token: args.token.clone(),
        profile: args.profile.clone(),
        timeout: args.timeout.map(Duration::from_millis),
        flow_label: Some(format!("volley run {}", files.join(" "))),
        // A device flow run by the server shows its code here, where the person is.
        auth_prompt: Some(std::sync::Arc::new(volley_engine::auth::CommandPrompt)),
        ..RemoteConfig::new(url)
    };
    config.fill_from_env();
    RemoteClient::new(config).map_err(|error| {
        select::Problem::usage(
            error.to_string(),
            Some("pass the server's base URL, like --server http://127.0.0.1:4097"),
        )
    })
}

/// The client of the run: profile, `--var`, `--no-redirect`, `--insecure`, cookies.
pub(super) fn client(args: &RunArgs, files: &[select::File]) -> Result<Client, select::Problem> {
    let config = ClientConfig {
        profile: args.profile.clone(),
        defaults: RequestDefaults {
            follow_redirects: args.no_redirect.then_some(false),
            validate_ssl: args.insecure.then_some(false),
            ..RequestDefaults::default()
        },
        tls: volley_engine::config::TlsSettings {
            ca: args.cacert.iter().map(|path| absolute(path)).collect(),
            hosts: args
                .cert
                .iter()
                .map(|cert| {
                    let pkcs12 = cert.extension().is_some_and(|extension| {
                        extension.eq_ignore_ascii_case("p12") || extension.eq_ignore_ascii_case("pfx")
                    });
                    volley_engine::config::HostTls {
                        host: "*".to_owned(),
                        cert: (!pkcs12).then(|| absolute(cert)),
                        pfx: pkcs12.then(|| absolute(cert)),
                        key: args.key.as_deref().map(absolute),
                        passphrase: args.cert_passphrase.clone(),
                        ..volley_engine::config::HostTls::default()
                    }
                })
                .collect(),
        },
        proxy: volley_engine::config::ProxySettings {
            http: args.proxy.clone(),
            https: args.proxy.clone(),
            no_proxy: args.noproxy.as_ref().map(|list| list.split(',').map(|host| host.trim().to_owned()).collect()),
        },
        http_version: if args.http2 {
            Some(volley_engine::HttpVersion::HTTP_2)
        } else {
            args.http1_1.then_some(volley_engine::HttpVersion::HTTP_11)
        },
        token_cache: if args.token_cache { volley_engine::auth::default_token_cache() } else { None },
        allow_external_files: args.allow_external_files,
        // An edit of volley.jsonc or `.env` counts within a second, not on every send: a
        // file of a thousand requests would otherwise ask the filesystem two thousand times.
        recheck_files: Duration::from_secs(1),
        value_prompt: super::confirm::can_ask().then(|| {
            std::sync::Arc::new(super::prompt::TerminalPrompt) as std::sync::Arc<dyn volley_engine::prompt::ValuePrompt>
        }),
        ..ClientConfig::default()
    };
    if let Some(proxy) = args.proxy.as_deref().filter(|proxy| !proxy.is_empty()) {
        volley_engine::config::check_proxy_url(proxy)
            .map_err(|message| select::Problem::usage(format!("--proxy: {message}"), None))?;
    }
    for path in args.cacert.iter().chain(&args.cert).chain(&args.key) {
        if !path.is_file() {
            return Err(select::Problem::usage(
                format!("cannot read `{}`: no such file", path.display()),
                Some("--cacert, --cert and --key name PEM files, relative to the working directory"),
            ));
        }
    }
    // The configuration of the first file decides the profile check and the jar. The
    // client finds it, and its fork with the jar keeps what it found: the files are
    // looked for once.
    let client = Client::new(config);
    let directory = files.first().and_then(|file| file.path.parent()).map(PathBuf::from).unwrap_or_default();
    let found = volley_engine::stages::config_for(&client, &directory)
        .map_err(|error| select::Problem::invalid(error.to_string(), None))?;
    if let Some(profile) = &args.profile
        && let Err(error) = volley_engine::stages::profile_for(&client, &directory, profile)
    {
        let hint = found.is_none().then_some(
            "profiles come from volley.jsonc `profiles`, the environments of http-client.env.json, httpyac's \
                 configuration or REST Client's settings, or httpyac's `env/<name>.env` files, next to the .http \
                 file or above it",
        );
        let message = match &found {
            Some(_) => error.to_string(),
            None => format!("{error}: no configuration was found"),
        };
        return Err(select::Problem::usage(message, hint));
    }
    let jar = CookieJar::chosen(args.cookie_jar.as_deref(), found.as_ref()).map_err(|error| {
        // A file named on the command line is a usage problem; one of volley.jsonc, invalid.
        if args.cookie_jar.is_some() {
            select::Problem::usage(error.to_string(), None)
        } else {
            select::Problem::invalid(error.to_string(), None)
        }
    })?;
    Ok(volley_engine::stages::fork(&client, client.get_variables(), jar))
}

/// A path of the command line, relative to the working directory, made absolute: the
/// engine resolves relative paths against the `.http` file's directory.
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Run {
        #[command(flatten)]
        args: RunArgs,
    }

    /// The run's client keeps the configuration the profile check found: a change that
    /// leaves the file's modification time as it was is not read again, so the files
    /// were looked for once.
    #[test]
    fn the_run_client_keeps_the_configuration_its_checks_found() {
        let directory = std::env::temp_dir().join(format!("volley-clients-{}", std::process::id()));
        std::fs::create_dir_all(directory.join(".git")).unwrap();
        let config = directory.join("volley.jsonc");
        std::fs::write(&config, r#"{"profiles": {"dev": {"variables": {"host": "a"}}}}"#).unwrap();
        let http = directory.join("a.http");
        std::fs::write(&http, "GET http://{{host}}/\n").unwrap();
        let args = Run::parse_from(["run", "-p", "dev", http.to_str().unwrap()]).args;
        let files = select::load(&args.files).unwrap();

        let client = client(&args, &files).unwrap();
        let modified = std::fs::metadata(&config).unwrap().modified().unwrap();
        std::fs::write(&config, r#"{"profiles": {"prod": {"variables": {"host": "b"}}}}"#).unwrap();
        std::fs::File::options().write(true).open(&config).unwrap().set_modified(modified).unwrap();
        let found = volley_engine::stages::config_for(&client, &directory).unwrap().unwrap();
        let _ = std::fs::remove_dir_all(&directory);
        assert_eq!(found.profiles.keys().collect::<Vec<_>>(), ["dev"]);
    }
}
