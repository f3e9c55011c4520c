// The session's history and the pure helpers of the panel's actions.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bodyBytes, History, historyLabel, sentText, suggestedBodyName } from '../src/history';
import type { SentInfo } from '../src/outcome';
import { failure, outcome } from './fixtures';

const origin = { command: 'send' as const, uri: 'file:///w/api.http', index: 0 };

test('entries are numbered in order, newest first, and found by id', () => {
  const history = new History();
  const first = history.add(outcome(), origin, 'api.http', 1000);
  const second = history.add(failure('timeout', 'no answer'), { ...origin, index: 1 }, 'api.http', 2000);
  assert.ok(second.id > first.id);
  assert.deepEqual(
    history.entries().map((entry) => entry.id),
    [second.id, first.id],
  );
  assert.equal(history.get(first.id)?.outcome.request.name, 'login');
  assert.equal(history.get(999), undefined);
});

test('the history keeps at most its capacity, dropping the oldest', () => {
  const history = new History(2);
  const ids = [1, 2, 3].map((n) => history.add(outcome(), origin, 'api.http', n).id);
  assert.equal(history.size, 2);
  assert.equal(history.get(ids[0]), undefined);
  assert.ok(history.get(ids[2]));
});

test('the bodies of the newest entries are kept up to the budget, older ones released', () => {
  const history = new History(10, 25);
  const ids = [1, 2, 3].map((n) => history.add(outcome({ body: 'x'.repeat(10) }), origin, 'api.http', n).id);
  assert.equal(history.get(ids[2])?.outcome.response?.body.length, 10);
  assert.equal(history.get(ids[1])?.outcome.response?.body.length, 10);
  const released = history.get(ids[0])?.outcome.response;
  assert.equal(released?.body, '');
  assert.equal(released?.truncated, true);
  // The rest of the entry stays.
  assert.equal(history.get(ids[0])?.outcome.request.name, 'login');
  assert.equal(history.size, 3);
});

test('a history line says what was sent and what came of it', () => {
  const history = new History();
  const sent = historyLabel(history.add(outcome({ status: 201, statusText: 'Created' }), origin, 'api.http', 0));
  assert.equal(sent.label, '201 Created · login — POST {{host}}/login');
  assert.equal(sent.description, 'api.http:6');
  assert.match(sent.detail, /^00:00:00 UTC · 13 ms$/);
  const refused = historyLabel(history.add(failure('invalid', 'refused'), origin, 'api.http', 0));
  assert.equal(refused.label, 'not sent: invalid · GET {{host}}/me');
});

test("a gRPC call's history line has its status, kind and message count, not the exchange's 200", () => {
  const history = new History();
  const grpc = { code: 'UNAVAILABLE', number: 14, message: 'connection\n reset', kind: 'bidirectional' as const, messages: 2 };
  const label = historyLabel(history.add(outcome({ grpc }), origin, 'api.http', 0)).label;
  assert.equal(label, 'gRPC UNAVAILABLE (14): connection reset · bidirectional · 2 messages · login — POST {{host}}/login');
  const ok = { code: 'OK', number: 0, message: '', kind: 'client-streaming' as const, messages: 1 };
  const okLabel = historyLabel(history.add(outcome({ grpc: ok }), origin, 'api.http', 0)).label;
  assert.match(okLabel, /^gRPC OK \(0\) · client-streaming · 1 message · login/);
});

test('the body to save is the bytes received: base64 decoded, text as UTF-8, truncation said', () => {
  const binary = bodyBytes(outcome({ bodyEncoding: 'base64', body: 'iVBORw0KGgo=' }));
  assert.deepEqual([...binary!.bytes], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  assert.equal(binary!.truncated, false);
  const text = bodyBytes(outcome({ body: 'é', truncated: true }));
  assert.deepEqual([...text!.bytes], [0xc3, 0xa9]);
  assert.equal(text!.truncated, true);
  assert.equal(bodyBytes(failure('timeout', 'x')), undefined);
});

test('the suggested file name comes from the URL, else from the content type', () => {
  assert.equal(suggestedBodyName(outcome({ url: 'https://e.com/files/report.pdf?x=1' })), 'report.pdf');
  assert.equal(suggestedBodyName(outcome({ url: 'https://e.com/login' })), 'login.json');
  assert.equal(suggestedBodyName(outcome({ url: 'https://e.com/', contentType: 'text/html' })), 'response.html');
  assert.equal(
    suggestedBodyName(outcome({ url: 'https://e.com/', contentType: null, bodyEncoding: 'base64' })),
    'response.bin',
  );
});

test('the request as sent reads as an HTTP message', () => {
  const sent: SentInfo = {
    method: 'POST',
    url: 'https://e.com/login',
    httpVersion: 'HTTP/1.1',
    headers: [
      ['content-type', 'application/json'],
      ['authorization', '[redacted]'],
    ],
    body: '{"a":1}',
    bodyEncoding: 'text',
    truncated: false,
  };
  assert.equal(
    sentText(sent),
    'POST https://e.com/login HTTP/1.1\ncontent-type: application/json\nauthorization: [redacted]\n\n{"a":1}\n',
  );
  assert.equal(
    sentText({ ...sent, httpVersion: undefined, headers: [], body: 'AAEC', bodyEncoding: 'base64', truncated: true }),
    'POST https://e.com/login\n\n<binary body, 3 bytes>\n\n# The body was truncated: only its first part is shown.\n',
  );
  assert.equal(
    sentText({ ...sent, httpVersion: undefined, headers: [], body: undefined, partial: true }),
    'POST https://e.com/login\n\n# Sent through an execution server: its answer gives the method and URL, not the headers and body.\n',
  );
});
