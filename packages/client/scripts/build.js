#!/usr/bin/env node
// Builds the native addon (crates/node) with cargo and copies it beside index.js as
// volley.node. `--release` for an optimised build (what `npm run build` and a package
// ship), none for a debug build (what the tests use: it shares the workspace's debug
// artifacts). CARGO_TARGET_DIR is honoured through `cargo metadata`.
'use strict';

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const release = process.argv.includes('--release');
const packageDir = path.resolve(__dirname, '..');
const repository = path.resolve(packageDir, '..', '..');

const cargo = process.env.CARGO || 'cargo';
const args = ['build', '-p', 'volley-node', '--locked'];
if (release) args.push('--release');
execFileSync(cargo, args, { cwd: repository, stdio: 'inherit' });

const metadata = JSON.parse(
  execFileSync(cargo, ['metadata', '--format-version', '1', '--no-deps'], {
    cwd: repository,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  }),
);
const libraryName = {
  darwin: 'libvolley_node.dylib',
  win32: 'volley_node.dll',
}[process.platform] ?? 'libvolley_node.so';
const built = path.join(metadata.target_directory, release ? 'release' : 'debug', libraryName);

// Written to a temporary name, then renamed: a process that has the old addon loaded
// keeps its mapping, and a half-written volley.node is never seen.
const destination = path.join(packageDir, 'volley.node');
const temporary = `${destination}.${process.pid}.tmp`;
// A release addon ships without debug info. The workspace's release profile strips it
// already; `strip -S` (GNU and macOS) also covers a target directory built with
// another profile's settings. Without a `strip` tool, the addon is copied as built.
let stripped = false;
if (release && process.platform !== 'win32') {
  try {
    execFileSync('strip', ['-S', '-o', temporary, built], { stdio: ['ignore', 'ignore', 'inherit'] });
    stripped = true;
  } catch (error) {
    if (error.code !== 'ENOENT') throw error;
    console.error('no `strip` tool: volley.node keeps its debug info');
  }
}
if (!stripped) fs.copyFileSync(built, temporary);
fs.renameSync(temporary, destination);
const size = (fs.statSync(destination).size / 1e6).toFixed(1);
console.error(`volley.node <- ${path.relative(repository, built) || built}${stripped ? ', stripped' : ''} (${size} MB)`);
