import assert from 'node:assert/strict';
import { test } from 'node:test';
import { highlightJsonLine, RowIndex } from '../src/bodyrows';

/** The rows of `text` as strings, indexed in slices of `budget` rows as the text grows by `step`. */
function rows(text: string, rowChars: number, step = text.length || 1, budget = 1_000_000): string[] {
  const index = new RowIndex(rowChars);
  for (let length = step; ; length += step) {
    const shown = text.slice(0, Math.min(length, text.length));
    const complete = length >= text.length;
    while (!index.index(shown, complete, budget)) {
      // More rows than the budget: index again, as the viewer's next slice does.
    }
    if (complete) {
      break;
    }
  }
  const lines: string[] = [];
  for (let row = 0; row < index.rows; row += 1) {
    lines.push(text.slice(index.start(row), index.end(row, text)));
  }
  return lines;
}

test('rows are lines, long lines cut every rowChars characters', () => {
  assert.deepEqual(rows('ab\ncdefg\n\nh', 3), ['ab', 'cde', 'fg', '', 'h']);
  assert.deepEqual(rows('abc\ndef', 3), ['abc', 'def']);
  assert.deepEqual(rows('abcdef', 3), ['abc', 'def']);
  assert.deepEqual(rows('a\r\nb\r\n', 3), ['a', 'b']);
  assert.deepEqual(rows('', 3), []);
});

test('indexing in slices and while the text grows gives the same rows as at once', () => {
  const text = Array.from({ length: 300 }, (_, i) => 'x'.repeat(i % 23) + (i % 7 === 0 ? '' : `line ${i}`)).join('\n');
  const whole = rows(text, 16);
  for (const [step, budget] of [
    [1, 1],
    [7, 3],
    [100, 5],
    [4096, 2],
  ]) {
    assert.deepEqual(rows(text, 16, step, budget), whole, `step ${step}, budget ${budget}`);
  }
  // Every character is in a row, in order, newlines aside.
  assert.equal(whole.join(''), text.replace(/\n/g, ''));
});

test('a surrogate pair is never cut between two rows', () => {
  const text = `ab${'\u{1F600}'}cd`;
  const cut = rows(text, 3);
  assert.deepEqual(cut, ['ab', '\u{1F600}c', 'd']);
});

test('a one-line body of 4 MiB is indexed in linear time', () => {
  const text = 'y'.repeat(4 * 1024 * 1024);
  const started = performance.now();
  const index = new RowIndex();
  assert.equal(index.index(text, true, 1_000_000), true);
  assert.equal(index.rows, Math.ceil(text.length / 256));
  // Quadratic rescanning for the newline would take seconds.
  assert.ok(performance.now() - started < 1000);
});

test('whole lines only are highlighted as JSON', () => {
  const text = '{\n  "a": "bcdefghij"\n}';
  const index = new RowIndex(8);
  index.index(text, true, 100);
  const whole = Array.from({ length: index.rows }, (_, row) => index.wholeLine(row, text));
  assert.deepEqual(whole, [true, false, false, false, true]);
});

test('a pretty JSON line is highlighted with the classes of json.ts, escaped', () => {
  assert.equal(
    highlightJsonLine('  "a<b": [1.5e3, true, null, "x\\"y"],'),
    '  <span class="json-key">&quot;a&lt;b&quot;</span><span class="json-punctuation">:</span> <span class="json-punctuation">[</span><span class="json-number">1.5e3</span><span class="json-punctuation">,</span> <span class="json-literal">true</span><span class="json-punctuation">,</span> <span class="json-literal">null</span><span class="json-punctuation">,</span> <span class="json-string">&quot;x\\&quot;y&quot;</span><span class="json-punctuation">]</span><span class="json-punctuation">,</span>',
  );
  assert.equal(highlightJsonLine('<script>'), '&lt;script&gt;');
});
