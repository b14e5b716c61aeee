#!/bin/bash
# ncu --set full of the sampler's first kernel (launch 4 of MaskKernel) on ordered and randn, big nuclei, B = 1024,
# with the per-instruction SASS table; then --smoke of the builds in $SMOKE
export LD_LIBRARY_PATH=$PWD/ship/lib:$LD_LIBRARY_PATH
(cd ship/bin && xz -dc perfs.tar.xz | tar xf - && chmod +x perf_*)
R=/tmp/res; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/device.txt; date -u >> $R/device.txt
for b in $SMOKE; do
  ship/bin/perf_$b --smoke > $R/smoke_$b.txt 2>&1; echo "smoke $b rc=$? $(date -u +%T)" >> $R/device.txt
done
for shape in ordered randn; do
  timeout 150 ncu --set full --import-source no --kernel-name-base demangled --kernel-name regex:MaskKernel --launch-skip 4 --launch-count 1 -o $R/first_$shape ship/bin/perf_$NCU --benchmark_filter="^qrita-sample/$shape/p0.7/V:128256/B:1024/" --benchmark_min_time=0.01 > $R/first_$shape.log 2>&1
  echo "$shape rc=$? $(date -u +%T)" >> $R/device.txt
  ncu --import $R/first_$shape.ncu-rep --page details --csv > $R/details_$shape.csv 2>&1
  ncu --import $R/first_$shape.ncu-rep --page source --csv --print-source sass > $R/sass_$shape.csv 2>&1
  rm -f $R/first_$shape.ncu-rep
done
cd $R && tar cf - . | xz -6 > $OUT/ncu.tar.xz
