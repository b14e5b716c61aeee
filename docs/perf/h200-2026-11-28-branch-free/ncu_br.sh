#!/bin/bash
# ncu_br.sh: the sampler's second kernel (launch 5) and first kernel (launch 4), randn, p = 0.7,
# V = 128256, B = 1024, builds $BUILDS: time, instructions, issue activity, warp stall reasons.
export LD_LIBRARY_PATH=$PWD/ship/lib:$LD_LIBRARY_PATH
(cd ship/bin && xz -dc perfs.tar.xz | tar xf - && chmod +x perf_*)
R=/tmp/res; mkdir -p $R
for b in $BUILDS; do
  for sk in 4 5; do
    timeout 120 ncu --section SpeedOfLight --section WarpStateStats --section InstructionStats --section Occupancy \
      --kernel-name-base demangled --kernel-name regex:MaskKernel --launch-skip $sk --launch-count 1 --csv --page details \
      ship/bin/perf_$b --benchmark_filter="^qrita-sample/randn/p0.7/V:128256/B:1024/" --benchmark_min_time=0.01 > $R/ncu_${b}_$sk.csv 2>&1
    echo "$b $sk rc=$? $(date -u +%T)"
  done
done
cd $R && tar cf - ncu_*.csv | xz -6 > $OUT/ncu.tar.xz
