#!/bin/bash
# 35th session (run on an H200): A/B over the default grid (B = 1, 64, 1024) of perf builds (build_perf.sh of
# ../h200-h100-2026-11-27-fused-finish, then relink.sh: the object pruned to sm_90 SASS so that
# the binaries fit the device's 64 MiB working tree):
#   head:  the landed kernels (0ce38a4's perf build; the kernels of this session's start);
#   lean:  the gathering reads' per-entry code with fewer branches (BucketMap::index without a
#          branch, the candidate test on the value, the weight above a range by a select, scan_row's
#          tail weight under one uniform test), fixed_weight unchanged;
#   weigh: lean + the third reads weigh only what they use (the draw: entries above its buckets;
#          the list: nothing) (Weigh).
# The first call (h200_*.json.xz) compared "select" (lean + fixed_weight without its early
# return: fixed_weight_select.diff) against head. mask, sampler, list (C = 64) and the copy, two
# runs each, alternating. Run from the repository root with ship/ carried.
export LD_LIBRARY_PATH=$PWD/ship/lib:$LD_LIBRARY_PATH
(cd ship/bin && xz -dc perfs.tar.xz | tar xf - && chmod +x perf_*)
R=/tmp/res; mkdir -p $R
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv > $R/device.txt
date -u >> $R/device.txt
for b in ${SMOKE:-lean weigh}; do
  ship/bin/perf_$b --smoke > $R/smoke_$b.txt 2>&1; echo "smoke $b rc=$? $(date -u +%T)" | tee -a $R/device.txt
done
F=${FILTER:-'^(qrita|qrita-sample|qrita-cand64|copy)/'}
for rep in 1 2; do
  for b in ${BUILDS:-weigh lean head}; do
    timeout 280 ship/bin/perf_$b ${BATCHES:+--batches=$BATCHES} --benchmark_filter="$F" --benchmark_out=$R/${b}_$rep.json --benchmark_out_format=json > $R/${b}_$rep.log 2>&1
    echo "$b $rep rc=$? $(date -u +%T)" | tee -a $R/device.txt
  done
done
tar cf - -C $R . | xz -6 > $OUT/res.tar.xz
