// The TextMate grammar: valid JSON, every regex compiles, and the rules match the
// lines they are for. (The grammar's engine is Oniguruma; these patterns use only
// syntax JavaScript shares with it.)

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

interface Rule {
  match?: string;
  begin?: string;
  end?: string;
  patterns?: Rule[];
}

const root = join(__dirname, '..', '..');
const grammar = JSON.parse(readFileSync(join(root, 'syntaxes', 'http.tmLanguage.json'), 'utf8')) as {
  scopeName: string;
  repository: Record<string, Rule>;
};

function rule(name: string): RegExp {
  const found = grammar.repository[name];
  return new RegExp(found.match ?? found.begin ?? '');
}

function variables(): RegExp[] {
  return (grammar.repository.variables.patterns ?? []).map((pattern) => new RegExp(pattern.match ?? '', 'g'));
}

test('the scope name matches package.json', () => {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  assert.equal(manifest.contributes.grammars[0].scopeName, grammar.scopeName);
});

test('every pattern compiles', () => {
  const visit = (current: Rule) => {
    for (const source of [current.match, current.begin, current.end]) {
      if (source !== undefined) {
        assert.doesNotThrow(() => new RegExp(source), source);
      }
    }
    current.patterns?.forEach(visit);
  };
  Object.values(grammar.repository).forEach(visit);
});

test('separators, directives and comments', () => {
  assert.deepEqual(rule('separator').exec('### login')?.slice(1), ['###', ' login']);
  assert.deepEqual(rule('directive').exec('# @name login')?.slice(1), ['#', '@name', ' login']);
  assert.deepEqual(rule('directive').exec('// @assert status == 200')?.slice(1, 3), ['//', '@assert']);
  assert.ok(rule('comment').test('# just a note'));
  assert.ok(rule('comment').test('  // also a note'));
});

test('request lines', () => {
  assert.deepEqual(rule('request').exec('POST {{host}}/login HTTP/1.1')?.slice(1), ['POST', '{{host}}/login', 'HTTP/1.1']);
  assert.deepEqual(rule('request').exec('WEBSOCKET wss://echo.example/ws')?.slice(1, 3), ['WEBSOCKET', 'wss://echo.example/ws']);
  assert.equal(rule('request').test('Content-Type: application/json'), false);
  assert.ok(new RegExp(grammar.repository.request.end ?? '').test(''));
});

test('headers and file variables', () => {
  assert.deepEqual(rule('header').exec('Content-Type: application/json')?.slice(1), ['Content-Type', ':', ' application/json']);
  assert.equal(rule('header').test('"key": 1'), false);
  assert.deepEqual(rule('file-variable').exec('@host = https://api.example.com')?.slice(1), [
    '@',
    'host',
    '=',
    ' https://api.example.com',
  ]);
});

test('variables and resolvers', () => {
  const [resolver, variable] = variables();
  assert.deepEqual([...'{{$randomInt(1, 10)}} {{host}}'.matchAll(resolver)].map((found) => found[2]), ['$randomInt']);
  assert.deepEqual([...'{{ host }}/{{login.response.body.$.token}}'.matchAll(variable)].map((found) => found[2]), [
    'host',
    'login.response.body.$.token',
  ]);
});
