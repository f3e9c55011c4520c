import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  diffOrder,
  diffTitle,
  entryTime,
  isUnknownCommand,
  previousPair,
  requestIndexAt,
  type StoredEntry,
  storedLabel,
} from '../src/storedhistory';

function entry(overrides: Partial<StoredEntry> = {}): StoredEntry {
  return {
    id: '0001',
    at: '2026-11-29T08:00:00.123Z',
    source: 'editor',
    file: '/work/api/api.http',
    request: { index: 0, name: 'login', method: 'POST', url: '{{host}}/login', line: 5 },
    status: 200,
    statusText: 'OK',
    durationMs: 12.4,
    bodyBytes: 2048,
    truncated: false,
    ...overrides,
  };
}

test('a quick pick line: status and request, file and line, time, duration and size', () => {
  const line = storedLabel(entry());
  assert.equal(line.label, '200 OK · login — POST {{host}}/login');
  assert.equal(line.description, 'api.http:6');
  assert.equal(line.detail, `${entryTime('2026-11-29T08:00:00.123Z')} · 12 ms · 2.0 KiB`);
  const failed = storedLabel(
    entry({ status: undefined, statusText: undefined, error: { kind: 'timeout', message: 'x' }, source: 'cli', truncated: true }),
  );
  assert.equal(failed.label, 'not sent: timeout · login — POST {{host}}/login');
  assert.match(failed.detail, /2\.0 KiB \(cut\) · from volley run$/);
  const unnamed = storedLabel(entry({ request: { index: 1, method: 'GET', url: '/me', line: 9 }, file: 'C:\\w\\a.http' }));
  assert.equal(unnamed.label, '200 OK · GET /me');
  assert.equal(unnamed.description, 'a.http:10');
});

test('entry times are local, to the second', () => {
  const at = '2026-11-29T08:00:05.999Z';
  const date = new Date(at);
  assert.match(entryTime(at), /^2026-11-\d\d \d\d:\d\d:05$/);
  assert.equal(Number(entryTime(at).slice(11, 13)), date.getHours());
  assert.equal(entryTime('not a time'), 'not a time');
});

test('compare with previous: the previous left, the latest right; nothing with one entry', () => {
  const latest = entry({ id: '0002', at: '2026-11-29T08:05:00.000Z' });
  const previous = entry({ id: '0001' });
  assert.deepEqual(previousPair({ entries: [latest, previous] }), [previous, latest]);
  assert.equal(previousPair({ entries: [latest] }), undefined);
  assert.equal(previousPair(null), undefined);
});

test('two picked entries diff the older left, whatever order they were picked in', () => {
  const older = entry({ id: '0001' });
  const newer = entry({ id: '0002', at: '2026-11-29T09:00:00.000Z' });
  assert.deepEqual(diffOrder(newer, older), [older, newer]);
  assert.deepEqual(diffOrder(older, newer), [older, newer]);
  const same = entry({ id: '0003', at: older.at });
  assert.deepEqual(diffOrder(same, older), [older, same]);
});

test('diff titles name the request once, or both', () => {
  const older = entry();
  const newer = entry({ id: '0002', at: '2026-11-29T08:05:12.000Z' });
  const time = (at: string) => entryTime(at).slice(11);
  assert.equal(diffTitle(older, newer), `login: ${time(older.at)} ↔ ${time(newer.at)}`);
  const other = entry({ id: '0003', request: { index: 1, method: 'GET', url: '/me', line: 9 } });
  assert.equal(diffTitle(older, other), `login ${time(older.at)} ↔ GET /me ${time(other.at)}`);
});

test("the cursor's request by line, from volley.tests's blocks", () => {
  const requests = [
    { index: 0, line: 2, endLine: 5 },
    { index: 1, line: 8, endLine: 12 },
  ];
  assert.equal(requestIndexAt(requests, 0), 0);
  assert.equal(requestIndexAt(requests, 5), 0);
  assert.equal(requestIndexAt(requests, 6), 1);
  assert.equal(requestIndexAt(requests, 13), undefined);
});

test('an older volley without the history is recognised by its error', () => {
  assert.equal(isUnknownCommand({ code: -32602, message: 'unknown command `volley.history`' }), true);
  assert.equal(isUnknownCommand({ message: 'the store is locked' }), false);
  assert.equal(isUnknownCommand('unknown command'), false);
});
