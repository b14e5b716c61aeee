# sum40.py DIR NEW BASE: ratios NEW/BASE (best of two runs) by call, batch and group,
# including qrita-bf16; and the bf16 <= 0.6x fp32 count at B = 1024 for each build.
import json, sys, math
d, NEW, BASE = sys.argv[1], sys.argv[2], sys.argv[3]
def load(f):
    j = json.load(open(f))
    return {b['name'].replace('/manual_time', ''): b['real_time'] for b in j['benchmarks']
            if b.get('run_type', 'iteration') == 'iteration'}
runs = {k: [load(f'{d}/{k}_{r}.json') for r in (1, 2)] for k in (NEW, BASE)}
best = {k: {n: min(r[n] for r in runs[k] if n in r) for n in runs[k][0]} for k in runs}
gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))
big = lambda n: '/p0.7/' in n and any(s in n for s in ('randn/', 'uniform/', 'temp2/', 'ordered/'))
for call in ('qrita-bf16',):
    for B in ('1', '64', '1024'):
        for sub, pred in (('big nuclei', big), ('others', lambda n: not big(n))):
            rs = [best[NEW][n] / best[BASE][n] for n in best[NEW]
                  if n.startswith(call + '/') and n.endswith('/B:' + B) and n in best[BASE] and pred(n)]
            if rs: print(f'{call:14s} B={B:5s} {sub:10s} n={len(rs):3d} {gm(rs):.3f} ({min(rs):.3f}-{max(rs):.3f})')
for k in (BASE, NEW):
    t = best[k]; ok = tot = 0
    for n in t:
        if n.startswith('qrita-bf16/') and n.endswith('/B:1024'):
            f = t.get('qrita/' + n[len('qrita-bf16/'):])
            if f: tot += 1; ok += t[n] / f <= 0.6
    print(k, 'bf16 <= 0.6x fp32 at B = 1024:', ok, '/', tot)
