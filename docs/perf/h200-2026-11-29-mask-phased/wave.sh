#!/bin/bash
# wave.sh: is the randn step at B = 512 -> 544 a second wave? (1) the mask and the sampler on the
# first B rows (randn, p = 0.7, V = 128256, one team a row) for B around 528 = 4 x 132;
# (2) ncu's launch statistics (occupancy limits, waves) of the mask's kernel at B = 528 and 544.
export LD_LIBRARY_PATH=$PWD/ship/lib:$LD_LIBRARY_PATH
(cd ship/bin && xz -dc perfs.tar.xz | tar xf - && chmod +x perf_*)
B=520,524,526,527,528,529,530,532,536,544
for c in qrita qrita-sample; do
  timeout 200 ship/bin/perf_dm --teams-per-row=1 --batches=$B --benchmark_filter="^$c/randn/p0.7/V:128256/" --benchmark_out=$OUT/wave_$c.json --benchmark_out_format=json > $OUT/wave_$c.log 2>&1
  echo "$c rc=$? $(date -u +%T)"
done
M=launch__grid_size,launch__block_size,launch__registers_per_thread,launch__shared_mem_per_block_dynamic,launch__shared_mem_per_block_static,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__occupancy_limit_warps,launch__occupancy_limit_blocks,launch__waves_per_multiprocessor,sm__warps_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum
for b in 528 544; do
  timeout 120 ncu --metrics $M --launch-skip 20 --launch-count 3 ship/bin/perf_dm --teams-per-row=1 --batches=$b --benchmark_filter="^qrita/randn/p0.7/V:128256/" --benchmark_min_time=0.05 > $OUT/ncu_wave_$b.txt 2>&1
  echo "ncu $b rc=$? $(date -u +%T)"
done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> $OUT/wave_device.txt; date -u >> $OUT/wave_device.txt
