// The language server's response history (`volley.history`, `volley.historyEntry`,
// `volley.historyClear`; docs/lsp.md): its answers' types, and what the editor makes of
// them: quick pick lines, diff titles, which two entries "compare with previous" diffs.
// One store per project, shared with `volley run --history`, kept across reloads.
// Pure: no `vscode` import.

/** One stored response, as `volley.history` lists it (newest first). */
export interface StoredEntry {
  id: string;
  /** RFC 3339, UTC. */
  at: string;
  source: 'editor' | 'cli';
  /** The `.http` file, absolute. */
  file: string;
  request: { index: number; name?: string | null; method: string; url: string; line: number };
  status?: number;
  statusText?: string;
  error?: { kind: string; message: string };
  durationMs?: number;
  bodyBytes: number;
  truncated: boolean;
}

export interface HistoryList {
  entries: StoredEntry[];
}

/** What `volley.historyEntry` answers: the entry and the text file to read and diff. */
export interface HistoryEntryFiles {
  entry: StoredEntry;
  /** The status line, the headers, a blank line and the body (JSON indented). */
  path: string;
  /** The body's bytes as stored. */
  bodyPath?: string;
}

/** How many entries the quick pick lists at most. */
export const HISTORY_PICK_LIMIT = 500;

/** The request of an entry as a title: its name, else its method and URL. */
export function requestTitle(request: StoredEntry['request']): string {
  return request.name ? request.name : `${request.method} ${request.url}`;
}

/** `200 OK`, or why there was no response. */
export function entryResult(entry: StoredEntry): string {
  if (entry.status !== undefined) {
    return `${entry.status} ${entry.statusText ?? ''}`.trim();
  }
  return entry.error ? `not sent: ${entry.error.kind}` : 'no response';
}

/** `2026-11-29 09:00:00` in the local time zone. */
export function entryTime(at: string): string {
  const date = new Date(at);
  if (Number.isNaN(date.getTime())) {
    return at;
  }
  const two = (value: number): string => String(value).padStart(2, '0');
  return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())} ${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`;
}

/** The last path segment of a file. */
export function baseName(file: string): string {
  return file.slice(Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\')) + 1);
}

/** A quick pick line: what came back and for which request; where and when below. */
export function storedLabel(entry: StoredEntry): { label: string; description: string; detail: string } {
  const what = entry.request.name
    ? `${entry.request.name} — ${entry.request.method} ${entry.request.url}`
    : `${entry.request.method} ${entry.request.url}`;
  const facts = [entryTime(entry.at)];
  if (entry.durationMs !== undefined) {
    facts.push(`${Math.round(entry.durationMs)} ms`);
  }
  facts.push(`${sizeText(entry.bodyBytes)}${entry.truncated ? ' (cut)' : ''}`);
  if (entry.source === 'cli') {
    facts.push('from volley run');
  }
  return {
    label: `${entryResult(entry)} · ${what}`,
    description: `${baseName(entry.file)}:${entry.request.line + 1}`,
    detail: facts.join(' · '),
  };
}

/**
 * The diff editor's title for `left` (older) against `right`: `login: 09:00:00 ↔ 09:05:12`
 * for one request, both requests named when they differ.
 */
export function diffTitle(left: StoredEntry, right: StoredEntry): string {
  const leftTime = entryTime(left.at).slice(11);
  const rightTime = entryTime(right.at).slice(11);
  const sameRequest =
    left.file === right.file && requestTitle(left.request) === requestTitle(right.request);
  if (sameRequest) {
    return `${requestTitle(left.request)}: ${leftTime} ↔ ${rightTime}`;
  }
  return `${requestTitle(left.request)} ${leftTime} ↔ ${requestTitle(right.request)} ${rightTime}`;
}

/** Two entries in diff order: the older left, the newer right (by `at`, then by id). */
export function diffOrder(a: StoredEntry, b: StoredEntry): [StoredEntry, StoredEntry] {
  const older = a.at < b.at || (a.at === b.at && a.id < b.id);
  return older ? [a, b] : [b, a];
}

/**
 * The two entries "compare with previous" diffs, from `volley.history {uri, index, limit:
 * 2}` (newest first): the previous left, the latest right; undefined with fewer than two.
 */
export function previousPair(list: HistoryList | null | undefined): [StoredEntry, StoredEntry] | undefined {
  const entries = list?.entries ?? [];
  return entries.length >= 2 ? [entries[1], entries[0]] : undefined;
}

/** The request whose block holds `line` (`volley.tests`'s requests, in order): the first that ends at or after it. */
export function requestIndexAt(requests: { index: number; endLine: number }[], line: number): number | undefined {
  return requests.find((request) => request.endLine >= line)?.index;
}

/** Whether a server error says the server does not know the command (an older `volley`). */
export function isUnknownCommand(error: unknown): boolean {
  const message = typeof error === 'object' && error !== null ? (error as { message?: unknown }).message : undefined;
  return typeof message === 'string' && /unknown command/i.test(message);
}

function sizeText(bytes: number): string {
  if (bytes < 1024) {
    return `${bytes} B`;
  }
  if (bytes < 1024 * 1024) {
    return `${(bytes / 1024).toFixed(1)} KiB`;
  }
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}
