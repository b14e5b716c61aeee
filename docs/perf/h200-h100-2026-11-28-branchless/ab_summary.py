import json, sys, math, collections
d = sys.argv[1]
NEW = sys.argv[2] if len(sys.argv) > 2 else 'new'
BASE = sys.argv[3] if len(sys.argv) > 3 else 'base'
def load(f):
    j = json.load(open(f))
    return {b['name'].replace('/manual_time',''): b['real_time'] for b in j['benchmarks'] if b.get('run_type','iteration')=='iteration'}
runs = {k: [load(f'{d}/{k}_{r}.json') for r in (1,2)] for k in (NEW, BASE)}
best = {k: {n: min(r[n] for r in runs[k] if n in r) for n in runs[k][0]} for k in runs}
def gm(xs): return math.exp(sum(math.log(x) for x in xs)/len(xs)) if xs else float('nan')
print(f'time {NEW} / {BASE} (best of two runs), geometric mean (range) by call and batch')
for call in ('qrita','qrita-sample','qrita-cand64','copy'):
    for B in ('1','64','1024'):
        for sub,pred in (('big nuclei', lambda n: '/p0.7/' in n and any(s in n for s in ('randn/','uniform/','temp2/','ordered/'))), ('others', lambda n: not ('/p0.7/' in n and any(s in n for s in ('randn/','uniform/','temp2/','ordered/'))))):
            rs = [best[NEW][n]/best[BASE][n] for n in best[NEW] if n.startswith(call+'/') and n.endswith('/B:'+B) and n in best[BASE] and pred(n)]
            if rs: print(f'{call:14s} B={B:5s} {sub:10s} n={len(rs):3d} {gm(rs):.3f} ({min(rs):.3f}-{max(rs):.3f})')
print()
for k in (BASE, NEW):
    t = best[k]
    cnt = collections.Counter()
    for n in t:
        if n.startswith('qrita/'):
            rest = n[6:]; B = rest.rsplit('B:',1)[1]
            s = t.get('qrita-sample/'+rest); c = t.get('qrita-cand64/'+rest)
            if s: cnt['s_all']+=1; cnt['s_ok']+= s/t[n] <= 1.15; cnt['s_ok_B'+B]+= s/t[n] <= 1.15
            if c: cnt['c_all']+=1; cnt['c_ok']+= c/t[n] <= 1.2; cnt['c_ok_B'+B]+= c/t[n] <= 1.2
    print(k, 'sample<=1.15x mask', cnt['s_ok'], '/', cnt['s_all'], {b: cnt['s_ok_B'+b] for b in ('1','64','1024')}, '| cand<=1.2x mask', cnt['c_ok'], '/', cnt['c_all'], {b: cnt['c_ok_B'+b] for b in ('1','64','1024')})
print()
print(f'big nuclei: mask, sample (x mask), cand64 (x mask): {BASE} -> {NEW} (us)')
for n in sorted(best[NEW]):
    if n.startswith('qrita/') and '/p0.7/' in n and any(s in n for s in ('randn/','uniform/','temp2/','ordered/')):
        rest=n[6:]
        row=[]
        for k in (BASE, NEW):
            t=best[k]; row.append(f"{t[n]:8.1f} {t['qrita-sample/'+rest]:8.1f} ({t['qrita-sample/'+rest]/t[n]:.2f}) {t['qrita-cand64/'+rest]:8.1f} ({t['qrita-cand64/'+rest]/t[n]:.2f})")
        print(f'{rest:32s} {BASE} {row[0]} | {NEW} {row[1]}')
