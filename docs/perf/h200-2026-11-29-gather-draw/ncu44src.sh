#!/bin/bash
# ncu44src.sh: source counters (SASS) of the float sampler's NCU_KERNEL launch (default SplitGather), builds NCU_BUILDS, randn p0.7 B=1
cd "$(dirname "$0")"; HERE=$PWD
export LD_LIBRARY_PATH=$PWD/lib:$LD_LIBRARY_PATH
R=$OUT/res; mkdir -p $R
(cd /tmp && xz -dc $HERE/bin/perfs.tar.xz | tar xf - && chmod +x perf_*)
for b in ${NCU_BUILDS:-a l1}; do
  timeout 200 ncu --clock-control none --section SourceCounters --section WarpStateStats --section LaunchStats --kernel-name-base demangled -k regex:${NCU_KERNEL:-SplitGather} --launch-skip 10 --launch-count 1 -o $R/src_${NCU_KERNEL:-SplitGather}_$b /tmp/perf_$b --benchmark_filter='^qrita-sample/randn/p0.7/V:128256/B:1/' --benchmark_min_time=0.05 > $R/ncu_src_${NCU_KERNEL:-SplitGather}_$b.log 2>&1
  echo "$b rc=$? $(date -u +%T)"
  ncu --import $R/src_${NCU_KERNEL:-SplitGather}_$b.ncu-rep --page source --csv --print-source sass > $R/src_${NCU_KERNEL:-SplitGather}_$b.csv 2>&1
  ncu --import $R/src_${NCU_KERNEL:-SplitGather}_$b.ncu-rep --page details > $R/details_${NCU_KERNEL:-SplitGather}_$b.txt 2>&1
  rm -f $R/src_${NCU_KERNEL:-SplitGather}_$b.ncu-rep
done
tar cf - -C $R . | xz -1 > $OUT/res_src.tar.xz
