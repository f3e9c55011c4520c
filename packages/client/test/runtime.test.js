// The addon's tokio runtime: one worker thread by default (what keeps a call as cheap
// as a fetch), more with VOLLEY_NODE_THREADS. Counted in a child process from Linux's
// /proc after a run, so the threads are the runtime's own.
'use strict';

const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const path = require('node:path');
const { after, before, it } = require('node:test');

const { startEchoServer } = require('./support');

let server;

before(async () => {
  server = await startEchoServer();
});

after(async () => {
  await server?.stop();
});

/** The engine's worker threads in a Node process that ran one request, with `env` added. */
function workers(env) {
  const code = `
    const fs = require('node:fs');
    const { createClient } = require(${JSON.stringify(path.resolve(__dirname, '..'))});
    createClient().runString('GET ${server.url}/echo\\n').then(async (response) => {
      await response.text();
      const comm = (id) => fs.readFileSync('/proc/self/task/' + id + '/comm', 'utf8').trim();
      const names = fs.readdirSync('/proc/self/task').map(comm);
      console.log(names.filter((name) => name === 'tokio-rt-worker').length);
    });`;
  const environment = { ...process.env, ...env };
  if (env.VOLLEY_NODE_THREADS === undefined) delete environment.VOLLEY_NODE_THREADS;
  return Number(execFileSync(process.execPath, ['-e', code], { env: environment, encoding: 'utf8' }).trim());
}

const linuxOnly = { skip: process.platform !== 'linux' && 'reads /proc' };

it('runs the engine on one worker thread, or as many as VOLLEY_NODE_THREADS says', linuxOnly, () => {
  assert.equal(workers({}), 1);
  assert.equal(workers({ VOLLEY_NODE_THREADS: '3' }), 3);
  assert.equal(workers({ VOLLEY_NODE_THREADS: 'many' }), 1, 'a value that is not a count is ignored');
});
