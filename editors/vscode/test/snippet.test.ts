import assert from 'node:assert/strict';
import { test } from 'node:test';
import { snippetChoices, snippetEditorLanguage, snippetWarning } from '../src/snippet';

test('each snippet language opens in its editor language', () => {
  assert.equal(snippetEditorLanguage('curl'), 'shellscript');
  assert.equal(snippetEditorLanguage('fetch'), 'javascript');
  assert.equal(snippetEditorLanguage('python'), 'python');
  assert.equal(snippetEditorLanguage('go'), 'go');
  assert.equal(snippetEditorLanguage('cobol'), 'plaintext');
});

test("the quick pick: the server's languages, the one used last first, malformed ones left out", () => {
  const answer = {
    languages: [
      { id: 'curl', label: 'cURL' },
      { id: 'fetch', label: 'JavaScript (fetch)' },
      { id: 'python', label: 'Python (requests)' },
      { id: 7 } as unknown as { id: string; label: string },
    ],
  };
  assert.deepEqual(
    snippetChoices(answer, undefined).map((choice) => choice.id),
    ['curl', 'fetch', 'python'],
  );
  assert.deepEqual(
    snippetChoices(answer, 'python').map((choice) => choice.label),
    ['Python (requests)', 'cURL', 'JavaScript (fetch)'],
  );
  assert.deepEqual(snippetChoices(null, 'curl'), []);
});

test('warnings become one message; none, none', () => {
  assert.equal(snippetWarning({ language: 'go', code: '' }), undefined);
  assert.equal(
    snippetWarning({ language: 'python', code: '', warnings: ['The body file is read at run time.', 'Digest auth is left out.'] }),
    'Volley: the python snippet differs from the request: The body file is read at run time. Digest auth is left out.',
  );
});
