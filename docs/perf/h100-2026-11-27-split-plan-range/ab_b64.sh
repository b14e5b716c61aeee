#!/bin/bash
# newB (no split_deferred_plan launch: every split team counts the plan) against new at B = 64, two runs each.
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/lib:$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
(cd bin && xz -dc perfs.tar.xz | tar xf - && chmod +x perf_*)
./bin/perf_newB --smoke > $OUT/smoke_newB.txt 2>&1; echo "smoke newB rc=$? $(date -u +%T)" | tee -a $OUT/device.txt
F='^(qrita|qrita-sample|qrita-cand64|copy)/'
for rep in 1 2; do
  for b in new newB; do
    timeout 150 ./bin/perf_$b --batches=64 --benchmark_filter="$F" --benchmark_out=$OUT/${b}_$rep.json --benchmark_out_format=json > $OUT/${b}_$rep.log 2>&1
    echo "$b $rep rc=$? $(date -u +%T)" | tee -a $OUT/device.txt
  done
done
