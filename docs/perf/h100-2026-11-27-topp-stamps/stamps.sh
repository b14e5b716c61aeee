#!/bin/bash
# stamped CLI (31st session: /tmp/stamp2, the landed headers with the thirtieth session's stamps plus stamps inside topp_range and suffix_crossing)
# points of split_gather, deferred_cut, split_deferred_finish): one randn / uniform row, mask then sampler or list
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/lib:$LD_LIBRARY_PATH
xz -dc bin/qrita-cli-stamp2.xz > /tmp/cli && chmod +x /tmp/cli
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
for sh in randn uniform; do for V in 128256 262144; do
  for mode in "--sample" "--candidates 64"; do
    echo "== $sh V=$V $mode"
    /tmp/cli --shape $sh --vocab $V --batch 1 --k 0 --p 0.7 $mode --repeat 5 --rows 0 --no-check > /tmp/out.txt 2>&1; echo "rc=$?"
    grep -v -E "^(CHAIN|TEAM)" /tmp/out.txt | grep -E "launch|median" | head -4
    grep -E "^(CHAIN|TEAM)" /tmp/out.txt > /tmp/st.txt
    python3 stamps.py /tmp/st.txt
  done
done; done
