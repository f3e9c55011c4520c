// The client library of SPEC.md for Node.js: createClient(config) (local) and
// createRemoteClient(config) (through `volley serve`) give a Client whose run(path) and
// runString(content) resolve to a standard Fetch API Response. The work is done by the
// engine through the native addon (volley.node, built from crates/node);
// this file only adapts it to JavaScript: options checked, the Response built, failures
// turned into VolleyError, an AbortSignal turned into a cancellation.
'use strict';

const path = require('node:path');

const native = loadNative();

/** Why a run gave no response (an HTTP status of 4xx or 5xx is a Response, not this). */
class VolleyError extends Error {
  constructor(message, { kind = 'other', code, hint, line, column, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'VolleyError';
    this.kind = kind;
    this.code = code ?? undefined;
    this.hint = hint ?? undefined;
    this.line = line ?? undefined;
    this.column = column ?? undefined;
  }
}

/** The error of a NativeFailure. */
function failureError(failure) {
  return new VolleyError(failure.message, failure);
}

// The native jar of each CookieJar, out of sight of users.
const nativeJars = new WeakMap();

/** A cookie jar in memory; clients given the same jar share its cookies. */
class CookieJar {
  /** An empty jar in memory; with `{ path }`, a jar kept in that file (loaded now when
   * it exists, written after every request that changed it). */
  constructor(options = {}) {
    checkObject(options, 'options');
    nativeJars.set(this, new native.NativeCookieJar(optionalStringOf(options.path, 'options.path')));
  }

  /** The file the jar is kept in, or `undefined` for a jar in memory. */
  get path() {
    return nativeJars.get(this).path ?? undefined;
  }

  /** The unexpired cookies held. */
  cookies() {
    return nativeJars.get(this).cookies();
  }

  /** Forgets every cookie. */
  clear() {
    nativeJars.get(this).clear();
  }

  // tough-cookie's surface, as people seed and read jars: each method in a sync form
  // and a promise form (a callback, when given last, is called instead).

  /** Stores a `Set-Cookie` value as if `url` had sent it; throws when it is not kept
   * (not a cookie, or another host's). Returns the cookie. */
  setCookieSync(cookie, url) {
    const text = typeof cookie === 'string' ? cookie : cookieText(cookie);
    const target = urlText(url);
    if (!nativeJars.get(this).setCookie(text, target)) {
      throw new Error(`the cookie \`${text.split(';')[0]}\` cannot be set from ${target}`);
    }
    const name = text.split(';')[0].split('=')[0].trim();
    return this.getCookiesSync(target).find((held) => held.key === name) ?? cookieOf({ name, value: '', domain: '', path: '/' });
  }

  setCookie(cookie, url, ...rest) {
    return promised(() => this.setCookieSync(cookie, url), rest);
  }

  /** The cookies a request to `url` sends, each `{key, name, value, domain, path}`. */
  getCookiesSync(url) {
    return nativeJars.get(this).cookiesFor(urlText(url)).map(cookieOf);
  }

  getCookies(url, ...rest) {
    return promised(() => this.getCookiesSync(url), rest);
  }

  /** The `Cookie` header a request to `url` sends (`''` when none). */
  getCookieStringSync(url) {
    return nativeJars.get(this).cookieString(urlText(url));
  }

  getCookieString(url, ...rest) {
    return promised(() => this.getCookieStringSync(url), rest);
  }

  /** Every cookie, session ones included, as a JSON-ready object (`deserialize` reads it). */
  serializeSync() {
    return JSON.parse(nativeJars.get(this).toJson());
  }

  serialize(...rest) {
    return promised(() => this.serializeSync(), rest);
  }

  toJSON() {
    return this.serializeSync();
  }

  /** A jar in memory holding the cookies of `serialized` (`serialize()`'s object or its JSON text). */
  static deserializeSync(serialized) {
    const jar = new CookieJar();
    const text = typeof serialized === 'string' ? serialized : JSON.stringify(serialized);
    nativeJars.get(jar).replaceFromJson(text);
    return jar;
  }

  static deserialize(serialized, ...rest) {
    return promised(() => CookieJar.deserializeSync(serialized), rest);
  }

  /** Forgets every cookie (tough-cookie's name for `clear`). */
  removeAllCookiesSync() {
    this.clear();
  }

  removeAllCookies(...rest) {
    return promised(() => this.clear(), rest);
  }
}

/** A cookie as tough-cookie users read it: `key` beside `name`. */
function cookieOf(cookie) {
  return { key: cookie.name, name: cookie.name, value: cookie.value, domain: cookie.domain, path: cookie.path };
}

/** The `Set-Cookie` text of a cookie object (`{key|name, value, domain, path, …}`). */
function cookieText(cookie) {
  checkObject(cookie, 'cookie');
  const name = cookie.key ?? cookie.name;
  if (typeof name !== 'string') throw new TypeError('cookie needs a key (or name)');
  let text = `${name}=${cookie.value ?? ''}`;
  if (cookie.domain) text += `; Domain=${cookie.domain}`;
  if (cookie.path) text += `; Path=${cookie.path}`;
  if (cookie.secure) text += '; Secure';
  if (cookie.httpOnly) text += '; HttpOnly';
  if (cookie.expires instanceof Date) text += `; Expires=${cookie.expires.toUTCString()}`;
  return text;
}

function urlText(url) {
  if (url instanceof URL) return url.href;
  return stringOf(url, 'url');
}

/** `work()` as a promise, or through a Node-style callback when the last argument is one. */
function promised(work, rest) {
  const callback = rest.find((argument) => typeof argument === 'function');
  let result;
  try {
    result = work();
  } catch (error) {
    if (callback) return void queueMicrotask(() => callback(error));
    return Promise.reject(error);
  }
  if (callback) return void queueMicrotask(() => callback(null, result));
  return Promise.resolve(result);
}

/** A client that runs `.http` definitions locally. */
function createClient(config = {}) {
  return new LocalClient(config);
}

/** A client that runs through an execution server (`volley serve`). */
function createRemoteClient(config) {
  return new RemoteClient(config);
}

class LocalClient {
  #native;
  #io;
  // The runs under way (cancelled by close()), and whether close() was called.
  #running = new Set();
  #closed = false;

  constructor(config) {
    checkObject(config, 'config');
    const io = ioOf(config.io);
    this.#io = io;
    // An object with `fetch(request)` (SPEC.md's Transport), that function itself, or
    // t-req's shape: `{ capabilities, fetch(url, init, ctx) }`.
    const transport = typeof config.transport === 'function' ? { fetch: config.transport } : config.transport;
    if (transport !== undefined && typeof transport?.fetch !== 'function') {
      throw new TypeError('config.transport must be a function or have a fetch(request) method');
    }
    const exchanges = transport === undefined ? undefined : transportDispatcherOf(transport);
    const resolvers = resolversOf(config.resolvers);
    let jar;
    if (config.cookieJar !== undefined) {
      jar = nativeJars.get(config.cookieJar);
      if (jar === undefined) throw new TypeError('config.cookieJar must be a CookieJar of @volley-http/client');
    }
    const defaults = config.defaults ?? {};
    checkObject(defaults, 'config.defaults');
    this.#native = new native.NativeClient(
      {
        variables: variablesOf(config.variables, 'config.variables'),
        timeout: timeoutOf(config.timeout, 'config.timeout'),
        defaults: {
          headers: defaults.headers === undefined ? undefined : headerPairs(defaults.headers),
          followRedirects: booleanOf(defaults.followRedirects, 'config.defaults.followRedirects'),
          validateSsl: booleanOf(defaults.validateSSL, 'config.defaults.validateSSL'),
        },
        resolvers: resolvers === undefined ? undefined : Object.keys(resolvers),
        // Bun's process.env is its own: what a script sets there never reaches the
        // native environment the engine reads, so `$env` gets a copy of it, as it is
        // now. Node's process.env writes through, and the engine reads it live.
        environment: typeof Bun === 'undefined' ? undefined : { ...process.env },
        tls: tlsOf(config.tls),
        proxy: proxyOf(config.proxy),
        httpVersion: httpVersionOf(config.httpVersion),
        allowExternalFiles: booleanOf(config.allowExternalFiles, 'config.allowExternalFiles'),
      },
      jar,
      resolvers === undefined ? undefined : dispatcherOf(resolvers),
      exchanges?.dispatch,
      exchanges?.abort,
      io === undefined ? undefined : ioDispatcherOf(io),
    );
  }

  /** Runs the first request of the `.http` file at `path` (relative to `io.cwd()` when
   * the adapter has one, else to the working directory). */
  run(path, options) {
    const io = this.#io;
    let file = stringOf(path, 'path');
    if (io !== undefined && typeof io.cwd === 'function' && typeof io.path?.resolve === 'function') {
      file = io.path.resolve(io.cwd(), file);
    }
    return this.#start((nativeOptions) => this.#native.run(file, nativeOptions), options);
  }

  /** Runs the first request of `content` (`.http` text). */
  runString(content, options) {
    return this.#start((nativeOptions) => this.#native.runString(stringOf(content, 'content'), nativeOptions), options);
  }

  setVariable(key, value) {
    this.#native.setVariable(stringOf(key, 'key'), jsonOf(value, `variable ${key}`));
  }

  setVariables(variables) {
    this.#native.setVariables(variablesOf(variables, 'variables') ?? {});
  }

  getVariables() {
    return this.#native.getVariables();
  }

  /** Cancels the runs under way and waits for them to end; later runs reject. The
   * cookie jar keeps what the runs stored (a jar with a file has written it). */
  async close() {
    this.#closed = true;
    const running = [...this.#running];
    for (const run of running) run.cancel();
    await Promise.allSettled(running.map((run) => run.done));
  }

  /** `await using client = createClient()` closes it at the end of the block. */
  async [Symbol.asyncDispose]() {
    await this.close();
  }

  #start(create, options) {
    if (this.#closed) {
      return Promise.reject(new Error('the client is closed: make another with createClient()'));
    }
    const running = this.#running;
    return startRun((nativeOptions) => {
      const run = create(nativeOptions);
      const entry = { cancel: () => run.cancel(), done: null };
      running.add(entry);
      entry.done = new Promise((resolve) => {
        entry.finish = resolve;
      });
      return {
        cancel: () => run.cancel(),
        start: () =>
          run.start().finally(() => {
            running.delete(entry);
            entry.finish();
          }),
      };
    }, options);
  }
}

class RemoteClient {
  #native;
  // The variables as set here, at once (the server hears of them asynchronously).
  #variables;
  // Variable updates on their way to the server, in order; runs wait for them.
  #sync = Promise.resolve();
  // Why the server refused an update, reported by the next run or close().
  #syncFailure;

  constructor(config) {
    checkObject(config, 'config');
    const variables = variablesOf(config.variables, 'config.variables') ?? {};
    const outcome = native.createRemoteClient({
      serverUrl: stringOf(config.serverUrl, 'config.serverUrl'),
      token: optionalStringOf(config.token, 'config.token'),
      variables,
      flowLabel: optionalStringOf(config.flowLabel, 'config.flowLabel'),
      flowMeta: config.flowMeta === undefined ? undefined : variablesOf(config.flowMeta, 'config.flowMeta'),
      profile: optionalStringOf(config.profile, 'config.profile'),
      timeout: timeoutOf(config.timeout, 'config.timeout'),
    });
    if (!(outcome instanceof native.NativeRemoteClient)) throw failureError(outcome);
    this.#native = outcome;
    this.#variables = variables;
  }

  /** Runs the first request of the `.http` file at `path` through the server. */
  run(path, options) {
    return this.#start((nativeOptions) => this.#native.run(stringOf(path, 'path'), nativeOptions), options);
  }

  /** Runs the first request of `content` (`.http` text) through the server. */
  runString(content, options) {
    return this.#start((nativeOptions) => this.#native.runString(stringOf(content, 'content'), nativeOptions), options);
  }

  setVariable(key, value) {
    this.#set({ [stringOf(key, 'key')]: jsonOf(value, `variable ${key}`) });
  }

  setVariables(variables) {
    this.#set(variablesOf(variables, 'variables') ?? {});
  }

  getVariables() {
    return structuredClone(this.#variables);
  }

  /** Finishes the flow, best effort; the server's time-to-live still applies. */
  async close() {
    await this.#settled();
    const failure = await this.#native.close();
    if (failure) throw failureError(failure);
  }

  /** `await using client = createRemoteClient(…)` finishes the flow at the end of the block. */
  async [Symbol.asyncDispose]() {
    await this.close();
  }

  getSessionId() {
    return this.#native.sessionId() ?? undefined;
  }

  getFlowId() {
    return this.#native.flowId() ?? undefined;
  }

  #set(variables) {
    this.#variables = { ...this.#variables, ...variables };
    this.#sync = this.#sync
      .then(() => this.#native.setVariables(variables))
      .then((failure) => {
        if (failure) this.#syncFailure ??= failure;
      });
  }

  /** Waits for the variable updates under way; throws the first the server refused. */
  async #settled() {
    await this.#sync;
    const failure = this.#syncFailure;
    this.#syncFailure = undefined;
    if (failure) throw failureError(failure);
  }

  async #start(create, options) {
    if (options?.signal?.aborted) throw abortReason(options.signal);
    await this.#settled();
    return startRun(create, options);
  }
}

/** One run: options checked, the signal wired to the native run, the outcome shaped. */
async function startRun(create, options = {}) {
  checkObject(options, 'options');
  const signal = options.signal;
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new TypeError('options.signal must be an AbortSignal');
  }
  if (signal?.aborted) throw abortReason(signal);
  const run = create({
    variables: variablesOf(options.variables, 'options.variables'),
    timeout: timeoutOf(options.timeout, 'options.timeout'),
  });
  const cancel = () => run.cancel();
  signal?.addEventListener('abort', cancel, { once: true });
  let outcome;
  try {
    outcome = await run.start();
  } finally {
    signal?.removeEventListener('abort', cancel);
  }
  if (outcome instanceof native.NativeResponse) return toResponse(outcome, run, signal);
  if (outcome.kind === 'aborted' && signal?.aborted) throw abortReason(signal);
  throw failureError(outcome);
}

// Statuses whose Response has no body (the Fetch standard's null body statuses).
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/** A global Response from the native one; `url` and `redirected` set on the instance. */
function toResponse(nativeResponse, run, signal) {
  const status = nativeResponse.status;
  let body = null;
  if (!NULL_BODY_STATUSES.has(status)) {
    body = nativeResponse.streaming ? bodyStream(nativeResponse, run, signal) : nativeResponse.takeBody();
  }
  // The constructor takes 200..=599 only; a WebSocket handshake's 101 is set afterwards.
  const inRange = status >= 200 && status <= 599;
  const response = new Response(body, {
    status: inRange ? status : 200,
    statusText: nativeResponse.statusText,
    headers: nativeResponse.headers,
  });
  const own = {
    url: { value: nativeResponse.url, enumerable: true },
    redirected: { value: nativeResponse.redirected, enumerable: true },
  };
  // A gRPC call: its status, and `ok` for status OK (the HTTP exchange is always 200).
  const grpc = nativeResponse.grpc;
  if (grpc) {
    own.grpc = { value: Object.freeze({ ...grpc }), enumerable: true };
    own.ok = { value: grpc.number === 0, enumerable: true };
  }
  if (!inRange) {
    own.status = { value: status, enumerable: true };
    own.ok = { value: false, enumerable: true };
  }
  Object.defineProperties(response, own);
  // A clone is a new Response: it gets the same own properties.
  const clone = response.clone;
  Object.defineProperty(response, 'clone', {
    value() {
      return Object.defineProperties(clone.call(this), own);
    },
  });
  return response;
}

/** A body still arriving (an event stream) as a ReadableStream; the signal stops it. */
function bodyStream(nativeResponse, run, signal) {
  let onAbort;
  const detach = () => signal?.removeEventListener('abort', onAbort);
  return new ReadableStream({
    start(controller) {
      onAbort = () => {
        run.cancel();
        nativeResponse.cancel();
        controller.error(abortReason(signal));
      };
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
    },
    async pull(controller) {
      try {
        const chunk = await nativeResponse.read();
        if (signal?.aborted) return;
        if (chunk === null) {
          detach();
          controller.close();
        } else {
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        }
      } catch (error) {
        detach();
        if (!signal?.aborted) controller.error(new VolleyError(error.message, { kind: 'transport', cause: error }));
      }
    },
    cancel() {
      detach();
      nativeResponse.cancel();
    },
  });
}

/** `config.resolvers` checked: functions keyed by `$name`; undefined when empty. */
function resolversOf(resolvers) {
  if (resolvers === undefined) return undefined;
  checkObject(resolvers, 'config.resolvers');
  const entries = Object.entries(resolvers);
  for (const [name, resolver] of entries) {
    if (!/^\$./.test(name)) throw new TypeError(`config.resolvers: the key ${JSON.stringify(name)} must start with $`);
    if (typeof resolver !== 'function') throw new TypeError(`config.resolvers.${name} must be a function`);
  }
  return entries.length === 0 ? undefined : Object.fromEntries(entries);
}

/** The one function the addon calls for every custom resolver: always a Promise of a
 * string, so a resolver may return a value or a Promise, and may throw. */
function dispatcherOf(resolvers) {
  return ({ name, arguments: args }) =>
    Promise.resolve()
      .then(() => resolvers[name](...args))
      .then((value) => {
        if (value === undefined || value === null) throw new TypeError(`resolver ${name} returned ${value}`);
        return typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
      });
}

/** An IO adapter over `node:fs`: what the engine reads without one, as an adapter. */
function createNodeIO() {
  const fs = require('node:fs/promises');
  const path = require('node:path');
  return {
    readBinary: (file) => fs.readFile(file),
    readText: (file) => fs.readFile(file, 'utf8'),
    exists: (file) =>
      fs.access(file).then(
        () => true,
        () => false,
      ),
    cwd: () => process.cwd(),
    path: { resolve: (...parts) => path.resolve(...parts) },
  };
}

/** `config.io` checked: it reads with `readBinary` or `readText`; `exists` is optional
 * (without it no `volley.jsonc` or `.env` file is looked for). */
function ioOf(io) {
  if (io === undefined) return undefined;
  checkObject(io, 'config.io');
  if (typeof io.readBinary !== 'function' && typeof io.readText !== 'function') {
    throw new TypeError('config.io must have a readBinary(path) or readText(path) method');
  }
  for (const name of ['exists', 'cwd']) {
    if (io[name] !== undefined && typeof io[name] !== 'function') throw new TypeError(`config.io.${name} must be a function`);
  }
  return io;
}

/** The one function the addon calls for every file the engine reads or looks for
 * through `config.io`: `{ op: 'read' | 'exists', path }` in, `{ bytes }` or
 * `{ exists }` out. A read that fails rejects with the adapter's error, its `code`
 * (`ENOENT` for a missing file) first. */
function ioDispatcherOf(io) {
  return ({ op, path }) =>
    Promise.resolve()
      .then(async () => {
        if (op === 'exists') {
          return { exists: typeof io.exists === 'function' ? (await io.exists(path)) === true : false };
        }
        if (typeof io.readBinary === 'function') {
          const data = await io.readBinary(path);
          if (data instanceof ArrayBuffer) return { bytes: Buffer.from(data) };
          if (ArrayBuffer.isView(data)) return { bytes: Buffer.from(data.buffer, data.byteOffset, data.byteLength) };
          throw new TypeError(`config.io.readBinary must resolve to an ArrayBuffer or a Uint8Array (${path})`);
        }
        const text = await io.readText(path);
        if (typeof text !== 'string') throw new TypeError(`config.io.readText must resolve to a string (${path})`);
        return { bytes: Buffer.from(text, 'utf8') };
      })
      .catch((error) => {
        const message = error instanceof Error ? error.message : String(error);
        const code = typeof error?.code === 'string' ? error.code : undefined;
        throw new Error(code !== undefined && !message.startsWith(code) ? `${code}: ${message}` : message);
      });
}

// Methods whose Request may not have a body.
const BODYLESS_METHODS = new Set(['GET', 'HEAD']);

/** The two functions the addon calls for `config.transport`: `dispatch` for every
 * exchange (redirects are the engine's: `redirect: 'manual'`), the parts of the
 * adapter's `Response` out, its body read whole; `abort` when the engine stops waiting
 * for one (its timeout, the run's cancellation, `close()`), which aborts the signal the
 * adapter was given. A transport with `capabilities` (t-req's shape) is called as
 * `fetch(url, init, ctx)` with a form body as `URLSearchParams` or `FormData`; any other
 * as `fetch(request)`, a Fetch `Request` that carries the signal. */
function transportDispatcherOf(transport) {
  const controllers = new Map();
  const dispatch = ({ id, method, url, headers, body, validateSsl }) => {
    const controller = new AbortController();
    controllers.set(id, controller);
    const init = {
      method,
      headers,
      body: BODYLESS_METHODS.has(method) || body.length === 0 ? null : body,
      redirect: 'manual',
      signal: controller.signal,
    };
    return Promise.resolve()
      .then(async () => {
        if (transport.capabilities === undefined) return transport.fetch(new Request(url, init));
        return transport.fetch(url, await withFetchBody(init), { validateSSL: validateSsl });
      })
      .then(async (response) => {
        if (!(response instanceof Response)) throw new TypeError('transport.fetch must resolve to a Response');
        return {
          status: response.status,
          headers: [...response.headers],
          body: Buffer.from(await response.arrayBuffer()),
        };
      })
      .finally(() => controllers.delete(id));
  };
  const abort = (id) => {
    const reason = new DOMException('Volley stopped waiting for this exchange (a timeout, a cancellation or close())', 'AbortError');
    controllers.get(id)?.abort(reason);
  };
  return { dispatch, abort };
}

/** `init` with a form body in fetch's own types: `URLSearchParams` for
 * `application/x-www-form-urlencoded`, `FormData` for `multipart/form-data` (without the
 * Content-Type and Content-Length the engine wrote: fetch writes its own boundary). */
async function withFetchBody(init) {
  if (init.body === null) return init;
  const type = init.headers.find(([name]) => name.toLowerCase() === 'content-type')?.[1] ?? '';
  if (/^application\/x-www-form-urlencoded\b/i.test(type)) {
    return { ...init, body: new URLSearchParams(Buffer.from(init.body).toString('utf8')) };
  }
  if (/^multipart\/form-data\b/i.test(type)) {
    const form = await new Response(init.body, { headers: { 'content-type': type } }).formData();
    const headers = init.headers.filter(([name]) => !['content-type', 'content-length'].includes(name.toLowerCase()));
    return { ...init, headers, body: form };
  }
  return init;
}

function abortReason(signal) {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/** `config.tls`: `{ ca?: string[], hosts?: { [pattern]: { ca?, cert?, key?, pfx?, passphrase? } } }`. */
function tlsOf(tls) {
  if (tls === undefined) return undefined;
  checkObject(tls, 'config.tls');
  const paths = (value, name) => {
    if (value === undefined) return undefined;
    const list = typeof value === 'string' ? [value] : value;
    if (!Array.isArray(list)) throw new TypeError(`${name} must be a path or a list of paths`);
    return list.map((path, index) => stringOf(path, `${name}[${index}]`));
  };
  let hosts;
  if (tls.hosts !== undefined) {
    checkObject(tls.hosts, 'config.tls.hosts');
    hosts = Object.entries(tls.hosts).map(([host, entry]) => {
      const name = `config.tls.hosts[${JSON.stringify(host)}]`;
      checkObject(entry, name);
      return {
        host,
        ca: paths(entry.ca, `${name}.ca`),
        cert: optionalStringOf(entry.cert, `${name}.cert`),
        key: optionalStringOf(entry.key, `${name}.key`),
        pfx: optionalStringOf(entry.pfx, `${name}.pfx`),
        passphrase: optionalStringOf(entry.passphrase, `${name}.passphrase`),
      };
    });
  }
  return { ca: paths(tls.ca, 'config.tls.ca'), hosts };
}

/** `config.proxy`: `{ http?: string, https?: string, noProxy?: string[] }`. */
function proxyOf(proxy) {
  if (proxy === undefined) return undefined;
  checkObject(proxy, 'config.proxy');
  let noProxy = proxy.noProxy;
  if (typeof noProxy === 'string') noProxy = noProxy.split(',').map((host) => host.trim());
  if (noProxy !== undefined && !Array.isArray(noProxy)) {
    throw new TypeError('config.proxy.noProxy must be a list of hosts');
  }
  return {
    http: optionalStringOf(proxy.http, 'config.proxy.http'),
    https: optionalStringOf(proxy.https, 'config.proxy.https'),
    noProxy: noProxy?.map((host, index) => stringOf(host, `config.proxy.noProxy[${index}]`)),
  };
}

function httpVersionOf(version) {
  if (version === undefined) return undefined;
  if (version !== '1.1' && version !== '2') throw new TypeError('config.httpVersion must be "1.1" or "2"');
  return version;
}

function checkObject(value, name) {
  if (value === null || typeof value !== 'object') throw new TypeError(`${name} must be an object`);
}

function stringOf(value, name) {
  if (typeof value !== 'string') throw new TypeError(`${name} must be a string`);
  return value;
}

function optionalStringOf(value, name) {
  return value === undefined ? undefined : stringOf(value, name);
}

function booleanOf(value, name) {
  if (value !== undefined && typeof value !== 'boolean') throw new TypeError(`${name} must be a boolean`);
  return value;
}

function timeoutOf(value, name) {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new TypeError(`${name} must be a number of milliseconds, 0 or more`);
  }
  return value;
}

/** Variables as JSON values: what `JSON.stringify` makes of them (a `Date` becomes its
 * ISO string, `undefined` properties are left out); a `BigInt` is a TypeError. */
function variablesOf(value, name) {
  if (value === undefined) return undefined;
  checkObject(value, name);
  return jsonOf(value, name);
}

function jsonOf(value, name) {
  let text;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new TypeError(`${name} cannot be represented as JSON: ${error.message}`, { cause: error });
  }
  if (text === undefined) throw new TypeError(`${name} cannot be represented as JSON`);
  return JSON.parse(text);
}

/** `Record<string, string>`, `Headers` or `[name, value]` pairs, as pairs. */
function headerPairs(headers) {
  if (headers instanceof Headers || Array.isArray(headers)) return [...headers].map(([name, value]) => [name, value]);
  checkObject(headers, 'config.defaults.headers');
  return Object.entries(headers).map(([name, value]) => [name, String(value)]);
}

function loadNative() {
  const file = path.join(__dirname, 'volley.node');
  try {
    return require(file);
  } catch (error) {
    if (error.code !== 'MODULE_NOT_FOUND') throw error;
    throw new Error(
      `@volley-http/client: the native addon ${file} is missing; build it with \`npm run build\` ` +
        '(needs the Rust toolchain and the Volley repository)',
      { cause: error },
    );
  }
}

module.exports = { createClient, createRemoteClient, createNodeIO, CookieJar, VolleyError };
