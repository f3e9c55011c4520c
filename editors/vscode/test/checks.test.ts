import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  excludeGlob,
  expectedAndActual,
  inExcludedFolder,
  isTestFile,
  outputLine,
  type RequestNode,
  requestResult,
  runOrder,
  testTree,
} from '../src/checks';
import type { Assertion } from '../src/outcome';
import { failure, outcome } from './fixtures';

const uri = 'file:///work/api.http';

/** A `volley.tests` answer as docs/lsp.md shapes it. */
const answer = {
  requests: [
    {
      index: 0,
      name: 'login',
      method: 'POST',
      url: '{{host}}/login',
      line: 5,
      endLine: 16,
      disabled: false,
      checks: [
        { kind: 'assert', label: 'status == 200', line: 3 },
        { kind: 'assert', label: 'header content-type contains json', line: 4 },
        { kind: 'test', label: 'logged in', line: 14 },
      ],
    },
    { index: 1, method: 'GET', url: '{{host}}/me', line: 19, endLine: 20, disabled: true, checks: [] },
    { index: 2, method: 'GET', url: '{{host}}/me', line: 23, endLine: 23, disabled: false, checks: [] },
  ],
};

function login(): RequestNode {
  return testTree(uri, answer)[0];
}

function assertion(expression: string, line: number, passed = true, message?: string): Assertion {
  return message === undefined ? { expression, line, passed } : { expression, line, passed, message };
}

test('the tree: requests by name or METHOD url, checks at their lines', () => {
  const tree = testTree(uri, answer);
  assert.deepEqual(
    tree.map(({ id, label, description, index, line, endLine, disabled }) => ({ id, label, description, index, line, endLine, disabled })),
    [
      { id: `${uri}#@login`, label: 'login', description: 'POST {{host}}/login', index: 0, line: 5, endLine: 16, disabled: false },
      { id: `${uri}#GET {{host}}/me`, label: 'GET {{host}}/me', description: 'disabled', index: 1, line: 19, endLine: 20, disabled: true },
      // The same request line twice: the second id is told apart.
      { id: `${uri}#GET {{host}}/me~2`, label: 'GET {{host}}/me', description: '', index: 2, line: 23, endLine: 23, disabled: false },
    ],
  );
  assert.deepEqual(tree[0].checks, [
    { id: `${uri}#@login/assert:status == 200`, kind: 'assert', label: 'status == 200', line: 3 },
    {
      id: `${uri}#@login/assert:header content-type contains json`,
      kind: 'assert',
      label: 'header content-type contains json',
      line: 4,
    },
    { id: `${uri}#@login/test:logged in`, kind: 'test', label: 'logged in', line: 14 },
  ]);
});

test('ids do not move when a request is added above', () => {
  const before = testTree(uri, answer).map((node) => node.id);
  const added = {
    requests: [
      { index: 0, method: 'GET', url: '/health', line: 0, endLine: 1, disabled: false, checks: [] },
      ...answer.requests.map((request) => ({ ...request, index: request.index + 1, line: request.line + 3 })),
    ],
  };
  const after = testTree(uri, added).map((node) => node.id);
  assert.deepEqual(after.slice(1), before);
});

test('a malformed answer gives what is well formed in it', () => {
  assert.deepEqual(testTree(uri, null), []);
  assert.deepEqual(testTree(uri, { requests: 'no' }), []);
  const tree = testTree(uri, {
    requests: [
      { index: 0, method: 'GET' },
      { index: 1, method: 'GET', url: '/a', line: 2, checks: [{ kind: 'other', label: 'x', line: 1 }, { kind: 'test', label: 't', line: 3 }] },
    ],
  });
  assert.equal(tree.length, 1);
  assert.equal(tree[0].endLine, 2, 'no endLine: the request line');
  assert.deepEqual(tree[0].checks.map((check) => check.label), ['t']);
});

test('results land on the checks of their lines; the request passes with its duration', () => {
  const sent = outcome({
    timing: { ttfbMs: 10, totalMs: 42.5 },
    assertions: [
      assertion('status == 200', 3),
      assertion('header content-type contains json', 4),
      assertion('logged in', 14),
    ],
  });
  const result = requestResult(login(), sent);
  assert.equal(result.verdict, 'passed');
  assert.equal(result.durationMs, 42.5);
  assert.deepEqual(result.notes, []);
  assert.deepEqual(
    result.checks.map((check) => [check.id, check.passed]),
    [
      [`${uri}#@login/assert:status == 200`, true],
      [`${uri}#@login/assert:header content-type contains json`, true],
      [`${uri}#@login/test:logged in`, true],
    ],
  );
  assert.deepEqual(result.extra, []);
  assert.deepEqual(result.missing, []);
});

test('a failed assertion fails its check with expected and actual, and the request with a summary', () => {
  const sent = outcome({
    assertions: [
      assertion('status == 200', 3, false, 'expected status == 200, got 201'),
      assertion('header content-type contains json', 4),
      assertion('logged in', 14, false, 'AssertionError: no token'),
    ],
  });
  const result = requestResult(login(), sent);
  assert.equal(result.verdict, 'failed');
  assert.deepEqual(result.checks[0], {
    id: `${uri}#@login/assert:status == 200`,
    label: 'status == 200',
    passed: false,
    line: 3,
    message: 'expected status == 200, got 201',
    expected: '200',
    actual: '201',
  });
  assert.deepEqual(result.checks[2], {
    id: `${uri}#@login/test:logged in`,
    label: 'logged in',
    passed: false,
    line: 14,
    message: 'AssertionError: no token',
  });
  assert.deepEqual(result.notes, [{ text: '2 of 3 checks failed: status == 200; logged in', line: 5 }]);
});

test("the outcome's expected and actual win over what the message seems to say", () => {
  const failed = assertion('body contains "x, got y"', 3, false, 'expected body contains "x, got y", got {}');
  failed.expected = 'body contains "x, got y"';
  failed.actual = '{}';
  const result = requestResult(login(), outcome({ assertions: [failed] }));
  assert.equal(result.checks[0].expected, 'body contains "x, got y"');
  assert.equal(result.checks[0].actual, '{}');
});

test('results are matched by line, then by label; what matches nothing is extra', () => {
  const sent = outcome({
    assertions: [
      // On the line of `status == 200`, written differently (variables rendered).
      assertion('status == {{code}}', 3),
      // A test that moved: found by its name.
      assertion('logged in', 15),
      // A script file's tests, at the line of its `> ./handler.js`, and a handler that threw.
      assertion('has id', 12),
      assertion('has id', 12, false, 'AssertionError: no id'),
      assertion('response handler', 12, false, 'TypeError: x is undefined (handler.js:3)'),
    ],
  });
  const result = requestResult(login(), sent);
  assert.deepEqual(
    result.checks.map((check) => check.id),
    [`${uri}#@login/assert:status == 200`, `${uri}#@login/test:logged in`],
  );
  assert.deepEqual(
    result.extra.map((check) => [check.id, check.label, check.line, check.passed]),
    [
      [`${uri}#@login/result:has id`, 'has id', 12, true],
      [`${uri}#@login/result:has id~2`, 'has id', 12, false],
      [`${uri}#@login/result:response handler`, 'response handler', 12, false],
    ],
  );
  assert.deepEqual(result.missing, [`${uri}#@login/assert:header content-type contains json`]);
  assert.equal(result.verdict, 'failed');
  assert.match(result.notes[0].text, /^2 of 5 checks failed: has id; response handler$/);
});

test('two results on one line: the exact label wins, the other falls back', () => {
  const node: RequestNode = {
    ...login(),
    checks: [
      { id: 'a', kind: 'test', label: 'first', line: 9 },
      { id: 'b', kind: 'test', label: 'second', line: 9 },
    ],
  };
  const result = requestResult(node, outcome({ assertions: [assertion('second', 9), assertion('first', 9, false, 'no')] }));
  assert.deepEqual(
    result.checks.map((check) => [check.id, check.passed]),
    [
      ['b', true],
      ['a', false],
    ],
  );
});

test('a request that could not be sent errors, with its refusal at the lines', () => {
  const refused = failure('invalid', 'the request has errors');
  refused.error!.diagnostics = [{ code: 'malformed-header', message: 'a header needs a colon', hint: 'write `Name: value`', line: 7 }];
  const result = requestResult(login(), refused);
  assert.equal(result.verdict, 'errored');
  assert.deepEqual(result.notes, [
    { text: 'invalid: the request has errors', line: 5 },
    { text: 'malformed-header: a header needs a colon (hint: write `Name: value`)', line: 7 },
  ]);
  assert.equal(result.missing.length, 3);
  assert.equal(requestResult(login(), failure('connect', 'connection refused')).verdict, 'errored');
});

test('a request cancelled, disabled or not confirmed is skipped', () => {
  for (const kind of ['cancelled', 'disabled', 'not-confirmed']) {
    assert.equal(requestResult(login(), failure(kind, 'not sent')).verdict, 'skipped', kind);
  }
});

test('expected and actual from the engine messages', () => {
  assert.deepEqual(expectedAndActual('expected status == 201, got 200'), { expected: '201', actual: '200' });
  assert.deepEqual(expectedAndActual('expected `$.id` == 8, got 7'), { expected: '8', actual: '7' });
  assert.deepEqual(expectedAndActual('expected status < 300, got 404'), { expected: 'status < 300', actual: '404' });
  assert.deepEqual(expectedAndActual('expected a `X-Id` header, got no such header'), {
    expected: 'a `X-Id` header',
    actual: 'no such header',
  });
  // The actual value is the response's: it may say anything.
  assert.deepEqual(expectedAndActual('expected body contains "ok", got {"a": "x, got y"}'), {
    expected: 'body contains "ok"',
    actual: '{"a": "x, got y"}',
  });
  assert.equal(expectedAndActual('AssertionError: status 200'), undefined);
});

test('the line of output of a request: what was sent, the status, the time, the checks', () => {
  const sent = outcome({
    timing: { ttfbMs: 3, totalMs: 12.6 },
    assertions: [assertion('status == 200', 3), assertion('logged in', 14, false, 'no')],
  });
  assert.equal(outputLine(login(), sent), 'login: POST {{host}}/login → 200 OK in 13 ms · 1/2 checks passed');
  assert.equal(outputLine(login(), outcome()), 'login: POST {{host}}/login → 200 OK in 13 ms');
  assert.equal(
    outputLine(login(), failure('connect', 'connection refused')),
    'login: GET {{host}}/me → connect: connection refused',
  );
});

test('a run sends files in the order picked, each file by index, each request once', () => {
  const a = 'file:///a.http';
  const b = 'file:///b.http';
  const order = runOrder([
    { uri: b, index: 2 },
    { uri: a, index: 1 },
    { uri: b, index: 0 },
    { uri: b, index: 2 },
    { uri: a, index: 0 },
  ]);
  assert.deepEqual(order, [
    { uri: b, index: 0 },
    { uri: b, index: 2 },
    { uri: a, index: 0 },
    { uri: a, index: 1 },
  ]);
});

test('discovery: which files, which folders left out', () => {
  assert.ok(isTestFile('/w/api.http'));
  assert.ok(isTestFile('/w/API.REST'));
  assert.ok(!isTestFile('/w/api.http.bak'));
  assert.ok(inExcludedFolder('/w/node_modules/pkg/api.http'));
  assert.ok(inExcludedFolder('/w/.git/x.http'));
  assert.ok(!inExcludedFolder('/w/node_modules_docs/api.http'));
  assert.equal(
    excludeGlob({ '**/.git': true, '**/tmp': true, '**/off': false, '**/*.{js,map}': true, '**/when': { when: '$(basename).ts' } }),
    '{**/node_modules/**,**/.git/**,**/bower_components/**,**/.git,**/tmp}',
  );
  assert.equal(excludeGlob(undefined), '{**/node_modules/**,**/.git/**,**/bower_components/**}');
});
