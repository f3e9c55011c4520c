// gRPC requests through the library and through `volley serve`, against the grpc-js
// test server of tests/grpc: the Response's body is the messages as JSON lines, `grpc`
// says how the call ended, `ok` is true for status OK only.
'use strict';

const assert = require('node:assert/strict');
const path = require('node:path');
const { after, before, describe, it } = require('node:test');

const { createClient, createRemoteClient } = require('..');
const { repository, startExecutionServer, startGrpcServer } = require('./support');

let grpcServer;
let executionServer;

before(async () => {
  [grpcServer, executionServer] = await Promise.all([
    startGrpcServer(),
    startExecutionServer(['--workspace', path.join(repository, 'tests', 'grpc')]),
  ]);
});

after(async () => {
  await Promise.all([grpcServer?.stop(), executionServer?.stop()]);
});

const listTwo = () => `GRPC ${grpcServer.authority}/shop.v1.Orders/List\n\n{"count": 2}\n`;
const failing = () => `GRPC ${grpcServer.authority}/shop.v1.Orders/Place\n\n{"item": "fail"}\n`;

describe('gRPC', () => {
  for (const [label, make] of [
    ['createClient', () => createClient()],
    ['createRemoteClient', () => createRemoteClient({ serverUrl: executionServer.url })],
  ]) {
    it(`${label}: a stream's messages are JSON lines, the status is \`grpc\``, async () => {
      const client = make();
      try {
        const response = await client.runString(listTwo());
        assert.equal(response.status, 200);
        assert.equal(response.ok, true);
        assert.deepEqual(
          { code: response.grpc.code, number: response.grpc.number, kind: response.grpc.kind },
          { code: 'OK', number: 0, kind: 'server-streaming' },
        );
        const lines = (await response.text()).trim().split('\n').map((line) => JSON.parse(line));
        assert.deepEqual(
          lines.map((order) => order.id),
          ['order-1', 'order-2'],
        );

        const failed = await client.runString(failing());
        assert.equal(failed.ok, false);
        assert.equal(failed.grpc.code, 'INVALID_ARGUMENT');
        assert.equal(failed.grpc.message, 'no such item: "fail" (try another)');
      } finally {
        await client.close();
      }
    });
  }

  it('an HTTP response has no `grpc`', async () => {
    const client = createClient();
    try {
      const response = await client.runString(`GET ${executionServer.url}/health\n`);
      assert.equal(response.grpc, undefined);
    } finally {
      await client.close();
    }
  });
});
