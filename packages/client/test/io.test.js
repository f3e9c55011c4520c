// createClient's `io` adapter against a real `volley echo-server`: every file the
// engine reads (the .http file, `< file` bodies, volley.jsonc, .env) goes through it,
// so files that exist only in memory run, and the real filesystem is never read.
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { after, before, describe, it } = require('node:test');

const { createClient, createNodeIO } = require('..');
const { startEchoServer } = require('./support');

let server;
let url;

before(async () => {
  server = await startEchoServer();
  url = server.url;
});

after(async () => {
  await server?.stop();
});

/** An adapter over a map of path → text that records every call. */
function memoryIO(files, { async = true, binary = false } = {}) {
  const calls = [];
  const answer = (value) => (async ? Promise.resolve(value) : value);
  const missing = (file) => Object.assign(new Error(`ENOENT: no such file or directory, open '${file}'`), { code: 'ENOENT' });
  const io = {
    calls,
    exists(file) {
      calls.push(['exists', file]);
      const prefix = file.endsWith('/') ? file : `${file}/`;
      return answer(file in files || Object.keys(files).some((name) => name.startsWith(prefix)));
    },
  };
  const read = (file) => {
    calls.push(['read', file]);
    if (!(file in files)) {
      if (async) return Promise.reject(missing(file));
      throw missing(file);
    }
    return answer(binary ? new TextEncoder().encode(files[file]) : files[file]);
  };
  if (binary) io.readBinary = read;
  else io.readText = read;
  return io;
}

describe('io', () => {
  it('reads the .http file and its body file through the adapter only', async () => {
    const io = memoryIO({
      '/virtual/api/users.http': 'POST {{host}}/echo/users\nContent-Type: application/json\n\n< ./user.json\n',
      '/virtual/api/user.json': '{"name": "ada"}\n',
    });
    const client = createClient({ io, variables: { host: url } });
    const echo = await (await client.run('/virtual/api/users.http')).json();
    assert.equal(echo.path, '/echo/users');
    assert.deepEqual(JSON.parse(echo.body), { name: 'ada' });
    const reads = io.calls.filter(([op]) => op === 'read').map(([, file]) => file);
    assert.deepEqual(reads, ['/virtual/api/users.http', '/virtual/api/user.json']);
  });

  it('finds volley.jsonc and .env files with exists, and reads them through it', async () => {
    const io = memoryIO(
      {
        '/virtual/.git': '',
        '/virtual/volley.jsonc': '{ "variables": { "greeting": "from-config" } }',
        '/virtual/.env': 'SECRET_PART=from-dotenv\n',
        '/virtual/api/hello.http': 'GET {{host}}/echo/{{greeting}}/{{SECRET_PART}}\n',
      },
      { async: false, binary: true },
    );
    const client = createClient({ io, variables: { host: url } });
    const echo = await (await client.run('/virtual/api/hello.http')).json();
    assert.equal(echo.path, '/echo/from-config/from-dotenv');
    const looked = io.calls.filter(([op]) => op === 'exists').map(([, file]) => file);
    assert.ok(looked.includes('/virtual/volley.jsonc'), JSON.stringify(looked));
  });

  it('resolves a relative run(path) against io.cwd() with io.path.resolve', async () => {
    const io = memoryIO({ '/work/here/ping.http': 'GET {{host}}/echo/ping\n' });
    io.cwd = () => '/work/here';
    io.path = path.posix;
    const echo = await (await createClient({ io, variables: { host: url } }).run('ping.http')).json();
    assert.equal(echo.path, '/echo/ping');
  });

  it('rejects a file the adapter does not have with kind read_file', async () => {
    const client = createClient({ io: memoryIO({}) });
    await assert.rejects(client.run('/virtual/missing.http'), (error) => {
      assert.equal(error.name, 'VolleyError');
      assert.equal(error.kind, 'read_file');
      assert.match(error.message, /missing\.http/);
      return true;
    });
  });

  it('a body file the adapter fails to read fails the run as a build error naming it', async () => {
    const io = memoryIO({ '/virtual/send.http': `POST ${url}/echo\n\n< ./gone.bin\n` });
    await assert.rejects(createClient({ io }).run('/virtual/send.http'), (error) => {
      assert.equal(error.name, 'VolleyError');
      assert.match(error.message, /gone\.bin/);
      return true;
    });
  });

  it('an adapter that throws something else fails the run with its message', async () => {
    const io = {
      readText() {
        throw new Error('the vault is sealed');
      },
    };
    await assert.rejects(createClient({ io }).run('/anywhere.http'), (error) => {
      assert.equal(error.kind, 'read_file');
      assert.match(error.message, /the vault is sealed/);
      return true;
    });
  });

  it('createNodeIO reads the real filesystem', async () => {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'volley-io-'));
    try {
      fs.writeFileSync(path.join(directory, 'body.txt'), 'from disk');
      fs.writeFileSync(path.join(directory, 'api.http'), `POST ${url}/echo/disk\n\n< ./body.txt\n`);
      const io = createNodeIO();
      assert.equal(await io.exists(path.join(directory, 'api.http')), true);
      assert.equal(await io.exists(path.join(directory, 'nothing')), false);
      const echo = await (await createClient({ io }).run(path.join(directory, 'api.http'))).json();
      assert.equal(echo.body, 'from disk');
    } finally {
      fs.rmSync(directory, { recursive: true, force: true });
    }
  });

  it('runString does not need the adapter', async () => {
    const io = memoryIO({});
    const response = await createClient({ io }).runString(`GET ${url}/echo/text\n`);
    assert.equal(response.status, 200);
    assert.deepEqual(
      io.calls.filter(([op]) => op === 'read'),
      [],
    );
  });
});
