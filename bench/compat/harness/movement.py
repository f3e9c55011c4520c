#!/usr/bin/env python3
"""What changed between two comparison runs (results.json of compare.py).

usage: movement.py OLD_RESULTS NEW_RESULTS OUT_MD [TOP]

Both runs must share the httpyac side (same jobs and httpyac captures, as VOLLEY_ONLY=1 runs do).
Every httpyac request is identified by (file id, index in httpyac's sequence for that file); its
category in a run is the cause it is listed under, or "identical" when it is under no cause.
Volley's extra requests (sent by Volley, not by httpyac) have no httpyac index; they are identified
by (file id, "METHOD host+path", occurrence number) and count as "(not an extra)" in the run where
that key is absent.
Per cause: old count, new count, moved in (requests in the cause now that were elsewhere before),
moved out (requests in it before that are elsewhere now); new - old = in - out.
Writes OUT_MD and prints it.
"""
import collections, json, re, sys
from measures import MEASURES

old_p, new_p, out_p = sys.argv[1], sys.argv[2], sys.argv[3]
TOP = int(sys.argv[4]) if len(sys.argv) > 4 else 25
old, new = json.load(open(old_p)), json.load(open(new_p))
IDENT = 'identical'
NOEXTRA = '(not an extra Volley request)'


def base(loc):
    return re.sub(r':[^:]*$', '', loc)


def categories(res):
    """{request key: category}, plus a problem string if indices are missing."""
    cat = {}
    for f in res['files']:
        for i in range(f['httpyac_sent']):
            cat[('h', f['id'], i)] = IDENT
        occ = collections.Counter()
        for d in f['differences']:
            if d['kind'] == 'extra':
                occ[d['volley']] += 1
                cat[('v', f['id'], d['volley'], occ[d['volley']])] = d['cause']
            else:
                if 'h_index' not in d:
                    return None, 'results lack per-request indices (made by an older compare.py)'
                cat[('h', f['id'], d['h_index'])] = d['cause']
    return cat, None


def fmt_loc_examples(res, cause, n=2):
    ex, seen = [], set()
    for e in res['causes'].get(cause, []):
        b = base(e['file'])
        if b in seen:
            continue
        seen.add(b)
        ex.append(f"`{e['file']}`")
        if len(ex) == n:
            break
    return '<br>'.join(ex)


L = []
To, Tn = old['totals'], new['totals']
L.append('## Headline, previous run → this run\n')
pct = lambda a, b: f'{100 * a / b:.1f}%' if b else 'n/a'
L.append(f"identical / httpyac-sent: **{To['identical']} / {To['httpyac_sent']} = {pct(To['identical'], To['httpyac_sent'])}** → "
         f"**{Tn['identical']} / {Tn['httpyac_sent']} = {pct(Tn['identical'], Tn['httpyac_sent'])}**\n")
L.append('| measure | previous | this run | Δ |\n|---|---|---|---|')
for k, label in MEASURES:
    a, b = To.get(k, 0), Tn.get(k, 0)
    L.append(f'| {label} | {a} | {b} | {b - a:+d} |')
L.append('')

same_side = ([(f['id'], f['httpyac_sent']) for f in old['files']] == [(f['id'], f['httpyac_sent']) for f in new['files']])
co, err_o = categories(old)
cn, err_n = categories(new)
problem = err_o or err_n or (None if same_side else 'the two runs do not have the same httpyac requests per file')

counts_o = collections.Counter(co.values()) if co else collections.Counter({c: len(v) for c, v in old['causes'].items()})
counts_n = collections.Counter(cn.values()) if cn else collections.Counter({c: len(v) for c, v in new['causes'].items()})
moved_in, moved_out, flows = collections.Counter(), collections.Counter(), collections.Counter()
if not problem:
    for k in set(co) | set(cn):
        a = co.get(k, NOEXTRA)
        b = cn.get(k, NOEXTRA)
        if a != b:
            moved_out[a] += 1
            moved_in[b] += 1
            flows[(a, b)] += 1
    stayed_i = sum(1 for k in co if co[k] == IDENT and cn.get(k) == IDENT)
    L.append(f"Requests whose category changed: {sum(flows.values())} "
             f"({moved_in[IDENT]} became identical, {moved_out[IDENT]} were identical and no longer are; "
             f"{stayed_i} identical in both runs).\n")
else:
    L.append(f'(movement per request not computed: {problem}; only counts are compared)\n')

L.append(f'## Top {TOP} causes of this run\n')
L.append('in = requests under this cause now that were elsewhere in the previous run (identical, another cause, '
         'or — for extras — not sent by Volley); out = requests under it in the previous run that are elsewhere now.\n')
L.append('| # | cause | requests | files | previous | Δ | moved in | moved out | examples (file:line) |\n'
         '|---|---|---|---|---|---|---|---|---|')
ranked = sorted(new['causes'].items(), key=lambda kv: -len(kv[1]))
for n, (c, v) in enumerate(ranked[:TOP], 1):
    files = len({base(e['file']) for e in v})
    prev = counts_o.get(c, 0)
    mi = moved_in[c] if not problem else '?'
    mo = moved_out[c] if not problem else '?'
    L.append(f"| {n} | {c} | {len(v)} | {files} | {prev} | {len(v) - prev:+d} | {mi} | {mo} | {fmt_loc_examples(new, c)} |")
L.append('')
rest = ranked[TOP:]
if rest:
    L.append(f"Causes below the top {TOP}: {len(rest)} with {sum(len(v) for _, v in rest)} requests (full list in the report).\n")
gone = [c for c in old['causes'] if c not in new['causes']]
if gone:
    L.append('Causes of the previous run that no longer occur:\n')
    for c in sorted(gone, key=lambda c: -len(old['causes'][c])):
        L.append(f"- {c}: {len(old['causes'][c])} before" + (f" (now: " + ', '.join(
            f'{b} ×{k}' for (a, b), k in flows.most_common() if a == c) + ')' if not problem else ''))
    L.append('')
if not problem and flows:
    L.append('## Largest flows (previous category → this run\'s category)\n')
    L.append('| requests | previous | this run |\n|---|---|---|')
    for (a, b), k in flows.most_common(30):
        L.append(f'| {k} | {a} | {b} |')
    L.append('')
open(out_p, 'w').write('\n'.join(L) + '\n')
print('\n'.join(L))
