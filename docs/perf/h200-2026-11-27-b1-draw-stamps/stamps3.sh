#!/bin/bash
# stamped CLI (32nd session, /tmp/stamp3/patch.py on the landed headers): globaltimer at split_scan's entry, the deciding
# team's steps and the ranked draw's, the later launches' entries and exits. Batch 1, V = 128256.
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/lib:$LD_LIBRARY_PATH
xz -dc bin/qrita-cli-stamp3.xz > /tmp/cli && chmod +x /tmp/cli
R=/tmp/res3; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader | tee $R/device.txt
for sh in serving randn ordered; do
  for flt in "--k 50 --p 0.9" "--k 10" "--k 50"; do
    for mode in "--sample" "--candidates 64"; do
      echo "== $sh $flt $mode" | tee -a $R/stamps.txt
      /tmp/cli --shape $sh --vocab 128256 --batch 1 $flt $mode --repeat 5 --rows 0 --no-check > $R/out.txt 2>&1; echo "rc=$?" >> $R/stamps.txt
      grep -E "median" $R/out.txt >> $R/stamps.txt
      python3 stamps3.py $R/out.txt >> $R/stamps.txt
    done
  done
done
cat $R/stamps.txt
