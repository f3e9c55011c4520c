import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveBinary, resolveWithGrace, which } from '../src/binary';

/** A file system with just these executables. */
function files(...executables: string[]) {
  const set = new Set(executables);
  return { isExecutable: (file: string) => set.has(file) };
}

const linux = { path: '/usr/local/bin:/usr/bin::/home/me/.cargo/bin', platform: 'linux', home: '/home/me' };

test('volley on PATH, first directory wins', () => {
  assert.deepEqual(resolveBinary(undefined, linux, files('/usr/bin/volley', '/home/me/.cargo/bin/volley')), {
    found: true,
    path: '/usr/bin/volley',
  });
  assert.equal(which('volley', linux, files('/home/me/.cargo/bin/volley')), '/home/me/.cargo/bin/volley');
});

test('not on PATH: a message naming the setting', () => {
  const resolution = resolveBinary('', linux, files());
  assert.equal(resolution.found, false);
  assert.match(!resolution.found ? resolution.message : '', /not found on PATH.*volley\.path/);
  assert.equal(resolveBinary(undefined, { path: undefined, platform: 'linux' }, files('/usr/bin/volley')).found, false);
});

test('a configured path is used as it is, with ~ expanded', () => {
  assert.deepEqual(resolveBinary('/opt/volley/bin/volley', linux, files('/opt/volley/bin/volley', '/usr/bin/volley')), {
    found: true,
    path: '/opt/volley/bin/volley',
  });
  assert.deepEqual(resolveBinary('~/src/volley/target/release/volley', linux, files('/home/me/src/volley/target/release/volley')), {
    found: true,
    path: '/home/me/src/volley/target/release/volley',
  });
});

test('a configured path that is missing is an error, PATH is not tried', () => {
  const resolution = resolveBinary('/nowhere/volley', linux, files('/usr/bin/volley'));
  assert.equal(resolution.found, false);
  assert.match(!resolution.found ? resolution.message : '', /"volley.path".*\/nowhere\/volley/);
});

test('a configured bare name is looked up on PATH', () => {
  assert.deepEqual(resolveBinary('volley-dev', linux, files('/usr/local/bin/volley-dev')), {
    found: true,
    path: '/usr/local/bin/volley-dev',
  });
  assert.equal(resolveBinary('volley-dev', linux, files('/usr/bin/volley')).found, false);
});

test('windows: ; separated PATH and PATHEXT', () => {
  const windows = { path: 'C:\\tools;C:\\cargo\\bin', platform: 'win32', pathExt: '.COM;.EXE' };
  assert.deepEqual(resolveBinary(undefined, windows, files('C:\\cargo\\bin\\volley.exe')), {
    found: true,
    path: 'C:\\cargo\\bin\\volley.exe',
  });
  assert.deepEqual(resolveBinary('C:\\volley\\volley', windows, files('C:\\volley\\volley.exe')), {
    found: true,
    path: 'C:\\volley\\volley.exe',
  });
});

test('settings that come late (after a window reload) are read again before the binary is called missing', async () => {
  // The setting reads empty twice, then names the binary: found, after two waits.
  const readings = ['', '', '/opt/volley'];
  let waits = 0;
  const sleep = async () => {
    waits += 1;
  };
  const resolve = () => resolveBinary(readings.shift() ?? '/opt/volley', linux, files('/opt/volley'));
  assert.deepEqual(await resolveWithGrace(resolve, 5_000, 250, sleep), { found: true, path: '/opt/volley' });
  assert.equal(waits, 2);
  // Never there: the message of the last reading, after the whole grace and no longer.
  waits = 0;
  const missing = await resolveWithGrace(() => resolveBinary('', linux, files()), 1_000, 250, sleep);
  assert.equal(missing.found, false);
  assert.equal(waits, 4);
  // Found at once: no wait.
  waits = 0;
  await resolveWithGrace(() => resolveBinary(undefined, linux, files('/usr/bin/volley')), 5_000, 250, sleep);
  assert.equal(waits, 0);
});
