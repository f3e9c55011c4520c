// The response panel's HTML, from the outcomes of `volley.send` and `volley.sendAll`.
// Pure: no `vscode` import, so the tests render real outcomes without an editor.

import { renderBodySection, renderRaw, renderViewSwitcher, type RenderOptions, VIEWER_STYLE } from './bodyview';
import { escapeHtml } from './html';
import { highlightJson, isJson } from './json';
import type { LiveStream, LiveView } from './live';
import type { Assertion, ErrorInfo, Filtered, Outcome, ResponseInfo, ResponseView, StreamInfo, StreamItem } from './outcome';
import { grpcCall, responseStatus, statusClass } from './status';

/**
 * The panel's actions on one outcome, as links to the extension's commands (a webview
 * without scripts follows `command:` links when the panel enables them). Each takes
 * `{entry}`, the outcome's history id.
 */
export const PANEL_ACTIONS: { command: string; title: string; needs: 'response' | 'sent' | 'history' | 'any' }[] = [
  { command: 'volley.rerun', title: 'Re-run', needs: 'any' },
  { command: 'volley.compareWithPrevious', title: 'Compare with previous', needs: 'history' },
  { command: 'volley.saveBody', title: 'Save body…', needs: 'response' },
  { command: 'volley.filterBody', title: 'Filter (jq)…', needs: 'response' },
  { command: 'volley.copyAsCurl', title: 'Copy as cURL', needs: 'any' },
  { command: 'volley.showSent', title: 'Request as sent', needs: 'sent' },
  { command: 'volley.showHistory', title: 'History…', needs: 'any' },
];

/** The commands the panel's links may run: the actions, the views and the large body's links. */
export const PANEL_COMMANDS = [
  ...PANEL_ACTIONS.map((action) => action.command),
  'volley.responseView',
  'volley.openBody',
  'volley.openInEditor',
];

/** How a page is rendered: the view's mode, the large bodies' sink, and the viewer's script. */
export interface PageOptions extends RenderOptions {
  /** The large-body viewer (`dist/bodyviewer.js`), put in the page when a body needs it. */
  script?: string;
}

/**
 * The whole page: a strict Content Security Policy, one nonce'd style, and no script but
 * the large-body viewer's (nonce'd too), only when a body is too large for the page.
 */
export function renderPage(view: ResponseView | LiveView, nonce: string, options: PageOptions = {}): string {
  const mode = options.mode ?? 'full';
  const before = options.bodies?.length ?? 0;
  const body =
    view.kind === 'send'
      ? `${renderViewSwitcher(mode, view.entry)}\n${renderOutcome(view.outcome, view.entry, options)}`
      : view.kind === 'sendAll'
        ? `${renderViewSwitcher(mode, undefined)}\n${renderSendAll(view.file, view.result, view.entries, options)}`
        : renderLive(view);
  const script = options.script !== undefined && (options.bodies?.length ?? 0) > before ? options.script : undefined;
  const scriptPolicy = script === undefined ? '' : ` script-src 'nonce-${escapeHtml(nonce)}';`;
  const scriptTag = script === undefined ? '' : `\n<script nonce="${escapeHtml(nonce)}">${script.replace(/<\/(script)/gi, '<\\/$1')}</script>`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'nonce-${escapeHtml(nonce)}';${scriptPolicy}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>${escapeHtml(pageTitle(view))}</title>
<style nonce="${escapeHtml(nonce)}">${STYLE}${VIEWER_STYLE}</style>
</head>
<body>
${body}${scriptTag}
</body>
</html>
`;
}

/** The panel's title: the request's name or method and URL, or the file of a Send All. */
export function pageTitle(view: ResponseView | LiveView): string {
  if (view.kind === 'sendAll') {
    return `Responses: ${view.file}`;
  }
  if (view.kind === 'live') {
    return view.title;
  }
  const request = view.outcome.request;
  const title = `Response: ${request.name ?? `${request.method} ${request.url}`}`;
  return request.description ? `${title} — ${request.description}` : title;
}

/**
 * One request and what came of it; with `entry` (its history id), the action links.
 * The heading line carries the request's `# @description` when it has one.
 */
export function renderOutcome(outcome: Outcome, entry?: number, options: RenderOptions = {}): string {
  const request = outcome.request;
  const name = request.name ? ` <span class="name">${escapeHtml(request.name)}</span>` : '';
  const description = request.description
    ? ` <span class="description">— ${escapeHtml(request.description)}</span>`
    : '';
  const heading = `<h2><span class="method">${escapeHtml(request.method)}</span> ${escapeHtml(request.url)}${name}${description} <span class="muted">line ${request.line + 1}</span></h2>`;
  const logs = outcome.logs ?? [];
  let content: string;
  if (outcome.response) {
    content = renderResponse(outcome.response, logs, entry, options);
  } else {
    content = renderError(
      outcome.error ?? { kind: 'unknown', message: 'the server answered neither a response nor an error' },
    );
    if (logs.length > 0) {
      content += `\n${renderLogs(logs)}`;
    }
  }
  const actions = entry === undefined ? '' : `\n${renderActions(outcome, entry)}`;
  const first = outcome.ranFirst?.length ? `\n${renderRanFirst(outcome.ranFirst, options)}` : '';
  return `<section class="outcome">\n${heading}${actions}${first}\n${content}\n</section>`;
}

/** The requests sent first because this one reads their responses: one line each, the
 * whole outcome of each under it (a `<details>` works without scripts). */
function renderRanFirst(outcomes: Outcome[], options: RenderOptions): string {
  const items = outcomes.map((outcome) => {
    const request = outcome.request;
    const label = escapeHtml(request.name ?? `${request.method} ${request.url}`);
    const result = outcome.response
      ? `<span class="${statusClass(outcome.response) === 'fail' ? 'fail' : 'pass'}">${escapeHtml(responseStatus(outcome.response))}</span>`
      : `<span class="fail">not sent: ${escapeHtml(outcome.error?.kind ?? 'unknown')}</span>`;
    return `<details class="ran-first"><summary>${label} · ${result}</summary>\n${renderOutcome(outcome, undefined, options)}\n</details>`;
  });
  return `<p class="muted">Sent first, because this request reads their responses:</p>\n${items.join('\n')}`;
}

/** The action links of one outcome (those that apply to it). */
export function renderActions(outcome: Outcome, entry: number): string {
  const argument = encodeURIComponent(JSON.stringify([{ entry }]));
  const links = PANEL_ACTIONS.filter(
    (action) =>
      action.needs === 'any' ||
      (action.needs === 'response' && outcome.response) ||
      (action.needs === 'sent' && outcome.sent) ||
      (action.needs === 'history' && outcome.response && outcome.historyId !== undefined),
  ).map((action) => `<a class="action" href="command:${action.command}?${argument}">${escapeHtml(action.title)}</a>`);
  return `<p class="actions">${links.join(' · ')}</p>`;
}

/** Every outcome of a Send All, one section each, under a summary; `entries` are their history ids. */
export function renderSendAll(
  file: string,
  result: { results: Outcome[]; cancelled: boolean },
  entries?: number[],
  options: RenderOptions = {},
): string {
  const failed = result.results.filter(failedOutcome).length;
  const parts = [`${result.results.length} ${plural(result.results.length, 'request')} sent`];
  if (failed > 0) {
    parts.push(`<span class="fail">${failed} failed</span>`);
  }
  if (result.cancelled) {
    parts.push('<span class="fail">cancelled: the requests after the last one shown were not sent</span>');
  }
  const summary = `<h1>${escapeHtml(file)}</h1>\n<p class="summary">${parts.join(' · ')}</p>`;
  const sections = result.results.map((outcome, i) => renderOutcome(outcome, entries?.[i], options));
  return [summary, ...sections].join('\n');
}

/**
 * An outcome that is an error, a 4xx or 5xx status, a gRPC call that did not end `OK`, or
 * has a failed assertion.
 */
export function failedOutcome(outcome: Outcome): boolean {
  const response = outcome.response;
  if (!response) {
    return true;
  }
  return statusClass(response) === 'fail' || response.assertions.some((assertion) => !assertion.passed);
}

/**
 * The response in the view's mode (`full` when none): the scripts' log lines after the
 * assertions, near the tests they go with; `headers` leaves out the body, `body` shows
 * only it, `raw` the status line, headers and body as text.
 */
function renderResponse(response: ResponseInfo, logs: string[], entry: number | undefined, options: RenderOptions): string {
  const mode = options.mode ?? 'full';
  if (mode === 'raw') {
    return renderRaw(response, entry, options);
  }
  if (mode === 'body') {
    return [...(response.filtered ? [renderFiltered(response.filtered)] : []), renderBodySection(response, entry, options)].join('\n');
  }
  // A gRPC call's status, then its kind and message count, never the HTTP exchange's 200.
  const status = response.grpc ? responseStatus(response) : `${response.httpVersion} ${responseStatus(response)}`;
  const call = response.grpc ? ` · ${escapeHtml(grpcCall(response.grpc))}` : '';
  const statusLine = `<p class="status"><span class="${statusClass(response)}">${escapeHtml(status)}</span>${call} · ${formatMs(response.timing.totalMs)} · ${escapeHtml(bodySize(response))}</p>`;
  const url = `<p class="muted url">${escapeHtml(response.url)}</p>`;
  const sections = [statusLine, url];
  if (response.assertions.length > 0) {
    sections.push(renderAssertions(response.assertions));
  }
  if (logs.length > 0) {
    sections.push(renderLogs(logs));
  }
  if (response.stream) {
    sections.push(renderStream(response.stream));
  }
  sections.push(renderHeaders(response.headers));
  if (mode !== 'headers') {
    if (response.filtered) {
      sections.push(renderFiltered(response.filtered));
    }
    sections.push(renderBodySection(response, entry, options));
  }
  sections.push(
    `<p class="muted timing">Time to first byte ${formatMs(response.timing.ttfbMs)}, total ${formatMs(response.timing.totalMs)}</p>`,
  );
  return sections.join('\n');
}

/** Why a request was not sent; a refusal says what to do about it. */
export function renderError(error: ErrorInfo): string {
  const { kind, message } = error;
  if (kind === 'invalid') {
    const items = (error.diagnostics ?? []).map((diagnostic) => {
      const hint = diagnostic.hint ? `<br><span class="muted">hint: ${escapeHtml(diagnostic.hint)}</span>` : '';
      return `<li><span class="muted">line ${diagnostic.line + 1}</span> <code>${escapeHtml(diagnostic.code)}</code>: ${escapeHtml(diagnostic.message)}${hint}</li>`;
    });
    // The list says what the message sums up; the message alone when there is no list.
    const details = items.length > 0 ? `</p>\n<ul class="refusal">\n${items.join('\n')}\n</ul>` : ` ${escapeHtml(message)}</p>`;
    return `<p class="error"><span class="fail">Refused</span>: the request has errors, so it was not sent.${details}\n<p class="muted">Fix the errors shown in the editor (Problems view), then send again.</p>`;
  }
  if (kind === 'disabled') {
    return `<p class="error"><span class="redirect">Disabled</span>: the request has <code># @disabled</code>, so it is never sent. Remove the directive to send it.</p>`;
  }
  if (kind === 'not-confirmed') {
    return `<p class="error"><span class="redirect">Not confirmed</span>: the request has a <code># @note</code> and sending it was not confirmed. Send it again and choose Send.</p>`;
  }
  return `<p class="error"><span class="fail">Not sent</span> <code>${escapeHtml(kind)}</code>: ${escapeHtml(message)}</p>`;
}

function renderAssertions(assertions: Assertion[]): string {
  const passed = assertions.filter((assertion) => assertion.passed).length;
  const items = assertions.map((assertion) => {
    const mark = assertion.passed ? '<span class="pass">✓</span>' : '<span class="fail">✗</span>';
    const message = assertion.message ? ` — ${escapeHtml(assertion.message)}` : '';
    return `<li>${mark} <code>${escapeHtml(assertion.expression)}</code>${message} <span class="muted">line ${assertion.line + 1}</span></li>`;
  });
  return `<h3>Assertions: ${passed}/${assertions.length} passed</h3>\n<ul class="assertions">\n${items.join('\n')}\n</ul>`;
}

/** What the scripts logged (`client.log`), one line each, as text. */
function renderLogs(logs: string[]): string {
  return `<h3>Log</h3>\n<pre class="log">${logs.map(escapeHtml).join('\n')}</pre>`;
}

const STOPPED: Record<StreamInfo['stopped'], string> = {
  ended: 'The server ended the stream',
  window: 'Listening stopped when the listening window ran out',
  limit: 'Listening stopped at the item limit',
  error: 'Listening stopped on an error',
};

function renderStream(stream: StreamInfo): string {
  const noun = stream.kind === 'sse' ? 'event' : 'message';
  const title = stream.kind === 'sse' ? 'Server-sent events' : 'WebSocket messages';
  const error = stream.error ? `: ${escapeHtml(stream.error)}` : '';
  const stopped = STOPPED[stream.stopped] ?? `Listening stopped: ${escapeHtml(stream.stopped)}`;
  const later = stream.stopped === 'ended' ? '' : ` Later ${noun}s are not shown.`;
  const note = `<p class="muted">${stream.items.length} ${plural(stream.items.length, noun)} received. ${stopped}${error}.${later}</p>`;
  if (stream.items.length === 0) {
    return `<h3>${title}</h3>\n${note}`;
  }
  return `<h3>${title}</h3>\n${note}\n${streamTable(stream.kind, stream.items)}`;
}

function streamTable(kind: LiveStream['kind'], items: StreamItem[]): string {
  const rows = items.map(
    (item) =>
      `<tr><td class="muted">${formatMs(item.atMs)}</td><td>${escapeHtml(item.event)}</td><td>${escapeHtml(item.id ?? '')}</td><td><pre>${isJson(item.data) ? highlightJson(item.data) : escapeHtml(item.data)}</pre></td></tr>`,
  );
  return `<table class="stream">\n<tr><th>at</th><th>${kind === 'sse' ? 'event' : 'type'}</th><th>id</th><th>data</th></tr>\n${rows.join('\n')}\n</table>`;
}

/** The streams of a send while the server still listens: the newest items last. */
export function renderLive(view: LiveView): string {
  const heading = `<h2>${escapeHtml(view.title)} <span class="muted">listening…</span></h2>`;
  if (view.streams.length === 0) {
    return `${heading}\n<p class="muted">Waiting for the response.</p>`;
  }
  return [heading, ...view.streams.map(renderLiveStream)].join('\n');
}

const LIVE_TITLES: Record<LiveStream['kind'], string> = {
  sse: 'Server-sent events',
  websocket: 'WebSocket messages',
  grpc: 'gRPC messages',
};

function renderLiveStream(stream: LiveStream): string {
  const noun = stream.kind === 'sse' ? 'event' : 'message';
  const title = LIVE_TITLES[stream.kind] ?? 'Messages';
  const status = stream.status === undefined ? '' : ` · status ${stream.status}`;
  const count = stream.items.length + stream.dropped;
  const dropped = stream.dropped > 0 ? ` (the first ${stream.dropped} are no longer shown)` : '';
  const note = `<p class="muted">Request #${stream.requestIndex + 1}${status} · ${count} ${plural(count, noun)} so far${dropped}.</p>`;
  if (stream.items.length === 0) {
    return `<h3>${title}</h3>\n${note}`;
  }
  return `<h3>${title}</h3>\n${note}\n${streamTable(stream.kind, stream.items)}`;
}

function renderHeaders(headers: [string, string][]): string {
  const rows = headers.map(([name, value]) => `<tr><th>${escapeHtml(name)}</th><td>${escapeHtml(value)}</td></tr>`);
  return `<details open>\n<summary>Headers (${headers.length})</summary>\n<table class="headers">\n${rows.join('\n')}\n</table>\n</details>`;
}

/** The body through a jq filter, above the body itself. */
function renderFiltered(filtered: Filtered): string {
  const heading = `<h3>Filtered by <code>${escapeHtml(filtered.expression)}</code></h3>`;
  if (filtered.error !== undefined) {
    return `${heading}\n<p class="error"><span class="fail">The filter made nothing</span>: ${escapeHtml(filtered.error)}</p>`;
  }
  const output = filtered.output ?? '';
  const values = output.trim();
  const html = isJson(values) ? highlightJson(values) : escapeHtml(output);
  return `${heading}\n<pre class="body filtered">${html || '<span class="muted">no values</span>'}</pre>`;
}

/** `response`'s body size, as the status line shows it. */
function bodySize(response: ResponseInfo): string {
  const bytes =
    response.bodySize ??
    (response.bodyEncoding === 'base64' ? base64Length(response.body) : Buffer.byteLength(response.body, 'utf8'));
  return formatBytes(bytes);
}

/** How many bytes a base64 text decodes to. */
export function base64Length(text: string): number {
  const clean = text.replace(/[^A-Za-z0-9+/=_-]/g, '');
  const padding = clean.endsWith('==') ? 2 : clean.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((clean.length * 3) / 4) - padding);
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) {
    return `${bytes} B`;
  }
  if (bytes < 1024 * 1024) {
    return `${(bytes / 1024).toFixed(1)} KiB`;
  }
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

export function formatMs(ms: number): string {
  if (ms >= 1000) {
    return `${(ms / 1000).toFixed(2)} s`;
  }
  return `${ms < 100 ? ms.toFixed(1) : Math.round(ms)} ms`;
}

function plural(count: number, noun: string): string {
  return count === 1 ? noun : `${noun}s`;
}

const STYLE = `
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); padding: 0 1em 2em; }
h1 { font-size: 1.3em; }
h2 { font-size: 1.1em; margin-top: 1.5em; word-break: break-all; }
h3 { font-size: 1em; margin: 1em 0 0.4em; }
section.outcome + section.outcome { border-top: 1px solid var(--vscode-panel-border, #8884); }
pre, code { font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); }
pre { white-space: pre-wrap; word-break: break-all; margin: 0; }
pre.body { background: var(--vscode-textCodeBlock-background); padding: 0.6em; }
pre.log { border-left: 2px solid var(--vscode-panel-border, #8884); padding: 0.2em 0.6em; }
table { border-collapse: collapse; }
th, td { text-align: left; vertical-align: top; padding: 0.15em 0.8em 0.15em 0; }
table.headers th { font-weight: 600; white-space: nowrap; }
table.headers td { word-break: break-all; }
table.stream td, table.stream th { border-bottom: 1px solid var(--vscode-panel-border, #8884); }
ul.assertions { list-style: none; padding-left: 0; }
summary { cursor: pointer; font-weight: 600; margin: 1em 0 0.4em; }
.status { font-size: 1.1em; font-weight: 600; }
.method, .name { font-weight: 700; }
.description { font-weight: normal; font-style: italic; }
p.actions a { color: var(--vscode-textLink-foreground); text-decoration: none; }
p.actions a:hover { text-decoration: underline; }
.muted { color: var(--vscode-descriptionForeground); font-weight: normal; }
.pass { color: var(--vscode-testing-iconPassed, #3a3); }
.redirect { color: var(--vscode-editorWarning-foreground, #b80); }
.fail { color: var(--vscode-testing-iconFailed, #d33); }
.json-key { color: var(--vscode-symbolIcon-propertyForeground, #9cdcfe); }
.json-string { color: var(--vscode-debugTokenExpression-string, #ce9178); }
.json-number { color: var(--vscode-debugTokenExpression-number, #b5cea8); }
.json-literal { color: var(--vscode-debugTokenExpression-boolean, #569cd6); }
.json-punctuation { color: var(--vscode-foreground); }
`;
