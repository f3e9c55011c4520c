import assert from 'node:assert/strict';
import { test } from 'node:test';
import { serverOption } from '../src/remote';

test('the server settings as the server option', () => {
  assert.deepEqual(serverOption('http://127.0.0.1:4097', 't0ken'), { url: 'http://127.0.0.1:4097', token: 't0ken' });
  assert.deepEqual(serverOption(' http://h:1 ', ''), { url: 'http://h:1' });
  assert.deepEqual(serverOption('http://h:1', undefined), { url: 'http://h:1' });
  assert.equal(serverOption('', 't0ken'), null);
  assert.equal(serverOption(undefined, undefined), null);
  assert.equal(serverOption(3, null), null);
});
