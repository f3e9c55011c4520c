// createRemoteClient through a real `volley serve` (with a token) to a real
// `volley echo-server`: runs, session and flow ids, variables, close, failures, abort,
// event streams read through `response.body`.
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { after, before, describe, it } = require('node:test');

const { createRemoteClient, VolleyError } = require('..');
const { closedPort, startEchoServer, startExecutionServer, untilEventStreamsClosed } = require('./support');

const TOKEN = 'remote-test-token';
let echo;
let server;
let workspace;

before(async () => {
  workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'volley-remote-'));
  [echo, server] = await Promise.all([
    startEchoServer(),
    startExecutionServer(['--token', TOKEN, '--workspace', workspace]),
  ]);
});

after(async () => {
  await Promise.all([echo?.stop(), server?.stop()]);
  if (workspace) fs.rmSync(workspace, { recursive: true, force: true });
});

function client(config = {}) {
  return createRemoteClient({ serverUrl: server.url, token: TOKEN, ...config });
}

describe('createRemoteClient', () => {
  it('runs through the server and creates the session and the flow on the first run', async () => {
    const remote = client({ variables: { host: echo.url }, flowLabel: 'node tests', flowMeta: { suite: 'remote' } });
    assert.equal(remote.getSessionId(), undefined);
    assert.equal(remote.getFlowId(), undefined);

    const response = await remote.runString('GET {{host}}/echo/remote\n');
    assert.ok(response instanceof Response);
    assert.equal(response.status, 200);
    assert.equal((await response.json()).path, '/echo/remote');
    assert.equal(typeof remote.getSessionId(), 'string');
    assert.equal(typeof remote.getFlowId(), 'string');
    await remote.close();
  });

  it('sends variables set before and after the session exists, and per run', async () => {
    const remote = client();
    remote.setVariable('host', echo.url);
    assert.deepEqual(remote.getVariables(), { host: echo.url });
    assert.equal((await (await remote.runString('GET {{host}}/echo/first\n')).json()).path, '/echo/first');

    remote.setVariables({ item: 'second' });
    assert.deepEqual(remote.getVariables(), { host: echo.url, item: 'second' });
    assert.equal((await (await remote.runString('GET {{host}}/echo/{{item}}\n')).json()).path, '/echo/second');

    const perRun = await remote.runString('GET {{host}}/echo/{{item}}\n', { variables: { item: 'third' } });
    assert.equal((await perRun.json()).path, '/echo/third');
    await remote.close();
  });

  it('runs a file read on this side', async () => {
    const file = path.join(workspace, 'remote.http');
    fs.writeFileSync(file, `POST ${echo.url}/echo\nContent-Type: application/json\n\n{"remote": true}\n`);
    const remote = client();
    const echoed = await (await remote.run(file)).json();
    assert.deepEqual(JSON.parse(echoed.body), { remote: true });
    await remote.close();
  });

  it('resolves a non-2xx upstream status', async () => {
    const response = await client().runString(`GET ${echo.url}/status/503\n`);
    assert.equal(response.status, 503);
  });

  it('rejects a wrong token with kind server', async () => {
    const remote = createRemoteClient({ serverUrl: server.url, token: 'wrong' });
    await assert.rejects(remote.runString(`GET ${echo.url}/echo\n`), (error) => {
      assert.ok(error instanceof VolleyError);
      assert.equal(error.kind, 'server');
      assert.equal(typeof error.code, 'string');
      return true;
    });
  });

  it('rejects an upstream the server cannot reach with the kind of a local run', async () => {
    const port = await closedPort();
    await assert.rejects(client().runString(`GET http://127.0.0.1:${port}/\n`), (error) => {
      assert.ok(error instanceof VolleyError);
      assert.equal(error.kind, 'connection_refused');
      assert.equal(error.code, 'EXECUTE_ERROR');
      assert.match(error.message, /connection refused/);
      return true;
    });
  });

  it('rejects an unreachable server as a transport failure', async () => {
    const port = await closedPort();
    const remote = createRemoteClient({ serverUrl: `http://127.0.0.1:${port}` });
    await assert.rejects(remote.runString(`GET ${echo.url}/echo\n`), { name: 'VolleyError', kind: 'connection_refused' });
  });

  it('throws a VolleyError for a server URL that is not one', () => {
    assert.throws(() => createRemoteClient({ serverUrl: 'not a url' }), { name: 'VolleyError' });
    assert.throws(() => createRemoteClient({}), TypeError);
  });

  it('cancels a run under way', async () => {
    const controller = new AbortController();
    const started = Date.now();
    const run = client().runString(`GET ${echo.url}/slow?ms=10000\n`, { signal: controller.signal });
    setTimeout(() => controller.abort(), 200);
    await assert.rejects(run, { name: 'AbortError' });
    assert.ok(Date.now() - started < 5000);
  });
});

describe('createRemoteClient event streams', () => {
  it('gives the events of an endless stream through response.body as they arrive, and stops when cancelled', async () => {
    const remote = client();
    const response = await remote.runString(`GET ${echo.url}/sse/forever?interval_ms=20\nAccept: text/event-stream\n`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'text/event-stream');
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!text.includes('tick 3')) {
      const { value, done } = await reader.read();
      assert.equal(done, false, 'an endless stream does not end');
      text += value;
    }
    assert.match(text, /^data: tick 1$/m);
    await reader.cancel();
    // The server stops reading the upstream stream, and the session goes on.
    await untilEventStreamsClosed(echo.url);
    assert.equal((await remote.runString(`GET ${echo.url}/echo/after\n`)).status, 200);
    await remote.close();
  });

  it('cancels a body that is still arriving, while it waits for the next event', async () => {
    const remote = client();
    const controller = new AbortController();
    const text = `GET ${echo.url}/sse/slow?count=3&interval_ms=5000\nAccept: text/event-stream\n`;
    const response = await remote.runString(text, { signal: controller.signal });
    assert.equal(response.status, 200);
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    const started = Date.now();
    setTimeout(() => controller.abort(), 100);
    await assert.rejects(
      (async () => {
        for (;;) if ((await reader.read()).done) return;
      })(),
      { name: 'AbortError' },
    );
    assert.ok(Date.now() - started < 2000, 'the read ended long before the next event');
    await untilEventStreamsClosed(echo.url, 2000);
    assert.equal((await remote.runString(`GET ${echo.url}/echo/after\n`)).status, 200);
    await remote.close();
  });
});
