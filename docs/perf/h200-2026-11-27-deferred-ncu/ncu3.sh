#!/bin/bash
# as ncu2.sh, with a short summary on stdout: kernel (functor, tag), invocations, mean us
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/lib:$LD_LIBRARY_PATH
[ -x /tmp/perf_base ] || { xz -dc bin/perf_base.xz > /tmp/perf_base && chmod +x /tmp/perf_base; }
nvidia-smi --query-gpu=name --format=csv,noheader
for cell in randn/p0.7/V:128256/B:1/ randn/p0.7/V:128256/B:64/ randn/p0.7/V:128256/B:1024/ uniform/p0.7/V:262144/B:1/ serving/k50p0.9/V:128256/B:1/; do
  for c in qrita qrita-sample qrita-cand64; do
    timeout 90 ncu --metrics gpu__time_duration.sum --launch-skip 40 --launch-count 60 --print-summary per-kernel /tmp/perf_base --benchmark_filter="^$c/$cell" --benchmark_min_time=0.05 > /tmp/ncu.txt 2>&1
    echo "== $c/$cell"
    python3 - <<'PY'
import re
lines=open('/tmp/ncu.txt').read().splitlines()
for i,l in enumerate(lines):
    if 'Invocations' not in l: continue
    k=re.search(r'(SplitKernel<[^>]*>|MaskKernel<[^>]*>)',l); tag=re.search(r'LaunchBounds<\d+, \d+>, (\w+),',l)
    name=k.group(1) if k else l.strip()[:50]
    for m in lines[i+1:i+6]:
        if 'gpu__time_duration' in m:
            d=m.split(); print('  ', name, tag.group(1) if tag else '', 'x'+l.split('Invocations')[1].strip(), d[1], 'min', d[2], 'max', d[3], 'avg', d[4]); break
PY
  done
done
