// Test helpers: the `volley echo-server` the tests send to and the `volley serve` the
// remote client runs through (started on port 0 by each test file), a port nothing
// listens on, and a wait for the echo server's event streams to close.
'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');

const repository = path.resolve(__dirname, '..', '..', '..');

/** The `volley` binary: $VOLLEY_BIN, else the debug build of the target directory. */
function volleyBin() {
  if (process.env.VOLLEY_BIN) return process.env.VOLLEY_BIN;
  const targetDir = path.resolve(repository, process.env.CARGO_TARGET_DIR || 'target');
  return path.join(targetDir, 'debug', process.platform === 'win32' ? 'volley.exe' : 'volley');
}

/** Starts `volley echo-server --port 0`; resolves to its URL and a `stop()`. */
function startEchoServer() {
  return startVolley(['echo-server', '--port', '0'], 'stderr');
}

/** Starts `volley serve --port 0` with `args`, and `env` added to this process's
 * environment (what `{{$env(NAME)}}` reads on the server); resolves to its URL and a
 * `stop()`. */
function startExecutionServer(args, env = {}) {
  return startVolley(['serve', '--port', '0', '--color', 'never', ...args], 'stdout', env);
}

/** Runs `volley` with `args` until it prints its URL on `stream`. */
function startVolley(args, stream, env = {}) {
  const bin = volleyBin();
  if (!fs.existsSync(bin)) {
    throw new Error(`no volley binary at ${bin}: build it (cargo build -p volley-cli) or set VOLLEY_BIN`);
  }
  const stdio = ['ignore', stream === 'stdout' ? 'pipe' : 'ignore', 'pipe'];
  const child = spawn(bin, args, { stdio, env: { ...process.env, ...env } });
  const output = child[stream];
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (data) => {
      text += data;
      const url = /https?:\/\/[^\s]+/.exec(text)?.[0];
      if (url === undefined) return;
      output.off('data', onData);
      output.resume();
      resolve({
        url,
        stop: () =>
          new Promise((done) => {
            child.once('exit', done);
            child.kill();
          }),
      });
    };
    output.setEncoding('utf8');
    output.on('data', onData);
    if (stream === 'stdout') child.stderr.resume();
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`volley ${args[0]} exited with ${code}: ${text}`)));
  });
}

/** Starts the grpc-js test server of tests/grpc (`args`: `--no-reflection`, …);
 * resolves to its `host:port` and a `stop()`. */
function startGrpcServer(args = []) {
  const directory = path.join(repository, 'tests', 'grpc');
  if (!fs.existsSync(path.join(directory, 'node_modules', '@grpc', 'grpc-js'))) {
    throw new Error('tests/grpc has no node_modules: run `npm ci` there (scripts/test does)');
  }
  const child = spawn(process.execPath, ['server.mjs', ...args], { cwd: directory, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (data) => {
      text += data;
      const port = /listening on (\d+)/.exec(text)?.[1];
      if (port === undefined) return;
      child.stdout.off('data', onData);
      child.stdout.resume();
      resolve({
        authority: `127.0.0.1:${port}`,
        stop: () =>
          new Promise((done) => {
            child.once('exit', done);
            child.kill();
          }),
      });
    };
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', onData);
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the gRPC test server exited with ${code}: ${text}`)));
  });
}

/** A local port with nothing listening on it (bound, then released). */
function closedPort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once the echo server at `echoUrl` has no event stream open (its `/stats`
 * counts the stream bodies it is still sending); rejects after `ms`. */
async function untilEventStreamsClosed(echoUrl, ms = 5000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const { open_event_streams: open } = await (await fetch(`${echoUrl}/stats`)).json();
    if (open === 0) return;
    if (Date.now() > deadline) throw new Error(`the echo server still sends ${open} event stream(s) after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

module.exports = { startEchoServer, startExecutionServer, startGrpcServer, closedPort, untilEventStreamsClosed, repository };
