// The HTML report of `volley load` in a real browser: Debian's Chromium, headless,
// driven by playwright-core. The test starts `volley echo-server` on a free port, runs
// a small load against it with the real binary (VOLLEY_BIN), opens the report from
// `file://` and checks that the page shows its figures and charts, logs no error and
// fetches nothing. A screenshot goes to ARTIFACTS_DIR (default target/web-artifacts).

import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import { chromium } from 'playwright-core';

const root = resolve(import.meta.dirname, '..', '..');
const binary = resolve(root, process.env.VOLLEY_BIN || 'target/debug/volley');
const artifacts = resolve(root, process.env.ARTIFACTS_DIR || 'target/web-artifacts');
const WAIT = 15_000;

const children = [];
let directory;
let browser;
let echo;

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
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`volley ${args.join(' ')} did not start: ${error.message}`));
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`volley ${args.join(' ')} exited with ${code}: ${seen}`));
    });
  });
}

before(async () => {
  mkdirSync(artifacts, { recursive: true });
  directory = mkdtempSync(join(tmpdir(), 'volley-load-report-'));
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
  if (directory) rmSync(directory, { recursive: true, force: true });
});

test('the HTML report of a load run shows its figures and charts, and fetches nothing', async () => {
  const file = join(directory, 'load.http');
  writeFileSync(file, `# @name echo\n# @assert status == 200\nGET ${echo}/echo?load=1\n`);
  const report = join(directory, 'load.html');
  const args = ['load', file, '-n', '200', '-c', '4', '--quiet', '--threshold', 'p99<30s', '--threshold', 'errors<1%',
    '--report', `html=${report}`];
  await promisify(execFile)(binary, args, { timeout: 60_000 });
  assert.ok(existsSync(report), 'the report is written');
  const size = statSync(report).size;
  assert.ok(size > 1_000 && size < 1_000_000, `a sane size: ${size} bytes`);

  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  const tab = await context.newPage();
  const problems = [];
  const requests = [];
  tab.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') problems.push(message.text());
  });
  tab.on('pageerror', (error) => problems.push(error.message));
  tab.on('request', (request) => requests.push(request.url()));
  const address = pathToFileURL(report).href;
  await tab.goto(address);

  assert.match(await tab.title(), /^Volley load report/);
  assert.equal((await tab.locator('h1').textContent()).trim(), 'Volley load report');
  assert.equal((await tab.locator('table.summary tr.requests td').textContent()).trim(), '200');
  assert.match(await tab.locator('table.summary tr.errors td').textContent(), /^0 \(0 %\)/);
  assert.match(await tab.locator('table.summary tr.statuses td').textContent(), /200 × 200/);
  assert.match(await tab.locator('table.requests-sent').textContent(), /\/echo\?load=1/);
  assert.match(await tab.locator('table.latency td.p99').textContent(), /\d+(\.\d+)? (µs|ms|s)$/);
  assert.equal(await tab.locator('table.thresholds tr.passed').count(), 2, 'both thresholds held');

  for (const name of ['latency-over-time', 'distribution']) {
    const chart = tab.locator(`svg.chart.${name}`);
    assert.equal(await chart.count(), 1, name);
    const box = await chart.boundingBox();
    assert.ok(box && box.width > 100 && box.height > 50, `${name} is drawn: ${JSON.stringify(box)}`);
    assert.ok((await chart.locator('title').first().textContent()).length > 0, `${name} has a title`);
  }
  // The lines are drawn, not only the axes.
  assert.match(await tab.locator('svg.latency-over-time g.lines path.p50').getAttribute('d'), /^M\d/);
  assert.match(await tab.locator('svg.distribution g.lines path.curve').getAttribute('d'), /^M[\d.]+ [\d.]+L/);
  const drawn = await tab.locator('svg.distribution g.lines path.curve').boundingBox();
  assert.ok(drawn && drawn.width > 100, `the distribution curve spans the chart: ${JSON.stringify(drawn)}`);

  assert.deepEqual(problems, [], 'no console errors');
  assert.deepEqual(requests, [address], 'nothing fetched but the page itself');
  await tab.screenshot({ path: join(artifacts, 'load-report.png'), fullPage: true });
  await context.close();
});
