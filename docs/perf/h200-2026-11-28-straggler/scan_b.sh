#!/bin/bash
# scan_b.sh: the sampler's whole call (both kernels) on the first B rows of a shape, one team a row,
# for every B in $BATCHES (p = 0.7, V = 128256), to find rows that hold a launch up.
# Call 3 ran SHAPES="ordered randn" BATCHES=32,64,...,1024 (steps of 32); call 4 SHAPES=ordered
# BATCHES=321,322,...,352 (the runs had these values written in, and BIN=val); call 5 BIN=dm and BIN=val.
export LD_LIBRARY_PATH=$PWD/ship/lib:$LD_LIBRARY_PATH
(cd ship/bin && xz -dc perfs.tar.xz | tar xf - && chmod +x perf_*)
R=/tmp/res; mkdir -p $R
for s in $SHAPES; do
  timeout 250 ship/bin/perf_${BIN:-val} --teams-per-row=1 --batches=$BATCHES --benchmark_filter="^qrita-sample/$s/p0.7/V:128256/" --benchmark_out=$R/scan_${BIN:-val}_$s.json --benchmark_out_format=json > $R/scan_${BIN:-val}_$s.log 2>&1
  echo "$s rc=$? $(date -u +%T)"
done
cp $R/scan_* $OUT/
