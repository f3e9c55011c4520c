// `npm pack` gives a package that installs and loads: the tarball installed into a
// scratch project, then required, imported as ESM and type-resolved by name.
'use strict';

const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { after, before, it } = require('node:test');

const packageDir = path.resolve(__dirname, '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
let scratch;

before(() => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'volley-pack-'));
  const quiet = { cwd: scratch, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' };
  const tarball = execFileSync(npm, ['pack', '--silent', '--pack-destination', scratch, packageDir], quiet).trim();
  fs.writeFileSync(path.join(scratch, 'package.json'), '{"name": "scratch", "private": true}\n');
  execFileSync(npm, ['install', '--no-audit', '--no-fund', '--offline', path.join(scratch, tarball)], quiet);
});

after(() => {
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

it('ships the addon, the code, the types and the README', () => {
  const installed = path.join(scratch, 'node_modules', '@volley-http', 'client');
  for (const file of ['index.js', 'index.d.ts', 'volley.node', 'README.md', 'package.json']) {
    assert.ok(fs.existsSync(path.join(installed, file)), `${file} is in the package`);
  }
});

it('loads with require and with import', () => {
  const script = (code, type) =>
    execFileSync(process.execPath, ['--input-type', type, '-e', code], { cwd: scratch, encoding: 'utf8' }).trim();
  assert.equal(
    script("const v = require('@volley-http/client'); console.log(Object.keys(v).sort().join())", 'commonjs'),
    'CookieJar,VolleyError,createClient,createNodeIO,createRemoteClient',
  );
  assert.equal(
    script(
      "import { createClient } from '@volley-http/client'; console.log(typeof createClient().runString)",
      'module',
    ),
    'function',
  );
});
