//! Preparation: a selected request resolved with the client's settings and variables,
//! built ([`crate::build`]), given its protocol's headers, timeout, redirect and TLS
//! settings, assertions and redactor: a [`PreparedRequest`], sent by the exchange.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use http::header::ACCEPT;
use serde_json::Map;
use volley_syntax::{DirectiveKind, Document, Protocol, Request};

use crate::assert::{Flavour, PendingAssertion};
use crate::body::Files;
use crate::build::{BuiltRequest, aws_datetime, build};
use crate::client::{Client, DEFAULT_TIMEOUT, RunOptions, Settings, merged_headers, refuse, select};
use crate::error::{BuildError, Error};
use crate::interpolate::{Renderer, Scope};
use crate::network::{HostTls, Network, Proxies, ProxySettings, TlsSettings};
use crate::prepared::{Exchange, PendingScripts, PreparedRequest};
use crate::redact::{Redactor, Secrets};
use crate::script::{self, PreRequest, RequestView, ScriptSettings, Scripts};

/// What `request.variables.get` knows before the request is built: every layer's
/// variables (the highest wins) and the file's variables whose values are literal.
fn known_variables(layers: &[&Map<String, serde_json::Value>], document: &Document) -> Map<String, serde_json::Value> {
    let mut known = Map::new();
    for declaration in &document.variables {
        if let Some(value) = declaration.value.as_literal() {
            known.insert(declaration.name.value.clone(), serde_json::Value::String(value));
        }
    }
    for layer in layers.iter().rev() {
        known.extend(layer.iter().map(|(name, value)| (name.clone(), value.clone())));
    }
    known
}

impl Client {
    /// Resolves and builds the selected request of `content` without sending it: the
    /// request a run would send (cookies aside).
    pub(crate) async fn prepare(&self, content: &str, options: &RunOptions) -> Result<PreparedRequest, Error> {
        let document = volley_syntax::parse(content);
        let request = select(&document, &options.request)?;
        self.prepare_request(&document, request, options.source_path.as_deref(), options).await
    }

    /// Resolves and builds `request` of a parsed `document` without sending it (the
    /// CLI's `--verbose`, the language server's preview). The options' selection is ignored.
    pub(crate) async fn prepare_request(
        &self,
        document: &Document,
        request: &Request,
        source_path: Option<&Path>,
        options: &RunOptions,
    ) -> Result<PreparedRequest, Error> {
        self.prepare_in(document, request, source_path, options, false).await
    }

    /// `request` prepared ahead of its turn, while the request before it is under way:
    /// `None` when preparing it could act or depends on what runs before it (references
    /// and `run` lines, scripts, prompts, custom and command resolvers, tokens, named
    /// responses), takes the time, or fails; it is then prepared in its turn.
    pub(crate) async fn prepare_ahead(
        &self,
        document: &Document,
        request: &Request,
        source_path: Option<&Path>,
        options: &RunOptions,
    ) -> Option<PreparedRequest> {
        // References and `run` lines run requests first; `# @prompt` lines ask.
        let first = request.directives.iter().any(|directive| {
            matches!(directive.kind, DirectiveKind::Ref | DirectiveKind::ForceRef | DirectiveKind::Prompt)
        }) || document.blocks.get(request.block).is_some_and(|block| block.runs().next().is_some());
        if first {
            return None;
        }
        let prepared = self.prepare_in(document, request, source_path, options, true).await.ok()?;
        prepared.auth.is_none().then_some(prepared)
    }

    async fn prepare_in(
        &self,
        document: &Document,
        request: &Request,
        source_path: Option<&Path>,
        options: &RunOptions,
        ahead: bool,
    ) -> Result<PreparedRequest, Error> {
        refuse(document, request)?;
        let directory = source_path
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .or_else(|| self.working_directory())
            .unwrap_or_default();
        let profile = options.profile.as_deref().or(self.inner.config.profile.as_deref());
        let settings = self.settings(&directory, profile)?;
        let empty = Map::new();
        let profile_variables = settings.profile.as_ref().map_or(&empty, |profile| &profile.variables);
        let config_variables = settings.config.as_ref().map_or(&empty, |config| &config.variables);
        let dotenv = self.dotenv_for(&settings.dotenv_directories, settings.profile_name.as_deref());
        let root = (!self.inner.config.allow_external_files).then_some(settings.root.as_path());
        let files = Files { io: &*self.inner.config.io, base: &directory, root };
        let limits = settings.config.as_ref().map_or_else(ScriptSettings::default, |config| config.scripts);
        // A `@loop`'s list is evaluated after httpyac's global scripts, without the
        // request's own (the probe has none).
        let scripts = Scripts::load(document, request, &files, limits)?;
        if ahead && !scripts.is_empty() {
            return Err(crate::interpolate::not_ahead(request.line_span).into());
        }
        let mut pre_request = PreRequest::default();
        let mut script_input = None;
        if !scripts.is_empty() {
            let globals = Arc::clone(&self.inner.variables.read());
            let layers = [
                &options.command_variables,
                &options.overrides,
                &options.variables,
                &*globals,
                profile_variables,
                config_variables,
            ];
            let mut input = script::Input {
                variables: known_variables(&layers, document),
                environment: config_variables
                    .iter()
                    .chain(profile_variables)
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
                request: RequestView::written(request),
                file: source_path.map(|path| path.display().to_string()),
                ..script::Input::default()
            };
            pre_request = self.inner.realms.run_pre_request(self, &scripts, &mut input).map_err(|error| {
                let mut secrets = Secrets::new();
                for layer in layers {
                    secrets.add_variables(layer);
                }
                secrets.add_variables(&input.variables);
                let redactor = if options.show_secrets { Redactor::reveal_all() } else { secrets.redactor() };
                Error::from(error.redacted(&redactor))
            })?;
            script_input = Some(input);
        }
        // Read after the pre-request scripts, which may have set globals.
        let client_variables = Arc::clone(&self.inner.variables.read());
        let value_prompt = self.inner.config.value_prompt.as_ref().filter(|_| !options.without_prompts);
        // REST Client's `# @prompt name`: asked when no variable has it.
        let defined = |name: &str| {
            let layers = [
                &pre_request.variables,
                &options.command_variables,
                &options.overrides,
                &options.variables,
                &*client_variables,
            ];
            layers.into_iter().chain([profile_variables, config_variables]).any(|layer| layer.contains_key(name))
                || document.variables.iter().any(|declaration| declaration.name.value == name)
                || dotenv.as_ref().is_ok_and(|dotenv| dotenv.get(name).is_some())
        };
        let (answers, prompted_secrets) = Box::pin(crate::prompt::ask_declared(request, value_prompt, defined)).await?;
        pre_request.variables.extend(answers);
        let chain = Arc::clone(&self.inner.chain.lock());
        // httpyac's `# @import`: the imported files' variables, below the file's own.
        // A file that cannot be read gives nothing here: a variable the request needs from
        // it is then undefined, and `volley check` shows the import at its line.
        let imports = self.imports_of(document, source_path).unwrap_or_default();
        let file_variables = crate::compose::file_variables(document, &imports);
        let imported_variables = file_variables.len() - document.variables.len();
        let scope = Scope {
            layers: vec![
                &pre_request.variables,
                &options.command_variables,
                &options.overrides,
                &options.variables,
                &client_variables,
                profile_variables,
                config_variables,
            ],
            file_variables: &file_variables,
            imported_variables,
            command_layer: (!options.command_variables.is_empty()).then_some(1),
            dotenv: dotenv.as_deref(),
            chain: &chain,
            custom: &self.inner.config.resolvers,
            commands: &settings.commands,
            auth: &settings.auth,
            environment: options.environment.as_ref().unwrap_or(&self.inner.config.environment),
            // The profile's and the configuration's layers.
            expand_from: settings.config.as_ref().is_some_and(|config| config.expand_values).then_some(5),
            prompt: value_prompt,
            answers: &self.inner.answers,
            javascript: Some((&self.inner.realms, limits)),
            ahead,
        };
        let mut renderer = Renderer::new(scope);
        renderer.secrets.extend(prompted_secrets);
        // httpyac's `proto <` lines are looked for in the file for gRPC requests only.
        let imports: Vec<volley_syntax::ProtoImport> = match request.protocol {
            Protocol::Grpc(_) => document.proto_imports_of(request).into_iter().cloned().collect(),
            _ => Vec::new(),
        };
        // Boxed: its state (building, rendering) is not carried, and copied, by every future above.
        let built =
            Box::pin(self.build_prepared(request, &imports, &mut renderer, &settings, &directory, options)).await;
        if renderer.declined() {
            return Err(crate::interpolate::not_ahead(request.line_span).into());
        }
        let built = built.map(|mut prepared| {
            prepared.logs = pre_request.logs;
            // httpyac's `await sleep(ms)` in a script before the request.
            if !pre_request.sleep.is_zero() {
                prepared.sleep = Some(prepared.sleep.unwrap_or_default() + pre_request.sleep);
            }
            prepared.scripts = script_input
                .filter(|_| !scripts.handlers.is_empty())
                .map(|input| Box::new(PendingScripts { scripts, input }));
            prepared
        });
        // What this request must keep out of what is shown, its errors included.
        let mut secrets = renderer.secrets();
        let redactor =
            |secrets: &Secrets| if options.show_secrets { Redactor::reveal_all() } else { secrets.redactor() };
        match built {
            Ok(mut prepared) => {
                // A URL's `user:password@` is sent as a `Basic` header (whose token is among
                // the secrets); a Digest password is kept aside for the challenge.
                secrets.add_headers(&prepared.headers);
                if let Some(digest) = &prepared.digest {
                    secrets.add_value(digest.password());
                }
                if let Some(auth) = &mut prepared.auth {
                    auth.secrets = secrets.clone();
                }
                if let Exchange::Grpc(call) = &mut prepared.exchange {
                    call.listener.clone_from(&options.grpc_messages);
                }
                prepared.redactor = redactor(&secrets);
                prepared.secrets = secrets;
                Ok(prepared)
            }
            Err(error) => Err(error.redacted(&redactor(&secrets))),
        }
    }

    /// Builds `request` with `renderer`: what [`prepare_request`](Self::prepare_request)
    /// returns, before its redactor is known.
    async fn build_prepared(
        &self,
        request: &Request,
        imports: &[volley_syntax::ProtoImport],
        renderer: &mut Renderer<'_>,
        settings: &Settings,
        directory: &Path,
        options: &RunOptions,
    ) -> Result<PreparedRequest, Error> {
        let root = (!self.inner.config.allow_external_files).then_some(settings.root.as_path());
        let files = Files { io: &*self.inner.config.io, base: directory, root };
        let layers = self.default_layers(settings);
        let mut headers = merged_headers(&layers);
        // httpyac's `defaultHeaders` may use variables.
        if settings.config.as_ref().is_some_and(|config| config.expand_values) {
            for (_, value) in headers.iter_mut().filter(|(_, value)| value.contains("{{")) {
                let (template, _) = volley_syntax::parse_template(value);
                *value = renderer.render(&template).await.map_err(|error| match error {
                    BuildError::UndefinedVariable { name, .. } => BuildError::Interpolation {
                        message: format!("a default header of the configuration uses `{name}`, which is not defined"),
                        span: request.line_span,
                    },
                    error => BuildError::Interpolation {
                        message: format!("in a default header of the configuration: {}", error.message()),
                        span: request.line_span,
                    },
                })?;
            }
        }
        let mut built = build(request, renderer, &files, &headers).await?;
        // An AWS signature holds for minutes from the time it is made: in the request's turn.
        if renderer.ahead() && built.aws.is_some() {
            return Err(crate::interpolate::not_ahead(request.line_span).into());
        }
        let (exchange, connect_timeout) = protocol_rules(request, &mut built, renderer, (&files, imports)).await?;
        // With tokens still to get, the signature is made once they are in place.
        if built.aws.is_some() && renderer.tokens.is_empty() {
            built.sign_aws(&aws_datetime(time::OffsetDateTime::now_utc()))?;
        }
        let request_timeout = renderer.duration(request.timeout.as_ref(), "timeout").await?;
        let timeout = connect_timeout
            .or(request_timeout)
            .or(options.timeout)
            .or(self.inner.config.timeout)
            .or_else(|| layers.iter().rev().find_map(|defaults| defaults.timeout))
            .unwrap_or(DEFAULT_TIMEOUT);
        let follow = options
            .follow_redirects
            .or(self.inner.config.defaults.follow_redirects)
            .or_else(|| layers.iter().rev().find_map(|d| d.follow_redirects));
        let validate = options
            .validate_ssl
            .or(self.inner.config.defaults.validate_ssl)
            .or_else(|| layers.iter().rev().find_map(|d| d.validate_ssl));
        let mut assertions = Vec::new();
        for directive in request.assertions() {
            let Some(template) = &directive.value else { continue };
            let pending = match renderer.render(template).await {
                Ok(expression) => {
                    let flavour = Flavour::of_directive(&directive.name.value);
                    PendingAssertion::new(expression, template.span, template.as_literal().is_some(), flavour)
                }
                Err(error) => {
                    PendingAssertion::invalid(template.to_source(), error.span(), error.message(), error.hint())
                }
            };
            assertions.push(pending);
        }
        let sleep = request
            .directives
            .iter()
            .rev()
            .find(|directive| directive.kind == volley_syntax::DirectiveKind::Sleep)
            .and_then(|directive| directive.value.clone())
            .map(volley_syntax::Timeout::Template);
        let sleep = renderer.duration(sleep.as_ref(), "sleep").await?;
        let rate_limit =
            match request.directives.iter().rev().find(|directive| directive.kind == DirectiveKind::RateLimit) {
                Some(directive) => {
                    let text = match &directive.value {
                        Some(value) => renderer.render(value).await?,
                        None => String::new(),
                    };
                    let span = directive.value.as_ref().map_or(directive.span, |value| value.span);
                    Some(crate::ratelimit::RateLimit::parse(&text, &built.url.origin().ascii_serialization(), span)?)
                }
                None => None,
            };
        // `>> ./file` and `>>! ./file`: where the response body goes, inside the project.
        let mut save_to = Vec::new();
        for script in request.scripts.iter().filter(|script| script.saves_response()) {
            let Some(path) = &script.path else { continue };
            let target = renderer.render_text(&path.value).await?;
            let overwrite = script.kind == volley_syntax::ScriptKind::OutputOverwrite;
            save_to.push(crate::save::SaveTarget { path: files.inside(target.trim(), path.span)?, overwrite });
        }
        let mut network = self.network(settings, renderer).await?;
        if let Some((certificate, _)) = &built.client_certificate {
            network = Some(self.with_client_certificate(network, certificate, &built.url, directory));
        }
        let BuiltRequest { method, url, headers, body, version, digest, aws: built_aws, .. } = built;
        let tokens = std::mem::take(&mut renderer.tokens);
        let version = version.or(self.inner.config.http_version);
        let cookie_jar = options.cookie_jar.clone().or_else(|| self.active_jar().cloned());
        if let (Exchange::WebSocket { .. }, Some((_, span))) = (&exchange, &digest) {
            return Err(BuildError::Credentials {
                code: volley_syntax::Code::InvalidCredentials,
                reason: "Digest authentication is not supported for WebSocket handshakes".to_owned(),
                hint: "send `Authorization: Basic user:password` or a token, or open the socket after an \
                       authenticated request that sets a cookie"
                    .to_owned(),
                span: *span,
            }
            .into());
        }
        Ok(PreparedRequest {
            method,
            url,
            headers,
            body,
            timeout,
            follow_redirects: !request.no_redirect && follow.unwrap_or(true),
            validate_ssl: validate.unwrap_or(true),
            use_cookies: cookie_jar.is_some() && !request.no_cookie_jar,
            assertions,
            exchange,
            name: request.name.as_ref().map(|name| name.value.clone()),
            also_named: options.also_named.clone(),
            max_body_bytes: options.max_body_bytes,
            spill_dir: options.spill_dir.clone(),
            config_path: settings.config.as_ref().map(|config| config.path.clone()),
            version,
            network,
            digest: digest.map(|(credentials, _)| credentials),
            cookie_jar,
            redactor: Redactor::default(),
            logs: Vec::new(),
            scripts: None,
            save_to,
            sleep,
            rate_limit,
            secrets: Secrets::default(),
            auth: (!tokens.is_empty()).then(|| crate::prepared::PendingAuth {
                tokens,
                secrets: Secrets::default(),
                aws: built_aws,
            }),
        })
    }
}

impl Client {
    /// The certificates and proxies of a request: the client's, the profile's and the
    /// configuration's CA bundles together; their host entries in that order (the first
    /// of equally specific patterns wins); proxies field by field, the client's over the
    /// profile's over the configuration's over the environment's. `None` when none of
    /// them sets anything, so that most runs share the transport's plain clients.
    async fn network(&self, settings: &Settings, renderer: &mut Renderer<'_>) -> Result<Option<Arc<Network>>, Error> {
        let client = &self.inner.config;
        let none_tls = TlsSettings::default();
        let none_proxy = ProxySettings::default();
        let config_tls = settings.config.as_ref().map_or(&none_tls, |config| &config.tls);
        let profile_tls = settings.profile.as_ref().map_or(&none_tls, |profile| &profile.tls);
        let config_proxy = settings.config.as_ref().map_or(&none_proxy, |config| &config.proxy);
        let profile_proxy = settings.profile.as_ref().map_or(&none_proxy, |profile| &profile.proxy);
        let layers = [&client.tls, profile_tls, config_tls];
        let proxy = client.proxy.over(&profile_proxy.over(config_proxy));
        if layers.iter().all(|tls| tls.is_empty()) && proxy.is_empty() {
            return Ok(None);
        }
        let mut network = Network {
            ca: layers.iter().flat_map(|tls| tls.ca.iter().cloned()).collect(),
            hosts: layers.iter().flat_map(|tls| tls.hosts.iter().cloned()).collect(),
            proxies: None,
            io: Arc::clone(&client.io),
        };
        for host in &mut network.hosts {
            host.passphrase = render_setting(renderer, host.passphrase.take()).await?;
        }
        if !proxy.is_empty() {
            let Proxies { http, https, no_proxy } = Proxies::over_environment(proxy);
            network.proxies = Some(Proxies {
                http: render_setting(renderer, http).await?,
                https: render_setting(renderer, https).await?,
                no_proxy,
            });
        }
        Ok(Some(Arc::new(network)))
    }
}

impl Client {
    /// `network` with httpyac's client certificate header of a request first among its
    /// hosts, for the request's host and port only: that request's connection presents
    /// it. Its files are relative to the `.http` file's `directory`.
    fn with_client_certificate(
        &self,
        network: Option<Arc<Network>>,
        certificate: &crate::credentials::ClientCertificate,
        url: &url::Url,
        directory: &Path,
    ) -> Arc<Network> {
        let mut network = network.map_or_else(
            || Network { ca: Vec::new(), hosts: Vec::new(), proxies: None, io: Arc::clone(&self.inner.config.io) },
            |network| (*network).clone(),
        );
        let file = |path: &Option<String>| path.as_deref().map(|path| directory.join(path));
        let host = url.host_str().unwrap_or_default().trim_start_matches('[').trim_end_matches(']');
        let port = url.port_or_known_default().unwrap_or(443);
        let host = if host.contains(':') { format!("[{host}]:{port}") } else { format!("{host}:{port}") };
        network.hosts.insert(
            0,
            HostTls {
                host,
                ca: Vec::new(),
                cert: file(&certificate.cert),
                key: file(&certificate.key),
                pfx: file(&certificate.pfx),
                passphrase: certificate.passphrase.clone(),
            },
        );
        Arc::new(network)
    }
}

/// A setting that may hold `{{…}}` (a proxy's password, a key's passphrase from
/// `$secret`), rendered; the values of secrets it uses join the request's, so errors
/// never show them.
async fn render_setting(renderer: &mut Renderer<'_>, text: Option<String>) -> Result<Option<String>, Error> {
    let Some(text) = text else { return Ok(None) };
    Ok(Some(renderer.render_text(&text).await?))
}

/// The per-protocol rules of a built request: its kind of exchange, the headers its
/// protocol adds (`Accept` and `Last-Event-ID` for events, `Sec-WebSocket-Protocol`),
/// and the WebSocket connect timeout.
async fn protocol_rules(
    request: &Request,
    built: &mut BuiltRequest,
    renderer: &mut Renderer<'_>,
    (files, imports): (&Files<'_>, &[volley_syntax::ProtoImport]),
) -> Result<(Exchange, Option<Duration>), Error> {
    let rules = match &request.protocol {
        // `GET {{socketUrl}}`: a WebSocket URL known only after substitution.
        Protocol::Http if matches!(built.url.scheme(), "ws" | "wss") => {
            if built.method != http::Method::GET {
                let diagnostic = volley_syntax::Diagnostic::new(
                    volley_syntax::Code::ConflictingProtocol,
                    request.method.span,
                    format!("`{}` is a WebSocket URL, opened with GET, not {}", built.url, built.method),
                )
                .with_hint("write `GET` (or `WEBSOCKET`) before the ws:// URL");
                return Err(Error::Invalid { diagnostics: vec![diagnostic] });
            }
            let messages = Box::pin(crate::stream_messages::websocket(request, built, renderer, files)).await?;
            (Exchange::WebSocket { subprotocols: Vec::new(), messages }, None)
        }
        Protocol::Http => (Exchange::Http, None),
        Protocol::Sse(sse) => {
            if !built.headers.contains_key(ACCEPT) {
                built.headers.insert(ACCEPT, http::HeaderValue::from_static("text/event-stream"));
            }
            if let Some(template) = &sse.last_event_id {
                let id = renderer.render(template).await?;
                let value = http::HeaderValue::from_str(id.trim()).map_err(|_| BuildError::InvalidHeader {
                    name: "Last-Event-ID".to_owned(),
                    reason: "the id contains a line break or another control character".to_owned(),
                    span: template.span,
                })?;
                built.headers.insert("last-event-id", value);
            }
            (Exchange::EventStream, None)
        }
        Protocol::WebSocket(websocket) => {
            let mut subprotocols = Vec::new();
            if let Some(template) = &websocket.subprotocols {
                let list = renderer.render(template).await?;
                subprotocols.extend(list.split(',').map(str::trim).filter(|item| !item.is_empty()).map(str::to_owned));
                if !subprotocols.is_empty() {
                    let value = http::HeaderValue::from_str(&subprotocols.join(", ")).map_err(|_| {
                        BuildError::InvalidHeader {
                            name: "Sec-WebSocket-Protocol".to_owned(),
                            reason: "a subprotocol contains a control character".to_owned(),
                            span: template.span,
                        }
                    })?;
                    built.headers.insert("sec-websocket-protocol", value);
                }
            }
            let connect = renderer.duration(websocket.connect_timeout.as_ref(), "ws-connect-timeout").await?;
            let messages = Box::pin(crate::stream_messages::websocket(request, built, renderer, files)).await?;
            (Exchange::WebSocket { subprotocols, messages }, connect)
        }
        Protocol::Grpc(options) => {
            let (call, bytes) = Box::pin(crate::grpc::prepare(request, options, imports, renderer, files)).await?;
            built.body = bytes;
            (Exchange::Grpc(Box::new(call)), None)
        }
    };
    Ok(rules)
}
