import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  bodyLanguage,
  editorContent,
  INLINE_TEXT_LIMIT,
  PRETTY_JSON_LIMIT,
  prettyJson,
  presentBody,
  rawText,
  responseMode,
  type ViewerBody,
} from '../src/bodyview';
import { highlightJson } from '../src/json';
import { renderOutcome, renderPage } from '../src/render';
import { outcome, response } from './fixtures';

/** The text of highlighted HTML. */
function text(html: string): string {
  return html.replace(/<[^>]+>/g, '').replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/** A one-line JSON document of about `bytes` bytes, as the echo server's `/json/{n}`. */
function bigJson(bytes: number): string {
  const items: string[] = [];
  let length = 0;
  for (let id = 0; length < bytes; id += 1) {
    const item = `{"id":${id},"name":"item ${id}","tags":["a","b"],"active":${id % 2 === 0}}`;
    items.push(item);
    length += item.length + 1;
  }
  return `{"items":[${items.join(',')}],"count":${items.length}}`;
}

test('prettyJson indents as highlightJson does, keeping every number and string as sent', () => {
  for (const json of [
    '{"a":1,"b":[1,2,{}],"c":{"d":[]},"e":"x\\"y,{[]}","big":12345678901234567890}',
    '[ ]',
    ' { "k" : [ true , false , null ] } ',
    '"just a string"',
    '-1.5e+10',
  ]) {
    assert.equal(prettyJson(json), text(highlightJson(json)), json);
  }
});

test('a body within the pretty limit is pretty JSON; above it, as received', () => {
  const small = presentBody(response({ body: '{"a":1}' }));
  assert.equal(small.kind === 'text' && small.pretty, true);
  const body = bigJson(PRETTY_JSON_LIMIT + 10);
  const large = presentBody(response({ body }));
  assert.ok(large.kind === 'text' && !large.pretty && large.jsonAsReceived && large.text === body);
});

test('how long pretty-printing the largest pretty body takes (reported, bounded loosely)', () => {
  const body = bigJson(PRETTY_JSON_LIMIT - 100);
  const started = performance.now();
  const shown = presentBody(response({ body }));
  const elapsed = performance.now() - started;
  assert.ok(shown.kind === 'text' && shown.pretty);
  console.log(`presentBody of ${body.length} bytes of JSON: ${elapsed.toFixed(1)} ms, ${shown.kind === 'text' ? shown.text.length : 0} characters shown`);
  assert.ok(elapsed < 2000);
});

test('a cut body is never pretty-printed and says how much of how much, with the links', () => {
  const cut = response({ body: '{"items":[1,2', truncated: true, bodySize: 50 * 1024 * 1024, bodyFile: '/tmp/body-1' });
  const shown = presentBody(cut);
  assert.ok(shown.kind === 'text' && !shown.pretty && shown.totalBytes === 50 * 1024 * 1024);
  const html = renderOutcome(outcome(cut), 3);
  assert.match(html, /The body was truncated: showing the first 13 B of 50\.0 MiB\./);
  assert.match(html, /href="command:volley\.openBody\?%5B%7B%22entry%22%3A3%7D%5D">Open full body<\/a>/);
  assert.match(html, /href="command:volley\.saveBody\?[^"]+">Save body as…<\/a>/);
  // Without the whole body's file: it says so, and offers what was kept.
  const kept = renderOutcome(outcome({ body: 'x', truncated: true }), 3);
  assert.match(kept, /The body was truncated: showing the first 1 B\. The rest was not kept/);
  assert.match(kept, /Save what was kept…/);
});

test('a small body stays in the page; a large one is a viewer box whose text is posted, with the script', () => {
  const small = renderPage({ kind: 'send', outcome: outcome(), entry: 1 }, 'n1', { bodies: [], script: 'viewer()' });
  assert.doesNotMatch(small, /<script/, 'no script without a large body');
  assert.match(small, /<pre class="body">/);
  const body = bigJson(200 * 1024);
  const bodies: ViewerBody[] = [];
  const page = renderPage({ kind: 'send', outcome: outcome({ body }), entry: 1 }, 'n2', { bodies, script: 'viewer("</script>")' });
  assert.equal(bodies.length, 1);
  assert.equal(bodies[0].mode, 'json');
  assert.equal(bodies[0].text, prettyJson(body));
  assert.match(page, new RegExp(`<div class="body-view" data-body="${bodies[0].id}" data-mode="json"`));
  assert.match(page, /script-src 'nonce-n2'/);
  assert.match(page, /<script nonce="n2">viewer\("<\\\/script>"\)<\/script>/);
  // The page itself stays small: the body is not in it.
  assert.ok(page.length < 20_000, `${page.length}`);
});

test('without a sink for large bodies (no viewer), the page shows their start only', () => {
  const html = renderOutcome(outcome({ body: 'z'.repeat(INLINE_TEXT_LIMIT * 3), contentType: 'text/plain' }));
  assert.match(html, /cut at 65536 characters/);
  assert.ok(html.length < INLINE_TEXT_LIMIT + 2000);
});

test('views: headers leave the body out, body leaves the rest out, raw is the message as text', () => {
  const shown = outcome({ headers: [['content-type', 'application/json'], ['x-a', '1']], body: '{"token":"abc"}' });
  const headers = renderPage({ kind: 'send', outcome: shown, entry: 2 }, 'n', { mode: 'headers' });
  assert.match(headers, /Headers \(2\)/);
  assert.doesNotMatch(headers, /<h3>Body<\/h3>/);
  assert.match(headers, /<span class="current-view">Headers<\/span>/);
  assert.match(headers, /href="command:volley\.responseView\?%5B%7B%22view%22%3A%22raw%22%7D%5D">Raw<\/a>/);
  assert.match(headers, /Open in editor/);
  const body = renderPage({ kind: 'send', outcome: shown, entry: 2 }, 'n', { mode: 'body' });
  assert.match(body, /<h3>Body<\/h3>/);
  assert.doesNotMatch(body, /Headers \(/);
  assert.doesNotMatch(body, /class="status"/);
  const raw = renderPage({ kind: 'send', outcome: shown, entry: 2 }, 'n', { mode: 'raw' });
  assert.match(raw, /<pre class="body raw">HTTP\/1.1 200 OK\ncontent-type: application\/json\nx-a: 1\n\n\{&quot;token&quot;:&quot;abc&quot;\}<\/pre>/);
  assert.doesNotMatch(raw, /Headers \(/);
  // The heading and the actions stay in every view.
  for (const page of [headers, body, raw]) {
    assert.match(page, /Re-run/);
  }
});

test('raw text of a binary body names its size', () => {
  assert.equal(
    rawText(response({ headers: [], bodyEncoding: 'base64', body: 'AAEC' })),
    'HTTP/1.1 200 OK\n\n<binary body, 3 bytes>',
  );
});

test('the compare link shows only for a stored response', () => {
  assert.doesNotMatch(renderOutcome(outcome(), 1), /Compare with previous/);
  const stored = { ...outcome(), historyId: '0001' };
  assert.match(renderOutcome(stored, 1), /href="command:volley\.compareWithPrevious\?[^"]+">Compare with previous<\/a>/);
});

test('editor content: pretty JSON as json, other types by content type', () => {
  assert.deepEqual(editorContent(outcome({ body: '{"a":1}' })), { content: '{\n  "a": 1\n}', language: 'json' });
  assert.deepEqual(editorContent(outcome({ contentType: 'text/html', body: '<p>' })), { content: '<p>', language: 'html' });
  assert.equal(editorContent({ request: outcome().request, error: { kind: 'timeout', message: 'x' } }), undefined);
  assert.equal(bodyLanguage('application/xml', false), 'xml');
  assert.equal(bodyLanguage(undefined, false), 'plaintext');
});

test('the setting is read as a mode, full for anything else', () => {
  assert.equal(responseMode('raw'), 'raw');
  assert.equal(responseMode('editor'), 'editor');
  assert.equal(responseMode('nonsense'), 'full');
  assert.equal(responseMode(undefined), 'full');
});

test('the size in the status line is the whole body, not what was kept', () => {
  const html = renderOutcome(outcome({ body: 'abc', truncated: true, bodySize: 3 * 1024 * 1024 }));
  assert.match(html, /· 3\.0 MiB<\/p>/);
});
