#!/usr/bin/env python3
"""Compare what httpyac and Volley sent, per file, and write results.json + report.md.

usage: compare.py WORKDIR RESULTS_JSON REPORT_MD
"""
import base64, collections, json, os, re, sys
from measures import MEASURES

work, results_path, report_path = sys.argv[1], sys.argv[2], sys.argv[3]
CORPUS = os.path.join(os.environ.get('COMPAT_DIR', '/tmp/compat'), 'corpus')

# headers that legitimately differ between two clients; never compared
IGNORED_HEADERS = ['user-agent', 'accept-encoding', 'connection', 'keep-alive', 'host', 'content-length',
                   'transfer-encoding', 'traceparent', 'tracestate', 'request-id']
PORT_RE = re.compile(rb'127\.0\.0\.1:18\d\d\d')
PORT_RE_S = re.compile(r'127\.0\.0\.1:18\d\d\d')
DYNAMIC_RE = re.compile(r'\$(guid|uuid|random|timestamp|isoTimestamp|datetime|localDatetime|randomInt|randomUUID|faker)|'
                        r'Date\.now|new Date|Math\.random|randomUUID|\$random\.', re.I)

# ---------------------------------------------------------------- load
jobs = {}
for line in open(os.path.join(work, 'jobs.tsv')):
    jid, repo, rel, env, src, fill = line.rstrip('\n').split('\t')
    jobs[int(jid)] = {'id': int(jid), 'repo': repo, 'path': rel, 'env': env, 'env_source': src,
                      'filled': [f for f in fill.split(',') if f]}

meta = collections.defaultdict(dict)
for fn in os.listdir(os.path.join(work, 'out')):
    if fn.endswith('.meta.jsonl'):
        for line in open(os.path.join(work, 'out', fn)):
            m = json.loads(line)
            meta[m['tool']][m['id']] = m

sent = {'httpyac': collections.defaultdict(list), 'volley': collections.defaultdict(list)}
for fn in sorted(os.listdir(os.path.join(work, 'capture'))):
    port = int(fn.split('.')[0])
    tool = 'httpyac' if port < 18091 else 'volley'
    cur = None
    for line in open(os.path.join(work, 'capture', fn)):
        rec = json.loads(line)
        if rec['kind'] == 'mark':
            cur = None if rec['file'] == 'end' else int(rec['file'])
            continue
        if cur is not None:
            sent[tool][cur].append(rec)


# ---------------------------------------------------------------- normalise
def norm_bytes(b):
    return PORT_RE.sub(b'CAPTURE', b.replace(b'127.0.0.1', b'127.0.0.1'))


def normalise(rec):
    if rec['kind'] == 'ws':
        data = norm_bytes(base64.b64decode(rec['data_b64']))
        return {'method': 'WS-MSG', 'host': '', 'path': '', 'headers': (), 'body': data, 'raw': rec}
    if rec['kind'] == 'raw':
        return {'method': 'RAW', 'host': '', 'path': '', 'headers': (), 'body': base64.b64decode(rec['data_b64'])[:40], 'raw': rec}
    target = rec['target']
    host, path = '', target
    m = re.match(r'^/__h/([^/?#]*)(.*)$', target)
    if m:
        host, path = m.group(1), m.group(2)
    path = PORT_RE_S.sub('CAPTURE', path)
    body = norm_bytes(base64.b64decode(rec['body_b64']))
    headers = []
    ctype = ''
    for n, v in rec['headers']:
        ln = n.lower()
        if ln in IGNORED_HEADERS:
            continue
        v = PORT_RE_S.sub('CAPTURE', v)
        if ln == 'content-type':
            ctype = v
        headers.append((ln, v))
    bm = re.search(r'boundary="?([^";,\s]+)', ctype)
    if bm and bm.group(1).encode() in body:
        b = bm.group(1)
        body = body.replace(b.encode(), b'BOUNDARY')
        headers = [(n, v.replace(b, 'BOUNDARY')) for n, v in headers]
    return {'method': rec['method'], 'host': host, 'path': path, 'headers': tuple(sorted(headers)), 'body': body,
            'raw': rec}


def json_canon(b):
    try:
        return json.dumps(json.loads(b.decode('utf-8')), sort_keys=False, separators=(',', ':'))
    except Exception:
        return None


def key(r, json_ok=True):
    body = r['body']
    if json_ok and body:
        j = json_canon(body)
        if j is not None:
            body = ('json', j)
    return (r['method'], r['host'], r['path'], r['headers'], body)


DYN_MASK = [(re.compile(rb'[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}'), b'<UUID>'),
            (re.compile(rb'\d{4}-\d\d-\d\dT[\d:.]+(Z|[+-]\d\d:?\d\d)?'), b'<DATE>'),
            (re.compile(rb'\d+'), b'<N>')]


def masked(r):
    def m(b):
        for rx, rep in DYN_MASK:
            b = rx.sub(rep, b)
        return b
    return (r['method'], r['host'], m(r['path'].encode()), tuple((n, m(v.encode())) for n, v in r['headers']),
            m(r['body']))


def lcs_pairs(a, b):
    n, m = len(a), len(b)
    if n * m > 4_000_000:
        # greedy in-order fallback
        pairs, j = [], 0
        for i, x in enumerate(a):
            for jj in range(j, m):
                if b[jj] == x:
                    pairs.append((i, jj)); j = jj + 1; break
        return pairs
    dp = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            dp[i][j] = dp[i + 1][j + 1] + 1 if a[i] == b[j] else max(dp[i + 1][j], dp[i][j + 1])
    i = j = 0
    pairs = []
    while i < n and j < m:
        if a[i] == b[j]:
            pairs.append((i, j)); i += 1; j += 1
        elif dp[i + 1][j] >= dp[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


# ---------------------------------------------------------------- Volley diagnostics
DIAG_RE = re.compile(r'^(error|warning)\[([\w-]+)\]: (.*)\n\s*--> (.*?):(\d+):(\d+)', re.M)
NOTSENT_RE = re.compile(r'^error: request `(.*)` \((.*?):(\d+)\) was not sent: (.*)$', re.M)
ERR_RE = re.compile(r'^error(?:\[([\w-]+)\])?: (.*)$', re.M)


def volley_diags(jid):
    p = os.path.join(work, 'out', 'volley', f'{jid}.err')
    txt = open(p, errors='replace').read() if os.path.exists(p) else ''
    out = open(os.path.join(work, 'out', 'volley', f'{jid}.out'), errors='replace').read() \
        if os.path.exists(os.path.join(work, 'out', 'volley', f'{jid}.out')) else ''
    diags = [{'sev': m.group(1), 'code': m.group(2), 'msg': m.group(3), 'file': m.group(4), 'line': int(m.group(5)),
              'pos': m.start()} for m in DIAG_RE.finditer(txt)]
    unsent = []
    prev = 0
    for m in NOTSENT_RE.finditer(txt):
        errs = [d for d in diags if prev <= d['pos'] < m.start() and d['sev'] == 'error']
        unsent.append({'req': m.group(1), 'file': m.group(2), 'line': int(m.group(3)), 'why': m.group(4),
                       'codes': [d['code'] for d in errs], 'diags': errs, 'used': False})
        prev = m.end()
    # other error lines (transport etc.) not in a diagnostic block
    other = [m.group(0) for m in ERR_RE.finditer(txt) if not m.group(0).startswith('error: request `')
             and not m.group(1)]
    return txt, out, diags, unsent, other


def url_pattern(req_text):
    parts = req_text.split()
    if not parts:
        return None, None
    method = parts[0].upper() if len(parts) > 1 and re.match(r'^[A-Za-z]+$', parts[0]) else 'GET'
    url = parts[1] if len(parts) > 1 and re.match(r'^[A-Za-z]+$', parts[0]) else parts[0]
    url = re.sub(r'^\w+://(127\.0\.0\.1:18\d\d\d/__h/)?', '', url)
    toks = re.split(r'(\{\{.*?\}\})', url)
    rx = ''.join('.*?' if t.startswith('{{') else re.escape(t) for t in toks)
    return method, rx


# ---------------------------------------------------------------- source helpers
_src_cache = {}


def source(jid):
    if jid not in _src_cache:
        j = jobs[jid]
        try:
            _src_cache[jid] = open(os.path.join(CORPUS, j['repo'], j['path']), encoding='utf-8', errors='replace').read()
        except OSError:
            _src_cache[jid] = ''
    return _src_cache[jid]


REQLINE_RE = re.compile(r'^\s*(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS|TRACE|CONNECT|PROPFIND|REPORT|MKCOL|COPY|MOVE|LOCK|UNLOCK|PROPPATCH|SEARCH|QUERY|WS|GRAPHQL)\s+(\S+)', re.I)


def find_line(jid, method, path):
    """Best guess of the line of the request (1-based) that produced METHOD PATH."""
    lines = source(jid).split('\n')
    segs = [s for s in re.split(r'[/?&=]', path) if s and len(s) > 1]
    best, best_score = None, -1
    for i, l in enumerate(lines):
        m = REQLINE_RE.match(l)
        if not m:
            continue
        score = (2 if m.group(1).upper() == method else 0) + sum(1 for s in segs if s in l)
        if score > best_score:
            best, best_score = i + 1, score
    return best


def loc(jid, line):
    j = jobs[jid]
    return f"{j['repo'].replace('+', '/', 1)}/{j['path']}:{line if line else '?'}"


def script_sets(jid, var):
    src = source(jid)
    v = re.escape(var)
    return bool(re.search(r'(exports\.|client\.global\.set\(\s*["\']|\$global\.|request\.variables\.set\(\s*["\']|'
                          r'client\.global\.set\(["\']|\bsetVariable\(\s*["\'])' + v + r'\b', src)) or \
        bool(re.search(r'^\s*(const|let|var)?\s*' + v + r'\s*=', src, re.M) and re.search(r'^\{\{', src, re.M))



def blocks(jid):
    """(start, end) 1-based line ranges of the request blocks (split at `###` lines)."""
    lines = source(jid).split('\n')
    starts = [0] + [i for i, l in enumerate(lines) if re.match(r'^\s*###', l)]
    out = []
    for k, st in enumerate(starts):
        en = starts[k + 1] - 1 if k + 1 < len(starts) else len(lines) - 1
        out.append((st + 1, en + 1))
    return out


def block_of(jid, line):
    for st, en in blocks(jid):
        if line is not None and st <= line <= en:
            return st, en
    return None


def refine(code, diag, jid, src, diags):
    if code == 'undefined-variable' and diag is not None:
        m = re.search(r'`([^`]+)`', diag['msg'])
        var = m.group(1) if m else ''
        if re.search(r'^\s*#\s*@loop\b.*\b' + re.escape(var) + r'\b', src, re.M):
            return 'undefined-variable (a `@loop` variable)'
        if script_sets(jid, var):
            return 'undefined-variable (assigned by a script)'
        if re.search(r'^\s*(#|//)\s*@(import|ref|forceRef)\b|^\s*(run|import)\s+\S', src, re.M):
            return 'undefined-variable (file uses @import/@ref/run/import)'
        if any(d['code'] == 'unsupported-script' for d in diags):
            return 'undefined-variable (file has an unsupported script)'
        return 'undefined-variable (other)'
    if code == 'request-variable' and diag is not None and 'matches nothing in the response body' in diag['msg']:
        return 'request-variable: field absent from the canned reply (harness; httpyac sends the `{{…}}` text)'
    if code == 'request-variable' and diag is not None and 'has no response in this run' in diag['msg']:
        return 'request-variable: the named request did not run/failed in Volley'
    return code


def classify_missing(jid, h, rec, diags, unsent, other, src, V):
    line = None
    # 1. a refusal whose request text matches the URL
    for u in unsent:
        meth, rx = url_pattern(u['req'])
        if rx is not None and re.search(rx.replace('CAPTURE', '.*'), h['host'] + h['path']):
            line = u['line']
            break
    if line is None:
        line = find_line(jid, h['method'], h['path'])
    blk = block_of(jid, line)
    jfile = jobs[jid]['path']
    errs = [d for d in diags if d['sev'] == 'error' and blk and blk[0] <= d['line'] <= blk[1]
            and d['file'].endswith(jfile)]
    if errs:
        return 'not sent by Volley: ' + refine(errs[0]['code'], errs[0], jid, src, diags), line
    if rec['volley_timeout']:
        return 'not sent by Volley: the Volley run was killed at the timeout', line
    ferrs = [d for d in diags if d['sev'] == 'error']
    if ferrs:
        return 'not sent by Volley: ' + refine(ferrs[0]['code'], ferrs[0], jid, src, diags) + ' (elsewhere in the file)', line
    if other:
        return 'not sent by Volley: ' + re.sub(r'`[^`]*`', '`…`', other[0])[:90], line
    if re.search(r'^\s*(#|//)\s*@loop', src, re.M):
        return 'not sent by Volley: fewer `@loop` iterations', line
    if re.search(r'^\s*(SSE|EVENTSOURCE)\s|text/event-stream', src, re.M | re.I):
        return 'not sent by Volley: httpyac EventSource reconnects (harness: `SSE` requests say Accept */*, the canned reply is JSON)', line
    if h['method'] == 'WS-MSG':
        return 'not sent by Volley: WebSocket message', line
    if not V:
        return 'not sent by Volley: nothing sent, no diagnostic', line
    return 'not sent by Volley: no diagnostic', line


def httpyac_blocks(jid):
    p = os.path.join(work, 'out', 'httpyac', f'{jid}.out')
    txt = open(p, errors='replace').read() if os.path.exists(p) else ''
    out = []
    for blk in txt.split('---------------------'):
        req = None
        for l in blk.split('\n'):
            m = REQLINE_RE.match(l)
            if m:
                req = l.strip(); break
        errs = [l.strip()[1:].strip() for l in blk.split('\n') if l.strip().startswith('✖')]
        out.append({'req': req, 'errs': errs, 'text': blk})
    return out


def httpyac_err_class(msg):
    rules = [(r'is not defined \(ReferenceError', 'httpyac: variable undefined (ReferenceError)'),
             (r'Cannot read propert', 'httpyac: TypeError reading a property (script/expression)'),
             (r'Invalid URL', 'httpyac: Invalid URL'), (r'ECONNREFUSED', 'httpyac: connection refused'),
             (r'ENOTFOUND|EAI_AGAIN', 'httpyac: DNS failure'), (r'SyntaxError', 'httpyac: SyntaxError in script'),
             (r'ETIMEDOUT|Timeout', 'httpyac: timeout')]
    for rx, lab in rules:
        if re.search(rx, msg):
            return lab
    return 'httpyac: ' + re.sub(r'`[^`]*`|"[^"]*"|\'[^\']*\'', '…', msg)[:60]


def classify_extra(jid, v, hblocks, src):
    target = v['host'] + v['path']
    for b in hblocks:
        if b['req'] and b['errs']:
            meth, rx = url_pattern(b['req'])
            if rx is not None and meth == v['method'] and re.search(rx.replace('CAPTURE', '.*'), target):
                return httpyac_err_class(b['errs'][0])
    if re.search(r'^\s*(#|//)\s*@note\b', src, re.M):
        return 'httpyac: `@note` confirmation unanswered (stdin is /dev/null)'
    hm = meta['httpyac'].get(jid, {})
    if hm.get('timed_out'):
        return 'httpyac run killed at the timeout'
    errs = [e for b in hblocks for e in b['errs']]
    if errs:
        return httpyac_err_class(errs[0]) + ' (elsewhere in the file)'
    return 'no httpyac error shown'


def _form(b):
    from urllib.parse import unquote_plus
    t = b.decode('utf-8', 'replace').replace('\r', '').replace('&\n', '&').strip()
    return unquote_plus(t)


def differs_cause(h, v, parts):
    """One label per sent-but-different request: the most telling part that differs."""
    if not parts:
        return '(JSON formatting only)'
    for p in ('method', 'host', 'url path'):
        if p in parts:
            return {'method': 'method', 'host': 'host', 'url path': 'URL path'}[p]
    if 'body' in parts:
        hb, vb = h['body'], v['body']
        hs, vs = hb.decode('utf-8', 'replace'), vb.decode('utf-8', 'replace')
        strip_comments = lambda s: '\n'.join(l for l in s.replace('\r', '').split('\n')
                                             if not re.match(r'^\s*(#|//)', l)).strip()
        if not hs.strip() and vs.strip() and not strip_comments(vs):
            return 'body: Volley sends comment lines (`#`/`//`) as the body, httpyac sends none'
        if strip_comments(vs) == strip_comments(hs) and vs != hs:
            return 'body: Volley keeps comment lines (`#`/`//`) in the body, httpyac drops them'
        if re.search(r'^\s*gql\s', vs, re.M):
            return 'body: GraphQL `gql name < file` import not understood (sent as text)'
        if hs.startswith('{"query"') or vs.startswith('{"query"'):
            return 'body: GraphQL JSON envelope (query/operationName/variables) differs'
        if '\\{\\{' in vs and '{{' in hs:
            return 'body: `\\{\\{` escape kept literally by Volley'
        ct = dict(h['headers']).get('content-type', '') + dict(v['headers']).get('content-type', '')
        if 'x-www-form-urlencoded' in ct or re.fullmatch(r'[^\s=&]+=[^&]*(&\s*[^\s=&]+=[^&]*)+', hs.strip() or 'x'):
            if _form(hb) == _form(vb):
                return 'body: form-urlencoded encoding differs (percent-encoding / line breaks)'
            return 'body: form-urlencoded content differs'
        if hs.replace('\r\n', '\n') == vs.replace('\r\n', '\n'):
            return 'body: line endings (CRLF vs LF)'
        return 'body: other'
    if 'url query' in parts:
        return 'URL query'
    hp = [p for p in parts if p.startswith('header ')]
    if hp and hp[0].endswith('missing in volley') and _default_headers(h):
        return hp[0] + ' (from httpyac `defaultHeaders` config)'
    return hp[0] if hp else ', '.join(parts)


def _default_headers(h):
    return CURRENT.get('defaultHeaders', False)

# ---------------------------------------------------------------- compare
def diff_parts(h, v):
    parts = []
    if h['method'] != v['method']:
        parts.append('method')
    if h['host'] != v['host']:
        parts.append('host')
    hp, hq = (h['path'].split('?', 1) + [''])[:2]
    vp, vq = (v['path'].split('?', 1) + [''])[:2]
    if hp != vp:
        parts.append('url path')
    if hq != vq:
        parts.append('url query')
    hh, vh = collections.Counter(h['headers']), collections.Counter(v['headers'])
    hn = {n for n, _ in h['headers']}
    vn = {n for n, _ in v['headers']}
    for n in sorted(hn | vn):
        a = sorted(x for x in hh.elements() if x[0] == n)
        b = sorted(x for x in vh.elements() if x[0] == n)
        if a != b:
            if not b:
                parts.append(f'header {n} missing in volley')
            elif not a:
                parts.append(f'header {n} added by volley')
            else:
                parts.append(f'header {n} value')
    if h['body'] != v['body']:
        if json_canon(h['body']) is not None and json_canon(h['body']) == json_canon(v['body']):
            pass
        else:
            parts.append('body')
    return parts


def show(b, n=160):
    s = b.decode('utf-8', 'replace') if isinstance(b, bytes) else str(b)
    s = s.replace('\r', '\\r').replace('\n', '\\n')
    return s[:n] + ('…' if len(s) > n else '')


CURRENT = {}
_dh = {}


def repo_has_default_headers(repo):
    if repo not in _dh:
        found = False
        for root, _, fs in os.walk(os.path.join(CORPUS, repo)):
            for f in fs:
                if f in ('.httpyac.json', 'httpyac.config.js', '.httpyac.js', 'package.json', 'settings.json'):
                    if 'defaultHeaders' in open(os.path.join(root, f), errors='replace').read():
                        found = True
        _dh[repo] = found
    return _dh[repo]


files = []
json_only = []
causes = collections.defaultdict(list)
tot = collections.Counter()
for jid in sorted(jobs):
    H = [normalise(r) for r in sent['httpyac'].get(jid, []) if r['kind'] != 'ws' or r.get('opcode') in (1, 2)]
    V = [normalise(r) for r in sent['volley'].get(jid, []) if r['kind'] != 'ws' or r.get('opcode') in (1, 2)]
    hm, vm = meta['httpyac'].get(jid, {}), meta['volley'].get(jid, {})
    rec = {'id': jid, 'file': loc(jid, None)[:-2], 'env': jobs[jid]['env'], 'httpyac_sent': len(H), 'volley_sent': len(V),
           'httpyac_rc': hm.get('rc'), 'volley_rc': vm.get('rc'), 'httpyac_timeout': hm.get('timed_out', False),
           'volley_timeout': vm.get('timed_out', False), 'identical': 0, 'identical_bytes': 0, 'differences': []}
    hk, vk = [key(r) for r in H], [key(r) for r in V]
    pairs = lcs_pairs(hk, vk)
    rec['identical'] = len(pairs)
    rec['identical_bytes'] = sum(1 for i, j in pairs if H[i]['body'] == V[j]['body'])
    for i, j in pairs:
        if H[i]['body'] != V[j]['body']:
            json_only.append((jid, find_line(jid, H[i]['method'], H[i]['path']), show(H[i]['body'], 90), show(V[j]['body'], 90)))
    mh = {i for i, _ in pairs}
    mv = {j for _, j in pairs}
    uh = [i for i in range(len(H)) if i not in mh]
    uv = [j for j in range(len(V)) if j not in mv]
    # pair the leftovers that look like the same request (method + host + path without query)
    ak = [(H[i]['method'], H[i]['host'], H[i]['path'].split('?')[0]) for i in uh]
    bk = [(V[j]['method'], V[j]['host'], V[j]['path'].split('?')[0]) for j in uv]
    p2 = lcs_pairs(ak, bk)
    p2 = [(uh[a], uv[b]) for a, b in p2]
    # then pair remaining ones by position when the counts are equal (same request, URL differs)
    left_h = [i for i in uh if i not in {a for a, _ in p2}]
    left_v = [j for j in uv if j not in {b for _, b in p2}]
    if left_h and len(left_h) == len(left_v):
        p2 += list(zip(left_h, left_v))
        left_h, left_v = [], []
    vtxt, vout, diags, unsent, other = volley_diags(jid)
    CURRENT['defaultHeaders'] = repo_has_default_headers(jobs[jid]['repo'])
    src = source(jid)
    dyn = bool(DYNAMIC_RE.search(src))
    for i, j in sorted(p2):
        h, v = H[i], V[j]
        parts = diff_parts(h, v)
        if dyn and masked(h) == masked(v):
            cause = 'dynamic value (uuid/time/random) — equivalent'
            kind = 'dynamic'
        else:
            cause = 'differs: ' + differs_cause(h, v, parts)
            kind = 'differs'
        line = find_line(jid, h['method'], h['path'])
        detail = {'kind': kind, 'cause': cause, 'parts': parts, 'line': line, 'httpyac': f"{h['method']} {h['host']}{h['path']}",
                  'volley': f"{v['method']} {v['host']}{v['path']}", 'h_index': i, 'v_index': j}
        hh, vh = set(h['headers']), set(v['headers'])
        if hh != vh:
            detail['headers_only_httpyac'] = sorted(hh - vh)
            detail['headers_only_volley'] = sorted(vh - hh)
        if 'body' in parts:
            detail['body_httpyac'] = show(h['body'])
            detail['body_volley'] = show(v['body'])
        rec['differences'].append(detail)
        causes[cause].append((jid, line, detail))
    for i in left_h:
        h = H[i]
        cause, line = classify_missing(jid, h, rec, diags, unsent, other, src, V)
        detail = {'kind': 'missing', 'cause': cause, 'line': line, 'httpyac': f"{h['method']} {h['host']}{h['path']}", 'h_index': i}
        rec['differences'].append(detail)
        causes[cause].append((jid, line, detail))
    hblocks = httpyac_blocks(jid)
    for j in left_v:
        v = V[j]
        line = find_line(jid, v['method'], v['path'])
        cause = 'extra (Volley sent, httpyac did not): ' + classify_extra(jid, v, hblocks, src)
        detail = {'kind': 'extra', 'cause': cause, 'line': line, 'volley': f"{v['method']} {v['host']}{v['path']}", 'v_index': j}
        rec['differences'].append(detail)
        causes[cause].append((jid, line, detail))
    rec['volley_diagnostic_codes'] = sorted({d['code'] for d in diags})
    rec['volley_dynamic_source'] = dyn
    files.append(rec)
    tot['httpyac_sent'] += len(H)
    tot['volley_sent'] += len(V)
    tot['identical'] += rec['identical']
    tot['identical_bytes'] += rec['identical_bytes']
    tot['dynamic_equivalent'] += sum(1 for d in rec['differences'] if d['kind'] == 'dynamic')
    tot['differs'] += sum(1 for d in rec['differences'] if d['kind'] == 'differs')
    tot['missing_in_volley'] += sum(1 for d in rec['differences'] if d['kind'] == 'missing')
    tot['extra_in_volley'] += sum(1 for d in rec['differences'] if d['kind'] == 'extra')
    tot['files'] += 1
    tot['files_httpyac_sent'] += bool(H)
    tot['files_volley_sent'] += bool(V)
    tot['files_all_identical'] += bool(H) and rec['identical'] == len(H) == len(V)
    tot['files_both_sent_nothing'] += (not H and not V)
    tot['files_httpyac_timeout'] += rec['httpyac_timeout']
    tot['files_volley_timeout'] += rec['volley_timeout']

# ---------------------------------------------------------------- constructs
CONSTRUCTS = [
    ('httpyac `{{ }}` script blocks (multi-line)', r'^\{\{[@+]?[\w-]*\s*$'),
    ('`{{expression}}` inline JavaScript', None),
    ('`# @import`', r'^\s*(#|//)\s*@import\b'),
    ('JetBrains/Kulala `run #name` / `run ./file`', r'^\s*run\s+\S'),
    ('JetBrains/Kulala `import ./file`', r'^\s*import\s+\S+\.(http|rest)\b'),
    ('`# @ref` / `# @forceRef`', r'^\s*(#|//)\s*@(ref|forceRef)\b'),
    ('`# @loop`', r'^\s*(#|//)\s*@loop\b'),
    ('`# @ratelimit`', r'^\s*(#|//)\s*@ratelimit\b'),
    ('prompts `$input` / `$pick` / `$password`', r'\{\{\s*\$(input|pick|password)\b'),
    ('JetBrains/Kulala `# @prompt`', r'^\s*(#|//)\s*@prompt\b'),
    ('`>>` / `>>!` response saves', r'^>>!?\s'),
    ('JetBrains handler `> {% %}`', r'^>\s*\{%'),
    ('JetBrains pre-request `< {% %}`', r'^<\s*\{%'),
    ('handler script file `> ./x.js`', r'^>\s+\S+\.js\s*$'),
    ('httpyac `??` assertions', r'^\?\?\s'),
    ('`# @assert` (Volley/Kulala)', r'^\s*(#|//)\s*@assert\b'),
    ('`# @name`', r'^\s*(#|//)\s*@name\b'),
    ('named response refs `{{name.response…}}`', r'\{\{\s*[\w-]+\.response\.'),
    ('system variables `{{$guid}}`, `$timestamp`, `$random…`', r'\{\{\s*\$(guid|uuid|timestamp|isoTimestamp|datetime|localDatetime|randomInt|random\.)'),
    ('`{{$dotenv}}` / `{{$processEnv}}`', r'\{\{\s*\$(dotenv|processEnv)\b'),
    ('file body `< ./file`', r'^<@?\w*\s+\S'),
    ('`# @note`', r'^\s*(#|//)\s*@note\b'),
    ('WebSocket (`WS` / ws://)', r'^\s*WS\s|ws://'),
    ('gRPC (`GRPC`)', r'^\s*GRPC\s'),
    ('GraphQL (`GRAPHQL` / `X-Request-Type: GraphQL`)', r'^\s*GRAPHQL\s|X-REQUEST-TYPE:\s*GraphQL'),
    ('MQTT/AMQP/Kafka/SSE (`MQTT`, `AMQP`, `SSE`, `EVENTSOURCE`)', r'^\s*(MQTT|AMQP|SSE|EVENTSOURCE|KAFKA|RABBITMQ)\s'),
]
INLINE_RE = re.compile(r'\{\{(?!\s*\$)(.*?)\}\}')
construct_counts = collections.Counter()
construct_files = collections.defaultdict(list)
for jid in jobs:
    src = source(jid)
    for name, rx in CONSTRUCTS:
        if rx is None:
            hit = any(not re.fullmatch(r'\s*[\w.\-\[\]$"\' ]*\s*', m.group(1)) or re.search(r'[()+?:]|=>', m.group(1))
                      for m in INLINE_RE.finditer(src) if '\n' not in m.group(1))
        else:
            hit = bool(re.search(rx, src, re.M | re.I))
        if hit:
            construct_counts[name] += 1
            construct_files[name].append(jid)

# ---------------------------------------------------------------- write
res = {'json_equal_not_bytes': [{'file': loc(j, l), 'httpyac': a, 'volley': b} for j, l, a, b in json_only],
       'totals': dict(tot), 'ignored_headers': IGNORED_HEADERS,
       'causes': {c: [{'file': loc(j, l), 'detail': d} for j, l, d in v] for c, v in causes.items()},
       'constructs': {k: {'files': v, 'examples': [loc(j, None)[:-2] for j in construct_files[k][:5]]} for k, v in construct_counts.items()},
       'files': files}
json.dump(res, open(results_path, 'w'), indent=1, default=str)

T = tot
pct = lambda a, b: f'{100 * a / b:.1f}%' if b else 'n/a'
L = []
L.append('# httpyac vs Volley: same bytes on real-world `.http` files\n')
L.append(f"Corpus: {T['files']} `.http`/`.rest` files from {len({j['repo'] for j in jobs.values()})} repositories "
         f"(corpus/MANIFEST.tsv). httpyac and Volley each ran every file once against a capture server "
         f"(see Method below).\n")
L.append('## Headline\n')
L.append(f"**{T['identical']} / {T['httpyac_sent']} requests sent by httpyac were sent identically by Volley "
         f"({pct(T['identical'], T['httpyac_sent'])})** — identical = same method, original host, path+query, "
         f"header multiset (ignoring the headers listed below) and body (JSON bodies compared after parsing; "
         f"{T['identical_bytes']} of the {T['identical']} are also byte-identical bodies).\n")
L.append('| measure | count |\n|---|---|')
for k, label in MEASURES:
    L.append(f'| {label} | {T[k]} |')
L.append('')
L.append('## Causes of differences\n')
L.append('Every httpyac request that Volley did not send identically, and every extra Volley request, '
         'classified (Volley refusals by the diagnostic code Volley printed for that request; sent-but-different '
         'by the parts that differ). Sorted by count.\n')
L.append('| # | cause | requests | files | examples (file:line) |\n|---|---|---|---|---|')
for n, (c, v) in enumerate(sorted(causes.items(), key=lambda kv: -len(kv[1])), 1):
    ex, seen = [], set()
    for j, l, d in v:
        if j in seen: continue
        seen.add(j)
        ex.append(f'`{loc(j, l)}`')
        if len(ex) == 3: break
    L.append(f"| {n} | {c} | {len(v)} | {len({j for j, _, _ in v})} | {'<br>'.join(ex)} |")
L.append('')
L.append('### Details of sent-but-different requests (first 40)\n')
k = 0
for c, v in sorted(causes.items(), key=lambda kv: -len(kv[1])):
    for j, l, d in v:
        if d['kind'] not in ('differs', 'dynamic'):
            continue
        k += 1
        if k > 40: break
        L.append(f"- `{loc(j, l)}` — {c}: httpyac `{d['httpyac'][:120]}` / volley `{d['volley'][:120]}`"
                 + (f"; headers only httpyac {d.get('headers_only_httpyac')}, only volley {d.get('headers_only_volley')}" if 'headers_only_httpyac' in d else '')
                 + (f"; body httpyac `{d['body_httpyac'][:100]}` vs volley `{d['body_volley'][:100]}`" if 'body_httpyac' in d else ''))
L.append('')
L.append('### JSON bodies equal after parsing but not byte-identical\n')
crlf = sum(1 for _, _, a, b in json_only if a.replace('\\r\\n', '\\n') == b.replace('\\r\\n', '\\n'))
L.append(f'{len(json_only)} of the identical requests have JSON bodies that differ in bytes only (counted identical); '
         f'{crlf} of them differ only in line endings (the `.http` file has CRLF line ends: httpyac sends LF, Volley keeps CRLF). '
         f'httpyac was not seen to re-serialise JSON otherwise.\n')
for j, l, a, b in json_only[:15]:
    L.append(f'- `{loc(j, l)}`: httpyac `{a}` / volley `{b}`')
L.append('')
L.append('## Constructs seen in the corpus\n')
L.append('Files using each construct (a regex over the original file text; a file counts once per construct).\n')
L.append('| construct | files | example |\n|---|---|---|')
for name, _ in CONSTRUCTS:
    c = construct_counts.get(name, 0)
    ex = loc(construct_files[name][0], None)[:-2] if c else ''
    L.append(f'| {name} | {c} | {ex} |')
L.append('')
# harness notes
hto = [loc(f['id'], None)[:-2] for f in files if f['httpyac_timeout']]
vto = [loc(f['id'], None)[:-2] for f in files if f['volley_timeout']]
envs = collections.Counter(f['env'] or '(none)' for f in files)
L.append('## Harness notes\n')
L.append(f"- Environment chosen per file: {', '.join(f'{k} ×{v}' for k, v in envs.most_common(12))}.")
L.append(f"- httpyac killed at the per-file timeout in {len(hto)} files: " + ', '.join(f'`{x}`' for x in hto[:30]) + (' …' if len(hto) > 30 else ''))
L.append(f"- Volley killed at the per-file timeout in {len(vto)} files: " + ', '.join(f'`{x}`' for x in vto[:30]) + (' …' if len(vto) > 30 else ''))
hrc = collections.Counter(f['httpyac_rc'] for f in files)
vrc = collections.Counter(f['volley_rc'] for f in files)
nothing = collections.Counter()
nothing_ex = {}
for f in files:
    if f['httpyac_sent'] == 0 and f['volley_sent'] == 0:
        hb = httpyac_blocks(f['id'])
        errs = [e for b in hb for e in b['errs']]
        hk_ = httpyac_err_class(errs[0]) if errs else ('httpyac killed at the timeout' if f['httpyac_timeout'] else 'httpyac: no request run/no error')
        _, _, dg, _, oth = volley_diags(f['id'])
        ve = [d['code'] for d in dg if d['sev'] == 'error']
        vk_ = 'volley: ' + (ve[0] if ve else (re.sub(r'`[^`]*`', '…', oth[0])[:60] if oth else 'no error'))
        nothing[(hk_, vk_)] += 1
        nothing_ex.setdefault((hk_, vk_), loc(f['id'], None)[:-2])
L.append(f"- Files where neither tool sent anything ({T['files_both_sent_nothing']}), by (httpyac's first error, Volley's first error): "
         + '; '.join(f"{a} / {b} ×{n} (e.g. `{nothing_ex[(a, b)]}`)" for (a, b), n in nothing.most_common(10)))
L.append(f"- httpyac exit codes: {dict(hrc)}; Volley exit codes: {dict(vrc)}.")
L.append(f"- Ignored headers (never compared): {', '.join(IGNORED_HEADERS)}. Multipart boundaries are replaced by a placeholder "
         f"before comparing; the capture port is replaced by a placeholder everywhere.")
L.append('')
L.append(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'method.md')).read())
open(report_path, 'w').write('\n'.join(L) + '\n')
end = next(i for i, l in enumerate(L) if l.startswith('| 1 |'))
print('\n'.join(l for l in L[3:end + 20] if not l.startswith('Every httpyac request')))
print(f'(full table and notes: {report_path}; per-file data: {results_path})')
