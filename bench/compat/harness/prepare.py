#!/usr/bin/env python3
"""Make the per-tool working copies of the corpus and the job list.

usage: prepare.py WORKDIR TOOL:PORT [TOOL:PORT ...]
For each TOOL:PORT, copies corpus/<repo>/ to WORKDIR/<TOOL>/<repo>/, creates an empty `.git`
directory at each repository root (as a checkout has), and rewrites, in every UTF-8 text file,
each URL's scheme+authority `(http|https|ws|wss)://AUTH` into `http://127.0.0.1:PORT/__h/AUTH`
(`ws://` for ws/wss; userinfo kept in front). The rewrite is the same text operation for
every tool; only PORT differs (same digit count).
Writes WORKDIR/jobs.tsv: id, repo, path (in repo), environment chosen ('' = none), env source.
With PREPARE_COPIES_ONLY=1 only the copies are made (same copy + rewrite code); jobs.tsv is neither
computed nor written and no `volley check` is run (run.sh VOLLEY_ONLY=1 reuses the full run's jobs.tsv).
"""
import json, os, re, shutil, sys

CORPUS = os.path.join(os.environ.get('COMPAT_DIR', '/tmp/compat'), 'corpus')
work = sys.argv[1]
targets = [a.split(':') for a in sys.argv[2:]]

AUTH = r'(?:\{\{[^{}\n]*\}\}|[^/\s"\'?#<>`\\,;()\[\]{}|])+'
URL_RE = re.compile(r'(?<![\w+.-])(https?|wss?)://(' + AUTH + ')', re.I)


def rewrite(text, port):
    def sub(m):
        scheme, auth = m.group(1).lower(), m.group(2)
        if auth.startswith('127.0.0.1:180') or auth.startswith('127.0.0.1:190'):
            return m.group(0)
        # split userinfo at the last '@' outside {{ }}
        depth, at = 0, -1
        for i, ch in enumerate(auth):
            if auth.startswith('{{', i): depth += 1
            elif auth.startswith('}}', i): depth = max(0, depth - 1)
            elif ch == '@' and depth == 0: at = i
        user, host = (auth[:at + 1], auth[at + 1:]) if at >= 0 else ('', auth)
        if not host:
            return m.group(0)
        s2 = 'ws' if scheme.startswith('ws') else 'http'
        return f'{s2}://{user}127.0.0.1:{port}/__h/{host}'
    return URL_RE.sub(sub, text)


def jsonc(text):
    text = re.sub(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', lambda m: m.group(1) or '', text, flags=re.S)
    text = re.sub(r',(\s*[}\]])', r'\1', text)
    return json.loads(text)


PREFERRED = ['dev', 'local', 'development', 'localhost', 'develop', 'default', 'test']


def env_names(repo_dir, file_rel):
    """Environment names visible to the file, nearest directory first: (names, source)."""
    d = os.path.dirname(file_rel)
    found = []
    while True:
        base = os.path.join(repo_dir, d)
        cands = []
        for fn in ('http-client.env.json', 'http-client.private.env.json'):
            p = os.path.join(base, fn)
            if os.path.isfile(p):
                try: cands.append((list(jsonc(open(p, encoding='utf-8-sig').read()).keys()), fn))
                except Exception: pass
        for fn in ('.httpyac.json', 'httpyac.config.json'):
            p = os.path.join(base, fn)
            if os.path.isfile(p):
                try: cands.append((list((jsonc(open(p, encoding='utf-8-sig').read()).get('environments') or {}).keys()), fn))
                except Exception: pass
        p = os.path.join(base, 'package.json')
        if os.path.isfile(p):
            try: cands.append((list(((jsonc(open(p, encoding='utf-8-sig').read()).get('httpyac') or {}).get('environments') or {}).keys()), 'package.json'))
            except Exception: pass
        p = os.path.join(base, '.vscode', 'settings.json')
        if os.path.isfile(p):
            try: cands.append((list((jsonc(open(p, encoding='utf-8-sig').read()).get('rest-client.environmentVariables') or {}).keys()), '.vscode/settings.json'))
            except Exception: pass
        p = os.path.join(base, 'env')
        if os.path.isdir(p):
            cands.append(([f[:-4] for f in sorted(os.listdir(p)) if f.endswith('.env')], 'env/'))
        for names, src in cands:
            for n in names:
                if isinstance(n, str) and not n.startswith('$') and n not in [x for x, _ in found]:
                    found.append((n, os.path.join(d, src)))
        if not d:
            break
        d = os.path.dirname(d)
    return found


def choose(found):
    if not found:
        return '', ''
    for pref in PREFERRED:
        for n, src in found:
            if n.lower() == pref:
                return n, src
    return found[0]


def main():
    os.makedirs(work, exist_ok=True)
    repos = sorted(r for r in os.listdir(CORPUS) if os.path.isdir(os.path.join(CORPUS, r)))
    jobs = []
    for repo in repos:
        rd = os.path.join(CORPUS, repo)
        for root, dirs, files in os.walk(rd):
            dirs.sort()
            for f in sorted(files):
                if re.search(r'\.(http|rest)$', f, re.I):
                    rel = os.path.relpath(os.path.join(root, f), rd)
                    env, src = choose(env_names(rd, rel))
                    jobs.append((repo, rel, env, src))
    copies_only = bool(os.environ.get('PREPARE_COPIES_ONLY'))
    if not copies_only:
        with open(os.path.join(work, 'jobs.tsv'), 'w') as out:
            for i, (repo, rel, env, src) in enumerate(jobs):
                out.write(f'{i}\t{repo}\t{rel}\t{env}\t{src}\n')
    for tool, port in targets:
        dest = os.path.join(work, tool)
        if os.path.exists(dest):
            shutil.rmtree(dest)
        for repo in repos:
            shutil.copytree(os.path.join(CORPUS, repo), os.path.join(dest, repo), symlinks=True)
            os.makedirs(os.path.join(dest, repo, '.git'), exist_ok=True)
            with open(os.path.join(dest, repo, '.git', 'HEAD'), 'w') as f:
                f.write('ref: refs/heads/main\n')
        for root, dirs, files in os.walk(dest):
            if '.git' in dirs: dirs.remove('.git')
            for f in files:
                p = os.path.join(root, f)
                if os.path.islink(p): continue
                try:
                    raw = open(p, 'rb').read()
                    text = raw.decode('utf-8')
                except (UnicodeDecodeError, OSError):
                    continue
                new = rewrite(text, port)
                if new != text:
                    with open(p, 'w', encoding='utf-8', newline='') as fh:
                        fh.write(new)
    if copies_only:
        print(f'copies for {[t for t, _ in targets]} ({len(repos)} repositories); jobs.tsv not recomputed')
        return
    fill = fill_undefined(jobs, os.path.join(work, targets[-1][0]))
    with open(os.path.join(work, 'jobs.tsv'), 'w') as out:
        for i, (repo, rel, env, src) in enumerate(jobs):
            out.write(f'{i}\t{repo}\t{rel}\t{env}\t{src}\t{",".join(fill[i])}\n')
    print(f'{len(jobs)} files in {len(repos)} repositories; copies for {[t for t, _ in targets]}; '
          f'{sum(1 for f in fill if f)} files get dummy values for never-defined variables')


def fill_undefined(jobs, vcopy):
    """Variables a file uses that nothing defines (secrets kept out of the repository, e.g. in
    http-client.private.env.json): found with `volley check --json`, then dropped when any .http or
    script text of the repository assigns them (so that a variable set by a script or imported from
    another file is NOT filled: that would hide a real difference). Both tools get `--var NAME=dummy-NAME`."""
    import subprocess
    texts = {}
    fill = []
    for repo, rel, env, src in jobs:
        if repo not in texts:
            t = []
            for root, _, files in os.walk(os.path.join(CORPUS, repo)):
                for f in files:
                    if re.search(r'\.(http|rest|js|cjs|mjs|ts|json)$', f, re.I):
                        try: t.append(open(os.path.join(root, f), encoding='utf-8', errors='replace').read())
                        except OSError: pass
            texts[repo] = '\n'.join(t)
        cmd = [os.environ.get('VOLLEY', os.path.join(os.environ.get('COMPAT_DIR', '/tmp/compat'), 'volley')), 'check', '--json', '--color', 'never', rel]
        if env:
            cmd += ['-p', env]
        try:
            out = subprocess.run(cmd, cwd=os.path.join(vcopy, repo), capture_output=True, text=True, timeout=30).stdout
        except subprocess.TimeoutExpired:
            out = ''
        names = []
        for line in out.splitlines():
            try: d = json.loads(line)
            except ValueError: continue
            for dg in d.get('diagnostics', []):
                if dg.get('code') == 'undefined-variable':
                    m = re.search(r'`([^`]+)`', dg.get('message', ''))
                    if m and re.fullmatch(r'[A-Za-z_][\w-]*', m.group(1)) and m.group(1) not in names:
                        names.append(m.group(1))
        keep = []
        for n in names:
            v = re.escape(n)
            assigned = re.search(r'(^\s*@' + v + r'\s*=|exports\.' + v + r'\b|\$global\.' + v + r'\b|'
                                 r'(set|setVariable)\(\s*["\']' + v + r'["\']|\b' + v + r'\s*=[^=]|'
                                 r'^\s*#\s*@name\s+' + v + r'\s*$|["\']' + v + r'["\']\s*:)', texts[repo], re.M)
            if not assigned:
                keep.append(n)
        fill.append(keep)
    return fill


if __name__ == '__main__':
    main()
