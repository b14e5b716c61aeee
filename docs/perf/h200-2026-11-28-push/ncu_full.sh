#!/bin/bash
export LD_LIBRARY_PATH=$PWD/ship/lib:$LD_LIBRARY_PATH
(cd ship/bin && xz -dc perfs.tar.xz | tar xf - perf_base && chmod +x perf_*)
R=/tmp/res; mkdir -p $R
nvidia-smi --query-gpu=name --format=csv > $R/device.txt; date -u >> $R/device.txt
for shape in randn uniform ordered; do
  timeout 150 ncu --set full --import-source no --kernel-name-base demangled --kernel-name regex:MaskKernel --launch-skip 4 --launch-count 2 -o $R/full_$shape ship/bin/perf_base --benchmark_filter="^qrita-sample/$shape/p0.7/V:128256/B:1024/" --benchmark_min_time=0.01 > $R/full_$shape.log 2>&1
  echo "$shape rc=$? $(date -u +%T)" >> $R/device.txt
  ncu --import $R/full_$shape.ncu-rep --page details --csv > $R/details_$shape.csv 2>&1
  ncu --import $R/full_$shape.ncu-rep --page raw --csv > $R/raw_$shape.csv 2>&1
  ncu --import $R/full_$shape.ncu-rep --page source --csv --print-source sass > $R/sass_$shape.csv 2>&1
done
cd $R && tar cf - . | xz -6 > $OUT/ncu.tar.xz
