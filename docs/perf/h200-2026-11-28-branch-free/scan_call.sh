#!/bin/bash
# scan_call.sh: scan_b.sh (../h200-2026-11-28-straggler) for any call: each call in $CALLS (qrita =
# the mask, qrita-sample, qrita-cand64) on the first B rows of each shape in $SHAPES, one team a
# row, for every B in $BATCHES (p = 0.7, V = 128256), binary perf_$BIN (default dm).
export LD_LIBRARY_PATH=$PWD/ship/lib:$LD_LIBRARY_PATH
(cd ship/bin && xz -dc perfs.tar.xz | tar xf - && chmod +x perf_*)
R=/tmp/res; mkdir -p $R
for c in $CALLS; do for s in $SHAPES; do
  timeout 250 ship/bin/perf_${BIN:-dm} --teams-per-row=1 --batches=$BATCHES --benchmark_filter="^$c/$s/p0.7/V:128256/" --benchmark_out=$R/scan_${c}_${BIN:-dm}_$s.json --benchmark_out_format=json > $R/scan_${c}_${BIN:-dm}_$s.log 2>&1
  echo "$c $s rc=$? $(date -u +%T)"
done; done
cp $R/scan_* $OUT/
