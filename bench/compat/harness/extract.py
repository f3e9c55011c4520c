#!/usr/bin/env python3
"""Extract .http/.rest files + surrounding config from a git repository into $COMPAT_DIR/corpus/<owner+name>/.
usage: extract.py OWNER+NAME [COMMIT]   (appends to $COMPAT_DIR/corpus/MANIFEST.tsv)
The repository is read from $CLONES/OWNER+NAME (default CLONES=/work/.mirror): either a clone
(OWNER+NAME/.git), a bare repository, or OWNER+NAME/repo (bare or clone). Only `git ls-tree`/`git show`
of COMMIT are used, so the commit must be present in it."""
import os, re, subprocess, sys, posixpath
MIRROR = os.environ.get('CLONES', '/work/.mirror')
CORPUS = os.path.join(os.environ.get('COMPAT_DIR', '/tmp/compat'), 'corpus')
key = sys.argv[1]
gd = os.path.join(MIRROR, key, 'repo')
if not os.path.isdir(gd): gd = os.path.join(MIRROR, key)
if os.path.isdir(os.path.join(gd, '.git')): gd = os.path.join(gd, '.git')
commit = sys.argv[2] if len(sys.argv) > 2 else subprocess.check_output(['git', '--git-dir', gd, 'rev-parse', 'HEAD'], text=True).strip()
out = subprocess.check_output(['git', '--git-dir', gd, 'ls-tree', '-r', '-l', '--full-tree', commit], text=True, errors='replace')
files = {}
for line in out.splitlines():
    meta, path = line.split('\t', 1)
    parts = meta.split()
    if parts[1] != 'blob':
        continue
    if not parts[3].isdigit(): continue
    size = int(parts[3])
    files[path] = size
SKIP = re.compile(r'(^|/)(node_modules|vendor|\.git)/')
def is_http(p):
    return re.search(r'\.(http|rest)$', p, re.I) and not SKIP.search(p) and files[p] < 400_000
https = [p for p in files if is_http(p)]
dirs = set()
for p in https:
    d = posixpath.dirname(p)
    while True:
        dirs.add(d)
        if not d: break
        d = posixpath.dirname(d)
CFG = re.compile(r'(\.env\.json$|^\.env(\..*)?$|^\.httpyac\.(json|js|cjs|mjs)$|^httpyac\.config\.(js|cjs|mjs)$|^package\.json$|\.proto$|^rest-client\.env\.json$|^volley\.jsonc?$)', re.I)
want = set(https)
for p, size in files.items():
    if SKIP.search(p) or size > 200_000: continue
    d, b = posixpath.dirname(p), posixpath.basename(p)
    if d in dirs and CFG.search(b):
        want.add(p)
    elif b == 'settings.json' and posixpath.basename(d) == '.vscode' and posixpath.dirname(d) in dirs:
        want.add(p)
    elif posixpath.basename(d) == 'env' and posixpath.dirname(d) in dirs:
        want.add(p)
    elif p.endswith('.proto') and any(p.startswith(x + '/') or x == '' for x in dirs if x):
        want.add(p)
# referenced files
REF = re.compile(r'^\s*<@?\w*\s+(\S+)|^\s*#\s*@import\s+(\S+)|^\s*(?:#\s*)?(?:run|import)\s+(\S+\.(?:http|rest))|^\s*#\s*@(?:loop|ref)\b', re.M)
def show(p):
    return subprocess.run(['git', '--git-dir', gd, 'show', f'{commit}:{p}'], capture_output=True).stdout
for p in https:
    txt = show(p).decode('utf-8', 'replace')
    for m in re.finditer(r'^\s*(?:<@?[\w-]*\s+|#\s*@import\s+|(?:#\s*)?(?:run|import)\s+)(\S+)', txt, re.M):
        r = m.group(1).strip('"\'')
        if '{{' in r or r.startswith('#') or r.startswith('http'): continue
        q = posixpath.normpath(posixpath.join(posixpath.dirname(p), r))
        if q in files and files[q] < 2_000_000:
            want.add(q)
if not https:
    print(f'{key}: no http files'); sys.exit(0)
dest = os.path.join(CORPUS, key)
os.makedirs(dest, exist_ok=True)
with open(os.path.join(CORPUS, 'MANIFEST.tsv'), 'a') as mf:
    for p in sorted(want):
        data = show(p)
        fp = os.path.join(dest, p)
        os.makedirs(os.path.dirname(fp), exist_ok=True)
        with open(fp, 'wb') as f: f.write(data)
        mf.write(f'{key.replace("+", "/", 1)}\t{commit}\t{p}\n')
print(f'{key}@{commit[:10]}: {len(https)} http files, {len(want)} files total')
