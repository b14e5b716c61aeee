# sum42.py DIR BASE NEW...: best of the runs found per cell; ratios NEW/BASE by call, batch,
# group (big nuclei: p = 0.7 on randn, uniform, temp2, ordered); target counts per build.
import json, sys, math, glob, collections
d, base, news = sys.argv[1], sys.argv[2], sys.argv[3:]
def load(f):
    j = json.load(open(f))
    return {b['name'].replace('/manual_time', ''): b['real_time'] for b in j['benchmarks']
            if b.get('run_type', 'iteration') == 'iteration'}
best = {}
for b in [base] + news:
    runs = [load(f) for f in sorted(glob.glob(f'{d}/{b}_[0-9].json'))]
    best[b] = {n: min(r[n] for r in runs if n in r) for n in runs[0]}
    print(b, 'runs', len(runs))
def gm(xs): return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float('nan')
big = lambda n: '/p0.7/' in n and any(s in n for s in ('randn/', 'uniform/', 'temp2/', 'ordered/'))
for new in news:
    print(f'\ntime {new} / {base} (best of runs), geometric mean (range)')
    for call in ('qrita', 'qrita-sample', 'qrita-cand64', 'copy'):
        for B in ('1', '64', '1024'):
            for sub, pred in (('big nuclei', big), ('others', lambda n: not big(n))):
                rs = [best[new][n] / best[base][n] for n in best[new] if n.startswith(call + '/')
                      and n.endswith('/B:' + B) and n in best[base] and pred(n)]
                if rs: print(f'{call:14s} B={B:5s} {sub:10s} n={len(rs):3d} {gm(rs):.3f} ({min(rs):.3f}-{max(rs):.3f})')
print()
for k in [base] + news:
    t = best[k]; cnt = collections.Counter()
    for n in t:
        if n.startswith('qrita/'):
            rest = n[6:]; B = rest.rsplit('B:', 1)[1]
            s = t.get('qrita-sample/' + rest); c = t.get('qrita-cand64/' + rest)
            if s: cnt['s'] += 1; cnt['s_ok_B' + B] += s / t[n] <= 1.15
            if c: cnt['c'] += 1; cnt['c_ok_B' + B] += c / t[n] <= 1.2
    print(k, 'sample<=1.15x mask', {b: cnt['s_ok_B' + b] for b in ('1', '64', '1024')}, 'of', cnt['s'],
          '| cand<=1.2x mask', {b: cnt['c_ok_B' + b] for b in ('1', '64', '1024')}, 'of', cnt['c'])
print('\nbig nuclei (us; x mask):', ' | '.join([base] + news))
for n in sorted(best[base]):
    if not n.startswith('qrita/') or not big(n): continue
    rest = n[6:]; row = f'{rest:30s}'
    for k in [base] + news:
        m = best[k][n]; s = best[k].get('qrita-sample/' + rest); c = best[k].get('qrita-cand64/' + rest)
        row += f' | {m:7.1f} {s:7.1f} ({s/m:.2f}) {c:7.1f} ({c/m:.2f})'
    print(row)
