// The extension inside a real VS Code: code-server (VS Code 1.100.3 in the browser, from
// CODE_SERVER_DIR, installed by ./install) in Debian's Chromium driven by playwright-core,
// with the extension's .vsix (VSIX) installed and the real `volley lsp` (VOLLEY_BIN)
// against a local `volley echo-server`. The tests act like a user (keyboard, command
// palette, clicks on lenses and on the response panel's links) and share one window, in
// order. Each leaves a screenshot in ARTIFACTS_DIR. Every wait is bounded (WAIT).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';

const codeServerDir = process.env.CODE_SERVER_DIR;
const binary = process.env.VOLLEY_BIN;
const vsix = process.env.VSIX;
const artifacts = resolve(process.env.ARTIFACTS_DIR || 'target/vscode-artifacts');
if (!codeServerDir || !binary || !vsix) {
  throw new Error('CODE_SERVER_DIR, VOLLEY_BIN and VSIX must be set: run editors/vscode/test/real/run');
}
const { chromium } = createRequire(join(codeServerDir, 'package.json'))('playwright-core');
const entry = join(codeServerDir, 'node_modules', 'code-server', 'out', 'node', 'entry.js');

/** The longest any one thing may take to appear. */
const WAIT = 20_000;

const children = [];
let home = '';
let workspace = '';
let codeServer;
let browser;
let page;

/** Starts a child process and waits for `pattern` in its output; answers the first group. */
function start(command, args, pattern, options = {}) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
  children.push(child);
  return new Promise((resolvePromise, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`${command} ${args.join(' ')} did not start: ${seen}`)), 60_000);
    const look = (chunk) => {
      seen += chunk.toString();
      const found = pattern.exec(seen);
      if (found) {
        clearTimeout(timer);
        resolvePromise({ child, match: found[1] });
      }
    };
    child.stdout.on('data', look);
    child.stderr.on('data', look);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${command} exited with ${code}: ${seen}`));
    });
  });
}

/** Runs a command to its end (bounded), failing with its output. */
function run(command, args, env) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
    let seen = '';
    const timer = setTimeout(() => child.kill(), 120_000);
    child.stdout.on('data', (chunk) => (seen += chunk));
    child.stderr.on('data', (chunk) => (seen += chunk));
    child.on('exit', (code) => {
      clearTimeout(timer);
      code === 0 ? resolvePromise(seen) : reject(new Error(`${command} ${args.join(' ')} exited with ${code}: ${seen}`));
    });
  });
}

function freePort() {
  return new Promise((resolvePromise, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolvePromise(port));
    });
  });
}

async function shot(name) {
  await page.screenshot({ path: join(artifacts, `${name}.png`) });
}

/** Polls `probe` until it answers something truthy; fails with `what` after `timeout`. */
async function until(what, probe, timeout = WAIT) {
  const deadline = Date.now() + timeout;
  let last;
  while (Date.now() < deadline) {
    try {
      last = await probe();
      if (last) {
        return last;
      }
    } catch (error) {
      last = error;
    }
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 150));
  }
  throw new Error(`timed out waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
}

/** The text of the response panel (a webview: its page is a frame inside frames). */
async function panelText() {
  for (const frame of page.frames()) {
    if (frame === page.mainFrame()) {
      continue;
    }
    try {
      const text = await frame.evaluate(() =>
        document.querySelector('section.outcome, p.summary') ? document.body.innerText : '',
      );
      if (text) {
        return text;
      }
    } catch {
      // A frame that went away while looking.
    }
  }
  return '';
}

/** The response panel's frame. */
async function panelFrame() {
  return until('the response panel', async () => {
    for (const frame of page.frames()) {
      if (frame === page.mainFrame()) {
        continue;
      }
      try {
        if (await frame.evaluate(() => Boolean(document.querySelector('section.outcome')))) {
          return frame;
        }
      } catch {
        // Gone.
      }
    }
    return undefined;
  });
}

/** Waits until the panel's text matches `pattern`; answers it. */
async function panelMatching(pattern) {
  try {
    return await until(`the panel to show ${pattern}`, async () => {
      const text = await panelText();
      return pattern.test(text) ? text : undefined;
    });
  } catch (error) {
    const frames = await Promise.all(
      page.frames().map(async (frame) => `${frame.url().slice(0, 80)}: ${await frame.evaluate(() => document.body?.innerText.slice(0, 120)).catch((e) => e.message.slice(0, 80))}`),
    );
    throw new Error(`${error.message}; frames:\n${frames.join('\n')}`);
  }
}

/** Runs a palette command like a user: F1, its title, Enter. */
async function palette(title) {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input').first();
  await input.waitFor({ state: 'visible', timeout: WAIT });
  await input.fill(`>${title}`);
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
  await row.waitFor({ state: 'visible', timeout: WAIT });
  // The row itself, not Enter: Enter runs the highlighted row, which is a recently used
  // command first (Send All Requests above Send Request once Send All ran).
  await row.click();
}

/** Focuses the editor of `api.http` and puts the cursor at the start of line `line` (1-based). */
async function goToLine(line) {
  await page.locator('.tab', { hasText: 'api.http' }).first().click();
  await page.locator('.monaco-editor textarea').first().waitFor({ timeout: WAIT });
  await page.keyboard.press('Control+G');
  // The box opens a moment later: keys typed before it has focus go into the file.
  const input = page.locator('.quick-input-widget input').first();
  await input.waitFor({ state: 'visible', timeout: WAIT });
  await input.fill(`:${line}`);
  await page.keyboard.press('Enter');
  await input.waitFor({ state: 'hidden', timeout: WAIT });
  await page.keyboard.press('Home');
  await page.keyboard.press('Home');
}

/**
 * Types `text` like a user, asks for completions and waits until `label` is the focused
 * suggestion. Answers the closing braces VS Code added while typing (`}}`, or none: it
 * closes `{` only once the line's tokens are known), which stay after the insertion.
 */
async function complete(text, label) {
  await page.keyboard.type(text);
  const closing = await until(`the line to read ${text}`, async () => {
    const lines = (await editorText()).split('\n');
    return lines.includes(`${text}}}`) ? '}}' : lines.includes(text) ? 'none' : undefined;
  });
  // Suggestions opened while typing are closed: the list asked for now is for the whole text.
  await page.keyboard.press('Escape');
  await page.keyboard.press('Control+Space');
  await until(`${label} focused in the suggestions`, async () => {
    const focused = page.locator('.suggest-widget .monaco-list-row.focused .label-name').first();
    return (await focused.count()) > 0 && (await focused.innerText()).trim() === label;
  });
  return closing === 'none' ? '' : closing;
}

/** Empties the cursor's line. */
async function clearLine() {
  await page.keyboard.press('End');
  await page.keyboard.press('Shift+Home');
  await page.keyboard.press('Shift+Home');
  await page.keyboard.press('Backspace');
}

/** The text of the active editor's lines as shown (every line is rendered: the file is short). */
async function editorText() {
  const lines = await page.locator('.monaco-editor .view-lines .view-line').evaluateAll((nodes) =>
    nodes
      .map((node) => ({ top: parseFloat(node.style.top || '0'), text: node.textContent.replace(/\u00a0/g, ' ') }))
      .sort((a, b) => a.top - b.top)
      .map((line) => line.text),
  );
  return lines.join('\n');
}

/** Clicks the `index`th lens titled `title`. */
async function clickLens(title, index = 0) {
  const lens = page.locator('.codelens-decoration a', { hasText: title }).nth(index);
  await lens.waitFor({ state: 'visible', timeout: WAIT });
  await lens.click();
}

/** The `volley lsp` processes below code-server, by pid (from /proc). */
function lspProcesses() {
  const parents = new Map();
  const commands = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parents.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      commands.set(Number(name), readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0'));
    } catch {
      // Gone.
    }
  }
  const below = (pid) => {
    for (let at = parents.get(pid); at; at = parents.get(at)) {
      if (at === codeServer.pid) return true;
    }
    return false;
  };
  return [...commands]
    .filter(([pid, argv]) => argv[0] === binary && argv[1] === 'lsp' && below(pid))
    .map(([pid]) => pid);
}

/** The notification toasts' text. */
function toasts() {
  return page.locator('.notifications-toasts .notification-list-item-message').allTextContents();
}

async function closeNotifications() {
  await palette('Notifications: Clear All Notifications');
}

/** A test that leaves a screenshot `failed-N.png` when it fails, to see why. */
let scenarios = 0;
function scenario(name, body) {
  const number = String(++scenarios).padStart(2, '0');
  test(name, async () => {
    try {
      await body();
    } catch (error) {
      await page?.screenshot({ path: join(artifacts, `failed-${number}.png`) }).catch(() => {});
      throw error;
    }
  });
}

let echo = '';
const requests = [
  '# @name hello',
  '# @description Says hello back',
  'GET {{base}}/echo?who={{who}}',
  'X-Id: {{$uuid}}',
  '',
  '###',
  '# @name setCookie',
  'GET {{base}}/cookies/set?a=1',
  '',
  '###',
  '# @name readCookie',
  'GET {{base}}/cookies',
  '',
  '###',
  '# @name typing',
  'GET {{base}}/echo?typed=1',
  '',
];

/** A request whose response handler tests the response, logs and fails. */
const scripted = [
  '### login',
  'POST {{base}}/login',
  'Content-Type: application/json',
  '',
  '{"user": "ada", "password": "lovelace"}',
  '',
  '> {%',
  '  client.global.set("token", response.body.token);',
  '  client.log("got", response.status);',
  '  client.test("ok", () => client.assert(response.status === 200));',
  '  client.test("created", () => client.assert(response.status === 201, "status " + response.status));',
  '%}',
  '',
];

before(async () => {
  mkdirSync(artifacts, { recursive: true });
  home = mkdtempSync(join(tmpdir(), 'volley-vscode-real-'));
  workspace = join(home, 'workspace');
  const userData = join(home, 'user-data');
  const extensions = join(home, 'extensions');
  mkdirSync(workspace);
  mkdirSync(join(userData, 'User'), { recursive: true });
  mkdirSync(extensions);
  ({ match: echo } = await start(binary, ['echo-server', '--port', '0'], /listening on (http:\/\/\S+)/));
  writeFileSync(
    join(workspace, 'volley.jsonc'),
    JSON.stringify({
      variables: { base: echo, who: 'nobody' },
      profiles: { dev: { variables: { who: 'dev' } }, prod: { variables: { who: 'prod' } } },
    }),
  );
  writeFileSync(join(workspace, 'api.http'), `${requests.join('\n')}\n`);
  writeFileSync(join(workspace, 'scripts.http'), `${scripted.join('\n')}\n`);
  writeFileSync(join(workspace, 'prompts.http'), 'GET {{base}}/echo?who={{$input Your name $value: ada}}\n');
  writeFileSync(
    join(userData, 'User', 'settings.json'),
    JSON.stringify({
      'volley.path': binary,
      'workbench.startupEditor': 'none',
      'workbench.tips.enabled': false,
      'workbench.enableExperiments': false,
      'workbench.secondarySideBar.defaultVisibility': 'hidden',
      'security.workspace.trust.enabled': false,
      'telemetry.telemetryLevel': 'off',
      'extensions.autoCheckUpdates': false,
      'extensions.autoUpdate': false,
      'chat.commandCenter.enabled': false,
      'files.simpleDialog.enable': true,
      'editor.acceptSuggestionOnEnter': 'on',
      // Brackets closed while typing raced the typing (one `}` of two, now and then):
      // never closed, the completion is what closes `{{`, every run the same.
      'editor.autoClosingBrackets': 'never',
      'git.enabled': false,
    }),
  );
  // Nothing goes to the home directory: code-server's config and data stay in `home`.
  const env = {
    ...process.env,
    XDG_CONFIG_HOME: join(home, 'config'),
    XDG_DATA_HOME: join(home, 'data'),
    XDG_CACHE_HOME: join(home, 'cache'),
  };
  const common = ['--user-data-dir', userData, '--extensions-dir', extensions];
  await run(process.execPath, [entry, ...common, '--install-extension', vsix], env);
  const port = await freePort();
  ({ child: codeServer } = await start(
    process.execPath,
    [entry, '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, ...common, '--disable-telemetry',
      '--disable-update-check', '--disable-workspace-trust', '--disable-getting-started-override', workspace],
    /(HTTP server listening on http:\/\/\S+)/,
    { env },
  ));
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update'],
  });
  const context = await browser.newContext({
    viewport: { width: 1500, height: 900 },
    permissions: ['clipboard-read', 'clipboard-write'],
  });
  page = await context.newPage();
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`, { timeout: WAIT });
  await page.locator('.monaco-workbench').waitFor({ timeout: WAIT });
});

after(async () => {
  await browser?.close().catch(() => {});
  for (const child of children) {
    child.kill();
  }
  if (home) {
    rmSync(home, { recursive: true, force: true, maxRetries: 3 });
  }
});

scenario('activation: opening a .http file starts volley lsp and shows a lens on every request', async () => {
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget input').first();
  await input.waitFor({ state: 'visible', timeout: WAIT });
  await input.fill('api.http');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'api.http' }).first().waitFor({ timeout: WAIT });
  await page.keyboard.press('Enter');
  await until('four Send Request lenses', async () =>
    (await page.locator('.codelens-decoration a', { hasText: 'Send Request' }).count()) === 4,
  );
  const lenses = await page.locator('.codelens-decoration a').allTextContents();
  assert.ok(lenses.some((text) => /Send All \(4\)/.test(text)), lenses.join(' | '));
  assert.equal(lspProcesses().length, 1, 'one volley lsp runs');
  await shot('01-activation-lenses');
});

scenario('Send Request from a lens shows the response and the description in the panel', async () => {
  await clickLens('Send Request', 0);
  const text = await panelMatching(/who=nobody/);
  assert.match(text, /200 OK/);
  assert.match(text, /Says hello back/);
  assert.match(text, /Re-run/);
  await shot('02-send-request-panel');
});

scenario('profile picker: choosing a profile changes what Send uses', async () => {
  await goToLine(3);
  await palette('Volley: Select Profile');
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: 'prod' }).first();
  await row.waitFor({ state: 'visible', timeout: WAIT });
  await shot('03-profile-quick-pick');
  await row.click();
  await until('the status bar to show prod', async () =>
    (await page.locator('.statusbar-item', { hasText: 'Volley: prod' }).count()) > 0,
  );
  await clickLens('Send Request', 0);
  await panelMatching(/who=prod/);
  await shot('03-profile-prod-sent');
});

scenario('Send All from the palette shows every outcome', async () => {
  await goToLine(1);
  await palette('Volley: Send All Requests');
  const text = await panelMatching(/4 requests sent/);
  assert.match(text, /typed=1/);
  await shot('04-send-all');
});

scenario('cookies: a cookie set by one send is sent by the next', async () => {
  await palette('Volley: Clear Cookies');
  await clickLens('Send Request', 1);
  await panelMatching(/cookies\/set\?a=1/);
  await clickLens('Send Request', 2);
  const text = await panelMatching(/\/cookies\b[\s\S]*200 OK/);
  assert.match(text, /"a"\s*:\s*"1"|a=1/, text);
  await shot('05-cookies');
});

scenario('copy as cURL puts the cursor request on the clipboard', async () => {
  await goToLine(3);
  await palette('Volley: Copy Request as cURL');
  const curl = await until('a curl command on the clipboard', async () => {
    const text = await page.evaluate(() => navigator.clipboard.readText());
    return /^curl /.test(text) ? text : undefined;
  });
  assert.ok(curl.includes(`${echo}/echo?who=prod`), curl);
  assert.match(curl, /X-Id: [0-9a-f-]{36}/i);
  await shot('06-copy-as-curl');
});

scenario("a cursor on a request's ### or # @name line sends that request, not the one above", async () => {
  // api.http: line 6 `###` and 7 `# @name setCookie` belong to setCookie; 14 `###` and
  // 15 `# @name typing` to typing. Alternating makes each send change the panel.
  for (const [line, shown, other] of [
    [6, 'cookies/set?a=1', 'typed=1'],
    [15, 'typed=1', 'cookies/set?a=1'],
    [7, 'cookies/set?a=1', 'typed=1'],
    [14, 'typed=1', 'cookies/set?a=1'],
  ]) {
    await goToLine(line);
    await palette('Volley: Send Request');
    await until(`line ${line} to send the request with ${shown}`, async () => {
      const text = await panelText();
      return text.includes(shown) && !text.includes(other) ? text : undefined;
    });
  }
  await shot('06-cursor-lines');
});

scenario("re-run from the panel's link sends the request again", async () => {
  await clickLens('Send Request', 0);
  const first = await panelMatching(/who=prod/);
  const firstId = /x-id[^0-9a-f]*([0-9a-f-]{36})/i.exec(first)?.[1];
  assert.ok(firstId, first);
  const frame = await panelFrame();
  await frame.locator('a.action', { hasText: 'Re-run' }).first().click();
  const second = await until('a new response', async () => {
    const text = await panelText();
    const id = /x-id[^0-9a-f]*([0-9a-f-]{36})/i.exec(text)?.[1];
    return id && id !== firstId ? text : undefined;
  });
  assert.match(second, /who=prod/);
  await shot('07-rerun');
});

scenario("save body from the panel's link writes the body to the chosen file", async () => {
  const target = join(workspace, 'saved-body.json');
  const frame = await panelFrame();
  const shown = await panelText();
  await frame.locator('a.action', { hasText: 'Save body' }).first().click();
  const input = page.locator('.quick-input-widget input').first();
  await input.waitFor({ state: 'visible', timeout: WAIT });
  // The dialog offers the URL's last segment with the content type's extension.
  await until('the suggested name', async () => (await input.inputValue()).endsWith(`${workspace}/echo.json`));
  await input.fill(target);
  await until('the typed path', async () => (await input.inputValue()) === target);
  await shot('08-save-dialog');
  await page.keyboard.press('Enter');
  const saved = await until('the saved file', () => existsSync(target) && readFileSync(target, 'utf8'));
  assert.match(saved, /who=prod/);
  const id = /x-id[^0-9a-f]*([0-9a-f-]{36})/i.exec(shown)?.[1];
  assert.ok(id && saved.includes(id), 'the saved body is the one shown');
  await shot('08-saved');
});

scenario("filter from the panel's link shows the body through jq above it", async () => {
  const frame = await panelFrame();
  await frame.locator('a.action', { hasText: 'Filter (jq)' }).first().click();
  const input = page.locator('.quick-input-widget input').first();
  await input.waitFor({ state: 'visible', timeout: WAIT });
  const expression = '.method + " " + .path';
  await input.fill(expression);
  await until('the typed filter', async () => (await input.inputValue()) === expression);
  await page.keyboard.press('Enter');
  const text = await panelMatching(/Filtered by/);
  assert.match(text, /Filtered by \.method \+ " " \+ \.path\s+"[A-Z]+ \/echo"/);
  await shot('08-filtered');
});

scenario('diagnostics while typing: a bad header gets a squiggle, counts in Problems and refuses the send', async () => {
  await goToLine(17);
  await page.keyboard.type('X Bad Header: 1');
  await until('an error squiggle', async () => (await page.locator('.monaco-editor .squiggly-error').count()) > 0);
  const problems = await until('the Problems count', async () => {
    const label = await page.locator('#status\\.problems').first().getAttribute('aria-label');
    return label && /Errors: 1\b|1 error/i.test(label) ? label : undefined;
  }).catch(async () => page.locator('#status\\.problems').first().innerText());
  assert.match(problems, /1/);
  await shot('09-diagnostics');
  // Sending it anyway: the panel says it was refused, and why.
  await clickLens('Send Request', 3);
  const refused = await panelMatching(/Refused/);
  assert.match(refused, /line 17 malformed-header/);
  assert.match(refused, /hint:/);
  await shot('09-refused');
  await goToLine(17);
  await clearLine();
  await until('the squiggle to go', async () => (await page.locator('.monaco-editor .squiggly-error').count()) === 0);
});

scenario('completion inserts resolvers as the snippet engine reads them', async () => {
  await goToLine(17);
  // VS Code does not close the braces here (`editor.autoClosingBrackets`): the
  // completion closes the `{{` it is in.
  await complete('X-A: {{$uu', '$uuid');
  await shot('10-completion-uuid');
  await page.keyboard.press('Enter');
  await until('$uuid in the document', async () => (await editorText()).split('\n').includes('X-A: {{$uuid}}'));
  await page.keyboard.press('End');
  await page.keyboard.press('Enter');
  await complete('X-B: {{$rand', '$random');
  await page.keyboard.press('Enter');
  await until('$random(min, max) with placeholders', async () =>
    (await editorText()).split('\n').includes('X-B: {{$random(min, max)}}'),
  );
  // The placeholders are the snippet's tab stops: typing replaces `min`, Tab goes to `max`.
  await page.keyboard.type('1');
  await page.keyboard.press('Tab');
  await page.keyboard.type('9');
  await until('the placeholders filled', async () =>
    (await editorText()).split('\n').includes('X-B: {{$random(1, 9)}}'),
  );
  await shot('10-completion-random');
  await page.keyboard.press('Escape');
  await clearLine();
  await page.keyboard.press('Backspace');
  await clearLine();
  await until('the lines gone', async () => !(await editorText()).includes('X-A:'));
});

scenario('hover on a request line previews it with its description', async () => {
  await goToLine(1);
  const url = page.locator('.monaco-editor .view-line', { hasText: '/echo?who=' }).first();
  await url.hover({ position: { x: 30, y: 5 } });
  const hover = page.locator('.monaco-hover:not(.hidden) .monaco-hover-content, .monaco-resizable-hover .hover-contents').first();
  await hover.waitFor({ state: 'visible', timeout: WAIT });
  const text = await until('the hover preview', async () => {
    const shown = await hover.innerText();
    return /Says hello back/.test(shown) ? shown : undefined;
  });
  assert.match(text, /echo\?who=prod|who=/);
  await shot('11-hover');
  await page.keyboard.press('Escape');
});

scenario('a language server that crashes is restarted and the user is told', async () => {
  await closeNotifications();
  const [before] = lspProcesses();
  assert.ok(before, 'volley lsp runs');
  process.kill(before, 'SIGKILL');
  const message = await until('the restart message', async () =>
    (await toasts()).find((text) => /stopped; restarting it/.test(text)),
  );
  assert.match(message, /\(1\/\d+\)/);
  const after = await until('a new volley lsp', async () => lspProcesses().find((pid) => pid !== before));
  assert.notEqual(after, before);
  await shot('12-crash-restarted');
  await until('lenses again', async () => (await page.locator('.codelens-decoration a', { hasText: 'Send Request' }).count()) === 4);
  await clickLens('Send Request', 3);
  await panelMatching(/typed=1/);
});

scenario("history: the session's responses in a quick pick, the one picked shown", async () => {
  await palette('Volley: Show Response History');
  const rows = page.locator('.quick-input-list .monaco-list-row');
  await rows.first().waitFor({ state: 'visible', timeout: WAIT });
  const labels = await rows.allInnerTexts();
  assert.match(labels[0], /200 OK · typing/, 'newest first');
  await shot('13-history');
  await page.locator('.quick-input-widget input').first().fill('setCookie');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'setCookie' }).first().waitFor({ timeout: WAIT });
  await page.keyboard.press('Enter');
  await panelMatching(/cookies\/set\?a=1/);
});

scenario("the request as sent, from the panel's link, opens beside with the resolved request", async () => {
  const frame = await panelFrame();
  await frame.locator('a.action', { hasText: 'Request as sent' }).first().click();
  const sent = await until('an editor with the request as sent', async () => {
    const text = await page.locator('.monaco-editor .view-lines').evaluateAll((nodes) =>
      nodes.map((node) => node.innerText.replace(/\u00a0/g, ' ')),
    );
    return text.find((lines) => lines.includes(`GET ${echo}/cookies/set?a=1`));
  });
  assert.match(sent, /user-agent: volley/i);
  await shot('14-request-as-sent');
});

scenario("a response handler: the panel shows its tests and its log lines", async () => {
  await closeNotifications();
  // Opened where api.http is, so that the panel beside stays in view.
  await page.locator('.tab', { hasText: 'api.http' }).first().click();
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget input').first();
  await input.waitFor({ state: 'visible', timeout: WAIT });
  await input.fill('scripts.http');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'scripts.http' }).first().waitFor({ timeout: WAIT });
  await page.keyboard.press('Enter');
  // The lens of scripts.http's editor group (others may show other .http editors).
  const group = page.locator('.editor-group-container', { has: page.locator('.tab.active', { hasText: 'scripts.http' }) });
  const lens = group.locator('.codelens-decoration a', { hasText: 'Send Request' }).first();
  await lens.waitFor({ state: 'visible', timeout: WAIT });
  await lens.click();
  const text = await panelMatching(/Log\s+got 200/);
  assert.match(text, /Assertions: 1\/2 passed/);
  assert.match(text, /✓ ok line 10/);
  assert.match(text, /✗ created — AssertionError: status 200 line 11/);
  await shot('15-script-tests-and-log');
});

scenario('a prompt: the request asks in an input box, and sends what is typed', async () => {
  await closeNotifications();
  await page.locator('.tab', { hasText: 'api.http' }).first().click();
  await page.keyboard.press('Control+P');
  const open = page.locator('.quick-input-widget input').first();
  await open.waitFor({ state: 'visible', timeout: WAIT });
  await open.fill('prompts.http');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'prompts.http' }).first().waitFor({ timeout: WAIT });
  await page.keyboard.press('Enter');
  const group = page.locator('.editor-group-container', { has: page.locator('.tab.active', { hasText: 'prompts.http' }) });
  const lens = group.locator('.codelens-decoration a', { hasText: 'Send Request' }).first();
  await lens.waitFor({ state: 'visible', timeout: WAIT });
  await lens.click();
  // The input box of `$input Your name`, offering its default.
  const input = page.locator('.quick-input-widget input').first();
  await input.waitFor({ state: 'visible', timeout: WAIT });
  await until('the offered default', async () => (await input.inputValue()) === 'ada');
  await input.fill('grace');
  await until('the typed answer', async () => (await input.inputValue()) === 'grace');
  await shot('16-prompt');
  await page.keyboard.press('Enter');
  const text = await panelMatching(/who=grace/);
  assert.match(text, /who=grace/);
});
