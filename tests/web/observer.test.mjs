// The observer page of `volley serve` in a real browser: Debian's Chromium, headless,
// driven by playwright-core. Each test starts the real binary (VOLLEY_BIN) on free
// ports: `volley echo-server` as the upstream and `volley serve` with the page.
// Screenshots go to ARTIFACTS_DIR (default target/web-artifacts).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { chromium } from 'playwright-core';

const root = resolve(import.meta.dirname, '..', '..');
const binary = resolve(root, process.env.VOLLEY_BIN || 'target/debug/volley');
const artifacts = resolve(root, process.env.ARTIFACTS_DIR || 'target/web-artifacts');
const WAIT = 15_000;

const children = [];
const directories = [];
let browser;

/** Starts `volley ARGS` and waits for the line that gives its URL. */
function start(args, pattern) {
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  return new Promise((resolvePromise, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`volley ${args.join(' ')} did not start: ${seen}`)), WAIT);
    const look = (chunk) => {
      seen += chunk.toString();
      const found = pattern.exec(seen);
      if (found) {
        clearTimeout(timer);
        resolvePromise({ child, url: found[1] });
      }
    };
    child.stdout.on('data', look);
    child.stderr.on('data', look);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`volley ${args.join(' ')} exited with ${code}: ${seen}`));
    });
  });
}

async function serve(extra = [], port = 0) {
  const workspace = mkdtempSync(join(tmpdir(), 'volley-web-'));
  directories.push(workspace);
  const args = ['serve', '--port', String(port), '--workspace', workspace, ...extra];
  const { child, url } = await start(args, /listening on (http:\/\/\S+)/);
  serving.set(url, child);
  return url;
}

/** The `volley serve` process behind each base URL. */
const serving = new Map();

async function api(base, path, { method = 'POST', body, token } = {}) {
  const headers = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  const answer = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await answer.text();
  return { status: answer.status, json: text ? JSON.parse(text) : null };
}

async function page() {
  const context = await browser.newContext({ viewport: { width: 1400, height: 800 } });
  return context.newPage();
}

let echo;

before(async () => {
  mkdirSync(artifacts, { recursive: true });
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  ({ url: echo } = await start(['echo-server', '--port', '0'], /listening on (http:\/\/\S+)/));
});

after(async () => {
  await browser?.close();
  for (const child of children) child.kill();
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

test('executions appear live with their status, failures in red, details on click', async () => {
  const base = await serve();
  const tab = await page();
  await tab.goto(`${base}/`);
  await tab.locator('#connection', { hasText: 'connected' }).waitFor({ timeout: WAIT });
  await tab.locator('#empty').waitFor({ state: 'visible' });

  const flow = await api(base, '/flows', { body: { label: 'checkout' } });
  assert.equal(flow.status, 201);
  const flowId = flow.json.flowId;
  const content = [
    '# @name ok',
    '# @description Says hello to the observer',
    '# @assert status == 200',
    `GET ${echo}/echo?n=1`,
    'Content-Type: application/json',
    '',
    '{"hello": "observer"}',
    '',
    '###',
    '# @name missing',
    '# @assert status == 200',
    `GET ${echo}/status/404`,
    '',
  ].join('\n');
  const first = await api(base, '/execute', { body: { content, requestName: 'ok', flowId } });
  assert.equal(first.status, 200, JSON.stringify(first.json));
  const second = await api(base, '/execute', { body: { content, requestName: 'missing', flowId } });
  assert.equal(second.status, 200, JSON.stringify(second.json));

  const ok = tab.locator('.list .row', { hasText: '/echo?n=1' });
  await ok.waitFor({ timeout: WAIT });
  await tab.locator('.list .row.ok', { hasText: '/echo?n=1' }).waitFor({ timeout: WAIT });
  assert.equal((await ok.locator('.status').textContent()).trim(), '200');
  assert.equal((await ok.locator('span').nth(5).textContent()).trim(), '1/1');
  const failed = tab.locator('.list .row.failed', { hasText: '/status/404' });
  await failed.waitFor({ timeout: WAIT });
  assert.equal((await failed.locator('.status').textContent()).trim(), '404');
  assert.equal((await failed.locator('span').nth(5).textContent()).trim(), '0/1');
  const color = await failed.evaluate((row) => getComputedStyle(row).color);
  assert.match(color, /rgb\((198, 40, 40|239, 83, 80)\)/, 'a failure is red');

  const flowItem = tab.locator('#flows li', { hasText: 'checkout' });
  await flowItem.waitFor();
  assert.match(await flowItem.textContent(), /running · 2 run · 1 ok/);
  assert.match(await flowItem.textContent(), /1 failed/);
  assert.match(await tab.locator('#counts').textContent(), /2 of 2 executions, 1 failed/);

  await ok.click();
  const detail = tab.locator('#detail');
  await detail.locator('h3', { hasText: 'Response headers' }).waitFor({ timeout: WAIT });
  const text = await detail.textContent();
  assert.match(text, /200 OK/);
  assert.equal((await detail.locator('.description').textContent()).trim(), 'Says hello to the observer');
  assert.match(text, /Assertions: 1\/1 passed/);
  assert.match(text, /content-type/i);
  assert.match(text, /"query": "n=1"/, 'the JSON body, indented');
  assert.match(text, /Request body/);
  assert.ok(await detail.locator('.j-key').count() > 0, 'JSON keys are coloured');

  // The filter keeps what matches; `/` focuses it.
  await tab.locator('#list').focus();
  await tab.keyboard.press('/');
  assert.equal(await tab.evaluate(() => document.activeElement.id), 'filter');
  // Words the other row cannot hold: the echo server's random port may contain `404`.
  await tab.keyboard.type('status/404');
  await tab.waitForFunction(() => document.querySelectorAll('.list .row').length === 1);
  assert.match(await tab.locator('#counts').textContent(), /1 of 2 executions/);
  await tab.keyboard.press('Escape');
  await tab.waitForFunction(() => document.querySelectorAll('.list .row').length === 2);

  await tab.screenshot({ path: join(artifacts, 'observer.png') });
});

test('a page opened after the runs shows the flows and executions the server kept', async () => {
  const base = await serve();
  const flow = await api(base, '/flows', { body: { label: 'earlier' } });
  const flowId = flow.json.flowId;
  const content = `# @assert status == 200\nGET ${echo}/echo?before=1\n\n###\nGET http://127.0.0.1:1/refused-before\n`;
  assert.equal((await api(base, '/execute', { body: { content, requestIndex: 0, flowId } })).status, 200);
  assert.notEqual((await api(base, '/execute', { body: { content, requestIndex: 1, flowId } })).status, 200);
  assert.equal((await api(base, `/flows/${flowId}/finish`, { body: {} })).status, 200);

  const tab = await page();
  await tab.goto(`${base}/`);
  await tab.locator('#connection', { hasText: 'connected' }).waitFor({ timeout: WAIT });
  const flowItem = tab.locator('#flows li', { hasText: 'earlier' });
  await flowItem.waitFor({ timeout: WAIT });
  assert.match(await flowItem.textContent(), /finished in .* · 2 run · 1 ok/);
  const ok = tab.locator('.list .row.ok', { hasText: '/echo?before=1' });
  await ok.waitFor({ timeout: WAIT });
  assert.equal((await ok.locator('.status').textContent()).trim(), '200');
  assert.equal((await ok.locator('span').nth(5).textContent()).trim(), '1/1');
  const refused = tab.locator('.list .row.failed', { hasText: '/refused-before' });
  assert.equal((await refused.locator('.status').textContent()).trim(), 'refused');
  assert.ok(await tab.locator('#empty').isHidden(), 'not "none yet"');

  // Details come from the store as for a live execution; a new run joins the list.
  await ok.click();
  await tab.locator('#detail h3', { hasText: 'Response body' }).waitFor({ timeout: WAIT });
  assert.match(await tab.locator('#detail').textContent(), /"query": "before=1"/);
  const next = await api(base, '/flows', { body: { label: 'after' } });
  assert.equal((await api(base, '/execute', { body: { content, requestIndex: 0, flowId: next.json.flowId } })).status, 200);
  await tab.waitForFunction(() => document.querySelectorAll('.list .row').length === 3);
  assert.match(await tab.locator('#counts').textContent(), /3 of 3 executions, 1 failed/);
});

test('a row names its request and says in a word what ended it', async () => {
  const base = await serve();
  const tab = await page();
  await tab.goto(`${base}/`);
  await tab.locator('#connection', { hasText: 'connected' }).waitFor({ timeout: WAIT });
  const flow = await api(base, '/flows', { body: { label: 'outcomes' } });
  const flowId = flow.json.flowId;
  const content = '# @name down\nGET http://127.0.0.1:1/nothing-listens\n';
  const answer = await api(base, '/execute', { body: { content, flowId } });
  assert.notEqual(answer.status, 200, JSON.stringify(answer.json));
  const row = tab.locator('.list .row.failed', { hasText: '/nothing-listens' });
  await row.waitFor({ timeout: WAIT });
  assert.equal((await row.locator('.status').textContent()).trim(), 'refused', 'not the stage, `fetch`');
  assert.equal((await row.locator('.name').textContent()).trim(), 'down');
  await row.click();
  assert.match(await tab.locator('#detail').textContent(), /refused \(at fetch\)/);
});

test('a WebSocket session shows its messages without taking the control socket', async () => {
  const base = await serve();
  const tab = await page();
  await tab.goto(`${base}/ui`);
  await tab.locator('#connection', { hasText: 'connected' }).waitFor({ timeout: WAIT });
  const flow = await api(base, '/flows', { body: { label: 'chat' } });
  const socketUrl = `${echo.replace('http://', 'ws://')}/ws/echo`;
  const opened = await api(base, '/execute/ws', { body: { content: `GET ${socketUrl}\n`, flowId: flow.json.flowId } });
  assert.equal(opened.status, 200, JSON.stringify(opened.json));
  const id = opened.json.ws.wsSessionId;

  // A script drives the session from another tab, through its control socket.
  const script = await page();
  await script.goto(`${base}/ui?flow=${flow.json.flowId}`);
  const replies = await script.evaluate(async (path) => {
    const socket = new WebSocket(`ws://${location.host}${path}`);
    const seen = [];
    await new Promise((done, fail) => {
      socket.onerror = () => fail(new Error('control socket failed'));
      socket.onmessage = (message) => {
        const envelope = JSON.parse(message.data);
        seen.push(envelope.type);
        if (envelope.type === 'session.replay.end') socket.send(JSON.stringify({ type: 'session.send', payload: { hi: 'there' } }));
        if (envelope.type === 'session.inbound') done();
      };
    });
    socket.close();
    return seen;
  }, opened.json.ws.downstreamPath);
  assert.ok(replies.includes('session.inbound'), replies.join(','));

  const item = tab.locator('#sessions li', { hasText: '/ws/echo' });
  await item.waitFor({ timeout: WAIT });
  await tab.waitForFunction(() => /2 messages/.test(document.querySelector('#sessions').textContent));
  await item.click();
  const detail = tab.locator('#detail');
  await detail.locator('.messages li').nth(1).waitFor({ timeout: WAIT });
  const text = await detail.textContent();
  assert.match(text, new RegExp(id));
  assert.match(text, /→ outbound/);
  assert.match(text, /← inbound/);
  assert.match(text, /"hi": "there"/);
  await tab.screenshot({ path: join(artifacts, 'observer-websocket.png') });
});

test('with a token the page asks for it, shows nothing before, and refuses a wrong one', async () => {
  const token = 'observer-secret-token';
  const base = await serve(['--token', token]);
  const flow = await api(base, '/flows', { body: { label: 'guarded' }, token });
  assert.equal(flow.status, 201);
  const flowId = flow.json.flowId;
  const content = `GET ${echo}/echo?guarded=1\n`;
  assert.equal((await api(base, '/execute', { body: { content, flowId }, token })).status, 200);

  const tab = await page();
  await tab.goto(`${base}/`);
  await tab.locator('#login').waitFor({ state: 'visible', timeout: WAIT });
  assert.equal(await tab.locator('#main').isVisible(), false, 'no data without the token');
  assert.equal(await tab.locator('.list .row').count(), 0);

  await tab.fill('#login-token', 'wrong-token');
  await tab.fill('#login-flow', flowId);
  await tab.click('#login button');
  await tab.locator('#login-message', { hasText: 'The token was refused' }).waitFor({ timeout: WAIT });
  assert.equal(await tab.locator('#main').isVisible(), false);

  // The right token without a flow or session: the server would refuse the observer.
  await tab.fill('#login-token', token);
  await tab.fill('#login-flow', '');
  await tab.click('#login button');
  await tab.locator('#login-message', { hasText: 'give its id' }).waitFor({ timeout: WAIT });

  await tab.fill('#login-token', token);
  await tab.fill('#login-flow', flowId);
  await tab.click('#login button');
  await tab.locator('#connection', { hasText: 'connected' }).waitFor({ timeout: WAIT });
  // The execution before the page connected comes by replay, the next one live.
  await tab.locator('.list .row.ok', { hasText: 'guarded=1' }).waitFor({ timeout: WAIT });
  assert.equal((await api(base, '/execute', { body: { content: `GET ${echo}/echo?guarded=2\n`, flowId }, token })).status, 200);
  await tab.locator('.list .row.ok', { hasText: 'guarded=2' }).waitFor({ timeout: WAIT });
  await tab.locator('.list .row', { hasText: 'guarded=2' }).click();
  await tab.locator('#detail h3', { hasText: 'Response headers' }).waitFor({ timeout: WAIT });
  assert.equal(await tab.evaluate(() => sessionStorage.getItem('volley.observer.token')), token);
  await tab.screenshot({ path: join(artifacts, 'observer-token.png') });
});

test('the page says when the server is gone and comes back after a restart', async () => {
  const base = await serve();
  const port = new URL(base).port;
  const tab = await page();
  await tab.goto(`${base}/`);
  await tab.locator('#connection', { hasText: 'connected' }).waitFor({ timeout: WAIT });
  await api(base, '/execute', { body: { content: `GET ${echo}/echo?before=restart\n` } });
  await tab.locator('.list .row', { hasText: 'before=restart' }).waitFor({ timeout: WAIT });

  const old = serving.get(base);
  const exited = new Promise((resolvePromise) => old.once('exit', resolvePromise));
  old.kill();
  await exited;
  await tab.locator('#connection.disconnected', { hasText: 'reconnecting in' }).waitFor({ timeout: WAIT });

  // The same port again: the page reconnects by itself and shows what runs next.
  let restarted;
  for (let attempt = 0; !restarted; attempt += 1) {
    try {
      restarted = await serve([], port);
    } catch (error) {
      if (attempt > 20) throw error;
      await new Promise((resolvePromise) => setTimeout(resolvePromise, 200));
    }
  }
  await tab.locator('#connection.connected').waitFor({ timeout: WAIT });
  await tab.locator('#notice', { hasText: 'runs outside flows during the disconnection are missing' }).waitFor({ timeout: WAIT });
  await api(restarted, '/execute', { body: { content: `GET ${echo}/echo?after=restart\n` } });
  await tab.locator('.list .row', { hasText: 'after=restart' }).waitFor({ timeout: WAIT });
  assert.equal(await tab.locator('.list .row', { hasText: 'before=restart' }).count(), 1, 'kept, and not twice');
  await tab.screenshot({ path: join(artifacts, 'observer-reconnected.png') });
});
