#!/bin/bash
# ncu45src.sh: source counters (SASS, with the build's line info) of the float sampler's launches NCU_KERNELS,
# builds NCU_BUILDS, on NCU_CELL (default randn p0.7 V 128256 B 1). CSV kept (xz) for the local line mapping.
cd "$(dirname "$0")"; HERE=$PWD
export LD_LIBRARY_PATH=$PWD/lib:$LD_LIBRARY_PATH
R=$OUT/src_${NCU_CALL:-qrita-sample}; mkdir -p $R
ls /tmp/perf_* > /dev/null 2>&1 || (cd /tmp && xz -dc $HERE/bin/perfs.tar.xz | tar xf - && chmod +x perf_*)
CELL=${NCU_CELL:-randn/p0.7/V:128256/B:1/}
for b in ${NCU_BUILDS:-e}; do
  for k in ${NCU_KERNELS:-SplitGather SplitScan}; do
    n=src_${k}_$b
    timeout 200 ncu --clock-control none --section SourceCounters --section WarpStateStats --section LaunchStats --kernel-name-base demangled -k regex:$k --launch-skip 10 --launch-count 1 -o $R/$n /tmp/perf_$b --benchmark_filter="^${NCU_CALL:-qrita-sample}/$CELL" --benchmark_min_time=0.05 > $R/ncu_$n.log 2>&1
    echo "$b $k rc=$? $(date -u +%T)"
    ncu --import $R/$n.ncu-rep --page source --csv --print-source sass > $R/$n.csv 2>&1
    ncu --import $R/$n.ncu-rep --page details > $R/details_$n.txt 2>&1
    xz -1 $R/$n.csv; rm -f $R/$n.ncu-rep
  done
done
tar cf - -C $R . > $R.tar && rm -rf $R
