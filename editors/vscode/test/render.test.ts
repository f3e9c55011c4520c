import assert from 'node:assert/strict';
import { test } from 'node:test';
import { base64Length, failedOutcome, formatBytes, formatMs, pageTitle, renderOutcome, renderPage, renderSendAll } from '../src/render';
import { failure, outcome } from './fixtures';

test('status line, url, headers and timing', () => {
  const html = renderOutcome(
    outcome({ headers: [['content-type', 'application/json'], ['set-cookie', 'a=1'], ['set-cookie', 'b=2']] }),
  );
  assert.match(html, /<span class="method">POST<\/span> \{\{host\}\}\/login <span class="name">login<\/span> <span class="muted">line 6<\/span>/);
  assert.match(html, /<span class="pass">HTTP\/1.1 200 OK<\/span> · 12.9 ms · 16 B/);
  assert.match(html, /https:\/\/api.example.com\/login/);
  assert.match(html, /Headers \(3\)/);
  assert.equal(html.match(/<th>set-cookie<\/th>/g)?.length, 2);
  assert.match(html, /Time to first byte 12.1 ms, total 12.9 ms/);
});

test('a JSON body is pretty-printed and highlighted', () => {
  const html = renderOutcome(outcome({ body: '{"token":"abc","n":[1,2]}' }));
  assert.match(html, /<pre class="body"><span class="json-punctuation">\{<\/span>\n  <span class="json-key">&quot;token&quot;<\/span>/);
});

test('a JSON body without a JSON content type is still recognised', () => {
  const html = renderOutcome(outcome({ contentType: null, body: '[1]' }));
  assert.match(html, /json-number/);
});

test('a text body is escaped, never interpreted', () => {
  const html = renderOutcome(
    outcome({ contentType: 'text/html', body: '<html><script>alert("x")</script></html>' }),
  );
  assert.match(html, /&lt;html&gt;&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt;/);
  assert.doesNotMatch(html, /<script>/);
  assert.doesNotMatch(html, /json-/);
});

test('headers and URLs are escaped', () => {
  const html = renderOutcome(outcome({ headers: [['x-evil', '<b onclick="x">']], url: 'https://e.com/?a=<b>' }));
  assert.match(html, /&lt;b onclick=&quot;x&quot;&gt;/);
  assert.match(html, /\?a=&lt;b&gt;/);
});

test('a base64 body shows as binary with its size', () => {
  const html = renderOutcome(outcome({ bodyEncoding: 'base64', body: 'iVBORw0KGgo=', contentType: 'image/png' }));
  assert.match(html, /binary, 8 bytes/);
  assert.doesNotMatch(html, /iVBORw0KGgo/);
  assert.equal(base64Length(''), 0);
  assert.equal(base64Length('YQ=='), 1);
  assert.equal(base64Length('YWI='), 2);
  assert.equal(base64Length('YWJj'), 3);
});

test('an empty and a truncated body say so', () => {
  assert.match(renderOutcome(outcome({ body: '' })), /<p class="muted">empty<\/p>/);
  assert.match(renderOutcome(outcome({ body: 'x', truncated: true })), /truncated/);
});

test('an error outcome shows its kind and message', () => {
  const html = renderOutcome(failure('connection_refused', 'connection refused: 127.0.0.1:9 <nobody>'));
  assert.match(html, /Not sent<\/span> <code>connection_refused<\/code>: connection refused: 127.0.0.1:9 &lt;nobody&gt;/);
  assert.match(html, /GET<\/span> \{\{host\}\}\/me <span class="muted">line 10<\/span>/);
});

test('assertions show pass and fail with their messages', () => {
  const html = renderOutcome(
    outcome({
      assertions: [
        { expression: 'status == 200', passed: true, line: 3 },
        { expression: 'body.$.id == 1', passed: false, message: 'expected 1, got <none>', line: 4 },
      ],
    }),
  );
  assert.match(html, /Assertions: 1\/2 passed/);
  assert.match(html, /<span class="pass">✓<\/span> <code>status == 200<\/code> <span class="muted">line 4<\/span>/);
  assert.match(html, /<span class="fail">✗<\/span> <code>body.\$.id == 1<\/code> — expected 1, got &lt;none&gt; <span class="muted">line 5<\/span>/);
});

test('server-sent events are listed with the reason listening stopped', () => {
  const html = renderOutcome(
    outcome({
      contentType: 'text/event-stream',
      body: '',
      stream: {
        kind: 'sse',
        stopped: 'window',
        items: [
          { event: 'message', data: '{"n":1}', id: '1', atMs: 3.25 },
          { event: 'tick', data: '<b>', atMs: 1500 },
        ],
      },
    }),
  );
  assert.match(html, /<h3>Server-sent events<\/h3>/);
  assert.match(html, /2 events received. Listening stopped when the listening window ran out. Later events are not shown./);
  assert.match(html, /<td class="muted">3.3 ms<\/td><td>message<\/td><td>1<\/td><td><pre><span class="json-punctuation">/);
  assert.match(html, /<td class="muted">1.50 s<\/td><td>tick<\/td><td><\/td><td><pre>&lt;b&gt;<\/pre>/);
});

test('WebSocket messages, an empty stream and a stream error', () => {
  const html = renderOutcome(
    outcome({
      status: 101,
      statusText: 'Switching Protocols',
      body: '',
      stream: { kind: 'websocket', stopped: 'error', error: 'reset <by peer>', items: [] },
    }),
  );
  assert.match(html, /<h3>WebSocket messages<\/h3>/);
  assert.match(html, /0 messages received. Listening stopped on an error: reset &lt;by peer&gt;. Later messages are not shown/);
  assert.doesNotMatch(html, /<table class="stream">/);
});

test('a stream the server ended has nothing later to mention', () => {
  const html = renderOutcome(
    outcome({ body: '', stream: { kind: 'sse', stopped: 'ended', items: [{ event: 'message', data: 'x', atMs: 1 }] } }),
  );
  assert.match(html, /1 event received. The server ended the stream.<\/p>/);
});

test('status classes', () => {
  assert.match(renderOutcome(outcome({ status: 302, statusText: 'Found' })), /<span class="redirect">HTTP\/1.1 302 Found/);
  assert.match(renderOutcome(outcome({ status: 500, statusText: 'Internal Server Error' })), /<span class="fail">HTTP\/1.1 500/);
});

test('send all: a summary and one section per request', () => {
  const results = [
    outcome(),
    failure('undefined-variable', 'undefined variable `host`'),
    outcome({ assertions: [{ expression: 'status == 201', passed: false, message: 'got 200', line: 12 }] }, 'create'),
  ];
  const html = renderSendAll('api.http', { results, cancelled: true });
  assert.match(html, /<h1>api.http<\/h1>/);
  assert.match(html, /3 requests sent · <span class="fail">2 failed<\/span> · <span class="fail">cancelled/);
  assert.equal(html.match(/<section class="outcome">/g)?.length, 3);
  assert.ok(html.indexOf('name">login') < html.indexOf('undefined-variable'));
  assert.ok(html.indexOf('undefined-variable') < html.indexOf('name">create'));
  assert.equal(failedOutcome(results[0]), false);
  assert.equal(failedOutcome(results[1]), true);
  assert.equal(failedOutcome(results[2]), true);
});

test('send all with one request that passed', () => {
  const html = renderSendAll('a.http', { results: [outcome()], cancelled: false });
  assert.match(html, /<p class="summary">1 request sent<\/p>/);
});

test('the page has a strict CSP, a nonce on its style and no script', () => {
  const page = renderPage({ kind: 'send', outcome: outcome() }, 'abc123');
  assert.match(page, /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'nonce-abc123';">/);
  assert.match(page, /<style nonce="abc123">/);
  assert.doesNotMatch(page, /<script/);
  assert.match(page, /<title>Response: login<\/title>/);
});

test('page titles', () => {
  assert.equal(pageTitle({ kind: 'send', outcome: outcome({}, null) }), 'Response: POST {{host}}/login');
  assert.equal(pageTitle({ kind: 'sendAll', file: 'a.http', result: { results: [], cancelled: false } }), 'Responses: a.http');
  const page = renderPage({ kind: 'sendAll', file: '<x>.http', result: { results: [], cancelled: false } }, 'n');
  assert.match(page, /<h1>&lt;x&gt;.http<\/h1>/);
  assert.match(page, /0 requests sent/);
});

test('sizes and durations', () => {
  assert.equal(formatBytes(0), '0 B');
  assert.equal(formatBytes(2048), '2.0 KiB');
  assert.equal(formatBytes(5 * 1024 * 1024), '5.0 MiB');
  assert.equal(formatMs(0.42), '0.4 ms');
  assert.equal(formatMs(123.4), '123 ms');
  assert.equal(formatMs(2500), '2.50 s');
});

test("the request's description is in the title and the heading, escaped", () => {
  const described = outcome();
  described.request.description = 'Logs <in>';
  assert.equal(pageTitle({ kind: 'send', outcome: described }), 'Response: login — Logs <in>');
  assert.match(renderOutcome(described), /<span class="description">— Logs &lt;in&gt;<\/span>/);
  assert.equal(pageTitle({ kind: 'send', outcome: outcome() }), 'Response: login');
});

test("an outcome's actions are command links with its history id, only those that apply", () => {
  const sent = outcome();
  sent.sent = { method: 'POST', url: 'https://e.com/login', headers: [], bodyEncoding: 'text', truncated: false };
  const html = renderOutcome(sent, 7);
  const argument = encodeURIComponent(JSON.stringify([{ entry: 7 }]));
  for (const command of ['volley.rerun', 'volley.saveBody', 'volley.copyAsCurl', 'volley.showSent', 'volley.showHistory']) {
    assert.ok(html.includes(`href="command:${command}?${argument}"`), command);
  }
  const refused = renderOutcome(failure('invalid', 'refused'), 8);
  assert.doesNotMatch(refused, /volley\.saveBody|volley\.showSent/);
  assert.match(refused, /volley\.rerun/);
  assert.doesNotMatch(renderOutcome(sent), /command:/, 'no links without a history id');
  const all = renderSendAll('api.http', { results: [sent, sent], cancelled: false }, [3, 4]);
  assert.ok(all.includes(encodeURIComponent(JSON.stringify([{ entry: 4 }]))));
});

test('refusals say why and what to do', () => {
  const invalid = failure('invalid', 'the request has 1 error');
  invalid.error!.diagnostics = [{ code: 'malformed-header', message: 'invalid header name `X <Y>`', hint: 'no spaces', line: 6 }];
  const html = renderOutcome(invalid);
  assert.match(html, /Refused<\/span>: the request has errors/);
  assert.match(html, /line 7<\/span> <code>malformed-header<\/code>: invalid header name `X &lt;Y&gt;`/);
  assert.match(html, /hint: no spaces/);
  assert.doesNotMatch(html, /the request has 1 error/, 'the list, not the summary');
  assert.match(renderOutcome(failure('invalid', 'the request has 2 errors')), /not sent\. the request has 2 errors/);
  assert.match(renderOutcome(failure('disabled', 'disabled')), /Disabled<\/span>.*# @disabled/);
  assert.match(renderOutcome(failure('not-confirmed', 'not confirmed')), /Not confirmed<\/span>.*# @note/);
});

test("a script's tests are assertions, a failed handler one more, its log lines a section of text", () => {
  const scripted = outcome({
    assertions: [
      { expression: 'status == 200', passed: true, line: 3 },
      { expression: 'ok', passed: true, line: 11 },
      { expression: 'created', passed: false, message: 'AssertionError: status 200', line: 12 },
      { expression: 'response handler', passed: false, message: "TypeError: cannot read property 'field' of undefined", line: 13 },
    ],
  });
  scripted.logs = ['got 200', '<b>bold</b> & "quoted"', 'two\nlines'];
  const html = renderOutcome(scripted);
  assert.match(html, /Assertions: 2\/4 passed/);
  assert.match(html, /<span class="pass">✓<\/span> <code>ok<\/code> <span class="muted">line 12<\/span>/);
  assert.match(html, /<span class="fail">✗<\/span> <code>created<\/code> — AssertionError: status 200 <span class="muted">line 13<\/span>/);
  assert.match(
    html,
    /<span class="fail">✗<\/span> <code>response handler<\/code> — TypeError: cannot read property &#39;field&#39; of undefined <span class="muted">line 14<\/span>/,
  );
  assert.match(html, /<h3>Log<\/h3>\n<pre class="log">got 200\n&lt;b&gt;bold&lt;\/b&gt; &amp; &quot;quoted&quot;\ntwo\nlines<\/pre>/);
  assert.doesNotMatch(html, /<b>bold/);
  // Under the response's results, before its headers and body.
  assert.ok(html.indexOf('Assertions:') < html.indexOf('<h3>Log</h3>'));
  assert.ok(html.indexOf('<h3>Log</h3>') < html.indexOf('Headers ('));
  assert.equal(failedOutcome(scripted), true);
});

test('no log section without log lines', () => {
  assert.doesNotMatch(renderOutcome(outcome()), /<h3>Log<\/h3>/);
  const empty = outcome();
  empty.logs = [];
  assert.doesNotMatch(renderOutcome(empty), /<h3>Log<\/h3>/);
});

test('log lines of a request without a response follow its error', () => {
  const failed = failure('connection_refused', 'connection refused');
  failed.logs = ['before <sending>'];
  const html = renderOutcome(failed);
  assert.ok(html.indexOf('connection refused') < html.indexOf('<h3>Log</h3>'));
  assert.match(html, /<pre class="log">before &lt;sending&gt;<\/pre>/);
});

test('send all: each outcome shows its own log lines', () => {
  const first = outcome();
  first.logs = ['first'];
  const second = outcome({}, 'second');
  const html = renderSendAll('a.http', { results: [first, second], cancelled: false });
  assert.equal(html.match(/<h3>Log<\/h3>/g)?.length, 1);
  assert.ok(html.indexOf('first') < html.indexOf('name">second'));
});

test('a filtered body shows above the body, with the filter; an error says what the filter made', () => {
  const base = outcome({ body: '{"items":[{"id":1},{"id":2}]}' });
  const response = base.response!;
  const html = renderOutcome({ ...base, response: { ...response, filtered: { expression: '[.items[].id]', output: '[\n  1,\n  2\n]\n' } } });
  assert.match(html, /<h3>Filtered by <code>\[\.items\[\]\.id\]<\/code><\/h3>\n<pre class="body filtered"><span class="json-punctuation">\[<\/span>/);
  assert.ok(html.indexOf('Filtered by') < html.indexOf('<h3>Body</h3>'), 'above the body');
  const failed = renderOutcome({
    ...base,
    response: { ...response, filtered: { expression: '.a[', error: 'the filter does not parse: <expected>' } },
  });
  assert.match(failed, /The filter made nothing<\/span>: the filter does not parse: &lt;expected&gt;/);
  assert.match(renderOutcome(base, 3), /command:volley\.filterBody\?/);
});

test('the requests sent first are listed with their status, each in full under a summary', () => {
  const login = outcome({ status: 200 }, 'login');
  const me = { ...outcome({ body: '{"me":1}' }, 'me'), ranFirst: [login] };
  const html = renderOutcome(me, 1);
  assert.match(html, /Sent first, because this request reads their responses:/);
  assert.match(html, /<details class="ran-first"><summary>login · <span class="pass">200 OK<\/span><\/summary>/);
  assert.equal(html.match(/<section class="outcome">/g)?.length, 2, 'the first one in full');
  assert.doesNotMatch(renderOutcome(outcome()), /Sent first/);
});

test("a gRPC call shows its status, kind and message count, never the HTTP exchange's 200", () => {
  const ok = outcome({
    httpVersion: 'HTTP/2.0',
    url: 'http://127.0.0.1:50051/demo.Users/ListUsers',
    headers: [['content-type', 'application/grpc'], ['grpc-status', '0']],
    body: '[{"id":1},{"id":2},{"id":3}]',
    grpc: { code: 'OK', number: 0, message: '', kind: 'server-streaming', messages: 3 },
  });
  const html = renderOutcome(ok);
  assert.match(html, /<p class="status"><span class="pass">gRPC OK \(0\)<\/span> · server-streaming · 3 messages · 12.9 ms · /);
  assert.doesNotMatch(html, /200 OK|HTTP\/2.0/);
  assert.match(html, /<span class="json-key">&quot;id&quot;<\/span>/, 'the messages as JSON');
  assert.equal(failedOutcome(ok), false);

  const missing = outcome({
    body: '{}',
    grpc: { code: 'NOT_FOUND', number: 5, message: 'no user <7>', kind: 'unary', messages: 0 },
  });
  const failed = renderOutcome(missing);
  assert.match(failed, /<span class="fail">gRPC NOT_FOUND \(5\): no user &lt;7&gt;<\/span> · unary · 0 messages · /);
  assert.equal(failedOutcome(missing), true, 'a status other than OK fails, as a 4xx or 5xx does');
  const all = renderSendAll('grpc.http', { results: [ok, missing], cancelled: false });
  assert.match(all, /2 requests sent · <span class="fail">1 failed<\/span>/);

  // grpc-js says `grpc-message: OK` with every OK: not said twice.
  const said = outcome({ grpc: { code: 'OK', number: 0, message: 'OK', kind: 'unary', messages: 1 } });
  assert.match(renderOutcome(said), /<span class="pass">gRPC OK \(0\)<\/span> · unary · 1 message · /);
  const first = renderOutcome({ ...outcome({}, 'me'), ranFirst: [missing] });
  assert.match(first, /<summary>login · <span class="fail">gRPC NOT_FOUND \(5\): no user &lt;7&gt;<\/span><\/summary>/);
});
