// The observer page of `volley serve`: shows what the server kept of its flows when it
// opens (`GET /flows`, `GET /flows/{flowId}/executions`), then follows `/event/ws` for
// flows, executions and WebSocket sessions as they happen; details come from the
// execution store (`GET /flows/{flowId}/executions/{reqExecId}`). Nothing but the
// protocol is used.

/** Executions kept; older ones are dropped (and counted). */
const MAX_EXECUTIONS = 10000;
/** Messages kept per WebSocket session. */
const MAX_MESSAGES = 500;
/** Sequence numbers remembered per stream (a flow, or a run outside flows) to drop repeats. */
const SEEN_PER_STREAM = 4096;
/** Height of an execution row, in pixels (the CSS says the same). */
const ROW = 26;
/** Flows whose stored executions are loaded when the page opens (the newest). */
const STORED_FLOWS = 20;
/** Reconnection delays, in milliseconds. */
const BACKOFF = [500, 1000, 2000, 5000];
const TOKEN_KEY = 'volley.observer.token';

const $ = (id) => document.getElementById(id);

const state = {
  token: sessionStorage.getItem(TOKEN_KEY) || '',
  flow: '',
  session: '',
  authEnabled: false,
  flows: new Map(),
  executions: new Map(),
  order: [],
  dropped: 0,
  sessions: new Map(),
  seen: new Map(),
  lastSeq: 0,
  filter: '',
  follow: true,
  visible: [],
  selected: null,
  flowFilter: null,
  socket: null,
  attempt: 0,
  everConnected: false,
};

// ---- Helpers -------------------------------------------------------------------

function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}

function base64url(text) {
  const bytes = new TextEncoder().encode(text);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function headers() {
  return state.token ? { Authorization: `Bearer ${state.token}` } : {};
}

function clock(ts) {
  if (!ts) return '';
  const date = new Date(ts);
  return date.toLocaleTimeString([], { hour12: false }) + '.' + String(date.getMilliseconds()).padStart(3, '0');
}

function ms(value) {
  return typeof value === 'number' ? (value < 100 ? value.toFixed(1) : String(Math.round(value))) : '';
}

/** JSON text indented and coloured; anything else escaped as it is. */
function prettyBody(text) {
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    return escapeHtml(text);
  }
  return highlight(JSON.stringify(value, null, 2));
}

function highlight(json) {
  return escapeHtml(json).replace(
    /(&quot;(?:\\.|[^\\&]|&(?!quot;))*?&quot;)(\s*:)?|\b(true|false|null)\b|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g,
    (match, string, colon, literal, number) => {
      if (string) return colon ? `<span class="j-key">${string}</span>${colon}` : `<span class="j-str">${string}</span>`;
      if (literal) return `<span class="j-lit">${literal}</span>`;
      return `<span class="j-num">${number}</span>`;
    },
  );
}

function notice(text) {
  $('notice').hidden = !text;
  $('notice').textContent = text || '';
}

// ---- Events -> state -----------------------------------------------------------

/** False when the event was seen already (a replay after a reconnection). */
function firstSight(event) {
  const key = event.flowId || event.runId || '';
  if (typeof event.seq !== 'number') return true;
  let seen = state.seen.get(key);
  if (!seen) {
    seen = { set: new Set(), order: [] };
    state.seen.set(key, seen);
  }
  if (seen.set.has(event.seq)) return false;
  seen.set.add(event.seq);
  seen.order.push(event.seq);
  if (seen.order.length > SEEN_PER_STREAM) seen.set.delete(seen.order.shift());
  return true;
}

function flowOf(id) {
  let flow = state.flows.get(id);
  if (!flow) {
    flow = { id, label: '', finished: false, total: 0, succeeded: 0, failed: 0, durationMs: null };
    state.flows.set(id, flow);
  }
  return flow;
}

function executionOf(event) {
  const key = event.reqExecId || event.runId;
  let execution = state.executions.get(key);
  if (!execution) {
    execution = {
      key, flowId: event.flowId || null, runId: event.runId, reqExecId: event.reqExecId || null,
      label: '', name: '', description: '', signIn: '', grpcMessages: 0, grpcLast: '', method: '', url: '', status: null, durationMs: null, ttfb: null,
      assertions: null, error: null, state: 'pending', ts: event.ts, seen: 0,
    };
    state.executions.set(key, execution);
    state.order.push(key);
    if (state.order.length > MAX_EXECUTIONS) {
      state.executions.delete(state.order.shift());
      state.dropped += 1;
    }
    if (execution.flowId) flowOf(execution.flowId).total += 1;
  }
  return execution;
}

function sessionOf(id, event) {
  let session = state.sessions.get(id);
  if (!session) {
    session = { id, flowId: event.flowId || null, reqExecId: event.reqExecId || null, upstreamUrl: '', open: true,
      closed: null, messages: [], dropped: 0 };
    state.sessions.set(id, session);
  }
  return session;
}

function apply(event) {
  if (!event || typeof event.type !== 'string' || !firstSight(event)) return false;
  if (state.flow && event.flowId === state.flow && typeof event.seq === 'number') {
    state.lastSeq = Math.max(state.lastSeq, event.seq);
  }
  const payload = event.payload || {};
  switch (event.type) {
    case 'flowStarted':
      flowOf(event.flowId).label = payload.label || '';
      return true;
    case 'flowFinished': {
      const flow = flowOf(event.flowId);
      Object.assign(flow, { finished: true, durationMs: payload.durationMs ?? null });
      if (typeof payload.total === 'number') flow.total = payload.total;
      if (typeof payload.succeeded === 'number') flow.succeeded = payload.succeeded;
      if (typeof payload.failed === 'number') flow.failed = payload.failed;
      return true;
    }
    case 'requestQueued':
      executionOf(event).label = payload.reqLabel || '';
      return true;
    case 'parseFinished': {
      const execution = executionOf(event);
      execution.description = payload.description || '';
      execution.name = payload.name || '';
      return Boolean(payload.description || payload.name);
    }
    case 'compileFinished':
    case 'fetchStarted': {
      const execution = executionOf(event);
      execution.method = payload.method || execution.method;
      execution.url = payload.url || execution.url;
      execution.state = 'running';
      return true;
    }
    case 'authDeviceCode': {
      const page = payload.verificationUriComplete || payload.verificationUri || '';
      executionOf(event).signIn = `To sign in, open ${page} and enter the code ${payload.userCode || ''}`;
      return true;
    }
    case 'grpcMessage': {
      const execution = executionOf(event);
      execution.grpcMessages = payload.number ?? (execution.grpcMessages || 0) + 1;
      execution.grpcLast = payload.preview || '';
      return true;
    }
    case 'fetchFinished': {
      const execution = executionOf(event);
      execution.signIn = '';
      execution.status = payload.status ?? execution.status;
      execution.ttfb = payload.ttfb ?? null;
      return true;
    }
    case 'executionFinished': {
      const execution = executionOf(event);
      execution.status = payload.status ?? execution.status;
      execution.durationMs = payload.durationMs ?? null;
      execution.assertions = payload.assertions || null;
      const failed = (execution.assertions && !execution.assertions.passed) || execution.status >= 400;
      execution.state = failed ? 'failed' : 'success';
      if (execution.flowId) flowOf(execution.flowId)[failed ? 'failed' : 'succeeded'] += 1;
      return true;
    }
    case 'executionFailed': {
      const execution = executionOf(event);
      execution.error = { stage: payload.stage, message: payload.message, kind: payload.kind || '' };
      execution.state = 'failed';
      if (execution.flowId) flowOf(execution.flowId).failed += 1;
      return true;
    }
    case 'wsSessionOpened': {
      const session = sessionOf(payload.wsSessionId, event);
      session.upstreamUrl = payload.upstreamUrl || '';
      return true;
    }
    case 'wsSessionMessage': {
      const session = sessionOf(payload.wsSessionId, event);
      session.messages.push({ ts: event.ts, ...payload });
      if (session.messages.length > MAX_MESSAGES) {
        session.messages.shift();
        session.dropped += 1;
      }
      return true;
    }
    case 'wsSessionClosed': {
      const session = sessionOf(payload.wsSessionId, event);
      session.open = false;
      session.closed = { code: payload.code, reason: payload.reason, wasClean: payload.wasClean };
      return true;
    }
    default:
      return false;
  }
}

/** An execution the store kept, added unless events brought it already. */
function addStored(stored) {
  const key = stored.reqExecId;
  if (!key || state.executions.has(key)) return;
  const timing = stored.timing || {};
  const error = stored.error ? { stage: stored.error.stage, message: stored.error.message, kind: stored.error.kind || '' } : null;
  state.executions.set(key, {
    key, flowId: stored.flowId || null, runId: null, reqExecId: key,
    label: stored.reqLabel || '', name: '', description: '', signIn: '', grpcMessages: 0, grpcLast: '', method: stored.method || '',
    url: stored.urlResolved || stored.urlTemplate || '', status: stored.response ? stored.response.status : null,
    durationMs: timing.durationMs ?? null, ttfb: timing.ttfb ?? null, assertions: stored.assertions || null, error,
    state: stored.status === 'success' || stored.status === 'failed' ? stored.status : 'running', ts: timing.startTime, seen: 0,
  });
  state.order.push(key);
}

/** What the server kept before the page opened: the flows (of the session when the
 * page watches one) and the executions of the newest. */
async function loadStored() {
  if (state.flow) return; // a flow's events are replayed from its start instead
  const query = state.session ? `?sessionId=${encodeURIComponent(state.session)}` : '';
  let flows;
  try {
    const answer = await fetch(`/flows${query}`, { headers: headers() });
    if (!answer.ok) return; // a scoped token lists nothing
    flows = (await answer.json()).flows || [];
  } catch {
    return;
  }
  for (const listed of flows) {
    const flow = flowOf(listed.flowId);
    const summary = listed.summary || {};
    Object.assign(flow, {
      label: flow.label || listed.label || '', finished: flow.finished || Boolean(listed.finished),
      total: summary.total ?? 0, succeeded: summary.succeeded ?? 0, failed: summary.failed ?? 0,
      durationMs: listed.finished ? summary.durationMs ?? null : flow.durationMs,
    });
  }
  const newest = flows.slice(0, STORED_FLOWS);
  const lists = await Promise.all(newest.map(async (listed) => {
    try {
      const answer = await fetch(`/flows/${encodeURIComponent(listed.flowId)}/executions`, { headers: headers() });
      return answer.ok ? (await answer.json()).executions || [] : [];
    } catch {
      return [];
    }
  }));
  lists.flat().forEach(addStored);
  state.order.sort((a, b) => (state.executions.get(a).ts || 0) - (state.executions.get(b).ts || 0));
  while (state.order.length > MAX_EXECUTIONS) {
    state.executions.delete(state.order.shift());
    state.dropped += 1;
  }
  scheduleDraw();
}

// ---- Rendering -----------------------------------------------------------------

let drawPending = false;

function scheduleDraw() {
  if (drawPending) return;
  drawPending = true;
  requestAnimationFrame(() => {
    drawPending = false;
    draw();
  });
}

function matches(execution) {
  if (state.flowFilter && execution.flowId !== state.flowFilter) return false;
  if (!state.filter) return true;
  const text = `${execution.method} ${execution.url} ${execution.status ?? ''} ${execution.label} ${execution.name} ${execution.description} ${execution.error ? outcome(execution.error) : ''}`.toLowerCase();
  return state.filter.split(/\s+/).every((word) => text.includes(word));
}

function draw() {
  state.visible = state.order.filter((key) => matches(state.executions.get(key)));
  drawFlows();
  drawSessions();
  drawList();
  const failed = state.visible.filter((key) => state.executions.get(key).state === 'failed').length;
  const dropped = state.dropped ? `, ${state.dropped} older dropped` : '';
  $('counts').textContent = `${state.visible.length} of ${state.order.length} executions, ${failed} failed${dropped}`;
  $('empty').hidden = state.order.length > 0;
  if (state.selected && state.selected.kind === 'session') drawSession(state.selected.id);
}

function drawFlows() {
  const items = [...state.flows.values()].map((flow) => {
    const label = flow.label ? escapeHtml(flow.label) : `<code>${escapeHtml(flow.id)}</code>`;
    const stateText = flow.finished ? `finished in ${ms(flow.durationMs)} ms` : 'running';
    const failed = flow.failed ? ` · <span class="fail">${flow.failed} failed</span>` : '';
    const selected = state.flowFilter === flow.id ? ' class="selected"' : '';
    return `<li data-flow="${escapeHtml(flow.id)}"${selected}>${label}<br><span class="muted">${stateText} · ${flow.total} run · ${flow.succeeded} ok</span>${failed}</li>`;
  });
  $('flows').innerHTML = items.join('') || '<li class="muted">none yet</li>';
}

function drawSessions() {
  const items = [...state.sessions.values()].map((session) => {
    const status = session.open ? '<span class="pass">open</span>' : `<span class="muted">closed ${escapeHtml(session.closed?.code ?? '')}</span>`;
    return `<li data-session="${escapeHtml(session.id)}">${status} <code>${escapeHtml(session.upstreamUrl || session.id)}</code><br><span class="muted">${session.messages.length + session.dropped} messages</span></li>`;
  });
  $('sessions').innerHTML = items.join('') || '<li class="muted">none</li>';
}

/** What ended an execution without a response, in a word: `refused`, `timeout`,
 * `dns`, `tls`, `undefined-variable`, … (the event's `kind`), else the stage it
 * stopped at. */
function outcome(error) {
  const words = { 'connection-refused': 'refused', 'websocket-handshake': 'handshake', 'too-many-redirects': 'redirects' };
  const kind = (error.kind || '').toLowerCase().replace(/_/g, '-');
  if (words[kind]) return words[kind];
  if (kind && kind !== 'other') return kind;
  return error.stage || 'error';
}

function rowHtml(execution, index) {
  const checks = execution.assertions ? `${execution.assertions.total - execution.assertions.failed}/${execution.assertions.total}` : '';
  const status = execution.error ? escapeHtml(outcome(execution.error)) : escapeHtml(execution.status ?? '…');
  const classes = ['row', execution.state === 'failed' ? 'failed' : execution.state === 'success' ? 'ok' : 'pending'];
  if (state.selected && state.selected.kind === 'execution' && state.selected.id === execution.key) classes.push('selected');
  const url = escapeHtml(execution.url || execution.label || execution.key);
  const name = execution.name ? `<b class="name">${escapeHtml(execution.name)}</b> ` : '';
  return `<div class="${classes.join(' ')}" role="row" data-key="${escapeHtml(execution.key)}" data-index="${index}">`
    + `<span>${clock(execution.ts)}</span><span>${escapeHtml(execution.method)}</span><span title="${url}">${name}${url}</span>`
    + `<span class="status">${status}</span><span>${ms(execution.durationMs)}</span><span>${checks}</span></div>`;
}

/** Only the rows in view (and a few around) are in the page. */
function drawList() {
  const list = $('list');
  $('spacer').style.height = `${state.visible.length * ROW}px`;
  if (state.follow) list.scrollTop = list.scrollHeight;
  const first = Math.max(0, Math.floor(list.scrollTop / ROW) - 10);
  const last = Math.min(state.visible.length, Math.ceil((list.scrollTop + list.clientHeight) / ROW) + 10);
  const rows = [];
  for (let index = first; index < last; index += 1) rows.push(rowHtml(state.executions.get(state.visible[index]), index));
  list.querySelectorAll('.row').forEach((row) => row.remove());
  list.insertAdjacentHTML('beforeend', rows.join(''));
  // Placed through the CSSOM: the page's Content Security Policy refuses style attributes.
  list.querySelectorAll('.row').forEach((row) => {
    row.style.top = `${Number(row.dataset.index) * ROW}px`;
  });
}

function table(pairs) {
  if (!pairs || pairs.length === 0) return '<p class="muted">none</p>';
  const rows = pairs.map(({ name, value }) => `<tr><th>${escapeHtml(name)}</th><td>${escapeHtml(value)}</td></tr>`);
  return `<table class="kv">${rows.join('')}</table>`;
}

function checksHtml(report) {
  if (!report) return '';
  const items = (report.checks || []).map((check) => {
    const mark = check.outcome === 'passed' ? '<span class="pass">✓</span>' : '<span class="fail">✗</span>';
    // A script's `client.test` fails with a message and no expected value.
    const scriptTest = check.outcome === 'failed' && check.expected == null && check.message != null;
    const why = scriptTest ? ` — ${escapeHtml(check.message)}`
      : check.outcome === 'failed' ? ` — expected ${escapeHtml(check.expected)}, got ${escapeHtml(check.actual)}`
      : check.outcome === 'invalid' ? ` — ${escapeHtml(check.message || 'invalid')}` : '';
    return `<li>${mark} <code>${escapeHtml(check.expression)}</code>${why}</li>`;
  });
  return `<h3>Assertions: ${report.total - report.failed}/${report.total} passed</h3><ul class="checks">${items.join('')}</ul>`;
}

async function showExecution(key) {
  const execution = state.executions.get(key);
  if (!execution) return;
  state.selected = { kind: 'execution', id: key };
  drawList();
  const summary = `<h2>${escapeHtml(execution.method)} ${escapeHtml(execution.url)}</h2>`
    + (execution.label ? `<p class="muted">${escapeHtml(execution.label)}</p>` : '')
    + (execution.description ? `<p class="description">${escapeHtml(execution.description)}</p>` : '')
    + (execution.signIn ? `<p class="sign-in"><strong>${escapeHtml(execution.signIn)}</strong></p>` : '')
    + (execution.grpcMessages ? `<p class="grpc">gRPC: ${execution.grpcMessages} ${execution.grpcMessages === 1 ? 'message' : 'messages'}, the last: <code>${escapeHtml(execution.grpcLast)}</code></p>` : '')
    + (execution.name ? `<p><b>${escapeHtml(execution.name)}</b></p>` : '')
    + (execution.error ? `<p class="fail">${escapeHtml(outcome(execution.error))} (at ${escapeHtml(execution.error.stage)}): ${escapeHtml(execution.error.message)}</p>` : '');
  if (!execution.flowId || !execution.reqExecId) {
    $('detail').innerHTML = `${summary}<p>Status ${escapeHtml(execution.status ?? '—')} · ${ms(execution.durationMs)} ms</p>`
      + '<p class="muted">Only executions in a flow are kept in the execution store; this one shows what its events carried.</p>';
    return;
  }
  $('detail').innerHTML = `${summary}<p class="muted">loading…</p>`;
  const path = `/flows/${encodeURIComponent(execution.flowId)}/executions/${encodeURIComponent(execution.reqExecId)}`;
  let stored;
  try {
    const answer = await fetch(path, { headers: headers() });
    stored = await answer.json();
    if (!answer.ok) throw new Error(stored?.error?.message || `HTTP ${answer.status}`);
  } catch (error) {
    if (state.selected?.id === key) $('detail').innerHTML = `${summary}<p class="fail">The execution store did not answer: ${escapeHtml(error.message)}</p>`;
    return;
  }
  if (state.selected?.id !== key) return;
  const response = stored.response;
  const timing = stored.timing || {};
  let html = `${summary}<p class="muted">${escapeHtml(stored.urlResolved || '')}</p>`;
  if (response) {
    const statusClass = response.status >= 400 ? 'fail' : 'pass';
    html += `<p><strong class="${statusClass}">${response.status} ${escapeHtml(response.statusText || '')}</strong> · ${ms(timing.durationMs)} ms · first byte ${ms(timing.ttfb)} ms · ${response.bodyBytes} bytes</p>`;
  }
  html += checksHtml(stored.assertions);
  if (stored.logs && stored.logs.length > 0) {
    html += `<h3>Script log${stored.logsTruncated ? ' (cut)' : ''}</h3><pre>${escapeHtml(stored.logs.join('\n'))}</pre>`;
  }
  html += `<h3>Request headers</h3>${table(stored.headers)}`;
  if (stored.bodyPreview) html += `<h3>Request body</h3><pre>${prettyBody(stored.bodyPreview)}</pre>`;
  if (response) {
    html += `<h3>Response headers</h3>${table(response.headers)}`;
    if (response.body !== undefined && response.body !== null) {
      const body = response.encoding === 'base64' ? `(binary, ${response.bodyBytes} bytes)` : prettyBody(response.body);
      html += `<h3>Response body${response.truncated ? ' (cut)' : ''}</h3><pre class="body">${body}</pre>`;
    }
  }
  $('detail').innerHTML = html;
}

function drawSession(id) {
  const session = state.sessions.get(id);
  if (!session) return;
  const closed = session.closed ? `closed: ${escapeHtml(session.closed.code)} ${escapeHtml(session.closed.reason || '')}` : 'open';
  const dropped = session.dropped ? `<p class="muted">${session.dropped} older messages are no longer shown.</p>` : '';
  const items = session.messages.map((message) => {
    const arrow = message.direction === 'inbound' ? '←' : '→';
    const cut = message.truncated ? ` <span class="muted">(first 4 KiB of ${message.byteLength} bytes)</span>` : '';
    const text = message.payloadType === 'json' ? prettyBody(message.preview) : escapeHtml(message.preview);
    return `<li><span class="dir">${arrow} ${escapeHtml(message.direction)}</span><span class="muted">${clock(message.ts)}</span>${cut}<pre>${text}</pre></li>`;
  });
  $('detail').innerHTML = `<h2>WebSocket <code>${escapeHtml(session.upstreamUrl)}</code></h2><p class="muted">${escapeHtml(session.id)} · ${closed}</p>${dropped}`
    + `<ul class="messages">${items.join('') || '<li class="muted">no messages yet</li>'}</ul>`;
}

// ---- Connection ----------------------------------------------------------------

function setConnection(text, kind) {
  const badge = $('connection');
  badge.textContent = text;
  badge.className = `badge ${kind}`;
}

function connect() {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  const query = new URLSearchParams();
  if (state.flow) query.set('flowId', state.flow);
  if (state.session) query.set('sessionId', state.session);
  // With a flow, what the server kept of it comes first: everything at the start, then
  // what came after the last event seen.
  if (state.flow) query.set('afterSeq', String(state.lastSeq));
  const search = query.toString();
  const url = `${scheme}://${location.host}/event/ws${search ? `?${search}` : ''}`;
  const socket = state.token ? new WebSocket(url, ['volley.v1', `volley.bearer.${base64url(state.token)}`]) : new WebSocket(url);
  state.socket = socket;
  socket.onopen = () => {
    if (state.everConnected && !state.flow) {
      notice('Reconnected. The flows were read again from the store; runs outside flows during the disconnection are missing.');
    } else if (state.everConnected) {
      notice('');
    }
    state.everConnected = true;
    state.attempt = 0;
    setConnection('connected', 'connected');
  };
  socket.onmessage = (message) => {
    let event;
    try {
      event = JSON.parse(message.data);
    } catch {
      return;
    }
    if (apply(event)) scheduleDraw();
  };
  socket.onclose = (close) => {
    if (state.socket !== socket) return;
    const delay = BACKOFF[Math.min(state.attempt, BACKOFF.length - 1)];
    state.attempt += 1;
    const why = close.reason ? `: ${close.reason}` : close.code === 1006 ? ': the server is unreachable' : ` (code ${close.code})`;
    setConnection(`disconnected${why} — reconnecting in ${(delay / 1000).toFixed(1)} s`, 'disconnected');
    setTimeout(() => {
      if (state.socket === socket) start();
    }, delay);
  };
}

/** Checks the token (when the server wants one), then connects. */
async function start() {
  let answer;
  try {
    answer = await fetch('/capabilities', { headers: headers() });
  } catch {
    answer = null;
  }
  if (answer === null) {
    // The server is gone: keep trying through the socket's reconnection loop.
    connect();
    return;
  }
  if (answer.status === 401) {
    state.authEnabled = true;
    const refused = Boolean(state.token);
    state.token = '';
    sessionStorage.removeItem(TOKEN_KEY);
    showLogin(refused ? 'The token was refused. Give the server\'s token (or a scoped token).' : null);
    return;
  }
  state.authEnabled = state.authEnabled || Boolean(state.token);
  if (state.authEnabled && !state.flow && !state.session) {
    showLogin('A server with a token only lets observers watch a flow or a session: give its id.');
    return;
  }
  $('login').hidden = true;
  $('main').hidden = false;
  $('scope').textContent = state.flow ? `flow ${state.flow}` : state.session ? `session ${state.session}` : 'everything';
  // Events first, so that nothing that happens while the store is read is missed.
  connect();
  loadStored();
}

function showLogin(message) {
  $('main').hidden = true;
  $('login').hidden = false;
  setConnection('not connected', 'disconnected');
  const text = $('login-message');
  if (message) {
    text.textContent = message;
    text.className = 'error';
  }
  $('login-flow').value = state.flow;
  $('login-session').value = state.session;
  $('login-token').focus();
}

// ---- Wiring --------------------------------------------------------------------

function selectIndex(index) {
  if (state.visible.length === 0) return;
  const bounded = Math.max(0, Math.min(state.visible.length - 1, index));
  const list = $('list');
  const top = bounded * ROW;
  if (top < list.scrollTop) list.scrollTop = top;
  if (top + ROW > list.scrollTop + list.clientHeight) list.scrollTop = top + ROW - list.clientHeight;
  state.follow = bounded === state.visible.length - 1 && state.follow;
  $('follow').checked = state.follow;
  showExecution(state.visible[bounded]);
}

function init() {
  const params = new URLSearchParams(location.search);
  state.flow = params.get('flow') || '';
  state.session = params.get('session') || '';
  $('login').addEventListener('submit', (event) => {
    event.preventDefault();
    state.token = $('login-token').value.trim();
    state.flow = $('login-flow').value.trim();
    state.session = $('login-session').value.trim();
    if (state.token) sessionStorage.setItem(TOKEN_KEY, state.token);
    start();
  });
  $('filter').addEventListener('input', (event) => {
    state.filter = event.target.value.trim().toLowerCase();
    draw();
  });
  $('follow').addEventListener('change', (event) => {
    state.follow = event.target.checked;
    drawList();
  });
  const list = $('list');
  list.addEventListener('scroll', () => {
    const atEnd = list.scrollTop + list.clientHeight >= list.scrollHeight - ROW;
    if (!atEnd && state.follow) {
      state.follow = false;
      $('follow').checked = false;
    }
    drawList();
  });
  list.addEventListener('click', (event) => {
    const row = event.target.closest('.row');
    if (row) showExecution(row.dataset.key);
  });
  list.addEventListener('keydown', (event) => {
    const current = state.selected?.kind === 'execution' ? state.visible.indexOf(state.selected.id) : state.visible.length;
    const page = Math.max(1, Math.floor(list.clientHeight / ROW) - 1);
    const moves = { ArrowDown: 1, ArrowUp: -1, PageDown: page, PageUp: -page, j: 1, k: -1 };
    if (event.key in moves) selectIndex(current + moves[event.key]);
    else if (event.key === 'Home') selectIndex(0);
    else if (event.key === 'End') selectIndex(state.visible.length - 1);
    else if (event.key === 'Enter' && current < state.visible.length) showExecution(state.visible[current]);
    else return;
    event.preventDefault();
  });
  $('flows').addEventListener('click', (event) => {
    const item = event.target.closest('[data-flow]');
    if (!item) return;
    state.flowFilter = state.flowFilter === item.dataset.flow ? null : item.dataset.flow;
    draw();
  });
  $('sessions').addEventListener('click', (event) => {
    const item = event.target.closest('[data-session]');
    if (!item) return;
    state.selected = { kind: 'session', id: item.dataset.session };
    drawSession(item.dataset.session);
    drawList();
  });
  document.addEventListener('keydown', (event) => {
    if (event.key === '/' && document.activeElement?.tagName !== 'INPUT') {
      event.preventDefault();
      $('filter').focus();
    } else if (event.key === 'Escape' && document.activeElement === $('filter')) {
      $('filter').value = '';
      state.filter = '';
      draw();
      list.focus();
    }
  });
  draw();
  start();
}

init();
