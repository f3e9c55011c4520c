// AWS Signature V4 as httpyac and REST Client write it (`Authorization: AWS <key>
// <secret> token:… region:… service:…`), checked by an independent verifier: `aws4`,
// the library both of those tools sign with, recomputes the signature of the request
// exactly as `volley echo-server` received it. Through createClient (the engine in
// this process) and createRemoteClient (the engine of a `volley serve` started here).
'use strict';

const assert = require('node:assert/strict');
const { after, before, describe, it } = require('node:test');

const aws4 = require('aws4');
const { createClient, createRemoteClient } = require('..');
const { startEchoServer, startExecutionServer } = require('./support');

const SERVER_TOKEN = 'aws-test-server-token';
const ACCESS_KEY = 'AKIDEXAMPLE';
const SECRET_KEY = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
const SESSION_TOKEN = 'session/token+with=odd&characters';

let echo;
let server;

before(async () => {
  [echo, server] = await Promise.all([startEchoServer(), startExecutionServer(['--token', SERVER_TOKEN])]);
});

after(async () => {
  await Promise.all([echo?.stop(), server?.stop()]);
});

/** What `aws4` signs for the request `received` (the echo server's JSON), given the
 * names Volley signed: the same method, target, headers and body, the same date. */
function verify(received, { region, service, token }) {
  const sent = Object.fromEntries(received.headers.map(([name, value]) => [name, value]));
  const authorization = sent.authorization;
  const signedNames = /SignedHeaders=([^,]+)/.exec(authorization)[1].split(';');
  const headers = Object.fromEntries(signedNames.map((name) => [name, sent[name]]));
  const credentials = { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY, sessionToken: token };
  const signed = aws4.sign(
    {
      method: received.method,
      host: sent.host,
      path: received.url,
      headers,
      body: Buffer.from(received.body_base64, 'base64'),
      region,
      service,
      // aws4 adds Content-Length to what it signs; the transport sets it after signing.
      extraHeadersToIgnore: { 'content-length': true },
    },
    credentials,
  );
  return { sent: authorization, expected: signed.headers.Authorization, headers: sent };
}

const targets = [
  { name: 'createClient', create: (config) => createClient(config) },
  {
    name: 'createRemoteClient',
    create: (config) => createRemoteClient({ serverUrl: server.url, token: SERVER_TOKEN, ...config }),
  },
];

for (const target of targets) {
  describe(`AWS Signature V4 (${target.name})`, () => {
    it('a POST with a query, headers, a JSON body and a session token verifies with aws4', async () => {
      const client = target.create({ variables: { host: echo.url, secret: SECRET_KEY } });
      const text = [
        'POST {{host}}/echo/orders/a%20b/./c?b=2&a=1&q=x y&a=0',
        `Authorization: AWS ${ACCESS_KEY} {{secret}} token:${SESSION_TOKEN} region:eu-west-1 service:execute-api`,
        'Content-Type: application/json',
        'X-Custom:   spaced    value  ',
        '',
        '{"item": "ሴ", "count": 2}',
        '',
      ].join('\n');
      const response = await client.runString(text);
      assert.equal(response.status, 200);
      const received = await response.json();
      const { sent, expected, headers } = verify(received, {
        region: 'eu-west-1',
        service: 'execute-api',
        token: SESSION_TOKEN,
      });
      assert.match(sent, /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/execute-api\/aws4_request, /);
      assert.equal(sent, expected);
      assert.equal(headers['x-amz-security-token'], SESSION_TOKEN);
      assert.match(headers['x-amz-date'], /^\d{8}T\d{6}Z$/);
      assert.ok(!JSON.stringify(received).includes(SECRET_KEY), 'the secret key never reaches the server');
    });

    it('S3 gets x-amz-content-sha256 and a path encoded once, and verifies with aws4', async () => {
      const client = target.create({ variables: { host: echo.url } });
      const text = [
        'PUT {{host}}/echo/bucket/some%20key.txt',
        `Authorization: AWS ${ACCESS_KEY} ${SECRET_KEY} region:us-west-2 service:s3`,
        // aws4 would add (and sign) a form Content-Type to a body without one.
        'Content-Type: text/plain',
        '',
        'file contents',
        '',
      ].join('\n');
      const response = await client.runString(text);
      const received = await response.json();
      const { sent, expected, headers } = verify(received, { region: 'us-west-2', service: 's3' });
      assert.equal(sent, expected);
      assert.equal(
        headers['x-amz-content-sha256'],
        require('node:crypto').createHash('sha256').update('file contents').digest('hex'),
      );
    });

    it('a request that cannot be signed is refused before anything is sent', async () => {
      const client = target.create({ variables: { host: echo.url } });
      const text = `GET {{host}}/echo\nAuthorization: AWS ${ACCESS_KEY} ${SECRET_KEY}\n`;
      await assert.rejects(client.runString(text), (error) => {
        assert.equal(error.kind, 'build');
        assert.match(error.message, /cannot sign with AWS Signature V4: the service to sign for is not known/);
        assert.ok(!error.message.includes(SECRET_KEY));
        return true;
      });
    });
  });
}
