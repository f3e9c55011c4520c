import assert from 'node:assert/strict';
import { test } from 'node:test';
import { highlightJson, isJson } from '../src/json';

/** The text the highlighted HTML shows. */
function text(html: string): string {
  return html
    .replace(/<[^>]+>/g, '')
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
}

test('pretty-prints nested JSON with two spaces', () => {
  const html = highlightJson('{"a":1,"b":[true,null,{"c":"d"}],"e":{},"f":[]}');
  assert.equal(
    text(html),
    '{\n  "a": 1,\n  "b": [\n    true,\n    null,\n    {\n      "c": "d"\n    }\n  ],\n  "e": {},\n  "f": []\n}',
  );
});

test('marks keys, strings, numbers and literals', () => {
  const html = highlightJson('{"id": 12, "ok": false, "name": "x"}');
  assert.match(html, /<span class="json-key">&quot;id&quot;<\/span>/);
  assert.match(html, /<span class="json-number">12<\/span>/);
  assert.match(html, /<span class="json-literal">false<\/span>/);
  assert.match(html, /<span class="json-string">&quot;x&quot;<\/span>/);
});

test('keeps the text of numbers and escapes exactly', () => {
  const html = highlightJson('[12345678901234567890, 1.50, 1e-7, "a\\"b\\u00e9"]');
  assert.equal(text(html), '[\n  12345678901234567890,\n  1.50,\n  1e-7,\n  "a\\"b\\u00e9"\n]');
});

test('escapes HTML inside strings', () => {
  const html = highlightJson('{"<script>": "</pre><img src=x onerror=alert(1)>&"}');
  assert.doesNotMatch(html, /<script>|<img|<\/pre>/);
  assert.match(html, /&lt;script&gt;/);
  assert.match(html, /&amp;/);
});

test('text that is not JSON is only escaped', () => {
  assert.equal(highlightJson('{"a": <b>'), '{&quot;a&quot;: &lt;b&gt;');
  assert.equal(isJson('{"a": <b>'), false);
  assert.equal(isJson('   '), false);
  assert.equal(isJson(' 42 '), true);
});

test('scalars and whitespace-padded documents', () => {
  assert.equal(text(highlightJson(' "hi" ')), '"hi"');
  assert.equal(text(highlightJson('\n[ ]\n')), '[]');
});
