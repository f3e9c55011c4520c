#!/usr/bin/env python3
"""Run one tool over a shard of the jobs, one file at a time, marking each file in the capture log.

usage: worker.py WORKDIR TOOL COPY PORT K N TIMEOUT_S
"""
import json, os, signal, subprocess, sys, time, urllib.request

work, tool, copy, port, k, n, tmo = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6]), float(sys.argv[7])
HTTPYAC = os.path.join(os.environ.get('COMPAT_DIR', '/tmp/compat'), 'node', 'node_modules', '.bin', 'httpyac')
VOLLEY = os.environ.get('VOLLEY', os.path.join(os.environ.get('COMPAT_DIR', '/tmp/compat'), 'volley'))
REQ_TIMEOUT_MS = '5000'
outdir = os.path.join(work, 'out', tool)
os.makedirs(outdir, exist_ok=True)
home = os.path.join(work, 'home', copy)
os.makedirs(home, exist_ok=True)
env = {k2: v for k2, v in os.environ.items() if 'proxy' not in k2.lower()}
env.update({'HOME': home, 'NO_COLOR': '1', 'XDG_CACHE_HOME': os.path.join(home, '.cache'),
            'XDG_CONFIG_HOME': os.path.join(home, '.config')})
env.pop('VOLLEY_PROFILE', None)
env.pop('COMPAT_DIR', None)  # run.sh's knob, kept out of the tools' environment

meta = open(os.path.join(work, 'out', f'{copy}.meta.jsonl'), 'a')
for line in open(os.path.join(work, 'jobs.tsv')):
    jid, repo, rel, envname, _src, fill = line.rstrip('\n').split('\t')
    fill = [f for f in fill.split(',') if f]
    if int(jid) % n != k:
        continue
    try:
        urllib.request.urlopen(f'http://127.0.0.1:{port}/__mark/{jid}', timeout=5).read()
    except Exception as e:
        print('mark failed', e, file=sys.stderr)
    if tool == 'httpyac':
        cmd = [HTTPYAC, 'send', rel, '--all', '--timeout', REQ_TIMEOUT_MS, '-o', 'short', '--no-color']
        for f in fill:
            cmd += ['--var', f'{f}=dummy-{f}']
        if envname:
            cmd += ['--env', envname]
    else:
        cmd = [VOLLEY, 'run', rel, '--yes', '--color', 'never', '--timeout', REQ_TIMEOUT_MS]
        for f in fill:
            cmd += ['--var', f'{f}=dummy-{f}']
        if envname:
            cmd += ['--profile', envname]
    cwd = os.path.join(work, copy, repo)
    t0 = time.time()
    timed_out = False
    with open(os.path.join(outdir, f'{jid}.out'), 'wb') as fo, open(os.path.join(outdir, f'{jid}.err'), 'wb') as fe:
        p = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=fo, stderr=fe, env=env, start_new_session=True)
        try:
            rc = p.wait(timeout=tmo)
        except subprocess.TimeoutExpired:
            timed_out = True
            try:
                os.killpg(p.pid, signal.SIGTERM)
                try:
                    p.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait()
            except ProcessLookupError:
                pass
            rc = p.returncode
    meta.write(json.dumps({'id': int(jid), 'tool': tool, 'rc': rc, 'secs': round(time.time() - t0, 2),
                           'timed_out': timed_out, 'env': envname, 'cmd': cmd}) + '\n')
    meta.flush()
# a final mark closes the last file's span
try:
    urllib.request.urlopen(f'http://127.0.0.1:{port}/__mark/end', timeout=5).read()
except Exception:
    pass
