#!/bin/bash
# 32nd session: rank (the ranked draw's and the list's copies on chip: split_scan's deciding team, split_deferred_finish)
# and rankB (rank, and the merged histogram copied on chip for the deciding team's searches) against base (the landed
# kernels, 55dd77f). Order: smoke of both, then rank / rankB / base twice. BATCHES: --batches (default grid if unset).
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/lib:$LD_LIBRARY_PATH
(cd bin && xz -dc perfs.tar.xz | tar xf - && chmod +x perf_*)
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv > $OUT/device.txt
date -u >> $OUT/device.txt
for b in rank rankB; do ./bin/perf_$b --smoke > $OUT/smoke_$b.txt 2>&1; echo "smoke $b rc=$? $(date -u +%T)" | tee -a $OUT/device.txt; done
F=${FILTER:-'^(qrita|qrita-sample|qrita-cand64|copy)/'}
for rep in 1 2; do
  for b in rank rankB base; do
    timeout 200 ./bin/perf_$b ${BATCHES:+--batches=$BATCHES} --benchmark_filter="$F" --benchmark_out=$OUT/${b}_$rep.json --benchmark_out_format=json > $OUT/${b}_$rep.log 2>&1
    echo "$b $rep rc=$? $(date -u +%T)" | tee -a $OUT/device.txt
  done
done
