// SPEC.md's authentication patterns, one test per row of its table, written as a user
// of the package writes them: `.http` text for `runString`, tokens read with
// `response.json()` and kept with `setVariable`. The same cases run with createClient
// and with createRemoteClient through a `volley serve` started here, against the
// routes of `volley echo-server` (user ada, password lovelace, key test-api-key,
// OAuth client volley-client/volley-secret).
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { after, afterEach, before, describe, it } = require('node:test');

const { createClient, createRemoteClient, CookieJar } = require('..');
const { startEchoServer, startExecutionServer } = require('./support');

const SERVER_TOKEN = 'auth-test-server-token';
const API_KEY = 'test-api-key';
// The variable `$env` reads: set in this process for the local client, and only in the
// server's environment for the remote one (the server resolves `$env`, not Node).
const KEY_VARIABLE = 'VOLLEY_AUTH_TEST_API_KEY';
const UNSET_VARIABLE = 'VOLLEY_AUTH_TEST_UNSET';

const LOGIN = 'POST {{host}}/login\nContent-Type: application/json\n\n{"user": "ada", "password": "lovelace"}\n';
const BEARER = 'GET {{host}}/bearer\nAuthorization: Bearer {{token}}\n';

let echo;
let server;
let workspace;

before(async () => {
  delete process.env[UNSET_VARIABLE];
  workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'volley-auth-'));
  [echo, server] = await Promise.all([
    startEchoServer(),
    startExecutionServer(['--token', SERVER_TOKEN, '--workspace', workspace], { [KEY_VARIABLE]: API_KEY }),
  ]);
});

after(async () => {
  await Promise.all([echo?.stop(), server?.stop()]);
  if (workspace) fs.rmSync(workspace, { recursive: true, force: true });
});

/** The two clients of SPEC.md; `config` is what both take (variables, timeout). */
const targets = [
  {
    name: 'createClient',
    remote: false,
    create: (config) => createClient(config),
    /** The configuration that keeps cookies: a jar of its own. */
    withCookies: (config) => ({ ...config, cookieJar: new CookieJar() }),
  },
  {
    name: 'createRemoteClient',
    remote: true,
    create: (config) => createRemoteClient({ serverUrl: server.url, token: SERVER_TOKEN, ...config }),
    // The server's session of each remote client has its own cookie jar.
    withCookies: (config) => config,
  },
];

/** How many requests each path of the echo server received so far. */
async function requestCounts() {
  return (await (await fetch(`${echo.url}/stats`)).json()).requests;
}

/** What each path received between the counts `earlier` and `now` (paths that received
 * nothing, and `/stats` itself, left out). */
function countsSince(earlier, now) {
  const delta = {};
  for (const [route, count] of Object.entries(now)) {
    const received = count - (earlier[route] ?? 0);
    if (route !== '/stats' && received !== 0) delta[route] = received;
  }
  return delta;
}

/** Status and JSON body of the first request of `text`. */
async function exchange(client, text, options) {
  const response = await client.runString(text, options);
  return { status: response.status, body: await response.json() };
}

/** Runs `text`; on a 401, runs the refresh definition, stores its `access_token` as
 * `token` and runs `text` again, once. The pattern is the caller's, not the package's. */
async function runWithRefresh(client, text) {
  const response = await client.runString(text);
  if (response.status !== 401) return response;
  await response.body?.cancel();
  const refreshed = await client.runString('POST {{host}}/refresh\n');
  assert.equal(refreshed.status, 200, 'the refresh definition succeeded');
  client.setVariable('token', (await refreshed.json()).access_token);
  return client.runString(text);
}

for (const target of targets) {
  describe(`authentication patterns with ${target.name}`, () => {
    // Every client made in a test, closed after it (a remote one finishes its flow).
    let made = [];
    const client = (config = {}) => {
      const created = target.create({ ...config, variables: { host: echo.url, ...config.variables } });
      made.push(created);
      return created;
    };
    afterEach(async () => {
      const closing = made.map((created) => created.close?.());
      made = [];
      await Promise.all(closing);
    });

    it("oauth2: httpyac's Authorization: oauth2 gets a client-credentials token once and sends it", async () => {
      const before = await requestCounts();
      const api = client({
        variables: {
          oauth2_tokenEndpoint: `${echo.url}/oauth/token`,
          oauth2_clientId: 'volley-client',
          oauth2_clientSecret: 'volley-secret',
        },
      });
      const text = 'GET {{host}}/bearer\nAuthorization: oauth2 client_credentials\n';
      for (let run = 0; run < 2; run += 1) {
        const answer = await exchange(api, text);
        assert.equal(answer.status, 200);
        assert.equal(answer.body.authenticated, true);
      }
      const counts = countsSince(before, await requestCounts());
      assert.deepEqual(counts, { '/oauth/token': 1, '/bearer': 2 }, 'one token request for two requests');
    });

    it('bearer: a login returns a token, setVariable stores it, later requests send it', async () => {
      const api = client({ variables: { token: 'not-issued' } });
      assert.equal((await exchange(api, BEARER)).status, 401);

      const login = await exchange(api, LOGIN);
      assert.equal(login.status, 200);
      assert.match(login.body.token, /^token-\d+$/);
      api.setVariable('token', login.body.token);
      assert.equal(api.getVariables().token, login.body.token);

      assert.deepEqual(await exchange(api, BEARER), {
        status: 200,
        body: { authenticated: true, token: login.body.token },
      });
    });

    it('basic: $basicAuth with variables in its arguments, interpolated before the call', async () => {
      const api = client({ variables: { user: 'ada', password: 'lovelace' } });
      const text = 'GET {{host}}/basic-auth\nAuthorization: {{$basicAuth({{user}}, {{password}})}}\n';
      assert.deepEqual(await exchange(api, text), { status: 200, body: { authenticated: true, user: 'ada' } });

      // What was sent: `Basic base64(ada:lovelace)`.
      const echoed = await exchange(api, 'GET {{host}}/echo\nAuthorization: {{$basicAuth({{user}}, {{password}})}}\n');
      const sent = echoed.body.headers.find(([name]) => name === 'authorization');
      assert.deepEqual(sent, ['authorization', `Basic ${Buffer.from('ada:lovelace').toString('base64')}`]);

      api.setVariable('password', 'wrong');
      assert.deepEqual(await exchange(api, text), { status: 401, body: { authenticated: false } });
    });

    it('basic: a pre-encoded variable', async () => {
      const api = client({ variables: { basic: Buffer.from('ada:lovelace').toString('base64') } });
      assert.equal((await exchange(api, 'GET {{host}}/basic-auth\nAuthorization: Basic {{basic}}\n')).status, 200);
    });

    it('API key in a header', async () => {
      const api = client({ variables: { apiKey: API_KEY } });
      const text = 'GET {{host}}/api-key\nX-API-Key: {{apiKey}}\n';
      assert.deepEqual(await exchange(api, text), { status: 200, body: { authenticated: true } });
      api.setVariable('apiKey', 'wrong');
      assert.deepEqual(await exchange(api, text), { status: 401, body: { authenticated: false } });
    });

    it('API key in the query', async () => {
      const api = client({ variables: { apiKey: API_KEY } });
      const text = 'GET {{host}}/api-key-query?api_key={{apiKey}}\n';
      assert.deepEqual(await exchange(api, text), { status: 200, body: { authenticated: true } });
      // A run's variables win over the client's, for that run only.
      assert.equal((await exchange(api, text, { variables: { apiKey: 'wrong' } })).status, 401);
      assert.equal((await exchange(api, text)).status, 200);
    });

    it('key from the environment: $env(NAME), an empty string when unset', async () => {
      if (target.remote) {
        // The server resolves `$env`: it was started with the variable, this process has none.
        assert.equal(process.env[KEY_VARIABLE], undefined);
      } else {
        process.env[KEY_VARIABLE] = API_KEY;
      }
      try {
        const api = client();
        const text = `GET {{host}}/api-key\nX-API-Key: {{$env(${KEY_VARIABLE})}}\n`;
        assert.deepEqual(await exchange(api, text), { status: 200, body: { authenticated: true } });

        const unset = await exchange(api, `GET {{host}}/echo/[{{$env(${UNSET_VARIABLE})}}]\n`);
        assert.equal(unset.body.path, '/echo/[]');
        const refused = await exchange(api, `GET {{host}}/api-key\nX-API-Key: {{$env(${UNSET_VARIABLE})}}\n`);
        assert.equal(refused.status, 401);
      } finally {
        if (!target.remote) delete process.env[KEY_VARIABLE];
        }
    });

    it('OAuth 2.0 client credentials: POST the token endpoint, store access_token, use it', async () => {
      const api = client({ variables: { clientId: 'volley-client', clientSecret: 'volley-secret' } });
      const tokenRequest =
        'POST {{host}}/oauth/token\nContent-Type: application/x-www-form-urlencoded\n\n' +
        'grant_type=client_credentials&client_id={{clientId}}&client_secret={{clientSecret}}\n';
      const granted = await exchange(api, tokenRequest);
      assert.equal(granted.status, 200);
      assert.equal(granted.body.token_type, 'Bearer');
      assert.equal(granted.body.expires_in, 3600);
      api.setVariables({ token: granted.body.access_token, expiresIn: granted.body.expires_in });

      assert.deepEqual(await exchange(api, BEARER), {
        status: 200,
        body: { authenticated: true, token: granted.body.access_token },
      });

      api.setVariable('clientSecret', 'wrong');
      assert.deepEqual(await exchange(api, tokenRequest), { status: 401, body: { error: 'invalid_client' } });
    });

    it('token refresh: a 401 runs the refresh definition, stores the token, retries once', async () => {
      const api = client({ variables: { token: 'expired-token' } });
      const protectedRequest = 'GET {{host}}/expiring\nAuthorization: Bearer {{token}}\n';

      let counts = await requestCounts();
      const response = await runWithRefresh(api, protectedRequest);
      assert.equal(response.status, 200);
      assert.deepEqual(await response.json(), { authenticated: true });
      assert.match(api.getVariables().token, /^fresh-\d+$/);
      assert.deepEqual(countsSince(counts, await requestCounts()), { '/expiring': 2, '/refresh': 1 });

      // With the fresh token stored, no refresh and no retry.
      counts = await requestCounts();
      assert.equal((await runWithRefresh(api, protectedRequest)).status, 200);
      assert.deepEqual(countsSince(counts, await requestCounts()), { '/expiring': 1 });

      // A retry that is refused again is not retried a second time.
      api.setVariable('token', 'expired-token');
      counts = await requestCounts();
      const stillRefused = await runWithRefresh(api, 'GET {{host}}/bearer\nAuthorization: Bearer {{token}}\n');
      assert.equal(stillRefused.status, 401, '/bearer does not take the tokens of /refresh');
      assert.deepEqual(countsSince(counts, await requestCounts()), { '/bearer': 2, '/refresh': 1 });
    });

    it('session cookies: a login sets the session cookie, later requests are authorised', async () => {
      const config = target.withCookies({});
      const api = client(config);
      assert.equal((await exchange(api, 'GET {{host}}/session\n')).status, 401);
      assert.equal((await exchange(api, LOGIN)).status, 200);
      assert.deepEqual(await exchange(api, 'GET {{host}}/session\n'), { status: 200, body: { authenticated: true } });
      if (config.cookieJar) {
        const cookies = config.cookieJar.cookies().map(({ name, value }) => [name, value]);
        assert.equal(cookies.length, 1);
        assert.equal(cookies[0][0], 'session');
        assert.match(cookies[0][1], /^session-\d+$/);
      }
    });

    const noJar = target.remote && 'the remote client has no cookieJar option: its server session always keeps cookies';
    it('session cookies: without a cookieJar, a login cookie is not sent again', { skip: noJar }, async () => {
      const api = client();
      assert.equal((await exchange(api, LOGIN)).status, 200);
      assert.equal((await exchange(api, 'GET {{host}}/session\n')).status, 401);
      assert.deepEqual((await exchange(api, 'GET {{host}}/cookies\n')).body, { cookies: {} });
    });

    it('several contexts: two clients with different tokens and cookies do not see each other\'s', async () => {
      const first = client(target.withCookies({}));
      const second = client(target.withCookies({}));
      const tokens = [];
      for (const api of [first, second]) {
        const login = await exchange(api, LOGIN);
        assert.equal(login.status, 200);
        api.setVariable('token', login.body.token);
        tokens.push(login.body.token);
      }
      assert.notEqual(tokens[0], tokens[1]);
      assert.equal(first.getVariables().token, tokens[0]);
      assert.equal(second.getVariables().token, tokens[1]);

      assert.equal((await exchange(first, BEARER)).body.token, tokens[0]);
      assert.equal((await exchange(second, BEARER)).body.token, tokens[1]);

      // Each sends the session cookie of its own login, and only that one.
      const sessions = [];
      for (const api of [first, second]) {
        const { cookies } = (await exchange(api, 'GET {{host}}/cookies\n')).body;
        assert.deepEqual(Object.keys(cookies), ['session']);
        sessions.push(cookies.session);
      }
      assert.notEqual(sessions[0], sessions[1]);

      // A variable set on one stays there.
      first.setVariable('onlyFirst', 'yes');
      await exchange(first, BEARER);
      assert.equal(second.getVariables().onlyFirst, undefined);
      await assert.rejects(second.runString('GET {{host}}/echo/{{onlyFirst}}\n'), {
        name: 'VolleyError',
        kind: 'build',
        code: 'undefined-variable',
        message: /undefined variable `onlyFirst`/,
      });

      // Switching the variable switches the context.
      first.setVariable('token', tokens[1]);
      assert.equal((await exchange(first, BEARER)).body.token, tokens[1]);
      assert.equal((await exchange(second, BEARER)).body.token, tokens[1]);
      if (target.remote) assert.notEqual(first.getSessionId(), second.getSessionId());
    });
  });
}
