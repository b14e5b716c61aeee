#!/bin/bash
# ncu44.sh: gpu__time_duration per launch of the sampler, builds NCU_BUILDS, on the cells NCU_CELLS
cd "$(dirname "$0")"; HERE=$PWD
export LD_LIBRARY_PATH=$PWD/lib:$LD_LIBRARY_PATH
R=$OUT/res; mkdir -p $R
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > $R/device_ncu.txt; date -u >> $R/device_ncu.txt
ls /tmp/perf_* > /dev/null 2>&1 || (cd /tmp && xz -dc $HERE/bin/perfs.tar.xz | tar xf - && chmod +x perf_*)
for b in ${NCU_BUILDS:-a l1}; do
  for cell in ${NCU_CELLS:-'randn/p0.7/V:128256/B:1/' 'serving/t0.7-mp0.05-k50-p0.9/V:128256/B:1/'}; do
    timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum --launch-skip 40 --launch-count 60 --print-summary per-kernel /tmp/perf_$b --benchmark_filter="^qrita-sample/$cell" --benchmark_min_time=0.05 > $R/ncu_${b}_$(echo $cell | tr '/:.' '___').txt 2>&1
    echo "$b $cell rc=$? $(date -u +%T)" | tee -a $R/device_ncu.txt
  done
done
tar cf - -C $R . | xz -1 > $OUT/res_ncu.tar.xz
