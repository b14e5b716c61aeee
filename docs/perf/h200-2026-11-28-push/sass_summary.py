#!/usr/bin/env python3
"""Sums over ncu's per-instruction SASS tables (ncu --import X.ncu-rep --page source --csv
--print-source sass > sass_SHAPE.csv, as ncu_full.sh writes them; 32 MB each, not committed)
and the details pages (ncu_details_SHAPE.csv.xz, unpacked). Usage: sass_summary.py DIR."""
import csv, io, sys

def num(x):
    try:
        return float(x.replace(',', ''))
    except ValueError:
        return 0.0

d = sys.argv[1]
print("shape    kernel   time       issue busy  DRAM thr  push blocks: stall samples / warp instructions")
for shape in ['randn', 'uniform', 'ordered']:
    txt = open(f'{d}/sass_{shape}.csv').read().split('\n')
    idx = [i for i, l in enumerate(txt) if l.startswith('"Kernel Name"')] + [len(txt)]
    det = list(csv.reader(open(f'{d}/details_{shape}.csv')))
    dh = det[0]
    # the page holds each profiled kernel's table twice, identical: tables 0
    # and 1 the first kernel's, 2 and 3 the deferred second kernel's
    for k, name in [(0, 'first '), (2, 'second')]:
        rows = list(csv.reader(io.StringIO('\n'.join(txt[idx[k] + 1:idx[k + 1]]))))
        hdr = rows[0]
        data = [dict(zip(hdr, r)) for r in rows[1:] if len(r) == len(hdr)]
        s = [num(x['Warp Stall Sampling (All Samples)']) for x in data]
        ex = [num(x['Instructions Executed']) for x in data]
        tot, T = sum(s), sum(ex)
        # A push: a generic ATOM.E.ADD that one lane executes, with the block of
        # instructions around it executed as often (the LDLs, the stores).
        g = ge = n = 0
        for j, x in enumerate(data):
            if 'ATOM.E.ADD' in x['Source'] and ex[j] > 1000 and num(x['Avg. Threads Executed']) <= 2:
                n += 1
                e, a, b = ex[j], j, j
                while a > 0 and abs(ex[a - 1] - e) < 0.02 * e: a -= 1
                while b + 1 < len(data) and abs(ex[b + 1] - e) < 0.02 * e: b += 1
                g += sum(s[a:b + 1]); ge += sum(ex[a:b + 1])
        kid = str(k // 2)
        m = {r[dh.index('Metric Name')]: (r[dh.index('Metric Value')], r[dh.index('Metric Unit')])
             for r in det[1:] if r[0] == kid}
        dur, unit = m['Duration']
        ms = num(dur) / 1000 if unit.startswith('u') else num(dur)
        print(f"{shape:8s} {name}  {ms:6.3f} ms   {m['Issue Slots Busy'][0]:>6s}%   "
              f"{m['DRAM Throughput'][0]:>6s}%   {n} sites: {100 * g / tot:4.1f}% / {100 * ge / T:3.1f}%")
