#!/bin/bash
export LD_LIBRARY_PATH=$PWD/ship/lib:$LD_LIBRARY_PATH
(cd ship/bin && xz -dc perfs.tar.xz | tar xf - && chmod +x perf_*)
R=/tmp/res; mkdir -p $R
M=sm__cycles_active.max,sm__cycles_active.min,sm__cycles_active.avg,sm__cycles_elapsed.max,sm__ctas_launched.max,sm__ctas_launched.min,sm__ctas_launched.sum,sm__warps_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum
for shape in ordered randn; do
  for sk in 4 5; do
  timeout 100 ncu --metrics $M --kernel-name-base demangled --kernel-name regex:MaskKernel --launch-skip $sk --launch-count 1 --csv ship/bin/perf_$NCU --benchmark_filter="^qrita-sample/$shape/p0.7/V:128256/B:1024/" --benchmark_min_time=0.01 > $R/m_${shape}_$sk.csv 2>&1
  done
done
grep -h '"sm__\|"gpu__' $R/m_*.csv | cut -d, -f1,14- 
cd $R && tar cf - m_*.csv | xz -6 > $OUT/metrics.tar.xz
