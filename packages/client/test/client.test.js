// createClient against a real `volley echo-server`: runs, variables, errors,
// cancellation, timeouts, defaults and a shared cookie jar.
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { after, before, describe, it } = require('node:test');

const { createClient, CookieJar, VolleyError } = require('..');
const { closedPort, startEchoServer, untilEventStreamsClosed } = require('./support');

let server;
let url;

before(async () => {
  server = await startEchoServer();
  url = server.url;
});

after(async () => {
  await server?.stop();
});

describe('runString', () => {
  it('resolves a GET to a global Response with url and redirected', async () => {
    const response = await createClient().runString(`GET ${url}/echo/hello?x=1\n`);
    assert.ok(response instanceof Response);
    assert.equal(response.status, 200);
    assert.equal(response.statusText, 'OK');
    assert.equal(response.ok, true);
    assert.equal(response.url, `${url}/echo/hello?x=1`);
    assert.equal(response.redirected, false);
    assert.equal(response.headers.get('content-type'), 'application/json');
    const echo = await response.json();
    assert.equal(echo.method, 'GET');
    assert.equal(echo.path, '/echo/hello');
  });

  it('sends a JSON body', async () => {
    const text = `POST ${url}/echo\nContent-Type: application/json\n\n{"name": "ada"}\n`;
    const echo = await (await createClient().runString(text)).json();
    assert.equal(echo.method, 'POST');
    assert.deepEqual(JSON.parse(echo.body), { name: 'ada' });
    assert.ok(echo.headers.some(([name, value]) => name === 'content-type' && value === 'application/json'));
  });

  it('resolves a non-2xx status', async () => {
    const response = await createClient().runString(`GET ${url}/status/404\n`);
    assert.equal(response.status, 404);
    assert.equal(response.ok, false);
  });

  it('follows redirects, or not with defaults.followRedirects', async () => {
    const followed = await createClient().runString(`GET ${url}/redirect/2\n`);
    assert.equal(followed.status, 200);
    assert.equal(followed.redirected, true);
    assert.equal(followed.url, `${url}/redirect/0`);
    const clone = followed.clone();
    assert.equal(clone.url, followed.url);
    assert.equal(clone.redirected, true);

    const stopped = await createClient({ defaults: { followRedirects: false } }).runString(`GET ${url}/redirect/2\n`);
    assert.equal(stopped.status, 302);
    assert.equal(stopped.headers.get('location'), '/redirect/1');
  });

  it('sends defaults.headers', async () => {
    const client = createClient({ defaults: { headers: { 'X-Default': 'yes' } } });
    const echo = await (await client.runString(`GET ${url}/echo\n`)).json();
    assert.ok(echo.headers.some(([name, value]) => name === 'x-default' && value === 'yes'));
  });

  it('streams an event stream body', async () => {
    const response = await createClient().runString(`GET ${url}/sse/events\nAccept: text/event-stream\n`);
    assert.equal(response.headers.get('content-type'), 'text/event-stream');
    const text = await response.text();
    assert.match(text, /^data: /m);
    assert.match(text, /^id: 7$/m);
  });

  // The status the Response constructor refuses, set on the instance: the part of the
  // Response that depends most on the runtime's own (Node's or Bun's).
  it('resolves a WebSocket handshake with status 101 and no body, kept by clone()', async () => {
    const response = await createClient().runString(`GET ${url.replace(/^http/, 'ws')}/ws/echo\n`);
    assert.ok(response instanceof Response);
    assert.equal(response.status, 101);
    assert.equal(response.ok, false);
    assert.equal(response.statusText, 'Switching Protocols');
    assert.equal(response.body, null);
    assert.equal(response.url, `${url.replace(/^http/, 'ws')}/ws/echo`);
    const clone = response.clone();
    assert.equal(clone.status, 101);
    assert.equal(clone.ok, false);
    assert.equal(clone.url, response.url);
  });
});

describe('streaming', () => {
  it('gives the events of an endless stream as they arrive, and stops when cancelled', async () => {
    const response = await createClient().runString(`GET ${url}/sse/forever?interval_ms=20\nAccept: text/event-stream\n`);
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!text.includes('tick 3')) {
      const { value, done } = await reader.read();
      assert.equal(done, false);
      text += value;
    }
    assert.match(text, /^data: tick 1$/m);
    await reader.cancel();
    await untilEventStreamsClosed(url);
  });
});

describe('run', () => {
  it('runs a file, with relative body files and the variables of client and run', async () => {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'volley-client-'));
    try {
      fs.writeFileSync(path.join(directory, 'body.json'), '{"from": "file"}\n');
      const file = path.join(directory, 'api.http');
      fs.writeFileSync(file, 'POST {{host}}/echo/{{item}}\nContent-Type: application/json\n\n< ./body.json\n');
      const client = createClient({ variables: { host: url, item: 'client' } });

      const echo = await (await client.run(file)).json();
      assert.equal(echo.path, '/echo/client');
      assert.deepEqual(JSON.parse(echo.body), { from: 'file' });

      const perRun = await (await client.run(file, { variables: { item: 'run' } })).json();
      assert.equal(perRun.path, '/echo/run');
      // A run's variables do not stay.
      assert.equal(client.getVariables().item, 'client');
    } finally {
      fs.rmSync(directory, { recursive: true, force: true });
    }
  });

  it('rejects a missing file with kind read_file', async () => {
    await assert.rejects(createClient().run(path.join(os.tmpdir(), 'no-such-volley-file.http')), {
      name: 'VolleyError',
      kind: 'read_file',
    });
  });
});

describe('variables', () => {
  it('keeps what setVariable and setVariables set', () => {
    const client = createClient({ variables: { a: 1 } });
    client.setVariable('b', { nested: [true, null] });
    client.setVariables({ c: 'three', a: 'one' });
    assert.deepEqual(client.getVariables(), { a: 'one', b: { nested: [true, null] }, c: 'three' });
  });

  it('takes values as JSON does', () => {
    const client = createClient({ variables: { when: new Date(0), gone: undefined, nan: NaN } });
    assert.deepEqual(client.getVariables(), { when: '1970-01-01T00:00:00.000Z', nan: null });
    assert.throws(() => client.setVariable('big', 1n), TypeError);
    assert.throws(() => client.setVariable('nothing', undefined), TypeError);
    assert.throws(() => client.setVariables({ big: 1n }), TypeError);
  });

  it('sends a bearer token stored with setVariable', async () => {
    const client = createClient({ variables: { host: url } });
    const login = await client.runString(
      'POST {{host}}/login\nContent-Type: application/json\n\n{"user": "ada", "password": "lovelace"}\n',
    );
    assert.equal(login.status, 200);
    const { token } = await login.json();
    client.setVariable('token', token);
    const me = await client.runString('GET {{host}}/bearer\nAuthorization: Bearer {{token}}\n');
    assert.equal(me.status, 200);
    assert.deepEqual(await me.json(), { authenticated: true, token });

    const other = createClient({ variables: { host: url, token: 'wrong' } });
    const refused = await other.runString('GET {{host}}/bearer\nAuthorization: Bearer {{token}}\n');
    assert.equal(refused.status, 401);
  });

  it('nested properties with dot notation', async () => {
    const client = createClient({ variables: { api: { base: url, version: 'v2' } } });
    const echo = await (await client.runString('GET {{api.base}}/echo/{{api.version}}\n')).json();
    assert.equal(echo.path, '/echo/v2');
  });

  it('rejects an undefined variable with kind build, code and position', async () => {
    const error = await createClient()
      .runString(`GET ${url}/echo\nX-Id: {{missing}}\n`)
      .catch((error) => error);
    assert.ok(error instanceof VolleyError);
    assert.ok(error instanceof Error);
    assert.equal(error.kind, 'build');
    assert.equal(error.code, 'undefined-variable');
    assert.equal(error.line, 2);
    // The name inside the braces: `X-Id: {{` is 8 characters.
    assert.equal(error.column, 9);
    assert.match(error.message, /undefined variable `missing`/);
  });

  it('counts the column in UTF-16 code units, as JavaScript strings do, in text and in files', async () => {
    const line = 'X-Name: é😀 {{missing}}';
    const expected = line.indexOf('missing') + 1;
    const text = `GET ${url}/echo\n${line}\n`;
    const inText = await createClient().runString(text).catch((error) => error);
    assert.equal(inText.code, 'undefined-variable');
    assert.deepEqual([inText.line, inText.column], [2, expected]);
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'volley-column-'));
    try {
      const file = path.join(directory, 'columns.http');
      fs.writeFileSync(file, text);
      const inFile = await createClient().run(file).catch((error) => error);
      assert.deepEqual([inFile.line, inFile.column], [2, expected]);
    } finally {
      fs.rmSync(directory, { recursive: true, force: true });
    }
  });
});

describe('resolvers', () => {
  it('calls custom resolvers, sync and async, with interpolated arguments', async () => {
    const client = createClient({
      variables: { host: url, user: 'ada' },
      resolvers: {
        $greet: (name) => `hello-${name}`,
        $join: async (...parts) => parts.join('+'),
        $count: () => 42,
      },
    });
    const echo = await (
      await client.runString('GET {{host}}/echo/{{$greet({{user}})}}/{{$join(a, b, {{user}})}}/{{$count()}}\n')
    ).json();
    assert.equal(echo.path, '/echo/hello-ada/a+b+ada/42');
  });

  it('win over the built-ins', async () => {
    const client = createClient({ resolvers: { $uuid: () => 'not-random' } });
    const echo = await (await client.runString(`GET ${url}/echo/{{$uuid()}}\n`)).json();
    assert.equal(echo.path, '/echo/not-random');
  });

  it('a throwing resolver rejects with kind build, code resolver-failed', async () => {
    const client = createClient({
      resolvers: {
        $broken: () => {
          throw new Error('vault is sealed');
        },
        $rejects: () => Promise.reject(new Error('no network')),
      },
    });
    for (const name of ['broken', 'rejects']) {
      const error = await client.runString(`GET ${url}/echo/{{$${name}()}}\n`).catch((error) => error);
      assert.ok(error instanceof VolleyError, String(error));
      assert.equal(error.kind, 'build');
      assert.equal(error.code, 'resolver-failed');
      assert.match(error.message, name === 'broken' ? /vault is sealed/ : /no network/);
    }
  });

  it('do not keep the process alive', () => {
    const script = "require('.').createClient({ resolvers: { $a: () => 'a' } }); console.log('done')";
    const output = require('node:child_process').execFileSync(process.execPath, ['-e', script], {
      cwd: path.resolve(__dirname, '..'),
      encoding: 'utf8',
      timeout: 10_000,
    });
    assert.equal(output.trim(), 'done');
  });
});

describe('transport', () => {
  it('makes the exchange with a custom fetch', async () => {
    const seen = [];
    const transport = {
      async fetch(request) {
        seen.push({ method: request.method, url: request.url, auth: request.headers.get('x-auth'), body: await request.text() });
        return new Response('{"stub": true}', { status: 201, headers: { 'content-type': 'application/json', 'x-stub': '1' } });
      },
    };
    const client = createClient({ transport, variables: { token: 't0k' } });
    const response = await client.runString('POST https://api.invalid/items\nX-Auth: {{token}}\n\n{"a": 1}\n');
    assert.equal(response.status, 201);
    assert.equal(response.headers.get('x-stub'), '1');
    assert.deepEqual(await response.json(), { stub: true });
    assert.deepEqual(seen, [{ method: 'POST', url: 'https://api.invalid/items', auth: 't0k', body: '{"a": 1}' }]);
  });

  it('exchanges HTTP only: WebSockets open over Volley\'s own sockets', async () => {
    const seen = [];
    const client = createClient({ transport: (request) => (seen.push(request.url), fetch(request)) });
    const response = await client.runString(`GET ${url.replace(/^http/, 'ws')}/ws/echo\n`);
    assert.equal(response.status, 101);
    assert.deepEqual(seen, []);
  });

  it('may be the fetch function itself', async () => {
    const seen = [];
    const client = createClient({ transport: (request) => (seen.push(request.method), fetch(request)) });
    const response = await client.runString(`DELETE ${url}/echo/fn\n`);
    assert.equal((await response.json()).method, 'DELETE');
    assert.deepEqual(seen, ['DELETE']);
  });

  it('leaves redirects and cookies to the engine', async () => {
    const urls = [];
    const jar = new CookieJar();
    const client = createClient({
      cookieJar: jar,
      transport: { fetch: (request) => (urls.push(new URL(request.url).pathname), fetch(request)) },
    });
    const response = await client.runString(`GET ${url}/redirect/2\n`);
    assert.equal(response.status, 200);
    assert.equal(response.redirected, true);
    assert.deepEqual(urls, ['/redirect/2', '/redirect/1', '/redirect/0']);
    await client.runString(`GET ${url}/cookies/set?via=transport\n`);
    assert.deepEqual(await (await client.runString(`GET ${url}/cookies\n`)).json(), { cookies: { via: 'transport' } });
  });

  it('aborts the signal of an exchange the engine stops waiting for: a timeout, the run\'s signal', async () => {
    const aborted = [];
    const hang = (signal) =>
      new Promise((_, reject) => {
        signal.addEventListener('abort', () => {
          aborted.push(signal.reason.name);
          reject(signal.reason);
        });
      });
    const client = createClient({ transport: (request) => hang(request.signal), timeout: 200 });
    await assert.rejects(client.runString('GET https://api.invalid/slow\n'), { name: 'VolleyError', kind: 'timeout' });
    const controller = new AbortController();
    const run = client.runString('GET https://api.invalid/cancelled\n', { signal: controller.signal, timeout: 60_000 });
    setTimeout(() => controller.abort(), 100);
    await assert.rejects(run, { name: 'AbortError' });
    for (let waited = 0; aborted.length < 2 && waited < 5000; waited += 20) await new Promise((done) => setTimeout(done, 20));
    assert.deepEqual(aborted, ['AbortError', 'AbortError']);
  });

  it("takes t-req's shape: fetch(url, init, ctx) with the signal and form bodies in fetch's types", async () => {
    const seen = [];
    const transport = {
      capabilities: { proxy: false, validateSSL: true },
      async fetch(address, init, ctx) {
        const kind = init.body instanceof URLSearchParams ? 'URLSearchParams' : init.body instanceof FormData ? 'FormData' : typeof init.body;
        seen.push({ address, method: init.method, kind, signal: init.signal instanceof AbortSignal, ctx });
        return fetch(address, init);
      },
    };
    const client = createClient({ transport });
    const form = await client.runString(
      `POST ${url}/echo/form\nContent-Type: application/x-www-form-urlencoded\n\nname=Ada Lovelace&lang=en\n`,
    );
    assert.match((await form.json()).body, /^name=Ada(\+|%20)Lovelace&lang=en$/);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'volley-transport-'));
    fs.writeFileSync(path.join(dir, 'note.txt'), 'a note');
    fs.writeFileSync(
      path.join(dir, 'upload.http'),
      `POST ${url}/echo/upload\nContent-Type: multipart/form-data; boundary=b0undary\n\n--b0undary\nContent-Disposition: form-data; name="title"\n\nhello\n--b0undary\nContent-Disposition: form-data; name="file"; filename="note.txt"\nContent-Type: text/plain\n\n< ./note.txt\n--b0undary--\n`,
    );
    const upload = await (await client.run(path.join(dir, 'upload.http'))).json();
    const sent = upload.body;
    assert.match(sent, /name="title"\r\n\r\nhello\r\n/);
    // Bun's FormData writes `text/plain;charset=utf-8` for the part: the runtime's own serialisation.
    assert.match(sent, /filename="note.txt"\r\nContent-Type: text\/plain(;charset=utf-8)?\r\n\r\na note\r\n/);
    const type = upload.headers.find(([name]) => name === 'content-type')[1];
    assert.match(type, /^multipart\/form-data; boundary=/);
    assert.doesNotMatch(type, /b0undary/, 'fetch wrote its own boundary');
    assert.deepEqual(
      seen.map(({ address, method, kind, signal, ctx }) => [address, method, kind, signal, ctx.validateSSL]),
      [
        [`${url}/echo/form`, 'POST', 'URLSearchParams', true, true],
        [`${url}/echo/upload`, 'POST', 'FormData', true, true],
      ],
    );
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a failing transport rejects with kind transport', async () => {
    const client = createClient({
      transport: {
        fetch: () => {
          throw new Error('offline mode');
        },
      },
    });
    await assert.rejects(client.runString(`GET ${url}/echo\n`), (error) => {
      assert.ok(error instanceof VolleyError);
      assert.equal(error.kind, 'transport');
      assert.match(error.message, /offline mode/);
      return true;
    });
    assert.throws(() => createClient({ transport: {} }), TypeError);
  });
});

describe('failures', () => {
  it('rejects a refused connection with kind connection_refused', async () => {
    const port = await closedPort();
    await assert.rejects(createClient().runString(`GET http://127.0.0.1:${port}/\n`), (error) => {
      assert.ok(error instanceof VolleyError);
      assert.equal(error.kind, 'connection_refused');
      assert.match(error.message, /connection refused/);
      return true;
    });
  });

  it('VolleyError can be made by callers too', () => {
    const error = new VolleyError('no token', { kind: 'other', hint: 'log in first' });
    assert.ok(error instanceof Error);
    assert.equal(error.name, 'VolleyError');
    assert.equal(error.kind, 'other');
    assert.equal(error.hint, 'log in first');
    assert.equal(new VolleyError('plain').kind, 'other');
  });

  it('rejects text without a request with kind selection', async () => {
    await assert.rejects(createClient().runString('# nothing here\n'), { name: 'VolleyError', kind: 'selection' });
  });

  it('refuses options it cannot use', () => {
    assert.throws(() => createClient({ io: {} }), TypeError);
    assert.throws(() => createClient({ io: { readText() {}, exists: true } }), TypeError);
    assert.throws(() => createClient({ transport: { send() {} } }), TypeError);
    assert.throws(() => createClient({ resolvers: { x: () => 'x' } }), TypeError);
    assert.throws(() => createClient({ resolvers: { $x: 'x' } }), TypeError);
    assert.throws(() => createClient({ cookieJar: {} }), TypeError);
    assert.throws(() => createClient({ timeout: -1 }), TypeError);
  });

  it('rejects invalid run options', async () => {
    await assert.rejects(createClient().runString(`GET ${url}/echo\n`, { timeout: 'soon' }), TypeError);
    await assert.rejects(createClient().runString(`GET ${url}/echo\n`, { signal: {} }), TypeError);
  });
});

describe('timeout', () => {
  it('rejects with kind timeout after the client timeout', async () => {
    const client = createClient({ timeout: 200 });
    const started = Date.now();
    await assert.rejects(client.runString(`GET ${url}/slow?ms=5000\n`), { name: 'VolleyError', kind: 'timeout' });
    assert.ok(Date.now() - started < 4000);
  });

  it('a run timeout wins over the client timeout', async () => {
    const client = createClient({ timeout: 200 });
    const response = await client.runString(`GET ${url}/slow?ms=300\n`, { timeout: 5000 });
    assert.equal(response.status, 200);
    await assert.rejects(createClient().runString(`GET ${url}/slow?ms=5000\n`, { timeout: 100 }), {
      kind: 'timeout',
    });
  });
});

describe('abort', () => {
  it('rejects at once with an AbortError when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const port = await closedPort();
    await assert.rejects(createClient().runString(`GET http://127.0.0.1:${port}/\n`, { signal: controller.signal }), (error) => {
      assert.ok(error instanceof DOMException);
      assert.equal(error.name, 'AbortError');
      return true;
    });
  });

  it('rejects with the signal reason when given one', async () => {
    const reason = new Error('stop');
    await assert.rejects(
      createClient().runString(`GET ${url}/echo\n`, { signal: AbortSignal.abort(reason) }),
      (error) => error === reason,
    );
  });

  it('cancels a run under way', async () => {
    const controller = new AbortController();
    const started = Date.now();
    const run = createClient().runString(`GET ${url}/slow?ms=10000\n`, { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    await assert.rejects(run, { name: 'AbortError' });
    assert.ok(Date.now() - started < 5000, 'the run ended long before the server answered');
  });

  it('cancels a body that is still arriving, while it waits for the next event', async () => {
    const controller = new AbortController();
    const text = `GET ${url}/sse/slow?count=2&interval_ms=5000\nAccept: text/event-stream\n`;
    const response = await createClient().runString(text, { signal: controller.signal });
    const started = Date.now();
    const reading = response.text();
    setTimeout(() => controller.abort(), 100);
    await assert.rejects(reading, { name: 'AbortError' });
    assert.ok(Date.now() - started < 2000);
    // The connection is closed: the server is not left sending to nobody.
    await untilEventStreamsClosed(url, 2000);
  });
});

describe('cookieJar', () => {
  it('is shared by two clients', async () => {
    const jar = new CookieJar();
    const first = createClient({ cookieJar: jar });
    const second = createClient({ cookieJar: jar });
    await first.runString(`GET ${url}/cookies/set?a=1\n`);
    assert.deepEqual(
      jar.cookies().map(({ name, value }) => [name, value]),
      [['a', '1']],
    );
    const seen = await (await second.runString(`GET ${url}/cookies\n`)).json();
    assert.deepEqual(seen, { cookies: { a: '1' } });

    const without = await (await createClient().runString(`GET ${url}/cookies\n`)).json();
    assert.deepEqual(without, { cookies: {} });

    jar.clear();
    assert.deepEqual(jar.cookies(), []);
  });

  it('kept in a file, is there for a jar made later from the same file', async () => {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'volley-jar-'));
    try {
      const file = path.join(directory, 'nested', 'cookies.json');
      const jar = new CookieJar({ path: file });
      assert.equal(jar.path, file);
      assert.equal(new CookieJar().path, undefined);
      await createClient({ cookieJar: jar }).runString(`GET ${url}/cookies/set?kept=yes\n`);
      assert.ok(fs.existsSync(file), 'the jar was written after the request that changed it');

      const later = createClient({ cookieJar: new CookieJar({ path: file }) });
      assert.deepEqual(await (await later.runString(`GET ${url}/cookies\n`)).json(), { cookies: { kept: 'yes' } });

      fs.writeFileSync(file, 'not json');
      assert.throws(() => new CookieJar({ path: file }), /cannot load/);
      assert.throws(() => new CookieJar({ path: 7 }), TypeError);
    } finally {
      fs.rmSync(directory, { recursive: true, force: true });
    }
  });
});

describe('close', () => {
  it('cancels the runs under way, then refuses new ones; asyncDispose closes', async () => {
    const client = createClient();
    const slow = client.runString(`GET ${url}/slow?ms=5000\n`);
    const started = Date.now();
    await client.close();
    await assert.rejects(slow);
    assert.ok(Date.now() - started < 4000, 'the run was cancelled, not waited for');
    await assert.rejects(client.runString(`GET ${url}/echo\n`), /the client is closed/);

    const disposed = createClient();
    assert.equal((await disposed.runString(`GET ${url}/echo\n`)).status, 200);
    await disposed[Symbol.asyncDispose]();
    await assert.rejects(disposed.runString(`GET ${url}/echo\n`), /the client is closed/);
  });
});

describe('CookieJar, as tough-cookie users seed and read one', () => {
  it('sets, reads, sends, serialises and restores cookies, sync and async', async () => {
    const jar = new CookieJar();
    const set = jar.setCookieSync('sid=abc123; Path=/', `${url}/`);
    assert.equal(set.key, 'sid');
    await jar.setCookie({ key: 'theme', value: 'dark', path: '/' }, new URL(url));
    assert.deepEqual(
      jar.getCookiesSync(`${url}/echo`).map((cookie) => [cookie.key, cookie.value]).sort(),
      [['sid', 'abc123'], ['theme', 'dark']],
    );
    assert.match(await jar.getCookieString(`${url}/echo`), /sid=abc123/);
    assert.throws(() => jar.setCookieSync('x=1; Domain=elsewhere.example', `${url}/`), /cannot be set/);
    await new Promise((resolve, reject) => {
      jar.getCookies(`${url}/`, (error, cookies) => (error ? reject(error) : resolve(assert.equal(cookies.length, 2))));
    });

    // A client sends what was seeded.
    const response = await createClient({ cookieJar: jar }).runString(`GET ${url}/echo\n`);
    const echoed = await response.json();
    const cookie = echoed.headers.find(([name]) => name === 'cookie');
    assert.match(cookie[1], /sid=abc123/);

    const restored = await CookieJar.deserialize(JSON.parse(JSON.stringify(jar)));
    // The same cookies (their order in the header is the store's).
    const pairs = (text) => text.split('; ').sort();
    assert.deepEqual(pairs(restored.getCookieStringSync(`${url}/`)), pairs(jar.getCookieStringSync(`${url}/`)));
    restored.removeAllCookiesSync();
    assert.equal(restored.getCookieStringSync(`${url}/`), '');
  });
});
