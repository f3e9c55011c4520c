// Test helpers: the `volley echo-server` the tests send to (started on port 0 by each
// test file), and a port nothing listens on.
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
  const bin = volleyBin();
  if (!fs.existsSync(bin)) {
    throw new Error(`no volley binary at ${bin}: build it (cargo build -p volley-cli) or set VOLLEY_BIN`);
  }
  const child = spawn(bin, ['echo-server', '--port', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((resolve, reject) => {
    let stderr = '';
    const onData = (data) => {
      stderr += data;
      const url = /https?:\/\/[^\s]+/.exec(stderr)?.[0];
      if (url === undefined) return;
      child.stderr.off('data', onData);
      child.stderr.resume();
      resolve({
        url,
        stop: () =>
          new Promise((done) => {
            child.once('exit', done);
            child.kill();
          }),
      });
    };
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', onData);
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`echo server exited with ${code}: ${stderr}`)));
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

module.exports = { startEchoServer, closedPort, repository };
