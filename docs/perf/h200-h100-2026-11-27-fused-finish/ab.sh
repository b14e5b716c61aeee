#!/bin/bash
# 33rd session: fused (split_deferred_finish's work inside split_gather) against base (landed kernels, 563eefc),
# twice each; every output in one tarball (the device returns at most 8 files).
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/lib:$LD_LIBRARY_PATH
(cd bin && xz -dc perfs.tar.xz | tar xf - && chmod +x perf_*)
R=/tmp/res; mkdir -p $R
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv > $R/device.txt
date -u >> $R/device.txt
for b in ${BUILDS:-fused base}; do ./bin/perf_$b --smoke > $R/smoke_$b.txt 2>&1; echo "smoke $b rc=$? $(date -u +%T)" | tee -a $R/device.txt; done
F=${FILTER:-'^(qrita|qrita-sample|qrita-cand64|copy)/'}
for rep in 1 2; do
  for b in ${BUILDS:-fused base}; do
    timeout ${TMO:-200} ./bin/perf_$b ${BATCHES:+--batches=$BATCHES} --benchmark_filter="$F" --benchmark_out=$R/${b}_$rep.json --benchmark_out_format=json > $R/${b}_$rep.log 2>&1
    echo "$b $rep rc=$? $(date -u +%T)" | tee -a $R/device.txt
  done
done
tar cf - -C $R . | xz -6 > $OUT/res.tar.xz
