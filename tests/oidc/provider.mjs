// OpenID provider for Volley's tests, built on oidc-provider (see README.md).
//
// Start with `node provider.mjs` (after `npm ci`). It binds 127.0.0.1 on a free
// port, prints exactly one line to stdout:
//
//   listening on http://127.0.0.1:PORT
//
// and nothing else there. It exits when its stdin closes, on SIGTERM/SIGINT/SIGHUP.

import http from 'node:http';
import crypto from 'node:crypto';
import querystring from 'node:querystring';
import util from 'node:util';

// ---------------------------------------------------------------------------
// stdout is reserved for the single "listening on" line: everything that any
// library would log goes to stderr instead. oidc-provider prints start-up
// notices (development adapter, runtime version, ...) that are expected here;
// they are hidden unless OIDC_VERBOSE=1.

const VERBOSE = process.env.OIDC_VERBOSE === '1';
const toStderr = (...args) => {
  const text = util.format(...args);
  if (!VERBOSE && /^(\x1b\[[0-9;]*m)?oidc-provider (NOTICE|WARNING):/.test(text)) return;
  process.stderr.write(`${text}\n`);
};
console.log = toStderr;
console.info = toStderr;
console.debug = toStderr;
console.warn = toStderr;

// Loaded only now, so that its import-time notices go through the filter above.
const { Provider, errors } = await import('oidc-provider');

// ---------------------------------------------------------------------------
// Settings

function positiveIntegerEnv(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^[0-9]+$/.test(raw) || Number(raw) < 1) {
    process.stderr.write(`${name} must be a positive integer number of seconds, got ${JSON.stringify(raw)}\n`);
    process.exit(2);
  }
  return Number(raw);
}

const ACCESS_TTL = positiveIntegerEnv('OIDC_ACCESS_TTL', 3600);
const PASSWORD_GRANT = 'password';
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const LOOPBACK_CALLBACK = 'http://127.0.0.1/callback';

// ---------------------------------------------------------------------------
// Users (resource owners)

const USERS = new Map([
  ['ada', { password: 'lovelace' }],
  ['grace', { password: 'hopper' }],
]);

function checkPassword(username, password) {
  const user = USERS.get(username);
  if (!user || typeof password !== 'string') return false;
  const a = Buffer.from(user.password);
  const b = Buffer.from(password);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

async function findAccount(ctx, sub) {
  const user = USERS.get(sub);
  if (!user) return undefined;
  return {
    accountId: sub,
    async claims() {
      return { sub };
    },
  };
}

// ---------------------------------------------------------------------------
// Clients

const clients = [
  {
    client_id: 'cc-basic',
    client_secret: 'cc-basic-secret',
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: 'client_secret_basic',
    scope: 'api:read api:write',
  },
  {
    client_id: 'cc-post',
    client_secret: 'cc-post-secret',
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: 'client_secret_post',
    scope: 'api:read api:write',
  },
  {
    client_id: 'pw',
    client_secret: 'pw-secret',
    grant_types: [PASSWORD_GRANT, 'refresh_token'],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: 'client_secret_basic',
    scope: 'api:read api:write',
  },
  {
    client_id: 'pw-post',
    client_secret: 'pw-post-secret',
    grant_types: [PASSWORD_GRANT, 'refresh_token'],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: 'client_secret_post',
    scope: 'api:read api:write',
  },
  {
    client_id: 'code-public',
    application_type: 'native',
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    redirect_uris: [LOOPBACK_CALLBACK],
    scope: 'openid offline_access api:read',
  },
  {
    client_id: 'code-secret',
    client_secret: 'code-secret-secret',
    application_type: 'native',
    token_endpoint_auth_method: 'client_secret_basic',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    redirect_uris: [LOOPBACK_CALLBACK],
    scope: 'openid offline_access api:read api:write',
  },
  {
    client_id: 'device',
    application_type: 'native',
    token_endpoint_auth_method: 'none',
    grant_types: [DEVICE_GRANT, 'refresh_token'],
    response_types: [],
    redirect_uris: [],
    scope: 'openid offline_access api:read',
  },
  {
    // A resource server: may only call the introspection (and revocation) endpoint.
    client_id: 'rs',
    client_secret: 'rs-secret',
    grant_types: [],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: 'client_secret_basic',
  },
];

// ---------------------------------------------------------------------------
// Small helpers

const escapeHtml = (value) => String(value ?? '').replace(/[&<>"']/g, (c) => ({
  '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;',
}[c]));

function page(title, body) {
  return `<!DOCTYPE html>
<html>
<head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>
<body>
<h1>${escapeHtml(title)}</h1>
${body}
</body>
</html>
`;
}

function sendJson(ctx, status, body) {
  ctx.status = status;
  ctx.type = 'application/json';
  ctx.set('Cache-Control', 'no-store');
  ctx.body = JSON.stringify(body);
}

function sendError(ctx, status, error, description) {
  sendJson(ctx, status, { error, error_description: description });
}

const MAX_BODY = 64 * 1024;

// Reads an urlencoded (or JSON) request body of one of our own routes.
async function readForm(ctx) {
  if (ctx.method !== 'POST' && ctx.method !== 'PUT') return {};
  const chunks = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += chunk.length;
    if (size > MAX_BODY) throw Object.assign(new Error('request body too large'), { status: 413 });
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text) return {};
  if (ctx.is('application/json')) {
    try {
      const parsed = JSON.parse(text);
      return parsed && typeof parsed === 'object' ? parsed : {};
    } catch {
      throw Object.assign(new Error('request body is not valid JSON'), { status: 400 });
    }
  }
  return Object.fromEntries(new URLSearchParams(text));
}

// Query parameters and body parameters of our own routes, body winning.
async function routeParams(ctx) {
  return { ...Object.fromEntries(new URLSearchParams(ctx.querystring)), ...await readForm(ctx) };
}

// ---------------------------------------------------------------------------
// Counters for the tests: GET /test/stats, POST /test/stats/reset

function freshStats() {
  return {
    token: {}, // every token endpoint request, by grant_type
    tokenErrors: {}, // the ones answered with an error, by grant_type
    deviceAuthorization: 0,
    authorization: 0,
    introspection: 0,
    revocation: 0,
    userinfo: 0,
  };
}
let stats = freshStats();

function countToken(grantType, failed) {
  const key = typeof grantType === 'string' && grantType ? grantType : '(none)';
  stats.token[key] = (stats.token[key] ?? 0) + 1;
  if (failed) stats.tokenErrors[key] = (stats.tokenErrors[key] ?? 0) + 1;
}

function countRoute(ctx) {
  const route = ctx.oidc?.route;
  switch (route) {
    case 'token': {
      let grantType;
      try {
        grantType = ctx.oidc.params?.grant_type ?? ctx.oidc.body?.grant_type;
      } catch {
        grantType = undefined;
      }
      countToken(grantType, ctx.status >= 400);
      break;
    }
    case 'device_authorization': stats.deviceAuthorization += 1; break;
    case 'authorization': stats.authorization += 1; break;
    case 'introspection': stats.introspection += 1; break;
    case 'revocation': stats.revocation += 1; break;
    case 'userinfo': stats.userinfo += 1; break;
    default: break;
  }
}

// ---------------------------------------------------------------------------
// Device flow pages (the markers data-device-* are read by /test/device/approve)

async function userCodeInputSource(ctx, form, out, err) {
  const marker = err ? escapeHtml(err.name || 'Error') : '';
  const message = err ? escapeHtml(err.message || out?.error_description || 'error') : 'Enter the code displayed on your device';
  ctx.type = 'html';
  ctx.body = page('Device sign-in', `<p data-device-error="${marker}">${message}</p>
${form}
<button type="submit" form="op.deviceInputForm">Continue</button>`);
}

async function userCodeConfirmSource(ctx, form, client, deviceInfo, userCode) {
  ctx.type = 'html';
  ctx.body = page('Confirm device', `<p data-device-confirm="${escapeHtml(userCode)}">Client <code>${escapeHtml(client.clientId)}</code> asks for access; the device shows <code>${escapeHtml(userCode)}</code>.</p>
${form}
<button type="submit" form="op.deviceConfirmForm">Continue</button>
<button type="submit" form="op.deviceConfirmForm" name="abort" value="yes">Abort</button>`);
}

async function successSource(ctx) {
  ctx.type = 'html';
  ctx.body = page('Device sign-in complete', `<p data-device-result="approved">Client <code>${escapeHtml(ctx.oidc.client?.clientId)}</code> is now authorized; you can close this page.</p>`);
}

// ---------------------------------------------------------------------------
// The HTTP server comes first: the issuer identifier must carry the port.

let handler = (req, res) => {
  res.statusCode = 503;
  res.end('starting\n');
};
const server = http.createServer((req, res) => handler(req, res));
server.keepAliveTimeout = 5000;

await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(0, '127.0.0.1', () => {
    server.off('error', reject);
    resolve();
  });
});

const { port } = server.address();
const issuer = `http://127.0.0.1:${port}`;

const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const signingKey = { ...privateKey.export({ format: 'jwk' }), kid: 'test-rs256', use: 'sig', alg: 'RS256' };

const provider = new Provider(issuer, {
  clients,
  findAccount,
  jwks: { keys: [signingKey] },
  scopes: ['openid', 'offline_access', 'api:read', 'api:write'],
  claims: { openid: ['sub'] },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: {
      enabled: true,
      // confidential clients may introspect any token, public ones their own
      async allowedPolicy(ctx, client, token) {
        return client.clientAuthMethod !== 'none' || token.clientId === client.clientId;
      },
    },
    revocation: {
      enabled: true,
      async allowedPolicy(ctx, client, token) {
        return client.clientAuthMethod !== 'none' || token.clientId === client.clientId;
      },
    },
    deviceFlow: {
      enabled: true,
      userCodeInputSource,
      userCodeConfirmSource,
      successSource,
    },
    resourceIndicators: { enabled: false },
    userinfo: { enabled: true },
  },
  ttl: {
    AccessToken: ACCESS_TTL,
    ClientCredentials: ACCESS_TTL,
    AuthorizationCode: 60,
    DeviceCode: 600,
    IdToken: 3600,
    Interaction: 3600,
    RefreshToken: 14 * 24 * 3600,
    Grant: 14 * 24 * 3600,
    Session: 14 * 24 * 3600,
  },
  responseTypes: ['code', 'none'],
  // A refresh token for every client allowed the refresh_token grant, whether
  // or not offline_access survived (oidc-provider keeps offline_access in an
  // authorization request only together with prompt=consent).
  async issueRefreshToken(ctx, client) {
    return client.grantTypeAllowed('refresh_token');
  },
  // Tokens outlive the browser session they came from (cookie-less clients
  // never come back to it anyway).
  async expiresWithSession() {
    return false;
  },
  clientBasedCORS() {
    return false;
  },
  async renderError(ctx, out) {
    ctx.type = 'application/json';
    ctx.body = JSON.stringify(out);
  },
});

provider.on('server_error', (ctx, err) => {
  process.stderr.write(`oidc test provider: server_error on ${ctx?.method} ${ctx?.path}: ${err?.stack ?? err}\n`);
});

// ---------------------------------------------------------------------------
// Resource owner password credentials grant (RFC 6749 section 4.3).
//
// oidc-provider has no built-in password grant. This one saves a Grant for
// the user and client, then issues the provider's own opaque AccessToken and
// RefreshToken models bound to it, so the built-in refresh_token grant,
// introspection and revocation accept them like any other.

async function passwordGrant(ctx) {
  const { client, params } = ctx.oidc;

  for (const name of ['username', 'password']) {
    if (typeof params[name] !== 'string' || params[name] === '') {
      throw new errors.InvalidRequest(`missing required parameter '${name}'`);
    }
  }
  if (!checkPassword(params.username, params.password)) {
    throw new errors.CustomOIDCProviderError('invalid_grant', 'invalid resource owner credentials');
  }

  const allowed = new Set((client.scope ?? '').split(' ').filter(Boolean));
  let scopes;
  if (params.scope) {
    scopes = [...new Set(params.scope.split(' ').filter(Boolean))];
    const refused = scopes.filter((s) => !allowed.has(s));
    if (refused.length) {
      throw new errors.InvalidScope('requested scope is not allowed', refused.join(' '));
    }
  } else {
    // no scope asked for: every scope the client is registered with
    scopes = [...allowed];
  }
  const scope = scopes.join(' ');

  const accountId = params.username;
  const grant = new provider.Grant({ accountId, clientId: client.clientId });
  if (scope) grant.addOIDCScope(scope);
  const grantId = await grant.save();

  const at = new provider.AccessToken({
    accountId,
    client,
    grantId,
    gty: PASSWORD_GRANT,
    scope: scope || undefined,
  });
  ctx.oidc.entity('AccessToken', at);
  const accessToken = await at.save();

  let refreshToken;
  if (client.grantTypeAllowed('refresh_token')) {
    const rt = new provider.RefreshToken({
      accountId,
      client,
      grantId,
      gty: PASSWORD_GRANT,
      scope: scope || undefined,
      rotations: 0,
    });
    ctx.oidc.entity('RefreshToken', rt);
    refreshToken = await rt.save();
  }

  ctx.set('Cache-Control', 'no-store');
  ctx.type = 'application/json';
  ctx.body = {
    access_token: accessToken,
    token_type: at.tokenType,
    expires_in: at.expiration,
    ...(refreshToken ? { refresh_token: refreshToken } : {}),
    ...(scope ? { scope } : {}),
  };
}

provider.registerGrantType(PASSWORD_GRANT, passwordGrant, ['username', 'password', 'scope']);

// ---------------------------------------------------------------------------
// Browserless interaction (login + consent) routes

const INTERACTION_PATH = /^\/interaction\/([A-Za-z0-9_-]+)(?:\/(login|abort))?\/?$/;
const RESUME_PATH = /^\/auth\/([A-Za-z0-9_-]+)\/?$/;

// Clients without a cookie jar are supported: oidc-provider binds an
// interaction to the user agent with the _interaction and _interaction_resume
// cookies (holding the interaction uid that is also in the path); when a
// request lacks them, they are filled in from the path.
function addCookieIfMissing(ctx, name, value) {
  const header = ctx.req.headers.cookie ?? '';
  const present = header.split(';').some((part) => part.trim().startsWith(`${name}=`));
  if (!present) {
    ctx.req.headers.cookie = header ? `${header}; ${name}=${value}` : `${name}=${value}`;
  }
}

async function interactionPage(ctx, uid) {
  const details = await provider.interactionDetails(ctx.req, ctx.res);
  if (details.uid !== uid) throw new errors.SessionNotFound('interaction mismatch');
  const { prompt, params, session } = details;
  const base = `/interaction/${encodeURIComponent(uid)}`;
  ctx.type = 'html';
  ctx.set('Cache-Control', 'no-store');
  ctx.body = page('Sign in', `<dl>
<dt>interaction</dt><dd data-interaction-uid="${escapeHtml(uid)}">${escapeHtml(uid)}</dd>
<dt>prompt</dt><dd data-prompt="${escapeHtml(prompt.name)}">${escapeHtml(prompt.name)} (${escapeHtml(prompt.reasons.join(', '))})</dd>
<dt>client</dt><dd>${escapeHtml(params.client_id)}</dd>
<dt>scope</dt><dd>${escapeHtml(params.scope)}</dd>
<dt>signed in as</dt><dd>${escapeHtml(session?.accountId ?? '(nobody)')}</dd>
</dl>
<form method="post" action="${base}/login">
<label>user <input name="user" autocomplete="username"></label>
<label>password <input name="password" type="password" autocomplete="current-password"></label>
<button type="submit">Sign in and allow</button>
</form>
<form method="post" action="${base}/abort"><button type="submit">Deny</button></form>`);
}

async function interactionLogin(ctx, uid) {
  const input = await routeParams(ctx);
  const details = await provider.interactionDetails(ctx.req, ctx.res);
  if (details.uid !== uid) throw new errors.SessionNotFound('interaction mismatch');
  const { prompt, params, session } = details;

  const user = input.user ?? input.username;
  let accountId;
  const result = {};
  if (prompt.name === 'login' || !session?.accountId) {
    if (!checkPassword(user, input.password)) {
      ctx.status = 401;
      ctx.type = 'html';
      ctx.body = page('Sign in failed', `<p data-login-error="invalid_credentials">Unknown user or wrong password.</p>
<p><a href="/interaction/${encodeURIComponent(uid)}">Try again</a></p>`);
      return;
    }
    accountId = user;
    result.login = { accountId, amr: ['pwd'] };
  } else {
    // already signed in: only consent is asked for
    accountId = session.accountId;
  }

  // Consent: grant everything the client asked for.
  let grant;
  if (details.grantId) grant = await provider.Grant.find(details.grantId);
  if (!grant || grant.accountId !== accountId) {
    grant = new provider.Grant({ accountId, clientId: params.client_id });
  }
  if (params.scope) grant.addOIDCScope(params.scope);
  const missingClaims = prompt.details?.missingOIDCClaims;
  if (Array.isArray(missingClaims) && missingClaims.length) grant.addOIDCClaims(missingClaims);
  result.consent = { grantId: await grant.save() };

  const returnTo = await provider.interactionResult(ctx.req, ctx.res, result, {
    mergeWithLastSubmission: false,
  });
  ctx.set('Cache-Control', 'no-store');
  ctx.redirect(returnTo);
  ctx.status = 303;
}

async function interactionAbort(ctx, uid) {
  await routeParams(ctx);
  const details = await provider.interactionDetails(ctx.req, ctx.res);
  if (details.uid !== uid) throw new errors.SessionNotFound('interaction mismatch');
  const returnTo = await provider.interactionResult(ctx.req, ctx.res, {
    error: 'access_denied',
    error_description: 'End-User denied the request',
  }, { mergeWithLastSubmission: false });
  ctx.set('Cache-Control', 'no-store');
  ctx.redirect(returnTo);
  ctx.status = 303;
}

// ---------------------------------------------------------------------------
// Device code approval without a browser: POST /test/device/approve
//
// Drives oidc-provider's own device user flow over HTTP against this server:
// GET /device (session + xsrf), POST /device (user_code, confirm or abort),
// then the interaction login above, then the device resume route.

class CookieJar {
  #cookies = new Map();

  header() {
    return [...this.#cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  take(response) {
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      if (eq < 1) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attributes.some((a) => {
        const [k, v] = a.split('=');
        return k.trim().toLowerCase() === 'expires' && Date.parse(v) <= Date.now();
      });
      if (!value || expired) this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
  }
}

class ApproveError extends Error {
  constructor(status, error, description) {
    super(description);
    Object.assign(this, { status, error, description });
  }
}

const DEVICE_ERRORS = {
  NotFoundError: [404, 'unknown_user_code', 'no pending device authorization has this user code'],
  ExpiredError: [400, 'expired_user_code', 'the user code has expired'],
  AlreadyUsedError: [409, 'already_used', 'the user code was already approved or denied'],
  NoCodeError: [400, 'invalid_request', 'user_code is missing'],
};

async function driveDeviceFlow(userCode, user, deny) {
  const jar = new CookieJar();
  const send = async (url, init = {}) => {
    const headers = { ...init.headers };
    const cookie = jar.header();
    if (cookie) headers.cookie = cookie;
    const response = await fetch(new URL(url, issuer), { ...init, headers, redirect: 'manual' });
    jar.take(response);
    return { response, text: await response.text() };
  };
  const deviceError = (text) => /data-device-error="([^"]*)"/.exec(text)?.[1] || undefined;

  const verification = provider.urlFor('code_verification');
  let { response, text } = await send(verification);
  const xsrf = /name="xsrf" value="([^"]+)"/.exec(text)?.[1];
  if (response.status !== 200 || !xsrf) {
    throw new ApproveError(500, 'server_error', `unexpected device page (HTTP ${response.status})`);
  }

  ({ response, text } = await send(verification, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      xsrf, user_code: userCode, ...(deny ? { abort: 'yes' } : { confirm: 'yes' }),
    }),
  }));
  const submitError = deviceError(text);
  if (deny && submitError === 'AbortedError') return 'denied';
  if (submitError) {
    const [status, error, description] = DEVICE_ERRORS[submitError]
      ?? [400, 'invalid_request', `device flow refused the code (${submitError})`];
    throw new ApproveError(status, error, description);
  }
  let location = response.headers.get('location');
  if (response.status < 300 || response.status >= 400 || !location) {
    throw new ApproveError(500, 'server_error', `device flow did not ask for sign-in (HTTP ${response.status})`);
  }

  const interaction = new URL(location, issuer);
  const match = INTERACTION_PATH.exec(interaction.pathname);
  if (!match) {
    throw new ApproveError(500, 'server_error', `unexpected redirect to ${location}`);
  }
  const { password } = USERS.get(user);
  ({ response, text } = await send(`${interaction.pathname.replace(/\/$/, '')}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ user, password }),
  }));
  location = response.headers.get('location');

  // follow the resume redirects (normally one) to the device flow's last page
  for (let hops = 0; location && hops < 5; hops += 1) {
    ({ response, text } = await send(location));
    location = response.status >= 300 && response.status < 400 ? response.headers.get('location') : undefined;
  }
  if (/data-device-result="approved"/.test(text)) return 'approved';
  const lateError = deviceError(text);
  throw new ApproveError(500, 'server_error', `device flow did not complete (HTTP ${response.status}${lateError ? `, ${lateError}` : ''})`);
}

async function deviceApprove(ctx, { forceDeny = false } = {}) {
  const input = await routeParams(ctx);
  const userCode = input.user_code;
  const deny = forceDeny || ['1', 'true', 'yes'].includes(String(input.deny ?? '').toLowerCase());
  const user = input.user ?? 'ada';
  if (typeof userCode !== 'string' || !userCode) {
    sendError(ctx, 400, 'invalid_request', 'missing user_code');
    return;
  }
  if (!deny && !USERS.has(user)) {
    sendError(ctx, 400, 'unknown_user', `no such user: ${user}`);
    return;
  }
  if (!deny && input.password !== undefined && !checkPassword(user, input.password)) {
    sendError(ctx, 400, 'invalid_credentials', 'wrong password');
    return;
  }
  try {
    const status = await driveDeviceFlow(userCode, user, deny);
    sendJson(ctx, 200, { status, user_code: userCode, ...(status === 'approved' ? { user } : {}) });
  } catch (err) {
    if (err instanceof ApproveError) {
      sendError(ctx, err.status, err.error, err.description);
    } else {
      throw err;
    }
  }
}

// ---------------------------------------------------------------------------
// Strict client_secret_basic / client_secret_post
//
// oidc-provider accepts a client secret sent either way, whichever of the two
// the client registered. Tests want to know that a client sent its secret the
// way its registration says, so a secret sent the other way is refused here,
// before oidc-provider sees the request, with the error oidc-provider would
// give for a failed client authentication.

const SECRET_METHODS = new Map(clients
  .filter((c) => ['client_secret_basic', 'client_secret_post'].includes(c.token_endpoint_auth_method))
  .map((c) => [c.client_id, c.token_endpoint_auth_method]));

const AUTHENTICATED_PATHS = new Set(
  ['token', 'introspection', 'revocation', 'device_authorization', 'pushed_authorization_request']
    .map((name) => {
      try {
        return provider.pathFor(name);
      } catch {
        return undefined;
      }
    })
    .filter(Boolean),
);

function basicClientId(header) {
  const match = /^basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header ?? '');
  if (!match) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  try {
    return decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

// Returns false when the request was answered here.
async function enforceSecretMethod(ctx) {
  let body;
  if (ctx.is('application/x-www-form-urlencoded')) {
    const chunks = [];
    let size = 0;
    for await (const chunk of ctx.req) {
      size += chunk.length;
      if (size > MAX_BODY) {
        sendError(ctx, 413, 'invalid_request', 'request body too large');
        return false;
      }
      chunks.push(chunk);
    }
    body = querystring.parse(Buffer.concat(chunks).toString('utf8'));
    // oidc-provider reads an already consumed body from here
    ctx.req.body = body;
  }

  const viaHeader = basicClientId(ctx.get('authorization'));
  const viaBody = typeof body?.client_secret === 'string' && body.client_secret !== '';
  if (viaHeader !== undefined && viaBody) return true; // oidc-provider refuses two mechanisms
  let used;
  let clientId;
  if (viaHeader !== undefined) {
    used = 'client_secret_basic';
    clientId = viaHeader;
  } else if (viaBody) {
    used = 'client_secret_post';
    clientId = body.client_id;
  } else {
    return true;
  }

  const registered = SECRET_METHODS.get(clientId);
  if (!registered || registered === used) return true;

  if (ctx.path === provider.pathFor('token')) countToken(body?.grant_type, true);
  if (viaHeader !== undefined) ctx.set('WWW-Authenticate', 'Basic realm="token"');
  sendError(ctx, 401, 'invalid_client', `client authentication failed: client ${clientId} is registered for ${registered}, the request used ${used}`);
  return false;
}

// ---------------------------------------------------------------------------
// Our routes, mounted in front of oidc-provider's own

provider.use(async (ctx, next) => {
  const { path, method } = ctx;

  const interaction = INTERACTION_PATH.exec(path);
  if (interaction) {
    const [, uid, action] = interaction;
    addCookieIfMissing(ctx, provider.cookieName('interaction'), uid);
    try {
      if (!action && method === 'GET') {
        await interactionPage(ctx, uid);
      } else if (action === 'login' && (method === 'GET' || method === 'POST')) {
        await interactionLogin(ctx, uid);
      } else if (action === 'abort' && (method === 'GET' || method === 'POST')) {
        await interactionAbort(ctx, uid);
      } else {
        sendError(ctx, 405, 'invalid_request', `${method} is not supported here`);
      }
    } catch (err) {
      if (err instanceof errors.SessionNotFound) {
        sendError(ctx, 400, 'invalid_request', `interaction not found or expired: ${err.error_description ?? err.message}`);
      } else if (err.status && err.status < 500) {
        sendError(ctx, err.status, 'invalid_request', err.message);
      } else {
        throw err;
      }
    }
    return;
  }

  if (path === '/test/stats' && method === 'GET') {
    sendJson(ctx, 200, stats);
    return;
  }
  if (path === '/test/stats/reset' && method === 'POST') {
    stats = freshStats();
    sendJson(ctx, 200, stats);
    return;
  }
  if (path === '/test/device/approve' && method === 'POST') {
    await deviceApprove(ctx);
    return;
  }
  if (path === '/test/device/deny' && method === 'POST') {
    await deviceApprove(ctx, { forceDeny: true });
    return;
  }
  if (path.startsWith('/test/')) {
    sendError(ctx, 404, 'not_found', `no test route ${method} ${path}`);
    return;
  }

  const resume = RESUME_PATH.exec(path);
  if (resume && method === 'GET') {
    addCookieIfMissing(ctx, provider.cookieName('resume'), resume[1]);
  }

  if (method === 'POST' && AUTHENTICATED_PATHS.has(path) && !await enforceSecretMethod(ctx)) {
    return;
  }

  try {
    await next();
  } finally {
    countRoute(ctx);
  }
});

handler = provider.callback();

// ---------------------------------------------------------------------------
// Lifetime

let stopping = false;
function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  server.close(() => process.exit(code));
  server.closeAllConnections?.();
  setTimeout(() => process.exit(code), 1000).unref();
}

for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
  process.on(signal, () => stop(0));
}
process.stdin.on('end', () => stop(0));
process.stdin.on('close', () => stop(0));
process.stdin.on('error', () => stop(0));
process.stdin.resume();

process.stdout.write(`listening on ${issuer}\n`);
