#!/bin/bash
# 32nd session: rank (the ranked draw's and the list's copies on chip) against base (landed kernels, 55dd77f),
# rank / base twice; every output in one tarball (the device returns at most 8 files).
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/lib:$LD_LIBRARY_PATH
(cd bin && xz -dc perfs.tar.xz | tar xf - && chmod +x perf_*)
R=/tmp/res; mkdir -p $R
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv > $R/device.txt
date -u >> $R/device.txt
./bin/perf_rank --smoke > $R/smoke_rank.txt 2>&1; echo "smoke rank rc=$? $(date -u +%T)" | tee -a $R/device.txt
F=${FILTER:-'^(qrita|qrita-sample|qrita-cand64|copy)/'}
for rep in 1 2; do
  for b in ${BUILDS:-rank base}; do
    timeout 200 ./bin/perf_$b ${BATCHES:+--batches=$BATCHES} --benchmark_filter="$F" --benchmark_out=$R/${b}_$rep.json --benchmark_out_format=json > $R/${b}_$rep.log 2>&1
    echo "$b $rep rc=$? $(date -u +%T)" | tee -a $R/device.txt
  done
done
tar cf - -C $R . | xz -6 > $OUT/res.tar.xz
