#!/bin/bash
# 35th session: ncu full sets on the big-nucleus cells (landed kernels, perf_head)
repo=$PWD
export LD_LIBRARY_PATH=$repo/ship/lib:$LD_LIBRARY_PATH
(cd ship/bin && xz -dc perfs.tar.xz | tar xf - && chmod +x perf_*)
P=ship/bin/perf_head
R=/tmp/res; mkdir -p $R
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv > $R/device.txt; date -u >> $R/device.txt
prof() { # name filter kernelregex skip count
  timeout 240 ncu --set full --kernel-name-base demangled --kernel-name regex:$3 --launch-skip $4 --launch-count $5 -o $R/$1 -f $P --benchmark_filter="$2" --benchmark_min_time=0.01 > $R/$1.log 2>&1
  echo "$1 rc=$? $(date -u +%T)" >> $R/device.txt
  ncu --import $R/$1.ncu-rep --page details > $R/$1.details.txt 2>&1
  ncu --import $R/$1.ncu-rep --page source --csv --print-source sass > $R/$1.sass.csv 2>&1
}
prof mask1024 '^qrita/randn/p0.7/V:128256/B:1024/' MaskKernel 4 1
prof samp1024 '^qrita-sample/randn/p0.7/V:128256/B:1024/' MaskKernel 4 2
prof samp1 '^qrita-sample/randn/p0.7/V:128256/B:1/' SplitKernel 9 3
prof mask1 '^qrita/randn/p0.7/V:128256/B:1/' SplitKernel 6 2
cd $R && tar cf - *.txt *.log *.csv | xz -6 > $OUT/prof.tar.xz
ls -la $R
