// Certificates, proxies and the HTTP version of a client: `tls`, `proxy` and
// `httpVersion` reach the engine, against the echo server and a recording proxy.
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { after, before, describe, it } = require('node:test');

const { createClient, VolleyError } = require('..');
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

/** A forwarding HTTP proxy on port 0 that records the request lines it receives and
 * answers 407 without the expected `Proxy-Authorization`, when one is given. */
async function startProxy(expected) {
  const records = [];
  const proxy = http.createServer((request, response) => {
    records.push({ method: request.method, target: request.url, authorization: request.headers['proxy-authorization'] });
    if (expected !== undefined && request.headers['proxy-authorization'] !== expected) {
      response.writeHead(407, { 'proxy-authenticate': 'Basic realm="test"', 'content-length': '0' });
      response.end();
      return;
    }
    const target = new URL(request.url);
    const headers = { ...request.headers };
    delete headers['proxy-authorization'];
    const upstream = http.request(
      { host: target.hostname, port: target.port, path: target.pathname + target.search, method: request.method, headers },
      (answer) => {
        response.writeHead(answer.statusCode, answer.headers);
        answer.pipe(response);
      },
    );
    upstream.on('error', () => response.destroy());
    request.pipe(upstream);
  });
  await new Promise((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${proxy.address().port}`,
    address: `127.0.0.1:${proxy.address().port}`,
    records,
    stop: () => new Promise((resolve) => proxy.close(resolve)),
  };
}

describe('proxy', () => {
  it('sends requests through the proxy unless noProxy lists the host', async () => {
    const proxy = await startProxy();
    try {
      const through = createClient({ proxy: { http: proxy.url } });
      const response = await through.runString(`GET ${url}/echo/proxied\n`);
      assert.equal(response.status, 200);
      assert.deepEqual(proxy.records.map((record) => `${record.method} ${record.target}`), [`GET ${url}/echo/proxied`]);

      const direct = createClient({ proxy: { http: proxy.url, noProxy: ['127.0.0.1'] } });
      assert.equal((await direct.runString(`GET ${url}/echo/direct\n`)).status, 200);
      assert.equal(proxy.records.length, 1, 'noProxy: the proxy saw nothing more');
    } finally {
      await proxy.stop();
    }
  });

  it('takes the credentials in the proxy URL from a variable, never shown', async () => {
    const expected = `Basic ${Buffer.from('ada:s3cret-pass').toString('base64')}`;
    const proxy = await startProxy(expected);
    try {
      const client = createClient({
        variables: { proxyPassword: 's3cret-pass' },
        proxy: { http: `http://ada:{{proxyPassword}}@${proxy.address}` },
      });
      assert.equal((await client.runString(`GET ${url}/echo/with-credentials\n`)).status, 200);
      assert.equal(proxy.records[0].authorization, expected);
    } finally {
      await proxy.stop();
    }
  });

  it('rejects a proxy that refuses the connection with kind proxy, and a malformed URL at once', async () => {
    const closed = net.createServer();
    await new Promise((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = closed.address().port;
    await new Promise((resolve) => closed.close(resolve));
    const client = createClient({ proxy: { http: `http://127.0.0.1:${port}` } });
    await assert.rejects(client.runString(`GET ${url}/echo\n`), (error) => {
      assert.ok(error instanceof VolleyError);
      assert.equal(error.kind, 'proxy');
      assert.match(error.message, /refused/);
      return true;
    });
    assert.throws(() => createClient({ proxy: { http: 'proxy.example.com:3128' } }), /not a proxy URL/);
    assert.throws(() => createClient({ proxy: { noProxy: 7 } }), /config\.proxy\.noProxy/);
  });
});

describe('tls', () => {
  it('names a CA bundle that cannot be read, with kind certificate', async () => {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'volley-tls-'));
    try {
      const notPem = path.join(directory, 'ca.pem');
      fs.writeFileSync(notPem, 'not a certificate');
      const client = createClient({ tls: { ca: notPem } });
      await assert.rejects(client.runString('GET https://127.0.0.1:9/\n'), (error) => {
        assert.equal(error.kind, 'certificate');
        assert.match(error.message, /ca\.pem: the CA bundle holds no certificate/);
        return true;
      });
      const hosts = createClient({ tls: { hosts: { '*': { cert: path.join(directory, 'missing.pem') } } } });
      await assert.rejects(hosts.runString('GET https://127.0.0.1:9/\n'), { kind: 'certificate' });
    } finally {
      fs.rmSync(directory, { recursive: true, force: true });
    }
  });

  it('checks the shape of tls', () => {
    assert.throws(() => createClient({ tls: { ca: 5 } }), /config\.tls\.ca/);
    assert.throws(() => createClient({ tls: { hosts: { '*': { cert: 1 } } } }), /config\.tls\.hosts\["\*"\]\.cert/);
  });
});

describe('httpVersion', () => {
  it('speaks HTTP/2 with prior knowledge to an http:// server when asked', async () => {
    const h2 = createClient({ httpVersion: '2' });
    const echo = await (await h2.runString(`GET ${url}/echo\n`)).json();
    assert.equal(echo.version, 'HTTP/2.0');
    const h1 = createClient({ httpVersion: '1.1' });
    assert.equal((await (await h1.runString(`GET ${url}/echo\n`)).json()).version, 'HTTP/1.1');
    assert.throws(() => createClient({ httpVersion: '3' }), /config\.httpVersion/);
  });
});
