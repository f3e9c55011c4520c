// How the response panel shows a body of any size, and the panel's views of a response
// (full, headers only, body only, raw). A small body is HTML in the page, highlighted as
// before; a larger one is a bounded, virtualised viewer: the page holds an empty box, the
// panel posts the text to it in slices after the page loads, and the webview's script
// (`webview/bodyviewer.ts`) draws only the rows in view. JSON is pretty-printed only up to
// `PRETTY_JSON_LIMIT`; a body the language server cut (`truncated`) is shown as far as it
// was kept, with a line saying how much of how much, and links to the whole body
// (`bodyFile`). Pure: no `vscode` import.

import { escapeHtml } from './html';
import { highlightJson, isJson } from './json';
import type { Outcome, ResponseInfo } from './outcome';

/**
 * The largest body pretty-printed as JSON (its text, in UTF-16 units, about its bytes for
 * JSON). Checking and indenting 1 MiB of the echo server's `/json/{n}` took 55–170 ms of
 * the extension host (not the window's thread) on a busy 2-core machine and makes 2.2 MB
 * of text; above it a body is shown as received, which costs nothing but the copy (and a
 * minified body cut at 4 MiB is not valid JSON anyway).
 */
export const PRETTY_JSON_LIMIT = 1024 * 1024;

/**
 * The longest text shown as HTML in the page: up to it the panel renders as before (one
 * `<pre>`, found by the find widget). Above it the viewer draws the rows in view only: a
 * highlighted 1 MB JSON body as HTML took the window 3–4 s to lay out, during which no key
 * was answered.
 */
export const INLINE_TEXT_LIMIT = 64 * 1024;

/** How the panel shows a response: its views, and `editor` (the body in an editor, no panel). */
export type ResponseMode = 'full' | 'headers' | 'body' | 'raw' | 'editor';

export const RESPONSE_MODES: { mode: ResponseMode; title: string; description: string }[] = [
  { mode: 'full', title: 'Full', description: 'status, assertions, headers and body' },
  { mode: 'headers', title: 'Headers', description: 'status, assertions and headers, no body' },
  { mode: 'body', title: 'Body', description: 'the body only' },
  { mode: 'raw', title: 'Raw', description: 'status line, headers and body as text, as received' },
  { mode: 'editor', title: 'Editor', description: 'the body in an editor tab instead of the panel' },
];

/** The setting's value as a mode (`full` for anything else). */
export function responseMode(value: unknown): ResponseMode {
  return RESPONSE_MODES.some((known) => known.mode === value) ? (value as ResponseMode) : 'full';
}

/** The panel's commands of this module: a view, the whole body, the body in an editor. */
export const BodyCommands = {
  responseView: 'volley.responseView',
  openBody: 'volley.openBody',
  openInEditor: 'volley.openInEditor',
  saveBody: 'volley.saveBody',
} as const;

/** A body's text for the viewer, posted to the page once it has loaded. */
export interface ViewerBody {
  id: string;
  text: string;
  /** `json`: pretty-printed JSON, highlighted line by line; `text`: as it is. */
  mode: 'json' | 'text';
}

/** What rendering a page needs besides the view: the mode, and where the viewer bodies go. */
export interface RenderOptions {
  mode?: ResponseMode;
  /** The bodies too large for the page's HTML, to post to it; without it they are cut. */
  bodies?: ViewerBody[];
}

/** What the panel shows of a body. */
export type BodyPresentation =
  | { kind: 'empty' }
  | { kind: 'binary'; shownBytes: number; totalBytes: number; truncated: boolean; file?: string }
  | {
      kind: 'text';
      /** The text shown: pretty-printed when `pretty`. */
      text: string;
      /** JSON pretty-printed (and highlighted). */
      pretty: boolean;
      /** JSON, but too large to pretty-print. */
      jsonAsReceived: boolean;
      shownBytes: number;
      totalBytes: number;
      truncated: boolean;
      file?: string;
    };

/**
 * How `response`'s body is shown: pretty JSON when it is valid JSON within the limit
 * (`pretty: false`: as received, for what needs only the sizes).
 */
export function presentBody(response: ResponseInfo, { pretty = true }: { pretty?: boolean } = {}): BodyPresentation {
  const shownBytes =
    response.bodyEncoding === 'base64' ? base64Bytes(response.body) : Buffer.byteLength(response.body, 'utf8');
  const totalBytes = Math.max(response.bodySize ?? shownBytes, shownBytes);
  const common = { shownBytes, totalBytes, truncated: response.truncated, file: response.bodyFile ?? undefined };
  if (response.bodyEncoding === 'base64') {
    return { kind: 'binary', ...common };
  }
  if (response.body === '' && totalBytes === 0) {
    return { kind: 'empty' };
  }
  const jsonLike = /json/i.test(response.contentType ?? '') || /^\s*[[{]/.test(response.body.slice(0, 64));
  if (pretty && jsonLike && !response.truncated && response.body.length <= PRETTY_JSON_LIMIT && isJson(response.body)) {
    return { kind: 'text', text: prettyJson(response.body), pretty: true, jsonAsReceived: false, ...common };
  }
  return { kind: 'text', text: response.body, pretty: false, jsonAsReceived: jsonLike, ...common };
}

/**
 * `text`, valid JSON, indented by two spaces as `json.ts` indents it, every number and
 * string kept as sent. One pass, no tokens: for the viewer, which highlights the lines
 * in view only.
 */
export function prettyJson(text: string): string {
  const indents = ['\n'];
  const newline = (depth: number): string => {
    while (indents.length <= depth) {
      indents.push(`${indents[indents.length - 1]}  `);
    }
    return indents[depth];
  };
  let out = '';
  let depth = 0;
  let at = 0;
  const length = text.length;
  while (at < length) {
    const char = text.charCodeAt(at);
    switch (char) {
      case 0x22: {
        let end = at + 1;
        for (;;) {
          const quote = text.indexOf('"', end);
          if (quote === -1) {
            end = length;
            break;
          }
          let backslashes = 0;
          while (text.charCodeAt(quote - 1 - backslashes) === 0x5c) {
            backslashes += 1;
          }
          end = quote + 1;
          if (backslashes % 2 === 0) {
            break;
          }
        }
        out += text.slice(at, end);
        at = end;
        break;
      }
      case 0x7b:
      case 0x5b: {
        let next = at + 1;
        while (next < length && isSpace(text.charCodeAt(next))) {
          next += 1;
        }
        const close = text.charCodeAt(next);
        if (close === 0x7d || close === 0x5d) {
          out += char === 0x7b ? '{}' : '[]';
          at = next + 1;
        } else {
          depth += 1;
          out += (char === 0x7b ? '{' : '[') + newline(depth);
          at += 1;
        }
        break;
      }
      case 0x7d:
      case 0x5d:
        depth -= 1;
        out += newline(depth) + (char === 0x7d ? '}' : ']');
        at += 1;
        break;
      case 0x2c:
        out += `,${newline(depth)}`;
        at += 1;
        break;
      case 0x3a:
        out += ': ';
        at += 1;
        break;
      case 0x20:
      case 0x0a:
      case 0x0d:
      case 0x09:
        at += 1;
        break;
      default: {
        // A number or a literal: up to the next delimiter.
        let end = at + 1;
        while (end < length && !isDelimiter(text.charCodeAt(end))) {
          end += 1;
        }
        out += text.slice(at, end);
        at = end;
      }
    }
  }
  return out;
}

function isDelimiter(char: number): boolean {
  return (
    isSpace(char) || char === 0x2c || char === 0x3a || char === 0x7b || char === 0x7d || char === 0x5b || char === 0x5d || char === 0x22
  );
}

function isSpace(char: number): boolean {
  return char === 0x20 || char === 0x0a || char === 0x0d || char === 0x09;
}

/**
 * The body's section of the panel: the inline `<pre>` of a small body, else the viewer's
 * box (its text pushed to `options.bodies`); under it, for a body cut or too large to
 * pretty-print, a line saying so with links (`entry`: the outcome's history id).
 */
export function renderBodySection(response: ResponseInfo, entry: number | undefined, options: RenderOptions): string {
  const body = presentBody(response);
  const heading = '<h3>Body</h3>';
  if (body.kind === 'empty') {
    return `${heading}\n<p class="muted">empty</p>`;
  }
  const note = bodyNote(body, entry);
  if (body.kind === 'binary') {
    return `${heading}\n<p class="muted">binary, ${body.totalBytes} bytes</p>${note}`;
  }
  const shown =
    body.text.length <= INLINE_TEXT_LIMIT
      ? `<pre class="body">${body.pretty ? highlightJson(body.text) : escapeHtml(body.text)}</pre>`
      : viewerBox(body.text, body.pretty ? 'json' : 'text', options);
  return `${heading}\n${shown}${note}`;
}

/** The line under a body that is cut, or too large to pretty-print; empty otherwise. */
export function bodyNote(body: BodyPresentation, entry: number | undefined): string {
  if (body.kind === 'empty') {
    return '';
  }
  const links: string[] = [];
  let text: string;
  if (body.truncated) {
    const of = body.totalBytes > body.shownBytes ? ` of ${formatSize(body.totalBytes)}` : '';
    text =
      body.kind === 'binary'
        ? `The body was truncated: the first ${formatSize(body.shownBytes)}${of} were kept.`
        : `The body was truncated: showing the first ${formatSize(body.shownBytes)}${of}.`;
    if (body.file) {
      links.push(link(BodyCommands.openBody, 'Open full body', entry), link(BodyCommands.saveBody, 'Save body as…', entry));
    } else {
      text += ' The rest was not kept: the language server did not write the whole body to a file.';
      links.push(link(BodyCommands.saveBody, 'Save what was kept…', entry));
    }
  } else if (body.kind === 'text' && body.jsonAsReceived && body.text.length > PRETTY_JSON_LIMIT) {
    text = `${formatSize(body.totalBytes)}: shown as received (JSON is pretty-printed up to ${formatSize(PRETTY_JSON_LIMIT)}).`;
    links.push(link(BodyCommands.openInEditor, 'Open in editor', entry));
  } else {
    return '';
  }
  const actions = entry === undefined ? [] : links;
  return `\n<p class="muted body-note">${escapeHtml(text)}${actions.length > 0 ? ` ${actions.join(' · ')}` : ''}</p>`;
}

/** The view's links: the views of the panel (the current one not a link), and "Open in editor". */
export function renderViewSwitcher(mode: ResponseMode, entry: number | undefined): string {
  const views = RESPONSE_MODES.filter((view) => view.mode !== 'editor').map((view) =>
    view.mode === mode
      ? `<span class="current-view">${escapeHtml(view.title)}</span>`
      : `<a class="view" title="${escapeHtml(view.description)}" href="${commandHref(BodyCommands.responseView, { view: view.mode })}">${escapeHtml(view.title)}</a>`,
  );
  const editor = entry === undefined ? '' : ` · ${link(BodyCommands.openInEditor, 'Open in editor', entry, 'view')}`;
  return `<p class="views"><span class="muted">View:</span> ${views.join(' · ')}${editor}</p>`;
}

/** The status line, the headers and the body as received (binary bodies by their size): the raw view. */
export function rawText(response: ResponseInfo): string {
  const lines = [`${response.httpVersion} ${response.status} ${response.statusText}`.trimEnd()];
  for (const [name, value] of response.headers) {
    lines.push(`${name}: ${value}`);
  }
  const body = response.bodyEncoding === 'base64' ? `<binary body, ${base64Bytes(response.body)} bytes>` : response.body;
  return `${lines.join('\n')}\n\n${body}`;
}

/** The raw view of a response: one block of text, inline or in the viewer, and the body's note. */
export function renderRaw(response: ResponseInfo, entry: number | undefined, options: RenderOptions): string {
  const text = rawText(response);
  const shown =
    text.length <= INLINE_TEXT_LIMIT ? `<pre class="body raw">${escapeHtml(text)}</pre>` : viewerBox(text, 'text', options);
  return `${shown}${bodyNote(presentBody(response, { pretty: false }), entry)}`;
}

/** What "Open in editor" opens for an outcome: the body (pretty JSON within the limit) and its language. */
export function editorContent(outcome: Outcome): { content: string; language: string } | undefined {
  const response = outcome.response;
  if (!response) {
    return undefined;
  }
  const body = presentBody(response);
  if (body.kind !== 'text') {
    return { content: rawText(response), language: 'plaintext' };
  }
  return { content: body.text, language: bodyLanguage(response.contentType, body.pretty || body.jsonAsReceived) };
}

/** The editor language of a body by its content type. */
export function bodyLanguage(contentType: string | null | undefined, json: boolean): string {
  const type = (contentType ?? '').toLowerCase();
  if (json || type.includes('json')) {
    return 'json';
  }
  if (type.includes('html')) {
    return 'html';
  }
  if (type.includes('xml')) {
    return 'xml';
  }
  if (type.includes('javascript')) {
    return 'javascript';
  }
  if (type.includes('css')) {
    return 'css';
  }
  return 'plaintext';
}

let viewerBoxes = 0;

/** The viewer's empty box for `text`; the text goes to `options.bodies`, to be posted. */
function viewerBox(text: string, mode: 'json' | 'text', options: RenderOptions): string {
  if (!options.bodies) {
    // Nowhere to post it: the start, inline, and a note (only tests render this way).
    const start = text.slice(0, INLINE_TEXT_LIMIT);
    return `<pre class="body">${escapeHtml(start)}</pre>\n<p class="muted">(cut at ${INLINE_TEXT_LIMIT} characters)</p>`;
  }
  viewerBoxes += 1;
  const id = `body-${viewerBoxes}`;
  options.bodies.push({ id, text, mode });
  return `<div class="body-view" data-body="${id}" data-mode="${mode}" data-chars="${text.length}"><div class="body-scroller" tabindex="0"><div class="body-spacer"></div><pre class="body body-rows"></pre></div><p class="muted body-progress">Loading the body…</p></div>`;
}

function link(command: string, title: string, entry: number | undefined, className = 'action'): string {
  return `<a class="${className}" href="${commandHref(command, entry === undefined ? {} : { entry })}">${escapeHtml(title)}</a>`;
}

function commandHref(command: string, argument: object): string {
  return `command:${command}?${encodeURIComponent(JSON.stringify([argument]))}`;
}

/** Bytes in KiB or MiB with one decimal (as `render.ts`'s `formatBytes`). */
function formatSize(bytes: number): string {
  if (bytes < 1024) {
    return `${bytes} B`;
  }
  if (bytes < 1024 * 1024) {
    return `${(bytes / 1024).toFixed(1)} KiB`;
  }
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

function base64Bytes(text: string): number {
  const clean = text.replace(/[^A-Za-z0-9+/=_-]/g, '');
  const padding = clean.endsWith('==') ? 2 : clean.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((clean.length * 3) / 4) - padding);
}

/**
 * The CSS of the viewer (added to the page's style). Rows are `pre` lines of one fixed
 * height (`--row-height`, measured by the script) in a box of at most 70 % of the
 * window's height that scrolls on its own.
 */
export const VIEWER_STYLE = `
.body-scroller { position: relative; overflow: auto; max-height: 70vh; background: var(--vscode-textCodeBlock-background); }
.body-scroller:focus { outline: 1px solid var(--vscode-focusBorder); }
.body-spacer { width: 1px; }
pre.body-rows { position: absolute; top: 0; left: 0; white-space: pre; word-break: normal; background: none; min-width: 100%; box-sizing: border-box; }
pre.body-rows > div { height: var(--row-height, 1.4em); line-height: var(--row-height, 1.4em); overflow: hidden; }
.body-note a, p.views a { color: var(--vscode-textLink-foreground); text-decoration: none; }
.body-note a:hover, p.views a:hover { text-decoration: underline; }
.current-view { font-weight: 700; }
`;
