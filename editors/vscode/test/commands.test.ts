import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  Commands,
  executeCommandParams,
  failureMessage,
  fileName,
  guessImportFormat,
  REQUEST_CANCELLED,
  rewriteLensCommand,
  rewriteLenses,
  sendAllArguments,
  sendArguments,
  ServerCommands,
} from '../src/commands';

const uri = 'file:///work/api.http';

test('a lens argument is sent as it is', () => {
  assert.deepEqual(sendArguments({ uri, index: 3 }, { uri, line: 40 }), { uri, index: 3 });
  assert.deepEqual(sendArguments({ uri, index: 0 }, undefined), { uri, index: 0 });
  assert.deepEqual(sendArguments({ uri, name: 'login' }, undefined), { uri, name: 'login' });
  assert.deepEqual(sendArguments({ uri, line: 7 }, undefined), { uri, line: 7 });
});

test('from the palette, the cursor picks the request', () => {
  assert.deepEqual(sendArguments(undefined, { uri, line: 12 }), { uri, line: 12 });
  // A key binding or a menu may pass something that is not a send argument.
  assert.deepEqual(sendArguments({ scheme: 'file', path: '/x' }, { uri, line: 2 }), { uri, line: 2 });
  assert.deepEqual(sendArguments({ uri }, { uri, line: 4 }), { uri, line: 4 });
});

test('nothing to send without a lens argument or an .http cursor', () => {
  assert.equal(sendArguments(undefined, undefined), undefined);
  assert.equal(sendArguments({ uri }, { uri: 'file:///other.http', line: 1 }), undefined);
});

test('send all takes the lens uri, else the active document', () => {
  assert.deepEqual(sendAllArguments({ uri }, 'file:///other.http'), { uri });
  assert.deepEqual(sendAllArguments(undefined, uri), { uri });
  assert.equal(sendAllArguments(undefined, undefined), undefined);
});

test('server lens commands are rewritten to the extension commands, arguments kept', () => {
  const send = { title: 'Send Request', command: ServerCommands.send, arguments: [{ uri, index: 2 }] };
  assert.deepEqual(rewriteLensCommand(send), { title: 'Send Request', command: Commands.sendRequest, arguments: [{ uri, index: 2 }] });
  assert.equal(send.command, 'volley.send', 'the original is not mutated');
  const all = { title: 'Send All (3)', command: ServerCommands.sendAll, arguments: [{ uri }] };
  assert.deepEqual(rewriteLensCommand(all), { ...all, command: 'volley.sendAll' });
  const other = { title: 'Other', command: 'editor.action.showReferences' };
  assert.equal(rewriteLensCommand(other), other);
});

test('rewriting a list of lenses', () => {
  const lenses = [
    { command: { title: 'Send All (2)', command: 'volley.sendAll', arguments: [{ uri }] } },
    { command: { title: 'Send Request', command: 'volley.send', arguments: [{ uri, index: 0 }] } },
    { command: { title: 'Send Request', command: 'volley.send', arguments: [{ uri, index: 1 }] } },
    {},
  ];
  const rewritten = rewriteLenses(lenses);
  assert.deepEqual(
    rewritten?.map((lens) => lens.command?.command),
    ['volley.sendAll', 'volley.sendRequest', 'volley.sendRequest', undefined],
  );
  assert.deepEqual(rewritten?.[2].command?.arguments, [{ uri, index: 1 }]);
  assert.equal(rewriteLenses(null), null);
  assert.equal(rewriteLenses(undefined), undefined);
});

test('the extension command ids match package.json', () => {
  const manifest = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8'));
  const contributed = manifest.contributes.commands.map((command: { command: string }) => command.command).sort();
  assert.deepEqual(contributed, Object.values(Commands).sort());
});

test('the format of a file to import is guessed from its name and text', () => {
  assert.equal(guessImportFormat('/tmp/capture.har', '{}'), 'har');
  assert.equal(guessImportFormat('/tmp/x.json', '{ "log": {"entries": []}}'), 'har');
  assert.equal(guessImportFormat('/tmp/x.json', '{"_type": "export", "__export_format": 4}'), 'insomnia');
  const postman = '{"info": {"schema": "https://schema.getpostman.com/json/collection/v2.1.0/collection.json"}}';
  assert.equal(guessImportFormat('/tmp/x.json', postman), 'postman');
  assert.equal(guessImportFormat('/tmp/api.yaml', 'openapi: 3.1.0\ninfo: {}'), 'openapi');
  assert.equal(guessImportFormat('/tmp/api.json', '{\n  "openapi": "3.0.3"}'), 'openapi');
  assert.equal(guessImportFormat('/tmp/other.json', '{"a": 1}'), undefined);
});

test('executeCommand parameters', () => {
  assert.deepEqual(executeCommandParams('volley.send', { uri, index: 1 }, 'volley-1'), {
    command: 'volley.send',
    arguments: [{ uri, index: 1 }],
    workDoneToken: 'volley-1',
  });
  assert.deepEqual(executeCommandParams('volley.selectProfile', null), { command: 'volley.selectProfile', arguments: [null] });
});

test('failure messages, and silence on cancellation', () => {
  assert.equal(failureMessage({ code: REQUEST_CANCELLED, message: 'cancelled' }), undefined);
  assert.equal(failureMessage({ code: -32602, message: 'the document has no request #10' }), 'Volley: the document has no request #10');
  assert.equal(failureMessage(new Error('Client is not running')), 'Volley: Client is not running');
  assert.equal(failureMessage('boom'), 'Volley: boom');
});

test('file names of URIs', () => {
  assert.equal(fileName('file:///work/api%20tests.http'), 'api tests.http');
  assert.equal(fileName('untitled:Untitled-1'), 'untitled:Untitled-1');
  assert.equal(fileName('file:///a/b.rest?x#y'), 'b.rest');
});
