// `npm pack` gives a package that installs and loads: the tarball installed into a
// scratch project, then required, imported as ESM and run against `volley
// echo-server`. The install script (scripts/install.js): nothing to do when the tarball
// ships the addon; a copy of the package inside the repository without volley.node
// builds it on `npm install`; elsewhere it fails, saying what is missing.
'use strict';

const assert = require('node:assert/strict');
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { after, before, describe, it } = require('node:test');

const { repository, startEchoServer } = require('./support');

const packageDir = path.resolve(__dirname, '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
// npm's own output is kept for the failure message; the registry is never needed.
const quiet = (cwd, env) => ({ cwd, env, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
let scratch;
let server;

/** A project that depends on nothing yet, allowing the package's install script. */
function scratchProject(prefix) {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const manifest = { name: 'scratch', private: true, allowScripts: { '@volley-http/client': true } };
  fs.writeFileSync(path.join(directory, 'package.json'), `${JSON.stringify(manifest)}\n`);
  return directory;
}

/** Runs `code` from a file of `directory` with this runtime (Node, or Bun under `bun
 * test`); a file rather than `-e`, since Bun has no `--input-type`. */
function script(directory, name, code) {
  fs.writeFileSync(path.join(directory, name), code);
  return execFileSync(process.execPath, [name], { cwd: directory, encoding: 'utf8' }).trim();
}

before(async () => {
  server = await startEchoServer();
  scratch = scratchProject('volley-pack-');
  const tarball = execFileSync(npm, ['pack', '--silent', '--pack-destination', scratch, packageDir], quiet(scratch)).trim();
  execFileSync(npm, ['install', '--no-audit', '--no-fund', '--offline', path.join(scratch, tarball)], quiet(scratch));
});

after(async () => {
  await server?.stop();
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

it('ships the addon, the code, the types, the install script and the README', () => {
  const installed = path.join(scratch, 'node_modules', '@volley-http', 'client');
  for (const file of ['index.js', 'index.d.ts', 'volley.node', 'scripts/install.js', 'README.md', 'package.json']) {
    assert.ok(fs.existsSync(path.join(installed, file)), `${file} is in the package`);
  }
  assert.ok(!fs.existsSync(path.join(installed, 'scripts', 'build.js')), 'the build script stays in the repository');
});

it('loads with require and with import', () => {
  assert.equal(
    script(scratch, 'keys.cjs', "const v = require('@volley-http/client'); console.log(Object.keys(v).sort().join())"),
    'CookieJar,VolleyError,createClient,createNodeIO,createRemoteClient',
  );
  assert.equal(
    script(scratch, 'type.mjs', "import { createClient } from '@volley-http/client'; console.log(typeof createClient().runString)"),
    'function',
  );
});

it('runs a request with the installed addon', () => {
  const code = `const { createClient } = require('@volley-http/client');
createClient().runString('GET ${server.url}/echo/installed\\n')
  .then(async (response) => console.log(response.status, (await response.json()).path));\n`;
  assert.equal(script(scratch, 'run.cjs', code), '200 /echo/installed');
});

describe('install script', () => {
  // A copy of the package where a checkout has it (packages/<name>, so crates/node is
  // two directories up), without volley.node.
  let checkout;
  let elsewhere;
  let bareTarball;

  before(() => {
    checkout = fs.mkdtempSync(path.join(repository, 'packages', '.install-test-'));
    for (const file of ['package.json', 'package-lock.json', 'index.js', 'index.d.ts', 'README.md']) {
      fs.copyFileSync(path.join(packageDir, file), path.join(checkout, file));
    }
    fs.cpSync(path.join(packageDir, 'scripts'), path.join(checkout, 'scripts'), { recursive: true });
    elsewhere = scratchProject('volley-bare-');
    // Packed without prepack, which would refuse: a package without the addon.
    const tarball = execFileSync(
      npm,
      ['pack', '--silent', '--ignore-scripts', '--pack-destination', elsewhere, checkout],
      quiet(elsewhere),
    ).trim();
    bareTarball = path.join(elsewhere, tarball);
  });

  after(() => {
    for (const directory of [checkout, elsewhere]) {
      if (directory) fs.rmSync(directory, { recursive: true, force: true });
    }
  });

  it('fails outside the repository, saying what is missing', () => {
    const install = spawnSync(npm, ['install', '--no-audit', '--no-fund', '--offline', bareTarball], quiet(elsewhere));
    assert.notEqual(install.status, 0, 'the install fails');
    const output = install.stdout + install.stderr;
    assert.match(output, /volley\.node \(the native addon\) is missing from .*node_modules/);
    assert.match(output, /needs the Volley repository around this package/);
    assert.match(output, /`npm run build`, then `npm pack`/);
    assert.ok(!fs.existsSync(path.join(elsewhere, 'node_modules', '@volley-http', 'client', 'volley.node')));
  });

  it('fails without cargo, saying so', () => {
    const env = { ...process.env, PATH: path.dirname(process.execPath) };
    delete env.CARGO;
    const install = spawnSync(process.execPath, [path.join('scripts', 'install.js')], quiet(checkout, env));
    assert.equal(install.status, 1, install.stderr);
    assert.match(install.stderr, /needs cargo: there is no cargo on PATH/);
    assert.match(install.stderr, /rustup\.rs/);
    assert.ok(!fs.existsSync(path.join(checkout, 'volley.node')));
  });

  it('builds the addon on npm install in a checkout, then does nothing', () => {
    // A debug build shares the workspace's debug artifacts: a link, not minutes.
    const env = { ...process.env, VOLLEY_ADDON_PROFILE: 'debug' };
    const args = ['install', '--omit=dev', '--no-audit', '--no-fund', '--offline', '--foreground-scripts'];
    const first = spawnSync(npm, args, quiet(checkout, env));
    assert.equal(first.status, 0, first.stdout + first.stderr);
    assert.match(first.stdout + first.stderr, /building the native addon from source \(debug/);
    const addon = path.join(checkout, 'volley.node');
    assert.ok(fs.existsSync(addon), 'volley.node is built');
    const code = `const { createClient } = require('.');
createClient().runString('GET ${server.url}/echo/built\\n')
  .then(async (response) => console.log(response.status, (await response.json()).path));\n`;
    assert.equal(script(checkout, 'run.cjs', code), '200 /echo/built');

    const built = fs.statSync(addon).mtimeMs;
    const second = spawnSync(npm, args, quiet(checkout, env));
    assert.equal(second.status, 0, second.stdout + second.stderr);
    assert.doesNotMatch(second.stdout + second.stderr, /building the native addon/);
    assert.equal(fs.statSync(addon).mtimeMs, built, 'volley.node is left as it is');
  });
});
