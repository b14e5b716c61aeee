#!/bin/bash
# A/B over the default grid (B = 1, 64, 1024): base (55dd77f, landed) against new (topp_range: bounds from counts loaded four at a time, one division a call; 31st session, not landed),
# mask, sampler, list (C = 64) and the copy, two runs each.
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/lib:$LD_LIBRARY_PATH
(cd bin && xz -dc perfs.tar.xz | tar xf - && chmod +x perf_*)
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv > $OUT/device.txt
date -u >> $OUT/device.txt
./bin/perf_new --smoke > $OUT/smoke_new.txt 2>&1; echo "smoke new rc=$? $(date -u +%T)" | tee -a $OUT/device.txt
F=${FILTER:-'^(qrita|qrita-sample|qrita-cand64|copy)/'}
for rep in 1 2; do
  for b in new base; do
    timeout 280 ./bin/perf_$b ${BATCHES:+--batches=$BATCHES} --benchmark_filter="$F" --benchmark_out=$OUT/${b}_$rep.json --benchmark_out_format=json > $OUT/${b}_$rep.log 2>&1
    echo "$b $rep rc=$? $(date -u +%T)" | tee -a $OUT/device.txt
  done
done
