#!/bin/bash
# ab3.sh with REPS (default "1 2"): the results packed after every run
export LD_LIBRARY_PATH=$PWD/ship/lib:$LD_LIBRARY_PATH
(cd ship/bin && xz -dc perfs.tar.xz | tar xf - && chmod +x perf_*)
R=${R:-/tmp/res}; mkdir -p $R
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv > $R/device.txt
date -u >> $R/device.txt
pack() { tar cf - -C $R . | xz -1 > $OUT/${TAG:-res}.tar.xz; }
for b in $SMOKE; do
  ship/bin/perf_$b --smoke > $R/smoke_$b.txt 2>&1; echo "smoke $b rc=$? $(date -u +%T)" | tee -a $R/device.txt
done
pack
F=${FILTER:-'^(qrita|qrita-sample|qrita-cand64|qrita-bf16|copy)/'}
for rep in ${REPS:-1 2}; do
  for b in $BUILDS; do
    timeout 280 ship/bin/perf_$b ${BATCHES:+--batches=$BATCHES} --benchmark_filter="$F" --benchmark_out=$R/${b}_$rep.json --benchmark_out_format=json > $R/${b}_$rep.log 2>&1
    echo "$b $rep rc=$? $(date -u +%T)" | tee -a $R/device.txt
    pack
  done
done
