// The Testing view's side of the protocol against the real `volley lsp` (VOLLEY_BIN) and
// a real upstream (`volley echo-server`): `volley.tests` on a file that is not open and
// on an open one with unsaved text, and the outcomes of `volley.send` matched to the
// listed checks by `requestResult` (a failing `# @assert` with expected and actual, an
// in-place `client.test`, a script file's test as an extra result), and a send cancelled
// as a test run cancels it (`$/cancelRequest`). Skipped when VOLLEY_BIN is not set.

import assert from 'node:assert/strict';
import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import {
  CancellationTokenSource,
  createMessageConnection,
  MessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
} from 'vscode-jsonrpc/node';
import { requestResult, testTree } from '../src/checks';
import { executeCommandParams, REQUEST_CANCELLED, ServerCommands } from '../src/commands';
import type { Outcome } from '../src/outcome';

const binary = process.env.VOLLEY_BIN;
const skip = binary ? false : 'VOLLEY_BIN is not set (scripts/test sets it)';

let upstream: ChildProcess | undefined;
let server: ChildProcess | undefined;
let connection: MessageConnection | undefined;
let directory = '';
let uri = '';

const lines = [
  '# @name healthy', // 0
  '# @assert status == 200',
  'GET {{base}}/echo?test=healthy',
  '',
  '> {%',
  '  client.test("is ok", () => client.assert(response.status === 200));', // 5
  '%}',
  '',
  '###',
  '# @name created',
  '# @assert status == 201', // 10
  '# @assert header content-type contains json',
  'GET {{base}}/echo?test=created',
  '',
  '> ./handler.js', // 14
  '',
  '###',
  '# @name slow',
  'GET {{base}}/slow?ms=30000',
  '',
];

before(async () => {
  if (!binary) {
    return;
  }
  upstream = spawn(binary, ['echo-server', '--port', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const base = await new Promise<string>((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`echo-server did not start: ${seen}`)), 20_000);
    upstream!.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`cannot run ${binary} (VOLLEY_BIN): ${error.message}`));
    });
    upstream!.stderr!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      const found = /listening on (http:\/\/\S+)/.exec(seen);
      if (found) {
        clearTimeout(timer);
        resolve(found[1]);
      }
    });
  });
  directory = mkdtempSync(join(tmpdir(), 'volley-vscode-checks-'));
  writeFileSync(join(directory, 'volley.jsonc'), JSON.stringify({ variables: { base } }));
  writeFileSync(join(directory, 'handler.js'), 'client.test("from a file", () => client.assert(response.status === 200));\n');
  const file = join(directory, 'checked.http');
  writeFileSync(file, lines.join('\n'));
  uri = pathToFileURL(file).toString();
  // The response history goes to the test's directory, not the user's cache.
  server = spawn(binary, ['lsp'], { stdio: ['pipe', 'pipe', 'ignore'], env: { ...process.env, XDG_CACHE_HOME: join(directory, 'cache') } });
  connection = createMessageConnection(new StreamMessageReader(server.stdout!), new StreamMessageWriter(server.stdin!));
  connection.onRequest('window/workDoneProgress/create', () => null);
  connection.onRequest('client/registerCapability', () => null);
  connection.onRequest('workspace/codeLens/refresh', () => null);
  connection.onNotification(() => undefined);
  connection.listen();
  await connection.sendRequest('initialize', {
    processId: process.pid,
    rootUri: pathToFileURL(directory).toString(),
    capabilities: { window: { workDoneProgress: true } },
  });
  await connection.sendNotification('initialized', {});
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

function execute<T>(command: string, argument: unknown, token?: CancellationTokenSource): Promise<T> {
  const params = executeCommandParams(command, argument);
  return (token
    ? connection!.sendRequest('workspace/executeCommand', params, token.token)
    : connection!.sendRequest('workspace/executeCommand', params)) as Promise<T>;
}

test('volley.tests lists a file read from disk, its checks at their lines', { skip }, async () => {
  const tree = testTree(uri, await execute(ServerCommands.tests, { uri }));
  assert.deepEqual(
    tree.map(({ label, index, line }) => [label, index, line]),
    [
      ['healthy', 0, 2],
      ['created', 1, 12],
      ['slow', 2, 18],
    ],
  );
  assert.deepEqual(
    tree.map((request) => request.checks.map(({ kind, label, line }) => [kind, label, line])),
    [
      [
        ['assert', 'status == 200', 1],
        ['test', 'is ok', 5],
      ],
      [
        ['assert', 'status == 201', 10],
        ['assert', 'header content-type contains json', 11],
      ],
      [],
    ],
  );
});

test('sends match the listed checks: a failure with expected and actual, a script file’s test as extra', { skip }, async () => {
  const tree = testTree(uri, await execute(ServerCommands.tests, { uri }));
  // `volley.send` sends from open documents: the Testing view opens a file before running it.
  const text = lines.join('\n');
  await connection!.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'http', version: 1, text } });
  const [healthy, created] = await Promise.all(
    tree.slice(0, 2).map((request) => execute<Outcome>(ServerCommands.send, { uri, index: request.index })),
  );
  const first = requestResult(tree[0], healthy);
  assert.equal(first.verdict, 'passed');
  assert.ok((first.durationMs ?? -1) >= 0);
  assert.deepEqual(first.checks.map((check) => [check.label, check.passed]), [
    ['status == 200', true],
    ['is ok', true],
  ]);
  const second = requestResult(tree[1], created);
  assert.equal(second.verdict, 'failed');
  const status = second.checks.find((check) => check.line === 10);
  assert.equal(status?.passed, false);
  assert.equal(status?.message, 'expected status == 201, got 200');
  assert.equal(status?.expected, '201');
  assert.equal(status?.actual, '200');
  assert.deepEqual(second.extra.map((check) => [check.label, check.passed, check.line]), [['from a file', true, 14]]);
  assert.deepEqual(second.missing, []);
});

test('a send cancelled as a test run cancels it ends at once', { skip }, async () => {
  const token = new CancellationTokenSource();
  const started = Date.now();
  const answer = execute<Outcome>(ServerCommands.send, { uri, index: 2 }, token);
  setTimeout(() => token.cancel(), 300);
  await assert.rejects(answer, (error: { code?: number }) => error.code === REQUEST_CANCELLED);
  assert.ok(Date.now() - started < 10_000, 'not after the 30 s the upstream takes');
});

test('an open document’s unsaved text is what volley.tests lists', { skip }, async () => {
  const text = ['# @assert status == 204', 'DELETE {{base}}/items/1', ''].join('\n');
  await connection!.sendNotification('textDocument/didChange', {
    textDocument: { uri, version: 2 },
    contentChanges: [{ text }],
  });
  const tree = testTree(uri, await execute(ServerCommands.tests, { uri }));
  assert.deepEqual(
    tree.map(({ label, line, checks }) => [label, line, checks.map((check) => check.label)]),
    [['DELETE {{base}}/items/1', 1, ['status == 204']]],
  );
});

test('a file that cannot be read is an error', { skip }, async () => {
  const missing = pathToFileURL(join(directory, 'missing.http')).toString();
  await assert.rejects(execute(ServerCommands.tests, { uri: missing }), /cannot read|missing/);
});
