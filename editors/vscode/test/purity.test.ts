// The modules the tests load must not need VS Code at run time.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const pure = ['binary', 'checks', 'commands', 'history', 'html', 'json', 'live', 'outcome', 'profile', 'remote', 'render', 'restart', 'status', 'bodyrows', 'bodyview', 'snippet', 'storedhistory'];

test('pure modules import neither vscode nor the language client', () => {
  for (const name of pure) {
    const source = readFileSync(join(__dirname, '..', '..', 'src', `${name}.ts`), 'utf8');
    assert.doesNotMatch(source, /from '(vscode|vscode-languageclient[^']*)'/, `${name}.ts`);
  }
});
