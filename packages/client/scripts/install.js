#!/usr/bin/env node
// npm's `install` script: makes sure volley.node is there. A package made by `npm pack`
// ships it, so then nothing is done. Without it, the package must be the one inside the
// Volley repository (crates/node two directories up) with cargo on PATH: the addon is
// built from source with scripts/build.js, a release build unless
// VOLLEY_ADDON_PROFILE=debug (which shares the workspace's debug artifacts: seconds
// instead of minutes). Anything else fails, saying what is missing.
'use strict';

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const packageDir = path.resolve(__dirname, '..');
const addon = path.join(packageDir, 'volley.node');
const crate = path.resolve(packageDir, '..', '..', 'crates', 'node', 'Cargo.toml');

function fail(lines) {
  console.error(['@volley-http/client: cannot install:', ...lines].join('\n  '));
  process.exit(1);
}

if (fs.existsSync(addon)) process.exit(0);

const profile = process.env.VOLLEY_ADDON_PROFILE || 'release';
if (profile !== 'release' && profile !== 'debug') {
  fail([`VOLLEY_ADDON_PROFILE is ${JSON.stringify(profile)}: it must be release or debug.`]);
}

if (!fs.existsSync(crate)) {
  fail([
    `volley.node (the native addon) is missing from ${packageDir},`,
    'and building it needs the Volley repository around this package, which is not there',
    `(no ${crate}).`,
    'Install a package that ships the addon (`npm run build`, then `npm pack`, in the',
    "repository's packages/client), or install packages/client from a checkout of the",
    'repository with the Rust toolchain (https://rustup.rs).',
  ]);
}

const cargo = process.env.CARGO || 'cargo';
try {
  execFileSync(cargo, ['--version'], { stdio: 'ignore' });
} catch (error) {
  if (error.code !== 'ENOENT') throw error;
  const missing = process.env.CARGO ? `CARGO (${process.env.CARGO}) is not found` : 'there is no cargo on PATH';
  fail([
    `volley.node (the native addon) is missing from ${packageDir},`,
    `and building it from ${path.dirname(crate)} needs cargo: ${missing}.`,
    'Install the Rust toolchain (https://rustup.rs), or set CARGO to its cargo.',
  ]);
}

console.error(`@volley-http/client: building the native addon from source (${profile}; a first release build takes minutes)`);
const args = [path.join(__dirname, 'build.js')];
if (profile === 'release') args.push('--release');
execFileSync(process.execPath, args, { stdio: 'inherit' });
