// What `volley.send`, `volley.sendAll` and `volley.copyAsCurl` answer (docs/lsp.md,
// "Commands"), and what the panel shows of them. Types only.

/** Which request was sent. Lines are 0-based. */
export interface RequestInfo {
  index: number;
  name?: string | null;
  method: string;
  /** The URL as written, variables unresolved. */
  url: string;
  line: number;
  /** The text of the request's `# @description` directive. */
  description?: string | null;
}

/** The request as it went out, redacted by the engine's redaction policy. */
export interface SentInfo {
  method: string;
  /** The URL with variables resolved. */
  url: string;
  httpVersion?: string;
  headers: [string, string][];
  body?: string;
  bodyEncoding: 'text' | 'base64';
  truncated: boolean;
  /** Sent through an execution server: only the method and URL are known. */
  partial?: boolean;
}

export interface Timing {
  ttfbMs: number;
  totalMs: number;
}

/** A `# @assert`, a script's `client.test`, or a response handler that failed. */
export interface Assertion {
  /** The assertion's expression, the test's name, or `response handler`. */
  expression: string;
  passed: boolean;
  /** Why it failed (what a test or a handler threw), when it did. */
  message?: string;
  /** For an assertion that does not hold: what it wanted (`status == 201`) and what the response had. */
  expected?: string;
  actual?: string;
  /** The line of the `# @assert`, of the `client.test` call, or where the handler failed; 0-based. */
  line: number;
}

export interface StreamItem {
  /** The SSE event type; `text`, `pong` or `close` for a WebSocket message. */
  event: string;
  data: string;
  id?: string;
  /** Milliseconds since the response head. */
  atMs: number;
}

export interface StreamInfo {
  kind: 'sse' | 'websocket';
  items: StreamItem[];
  stopped: 'ended' | 'window' | 'limit' | 'error';
  error?: string;
}

/**
 * How a gRPC call ended. With it, the response's `status` is the HTTP exchange's 200, which
 * the editor does not show; its `body` is the response message as JSON (the array of the
 * messages when the server streams) and its `headers` the response headers, then trailers.
 */
export interface GrpcInfo {
  /** `OK`, `NOT_FOUND`, … */
  code: string;
  /** 0 for `OK`, up to 16. */
  number: number;
  /** `grpc-message`, redacted; empty when the server sent none. */
  message: string;
  kind: 'unary' | 'server-streaming' | 'client-streaming' | 'bidirectional';
  /** How many messages the server sent. */
  messages: number;
}

export interface ResponseInfo {
  /** The HTTP status; for a gRPC call the exchange's 200 (its status is `grpc`). */
  status: number;
  statusText: string;
  httpVersion: string;
  /** The URL the response came from, after redirects. */
  url: string;
  /** In order, repeated names kept. */
  headers: [string, string][];
  contentType?: string | null;
  body: string;
  bodyEncoding: 'text' | 'base64';
  /** The body was larger than what `body` keeps (its first 4 MiB). */
  truncated: boolean;
  /** The whole body's size in bytes. */
  bodySize?: number;
  /** A file holding the whole body as received, when `truncated` (never read whole by the editor). */
  bodyFile?: string | null;
  timing: Timing;
  assertions: Assertion[];
  stream?: StreamInfo;
  /** For a gRPC call: how it ended. */
  grpc?: GrpcInfo;
  /** The body through a jq filter: the request's `# @jq`, or one given in the panel. */
  filtered?: Filtered;
}

/** What a jq filter made of a body (`output`), or why it made nothing (`error`). */
export interface Filtered {
  expression: string;
  output?: string;
  error?: string;
}

/** One of the errors that refused a request (`invalid`). */
export interface RefusalDiagnostic {
  code: string;
  message: string;
  hint?: string | null;
  /** 0-based. */
  line: number;
}

export interface ErrorInfo {
  /**
   * `cancelled`, `invalid`, `disabled`, `not-confirmed`, `config`, a build error's code
   * or a transport error's kind.
   */
  kind: string;
  message: string;
  /** For `invalid`: the errors that refused the request. */
  diagnostics?: RefusalDiagnostic[];
}

/** One request sent: a response, or the error that kept it from being sent. */
export interface Outcome {
  request: RequestInfo;
  response?: ResponseInfo;
  error?: ErrorInfo;
  /** The request as sent, whenever it was built and sent (also when the transport failed). */
  sent?: SentInfo;
  /** The execution server it went through (the `server` setting). */
  server?: string;
  /** What the request's scripts logged (`client.log`), one line each, redacted; absent when none. */
  logs?: string[];
  /** The requests whose responses it reads, sent first because they had not answered yet. */
  ranFirst?: Outcome[];
  /** The id of the response history entry it was stored as (`volley.historyEntry`). */
  historyId?: string;
}

/** The answer of `volley.sendAll`. */
export interface SendAllResult {
  results: Outcome[];
  cancelled: boolean;
}

/** What the response panel shows: one send, or a Send All. */
export type ResponseView =
  | { kind: 'send'; outcome: Outcome; entry?: number }
  | { kind: 'sendAll'; file: string; result: SendAllResult; entries?: number[] };

/** What the server answers to `volley.copyAsCurl`. */
export interface CurlResult {
  curl: string;
  warnings?: string[];
}
