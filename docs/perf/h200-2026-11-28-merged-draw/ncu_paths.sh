#!/bin/bash
export LD_LIBRARY_PATH=$PWD/ship/lib:$LD_LIBRARY_PATH
(cd ship/bin && xz -dc perfs.tar.xz | tar xf - && chmod +x perf_*)
R=/tmp/res; mkdir -p $R
nvidia-smi --query-gpu=name --format=csv > $R/device.txt; date -u >> $R/device.txt
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__inst_executed.sum,lts__t_sectors_srcunit_tex_op_read.sum
for b in base merge; do for shape in ordered randn uniform; do
  timeout 120 ncu --metrics $M --kernel-name-base demangled --kernel-name regex:MaskKernel --launch-skip 4 --launch-count 2 --csv ship/bin/perf_$b --benchmark_filter="^qrita-sample/$shape/p0.7/V:128256/B:1024/" --benchmark_min_time=0.01 > $R/${b}_$shape.csv 2> $R/${b}_$shape.err
  echo "$b $shape rc=$? $(date -u +%T)" >> $R/device.txt
done; done
cd $R && tar cf - . | xz -6 > $OUT/ncu.tar.xz
