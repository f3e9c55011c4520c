// The history, the code snippets and a large body against the real `volley lsp`
// (VOLLEY_BIN) and a real upstream (`volley echo-server`): what the extension makes of the
// server's answers — the pair "compare with previous" diffs and the files it opens, the
// snippet languages and code, the panel's line for a body the server cut, and the whole
// body in the server's file. Skipped when VOLLEY_BIN is not set. The store goes to a
// temporary XDG_CACHE_HOME, never to the user's cache.

import assert from 'node:assert/strict';
import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { createMessageConnection, MessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import { bodyNote, presentBody } from '../src/bodyview';
import { executeCommandParams, ServerCommands } from '../src/commands';
import type { Outcome } from '../src/outcome';
import { snippetChoices, snippetEditorLanguage, type SnippetLanguages, type SnippetResult } from '../src/snippet';
import { diffTitle, type HistoryEntryFiles, type HistoryList, previousPair, storedLabel } from '../src/storedhistory';

const binary = process.env.VOLLEY_BIN;
const skip = binary ? false : 'VOLLEY_BIN is not set (scripts/test sets it)';

let upstream: ChildProcess | undefined;
let server: ChildProcess | undefined;
let connection: MessageConnection | undefined;
let directory = '';
let uri = '';

before(async () => {
  if (!binary) {
    return;
  }
  upstream = spawn(binary, ['echo-server', '--port', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const base = await new Promise<string>((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`echo-server did not start: ${seen}`)), 20_000);
    upstream!.stderr!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      const found = /listening on (http:\/\/\S+)/.exec(seen);
      if (found) {
        clearTimeout(timer);
        resolve(found[1]);
      }
    });
  });
  directory = mkdtempSync(join(tmpdir(), 'volley-vscode-history-'));
  // A project root, so that the store is this folder's.
  writeFileSync(join(directory, 'volley.jsonc'), '{}');
  const file = join(directory, 'api.http');
  const text = [
    '# @name hello',
    `GET ${base}/echo?who=history`,
    'X-Id: {{$uuid}}',
    '',
    '###',
    '# @name big',
    `GET ${base}/stream/json/5000000`,
    '',
  ].join('\n');
  writeFileSync(file, text);
  uri = pathToFileURL(file).toString();
  server = spawn(binary, ['lsp'], {
    stdio: ['pipe', 'pipe', 'ignore'],
    env: { ...process.env, XDG_CACHE_HOME: join(directory, 'cache') },
  });
  connection = createMessageConnection(new StreamMessageReader(server.stdout!), new StreamMessageWriter(server.stdin!));
  connection.onRequest('window/workDoneProgress/create', () => null);
  connection.onRequest('client/registerCapability', () => null);
  connection.onRequest('workspace/codeLens/refresh', () => null);
  connection.listen();
  await connection.sendRequest('initialize', {
    processId: process.pid,
    rootUri: pathToFileURL(directory).toString(),
    capabilities: { window: { workDoneProgress: true } },
  });
  await connection.sendNotification('initialized', {});
  await connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'http', version: 1, text } });
});

after(async () => {
  if (connection) {
    await connection.sendRequest('shutdown').catch(() => undefined);
    await connection.sendNotification('exit').catch(() => undefined);
    connection.dispose();
  }
  server?.kill();
  upstream?.kill();
  if (directory) {
    rmSync(directory, { recursive: true, force: true });
  }
});

function execute<T>(command: string, argument: unknown): Promise<T> {
  return connection!.sendRequest('workspace/executeCommand', executeCommandParams(command, argument)) as Promise<T>;
}

test('compare with previous: two sends of a request diff the older left, from their text files', { skip }, async () => {
  const first = await execute<Outcome>(ServerCommands.send, { uri, index: 0 });
  const second = await execute<Outcome>(ServerCommands.send, { uri, index: 0 });
  assert.ok(first.historyId && second.historyId && first.historyId !== second.historyId);
  const list = await execute<HistoryList>('volley.history', { uri, index: 0, limit: 2 });
  const pair = previousPair(list);
  assert.ok(pair);
  assert.deepEqual(
    pair.map((entry) => entry.id),
    [first.historyId, second.historyId],
  );
  assert.match(storedLabel(pair[1]).label, /^200 OK · hello — GET /);
  assert.match(diffTitle(...pair), /^hello: \d\d:\d\d:\d\d ↔ \d\d:\d\d:\d\d$/);
  const [left, right] = await Promise.all(pair.map((entry) => execute<HistoryEntryFiles>('volley.historyEntry', { id: entry.id })));
  const leftText = readFileSync(left.path, 'utf8');
  const rightText = readFileSync(right.path, 'utf8');
  assert.match(leftText, /^HTTP\/1\.1 200 OK/);
  const id = (response: Outcome) => /"x-id",\s*"([0-9a-f-]{36})"/i.exec(response.response?.body ?? '')?.[1];
  assert.ok(leftText.includes(id(first)!) && rightText.includes(id(second)!), 'each file is its own response');
});

test('code snippets: the languages offered, the code in its editor language', { skip }, async () => {
  const languages = await execute<SnippetLanguages>('volley.snippet', {});
  const choices = snippetChoices(languages, undefined);
  assert.deepEqual(
    choices.map((choice) => choice.id),
    ['curl', 'fetch', 'python', 'go'],
  );
  for (const choice of choices) {
    const result = await execute<SnippetResult>('volley.snippet', { uri, line: 1, language: choice.id });
    assert.equal(result.language, choice.id);
    assert.match(result.code, /who=history/, choice.id);
    assert.notEqual(snippetEditorLanguage(result.language), 'plaintext');
  }
});

test('a body larger than what the outcome keeps: its first 4 MiB, the whole in a file, the panel says so', { skip }, async () => {
  const outcome = await execute<Outcome>(ServerCommands.send, { uri, index: 1 });
  const response = outcome.response!;
  assert.equal(response.truncated, true);
  assert.equal(response.bodySize, 5_000_000);
  assert.equal(Buffer.byteLength(response.body), 4 * 1024 * 1024);
  assert.ok(response.bodyFile && existsSync(response.bodyFile));
  assert.equal(statSync(response.bodyFile).size, 5_000_000);
  const shown = presentBody(response);
  assert.ok(shown.kind === 'text' && !shown.pretty);
  assert.match(bodyNote(shown, 1), /The body was truncated: showing the first 4\.0 MiB of 4\.8 MiB\..*Open full body.*Save body as…/);
});

test('clearing the history of a file empties it', { skip }, async () => {
  const cleared = await execute<{ cleared: number }>('volley.historyClear', { uri });
  assert.ok(cleared.cleared >= 3, `${cleared.cleared}`);
  const list = await execute<HistoryList>('volley.history', { uri });
  assert.deepEqual(list.entries, []);
});
