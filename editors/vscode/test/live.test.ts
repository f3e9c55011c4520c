import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LIVE_ITEM_CAP, LiveSend } from '../src/live';
import { pageTitle, renderLive, renderPage } from '../src/render';

test('updates of the send are gathered per request, others ignored', () => {
  const send = new LiveSend('volley-1-1', 'Response: listening');
  assert.equal(send.apply({ live: 'volley-1-1', requestIndex: 2, kind: 'sse', status: 200 }), true);
  assert.equal(
    send.apply({ live: 'volley-1-1', requestIndex: 2, kind: 'sse', item: { event: 'tick', data: '{"n":1}', id: '7', atMs: 4 } }),
    true,
  );
  assert.equal(send.apply({ live: 'volley-1-2', requestIndex: 2, kind: 'sse', status: 200 }), false, 'another send');
  assert.equal(send.apply({ live: 'volley-1-1', requestIndex: 'x', kind: 'sse' }), false, 'malformed');
  assert.equal(send.apply({ live: 'volley-1-1', requestIndex: 0, kind: 'sse', item: { event: 1 } }), false, 'bad item');
  assert.equal(send.apply(null), false);
  const view = send.view();
  assert.deepEqual(view, {
    kind: 'live',
    title: 'Response: listening',
    streams: [
      { requestIndex: 2, kind: 'sse', status: 200, items: [{ event: 'tick', data: '{"n":1}', id: '7', atMs: 4 }], dropped: 0 },
    ],
  });
});

test('a long stream keeps its newest items and counts the dropped ones', () => {
  const send = new LiveSend('l', 't');
  for (let n = 0; n < LIVE_ITEM_CAP + 5; n++) {
    send.apply({ live: 'l', requestIndex: 0, kind: 'websocket', item: { event: 'text', data: `m${n}`, atMs: n } });
  }
  const [stream] = send.view().streams;
  assert.equal(stream.items.length, LIVE_ITEM_CAP);
  assert.equal(stream.dropped, 5);
  assert.equal(stream.items[0].data, 'm5');
  const html = renderLive(send.view());
  assert.match(html, new RegExp(`${LIVE_ITEM_CAP + 5} messages so far \\(the first 5 are no longer shown\\)`));
});

test('the live page shows status, items as they came, and escapes data', () => {
  const send = new LiveSend('l', 'Response: listening');
  const empty = renderLive(send.view());
  assert.match(empty, /Waiting for the response/);
  send.apply({ live: 'l', requestIndex: 0, kind: 'sse', status: 200 });
  assert.match(renderLive(send.view()), /Request #1 · status 200 · 0 events so far\./);
  send.apply({ live: 'l', requestIndex: 0, kind: 'sse', item: { event: 'message', data: '<img src=x>', atMs: 1500 } });
  const html = renderPage(send.view(), 'abc');
  assert.equal(pageTitle(send.view()), 'Response: listening');
  assert.match(html, /<h2>Response: listening <span class="muted">listening…<\/span><\/h2>/);
  assert.match(html, /1 event so far\./);
  assert.match(html, /<td class="muted">1.50 s<\/td><td>message<\/td><td><\/td><td><pre>&lt;img src=x&gt;<\/pre>/);
  assert.doesNotMatch(html, /<img/);
});

test('a gRPC call shows its messages as they come', () => {
  const send = new LiveSend('l', 'Response: listening');
  const message = { event: 'message', data: '{\n  "id": "order-1"\n}', id: '1', atMs: 12 };
  assert.equal(send.apply({ live: 'l', requestIndex: 3, kind: 'grpc', item: message }), true);
  assert.equal(send.apply({ live: 'l', requestIndex: 3, kind: 'mqtt', item: message }), false, 'an unknown kind');
  const html = renderLive(send.view());
  assert.match(html, /<h3>gRPC messages<\/h3>/);
  assert.match(html, /Request #4 · 1 message so far\./);
  assert.match(html, /<td>message<\/td><td>1<\/td>/);
});
