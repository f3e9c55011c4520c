// What `volley.send` and `volley.sendAll` answer (docs/lsp.md, "Commands"). Types only.

/** Which request was sent. Lines are 0-based. */
export interface RequestInfo {
  index: number;
  name?: string | null;
  method: string;
  /** The URL as written, variables unresolved. */
  url: string;
  line: number;
}

export interface Timing {
  ttfbMs: number;
  totalMs: number;
}

export interface Assertion {
  expression: string;
  passed: boolean;
  /** Why it failed, when it did. */
  message?: string;
  /** The line of the `# @assert`, 0-based. */
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

export interface ResponseInfo {
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
  truncated: boolean;
  timing: Timing;
  assertions: Assertion[];
  stream?: StreamInfo;
}

export interface ErrorInfo {
  /** `cancelled`, `invalid`, `config`, a build error's code or a transport error's kind. */
  kind: string;
  message: string;
}

/** One request sent: a response, or the error that kept it from being sent. */
export interface Outcome {
  request: RequestInfo;
  response?: ResponseInfo;
  error?: ErrorInfo;
}

/** The answer of `volley.sendAll`. */
export interface SendAllResult {
  results: Outcome[];
  cancelled: boolean;
}

/** What the response panel shows: one send, or a Send All. */
export type ResponseView =
  | { kind: 'send'; outcome: Outcome }
  | { kind: 'sendAll'; file: string; result: SendAllResult };
