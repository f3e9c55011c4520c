// The extension's side of the protocol against the real `volley lsp` (VOLLEY_BIN) and a
// real upstream (`volley echo-server` on a free port): the arguments the extension
// builds, the live `volley/stream` notifications gathered by `LiveSend`,
// cancelling through the work-done progress, and a response handler's results and log
// lines rendered by the panel. Skipped when VOLLEY_BIN is not set.

import assert from 'node:assert/strict';
import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { createMessageConnection, MessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import { executeCommandParams, sendAllArguments, sendArguments, ServerCommands } from '../src/commands';
import { LiveSend, STREAM_NOTIFICATION } from '../src/live';
import type { Outcome, SendAllResult } from '../src/outcome';
import { renderOutcome } from '../src/render';

const binary = process.env.VOLLEY_BIN;
const skip = binary ? false : 'VOLLEY_BIN is not set (scripts/test sets it)';

let upstream: ChildProcess | undefined;
let server: ChildProcess | undefined;
let connection: MessageConnection | undefined;
let directory = '';
let uri = '';
let scriptsUri = '';
let scriptsText = '';
const updates: unknown[] = [];

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
  directory = mkdtempSync(join(tmpdir(), 'volley-vscode-'));
  const file = join(directory, 'api.http');
  const text = [
    '# @name hello',
    `GET ${base}/echo?who=vscode`,
    '',
    '###',
    '# @name ticks',
    '# @sse',
    `GET ${base}/sse/slow?count=3&interval_ms=20`,
    '',
    '###',
    '# @name forever',
    '# @sse',
    `GET ${base}/sse/slow?count=1000&interval_ms=50`,
    '',
  ].join('\n');
  writeFileSync(file, text);
  uri = pathToFileURL(file).toString();
  scriptsText = [
    '# @name login',
    `POST ${base}/login`,
    'Content-Type: application/json',
    '',
    '{"user": "ada", "password": "lovelace"}',
    '',
    '> {%',
    '  client.global.set("token", response.body.token);',
    '  client.log("got", response.status);',
    '  client.test("ok", () => client.assert(response.status === 200));',
    '  client.test("created", () => client.assert(response.status === 201, "status " + response.status));',
    '  response.body.missing.field;',
    '%}',
    '',
  ].join('\n');
  const scriptsFile = join(directory, 'scripts.http');
  writeFileSync(scriptsFile, scriptsText);
  scriptsUri = pathToFileURL(scriptsFile).toString();
  // The response history goes to the temporary directory, never to the user's cache.
  server = spawn(binary, ['lsp'], {
    stdio: ['pipe', 'pipe', 'ignore'],
    env: { ...process.env, XDG_CACHE_HOME: join(directory, 'cache') },
  });
  connection = createMessageConnection(new StreamMessageReader(server.stdout!), new StreamMessageWriter(server.stdin!));
  connection.onNotification(STREAM_NOTIFICATION, (update: unknown) => updates.push(update));
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
  await connection.sendNotification('textDocument/didOpen', {
    textDocument: { uri: scriptsUri, languageId: 'http', version: 1, text: scriptsText },
  });
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

function execute<T>(command: string, argument: unknown, token: string): Promise<T> {
  return connection!.sendRequest('workspace/executeCommand', executeCommandParams(command, argument, token)) as Promise<T>;
}

test('Send Request from the cursor answers the response', { skip }, async () => {
  const argument = sendArguments(undefined, { uri, line: 1 });
  const outcome = await execute<Outcome>(ServerCommands.send, argument, 'token-1');
  assert.equal(outcome.request.name, 'hello');
  assert.equal(outcome.response?.status, 200);
  assert.match(outcome.response?.body ?? '', /who=vscode/);
});

test('a stream is shown live, item by item, before the command answers', { skip }, async () => {
  const live = new LiveSend('live-ticks', 'Response: listening');
  const argument = { ...sendArguments({ uri, index: 1 }, undefined), live: live.id, streamWindowMs: 5000 };
  const outcome = await execute<Outcome>(ServerCommands.send, argument, 'token-2');
  const stream = outcome.response?.stream;
  // The last notifications may come just after the answer (the server's outgoing
  // messages share no order); the extension drops those, the test waits for them.
  const deadline = Date.now() + 5000;
  while (updates.length < 4 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  for (const update of updates.splice(0)) {
    live.apply(update);
  }
  assert.equal(stream?.stopped, 'ended');
  assert.equal(stream?.items.length, 3);
  const [shown] = live.view().streams;
  assert.equal(shown.status, 200);
  assert.deepEqual(shown.items, stream?.items, 'the live items are the answered ones');
});

test('cancelling the progress ends a Send All with what it has', { skip }, async () => {
  const argument = { ...sendAllArguments({ uri }, undefined), streamWindowMs: 30_000 };
  const answer = execute<SendAllResult>(ServerCommands.sendAll, argument, 'token-3');
  // Wait until the endless stream of the third request is being listened to.
  const deadline = Date.now() + 20_000;
  const live = new LiveSend('live-all', 'Responses');
  let listening = false;
  connection!.onNotification('$/progress', (params: { token: string; value: { message?: string } }) => {
    if (params.token === 'token-3' && params.value.message?.startsWith('3/3')) {
      listening = true;
    }
  });
  while (!listening && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.ok(listening, 'the third request started');
  await connection!.sendNotification('window/workDoneProgress/cancel', { token: 'token-3' });
  const result = await answer;
  assert.equal(result.cancelled, true);
  assert.equal(result.results.length, 3, 'the requests already sent are kept');
  assert.equal(result.results[0].response?.status, 200);
  assert.equal(result.results[1].response?.stream?.items.length, 3);
  assert.equal(live.view().streams.length, 0, 'no live id was given: nothing live');
});

test("a response handler's tests, failure and log lines, as the panel shows them", { skip }, async () => {
  const outcome = await execute<Outcome>(ServerCommands.send, sendArguments({ uri: scriptsUri, index: 0 }, undefined), 'token-4');
  assert.equal(outcome.response?.status, 200);
  assert.deepEqual(outcome.logs, ['got 200']);
  assert.deepEqual(
    outcome.response?.assertions.map(({ expression, passed, message, line }) => [expression, passed, message, line]),
    [
      ['ok', true, undefined, 9],
      ['created', false, 'AssertionError: status 200', 10],
      ['response handler', false, "TypeError: cannot read property 'field' of undefined", 11],
    ],
  );
  const html = renderOutcome(outcome);
  assert.match(html, /Assertions: 1\/3 passed/);
  assert.match(html, /<code>response handler<\/code> — TypeError: cannot read property &#39;field&#39; of undefined/);
  assert.match(html, /<h3>Log<\/h3>\n<pre class="log">got 200<\/pre>/);
});
