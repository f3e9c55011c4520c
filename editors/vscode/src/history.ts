// The session's responses: every outcome the panel showed, numbered, with what sent it
// (so it can be re-run), and the pure helpers of the panel's actions on one of them
// (the body as bytes to save, the request as sent as text). No `vscode` import.
//
// Invariants: ids are unique for the session and increase with time; the history keeps
// at most `capacity` entries, dropping the oldest, and the bodies of the newest ones up
// to `bodyBudget` characters in all (older entries keep everything but their bodies,
// which the language server's stored history still has); an entry changes only then.

import type { Outcome, SentInfo } from './outcome';
import { grpcCall, responseStatus } from './status';

/** How a history entry was sent, so that re-running it sends the same request again. */
export type Origin =
  | { command: 'send'; uri: string; index: number }
  | { command: 'sendAll'; uri: string; index: number };

export interface HistoryEntry {
  id: number;
  /** Milliseconds since the epoch, when the answer came. */
  at: number;
  /** The document's file name, for labels. */
  file: string;
  outcome: Outcome;
  origin: Origin;
}

/** How many responses a session keeps by default. */
export const HISTORY_CAPACITY = 100;

/** How many characters of bodies a session keeps by default (the newest entries'). */
export const HISTORY_BODY_BUDGET = 32 * 1024 * 1024;

export class History {
  private readonly items: HistoryEntry[] = [];
  private nextId = 1;

  constructor(
    private readonly capacity = HISTORY_CAPACITY,
    private readonly bodyBudget = HISTORY_BODY_BUDGET,
  ) {}

  /** Records `outcome` and answers its entry. */
  add(outcome: Outcome, origin: Origin, file: string, at: number = Date.now()): HistoryEntry {
    const entry: HistoryEntry = { id: this.nextId++, at, file, outcome, origin };
    this.items.push(entry);
    if (this.items.length > this.capacity) {
      this.items.splice(0, this.items.length - this.capacity);
    }
    this.releaseOldBodies();
    return entry;
  }

  /** Empties the bodies of the entries past the budget, newest kept first. */
  private releaseOldBodies(): void {
    let kept = 0;
    for (let at = this.items.length - 1; at >= 0; at--) {
      const outcome = this.items[at].outcome;
      const size = (outcome.response?.body.length ?? 0) + (outcome.sent?.body?.length ?? 0);
      kept += size;
      if (kept > this.bodyBudget && size > 0) {
        this.items[at].outcome = released(outcome);
      }
    }
  }

  get(id: number): HistoryEntry | undefined {
    return this.items.find((entry) => entry.id === id);
  }

  /** Newest first. */
  entries(): HistoryEntry[] {
    return [...this.items].reverse();
  }

  get size(): number {
    return this.items.length;
  }
}

/** `outcome` without its bodies: marked cut, so that the panel offers the whole body's file. */
function released(outcome: Outcome): Outcome {
  const copy: Outcome = { ...outcome };
  if (copy.response) {
    copy.response = { ...copy.response, body: '', truncated: true };
  }
  if (copy.sent?.body !== undefined) {
    copy.sent = { ...copy.sent, body: undefined, truncated: true };
  }
  return copy;
}

/** A quick pick line for `entry`: what was sent and what came of it. */
export function historyLabel(entry: HistoryEntry): { label: string; description: string; detail: string } {
  const { request, response, error } = entry.outcome;
  const result = !response
    ? `not sent: ${error?.kind ?? 'unknown'}`
    : response.grpc
      ? `${responseStatus(response)} · ${grpcCall(response.grpc)}`
      : responseStatus(response);
  const what = request.name ? `${request.name} — ${request.method} ${request.url}` : `${request.method} ${request.url}`;
  const time = new Date(entry.at).toISOString().slice(11, 19);
  const timing = response ? ` · ${Math.round(response.timing.totalMs)} ms` : '';
  return { label: `${result} · ${what}`, description: `${entry.file}:${request.line + 1}`, detail: `${time} UTC${timing}` };
}

/** The bytes of the response's body as received (base64 decoded), and whether it was cut. */
export function bodyBytes(outcome: Outcome): { bytes: Uint8Array; truncated: boolean } | undefined {
  const response = outcome.response;
  if (!response) {
    return undefined;
  }
  const bytes =
    response.bodyEncoding === 'base64' ? Buffer.from(response.body, 'base64') : Buffer.from(response.body, 'utf8');
  return { bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), truncated: response.truncated };
}

/** A file name to offer when saving the body: the URL's last segment, else by content type. */
export function suggestedBodyName(outcome: Outcome): string {
  const response = outcome.response;
  const url = response?.url ?? outcome.request.url;
  const path = url.replace(/^[a-z]+:\/\/[^/]*/i, '').replace(/[?#].*$/, '');
  const last = path.slice(path.lastIndexOf('/') + 1);
  if (/^[\w.-]+\.\w+$/.test(last)) {
    return last;
  }
  const type = (response?.contentType ?? '').toLowerCase();
  const extension = type.includes('json')
    ? 'json'
    : type.includes('html')
      ? 'html'
      : type.includes('xml')
        ? 'xml'
        : type.startsWith('text/')
          ? 'txt'
          : response?.bodyEncoding === 'base64'
            ? 'bin'
            : 'txt';
  return `${last && /^[\w.-]+$/.test(last) ? last : 'response'}.${extension}`;
}

/** The request as sent, as an HTTP message (the body as text, or a note when it is binary). */
export function sentText(sent: SentInfo): string {
  const lines = [`${sent.method} ${sent.url}${sent.httpVersion ? ` ${sent.httpVersion}` : ''}`];
  for (const [name, value] of sent.headers) {
    lines.push(`${name}: ${value}`);
  }
  let text = lines.join('\n');
  if (sent.body !== undefined && sent.body !== '') {
    const body =
      sent.bodyEncoding === 'base64' ? `<binary body, ${Buffer.from(sent.body, 'base64').length} bytes>` : sent.body;
    text += `\n\n${body}`;
  }
  if (sent.truncated) {
    text += '\n\n# The body was truncated: only its first part is shown.';
  }
  if (sent.partial) {
    text += '\n\n# Sent through an execution server: its answer gives the method and URL, not the headers and body.';
  }
  return `${text}\n`;
}
