// Types of @volley-http/client, written by hand after SPEC.md's client library tables
// (createClient, createRemoteClient, Client, ClientConfig, RequestDefaults, RunOptions,
// the remote configuration): the names are SPEC.md's, one for one.

/**
 * A filesystem adapter (SPEC.md's `io`). Without one the engine reads the real
 * filesystem, so `run()` needs none in Node.js or Bun; with one, every file the engine
 * reads goes through it: the `.http` file of `run(path)`, `< file` bodies, script
 * files, and `volley.jsonc`, `http-client.env.json` and `.env` files (looked for only
 * when `exists` is given). Methods may return values or Promises. A read that rejects
 * fails the run with `VolleyError` kind `read_file` (or `build` for a body file); an
 * error with `code: 'ENOENT'` is a missing file. {@link createNodeIO} is one over
 * `node:fs`.
 */
export interface IO {
  /** The file's bytes. One of `readBinary` and `readText` is required; `readBinary` wins. */
  readBinary?(path: string): ArrayBuffer | Uint8Array | Promise<ArrayBuffer | Uint8Array>;
  /** The file's text (sent as UTF-8). */
  readText?(path: string): string | Promise<string>;
  /** Whether a file or directory exists at `path` (configuration discovery). */
  exists?(path: string): boolean | Promise<boolean>;
  /** The directory `run(path)` resolves a relative path against (with `path.resolve`). */
  cwd?(): string;
  path?: { resolve(...parts: string[]): string };
}

/** An {@link IO} over `node:fs` and `node:path`: what the engine does without one. */
export function createNodeIO(): Required<Pick<IO, 'readBinary' | 'readText' | 'exists' | 'cwd' | 'path'>>;

/**
 * An HTTP transport adapter: makes each exchange instead of the engine's HTTP client
 * (which is the default). It gets a Fetch `Request` per hop (`redirect: 'manual'`:
 * redirects, cookies, timeouts and cancellation stay the engine's) and answers with a
 * `Response`, whose body is read whole. The request's `signal` is aborted (an
 * `AbortError`) when the engine stops waiting: the request's timeout, the run's
 * `signal`, `close()`. `{ fetch: globalThis.fetch }` is one; a recorder or a stub is
 * another. A throw or a rejection fails the run with `VolleyError` kind `transport`.
 */
export interface Transport {
  fetch(request: Request): Promise<Response>;
}

/**
 * t-req's transport shape, told apart by its `capabilities`: called as `fetch(url, init,
 * ctx)` with `init.signal` aborted as a {@link Transport}'s is, and a form body in
 * fetch's own types (`URLSearchParams`; `FormData` without the engine's Content-Type, so
 * that fetch writes its boundary). Otherwise as {@link Transport}.
 */
export interface FetchTransport {
  capabilities: { proxy: boolean; validateSSL: boolean };
  fetch(url: string, init: RequestInit & { signal: AbortSignal }, ctx: { validateSSL?: boolean }): Promise<Response>;
}

/** What a resolver may give: a string as it is, an object as JSON, others as `String()` gives them. */
export type ResolverValue = string | number | boolean | object;

/**
 * A custom resolver: `{{$name(a, b)}}` calls it with the arguments, as strings, after
 * their own `{{variables}}` are interpolated. It may return a value or a Promise, and
 * may throw: the run then rejects with a `VolleyError` of kind `build` and code
 * `resolver-failed`. Custom resolvers win over the built-ins of the same name.
 */
export type Resolver = (...args: string[]) => ResolverValue | Promise<ResolverValue>;

/** One cookie of a jar. */
export interface Cookie {
  name: string;
  value: string;
  domain: string;
  path: string;
}

/** Automatic cookie management: clients given the same jar share its cookies. */
export class CookieJar {
  /**
   * An empty jar in memory; with `path`, a jar kept in that file: loaded now when it
   * exists (a file that cannot be read or parsed throws), written after every request
   * that changed it (JSON, session cookies included).
   */
  constructor(options?: { path?: string });
  /** The file the jar is kept in, or `undefined` for a jar in memory. */
  readonly path: string | undefined;
  /** The unexpired cookies held. */
  cookies(): Cookie[];
  /** Forgets every cookie. */
  clear(): void;

  // tough-cookie's surface: a sync form, and a promise form (or a Node-style callback
  // given last).
  /** Stores a `Set-Cookie` value (or `{key, value, domain?, path?, …}`) as if `url` sent
   * it; throws (rejects) when it is not kept. */
  setCookieSync(cookie: string | JarCookieInit, url: string | URL): JarCookie;
  setCookie(cookie: string | JarCookieInit, url: string | URL): Promise<JarCookie>;
  /** The cookies a request to `url` sends. */
  getCookiesSync(url: string | URL): JarCookie[];
  getCookies(url: string | URL): Promise<JarCookie[]>;
  /** The `Cookie` header a request to `url` sends (`''` when none). */
  getCookieStringSync(url: string | URL): string;
  getCookieString(url: string | URL): Promise<string>;
  /** Every cookie, session ones included, as a JSON-ready object. */
  serializeSync(): object;
  serialize(): Promise<object>;
  toJSON(): object;
  /** A jar in memory with the cookies of `serialize()`'s object (or its JSON text). */
  static deserializeSync(serialized: object | string): CookieJar;
  static deserialize(serialized: object | string): Promise<CookieJar>;
  /** Forgets every cookie. */
  removeAllCookiesSync(): void;
  removeAllCookies(): Promise<void>;
}

/** A cookie of a jar, as tough-cookie users read it. */
export interface JarCookie {
  /** The name (tough-cookie's field). */
  key: string;
  /** The name. */
  name: string;
  value: string;
  domain: string;
  path: string;
}

/** A cookie to store. */
export interface JarCookieInit {
  key?: string;
  name?: string;
  value?: string;
  domain?: string;
  path?: string;
  secure?: boolean;
  httpOnly?: boolean;
  expires?: Date;
}

/** Default headers and settings of a client. */
export interface RequestDefaults {
  /** Headers added to requests that do not set them. */
  headers?: Record<string, string>;
  /** Follow redirects (default `true`). */
  followRedirects?: boolean;
  /** Check TLS certificates (default `true`). */
  validateSSL?: boolean;
}

/** The configuration of `createClient`. */
export interface ClientConfig {
  /** Filesystem adapter; default: the real filesystem (see {@link IO}). */
  io?: IO;
  /** HTTP transport adapter; default: the engine's own HTTP client. */
  transport?: Transport | FetchTransport | Transport['fetch'];
  /** Initial variables for all requests. */
  variables?: Record<string, unknown>;
  /** Custom resolver functions, keys with the `$` prefix (`{ $token: () => … }`). */
  resolvers?: Record<string, Resolver>;
  /** Automatic cookie management. */
  cookieJar?: CookieJar;
  /** Default timeout for all requests, in milliseconds. */
  timeout?: number;
  /** Default headers and settings. */
  defaults?: RequestDefaults;
  /** CA bundles and client certificates, beside those of `volley.jsonc` `tls`. */
  tls?: TlsConfig;
  /** Proxies, over those of `volley.jsonc` `proxy` and of the environment. */
  proxy?: ProxyConfig;
  /** The HTTP version of requests whose request line names none. */
  httpVersion?: '1.1' | '2';
  /** Read files outside the project (`< ../../secret.txt`): the directory of volley.jsonc,
   * else of the checkout's `.git`, else of the `.http` file. Refused by default
   * (`VolleyError` of kind `build`, code `external-file`). */
  allowExternalFiles?: boolean;
}

/** Certificates (paths relative to the working directory). */
export interface TlsConfig {
  /** PEM bundles of CA certificates trusted beside the system's roots. */
  ca?: string | string[];
  /** By host pattern: `host`, `host:port`, `*.domain` or `*`. */
  hosts?: Record<string, HostTls>;
}

/** What to use with the hosts a pattern matches. */
export interface HostTls {
  /** PEM bundles trusted for these hosts only. */
  ca?: string | string[];
  /** The client certificate (PEM). */
  cert?: string;
  /** Its private key (PEM). */
  key?: string;
  /** The certificate and key in a PKCS#12 file, instead of `cert` and `key`. */
  pfx?: string;
  /** The passphrase of an encrypted key or of `pfx`; best `'{{$secret NAME}}'`. */
  passphrase?: string;
}

/** Proxies; `''` for none. Credentials go in the URL (`{{$secret NAME}}` works). */
export interface ProxyConfig {
  /** The proxy of `http://` and `ws://` URLs. */
  http?: string;
  /** The proxy of `https://` and `wss://` URLs. */
  https?: string;
  /** Hosts reached directly. */
  noProxy?: string[] | string;
}

/** The second argument of `run` and `runString`. */
export interface RunOptions {
  /** Variables for this run (above the client's). */
  variables?: Record<string, unknown>;
  /** Timeout of this run, in milliseconds (a request's `@timeout` still wins). */
  timeout?: number;
  /** Cancels the run: an aborted signal rejects with its `reason` (an `AbortError`). */
  signal?: AbortSignal;
}

/** How a gRPC call (`GRPC host:port/package.Service/Method`) ended. */
export interface GrpcStatus {
  /** `OK`, `NOT_FOUND`, … */
  readonly code: string;
  /** 0 for `OK`. */
  readonly number: number;
  /** `grpc-message`, decoded; empty when the server sent none. */
  readonly message: string;
  /** The status's details (`grpc-status-details-bin`), each as proto3 JSON with its
   * `@type` (`type.googleapis.com/google.rpc.BadRequest` …). */
  readonly details: readonly unknown[];
  /** `unary`, `server-streaming`, `client-streaming` or `bidirectional`. */
  readonly kind: string;
}

/** The `Response` of a run: a Fetch API `Response`; for a gRPC call, its body is the
 * response messages as proto3 JSON, one per line, `status` is 200 (the HTTP exchange's),
 * `ok` is `true` for gRPC status OK only, and `grpc` says how the call ended. */
export type VolleyResponse = Response & { readonly grpc?: GrpcStatus };

/** Runs `.http` definitions. */
export interface Client {
  /** Runs the first request of the `.http` file at `path`. */
  run(path: string, options?: RunOptions): Promise<VolleyResponse>;
  /** Runs the first request of `content` (`.http` text). */
  runString(content: string, options?: RunOptions): Promise<VolleyResponse>;
  /** Sets a variable for all later requests. */
  setVariable(key: string, value: unknown): void;
  /** Sets several variables for all later requests. */
  setVariables(variables: Record<string, unknown>): void;
  /** All current client variables. */
  getVariables(): Record<string, unknown>;
  /** Local: cancels the runs under way and waits for them; later runs reject.
   * Remote: finishes the flow. */
  close(): Promise<void>;
  // Both clients also have `[Symbol.asyncDispose]()` (`await using client = …` closes
  // it at the end of the block); not declared here, so that projects whose TypeScript
  // `lib` has no `esnext.disposable` still compile.
}

/** The configuration of `createRemoteClient`. */
export interface RemoteClientConfig {
  /** Base URL of the execution server. */
  serverUrl: string;
  /** Bearer token, needed when the server was started with `--token`. */
  token?: string;
  /** Initial variables, synced to the server session. */
  variables?: Record<string, unknown>;
  /** Label shown in Observer Mode. */
  flowLabel?: string;
  /** Flow metadata. */
  flowMeta?: Record<string, unknown>;
  /** Server configuration profile. */
  profile?: string;
  /** Default timeout, in milliseconds. */
  timeout?: number;
}

/** A client that runs through the execution server. */
export interface RemoteClient extends Client {
  /** Finishes the flow, best effort; the server's time-to-live still applies. */
  close(): Promise<void>;
  /** The server session's id, once the first run created it. */
  getSessionId(): string | undefined;
  /** The flow's id, once the first run created it. */
  getFlowId(): string | undefined;
}

/** A client that runs `.http` definitions locally, through the native engine. */
export function createClient(config?: ClientConfig): Client;

/**
 * A client that runs through an execution server (`volley serve`): the session and the
 * flow are created by the first run; `setVariable` returns at once and the server
 * hears of it before the next run (a refusal rejects that run, or `close()`). Throws
 * a `VolleyError` for a `serverUrl` that is not a URL.
 */
export function createRemoteClient(config: RemoteClientConfig): RemoteClient;

/** What kind of failure a {@link VolleyError} is. */
export type VolleyErrorKind =
  /** The `.http` file could not be read. */
  | 'read_file'
  /** The request has errors of its own and was not sent (`code`: the diagnostic's). */
  | 'invalid_request'
  /** The text has no request. */
  | 'selection'
  /** The configuration file (`volley.jsonc`) is broken. */
  | 'config'
  /** The request could not be built: undefined variable, failing resolver, missing file (`code`). */
  | 'build'
  /** No response within the timeout. */
  | 'timeout'
  | 'connection_refused'
  | 'dns'
  | 'tls'
  | 'too_many_redirects'
  | 'websocket_handshake'
  /** Any other failure of the exchange (connection reset, protocol error). */
  | 'transport'
  | 'token_refresh'
  /**
   * The execution server refused a remote client's call (`code`: its stable code). A
   * request it could not build is `build` instead, and an exchange it made that failed
   * has its transport kind (`timeout`, `connection_refused`, …, `code` `EXECUTE_ERROR`).
   */
  | 'server'
  | 'other';

/**
 * Why a run gave no response. A response with status 4xx or 5xx resolves; it is not
 * this. A cancelled run rejects with the signal's reason instead (an `AbortError`).
 */
export class VolleyError extends Error {
  constructor(
    message: string,
    details?: {
      kind?: VolleyErrorKind;
      code?: string;
      hint?: string;
      line?: number;
      column?: number;
      cause?: unknown;
    },
  );
  readonly name: 'VolleyError';
  readonly kind: VolleyErrorKind;
  /** A finer stable code: `undefined-variable`, `syntax-error`, … */
  readonly code?: string;
  /** How to fix it, when there is something to say. */
  readonly hint?: string;
  /** 1-based line of the fault in the `.http` text (or the configuration file). */
  readonly line?: number;
  /** 1-based column of the fault; in the `.http` text, in UTF-16 code units (as JavaScript indexes strings). */
  readonly column?: number;
}
