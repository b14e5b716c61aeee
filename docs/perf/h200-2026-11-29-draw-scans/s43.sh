#!/bin/bash
# s43.sh PART: the forty-third session's device calls.
#  ab:    --smoke of the SMOKE builds, then the BUILDS (n1: this session's, l1: the landed kernels) on the mask, the
#         sampler, the list and the copy, REPS runs each, interleaved
#  tests: the CUDA tests of test_sampling, test_random and test_cuda_graph (QRITA_TEST_LARGE=1), and
#         compute-sanitizer memcheck on the sampler's CUDA tests
cd "$(dirname "$0")"; HERE=$PWD
export LD_LIBRARY_PATH=$PWD/lib:$LD_LIBRARY_PATH
R=$OUT/res; mkdir -p $R
pack() { tar cf - -C $R . | xz -1 > $OUT/res_$1.tar.xz; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv > $R/device_$1.txt; date -u >> $R/device_$1.txt
case $1 in
ab)
  (cd /tmp && xz -dc $HERE/bin/perfs.tar.xz | tar xf - && chmod +x perf_*)
  for b in ${SMOKE:-n1}; do
    /tmp/perf_$b --smoke > $R/smoke_$b.txt 2>&1; echo "smoke $b rc=$? $(date -u +%T)" | tee -a $R/device_ab.txt
    tail -1 $R/smoke_$b.txt
  done
  pack ab
  F=${FILTER:-'^(qrita|qrita-sample|qrita-cand64|copy)/'}
  for rep in ${REPS:-1 2}; do
    for b in ${BUILDS:-n1 l1}; do
      timeout 200 /tmp/perf_$b ${BATCHES:+--batches=$BATCHES} --benchmark_filter="$F" --benchmark_out=$R/${b}_$rep.json --benchmark_out_format=json > $R/${b}_$rep.log 2>&1
      echo "$b $rep rc=$? $(date -u +%T)" | tee -a $R/device_ab.txt
      pack ab
    done
  done
  ;;
tests)
  (cd /tmp && xz -dc $HERE/bin/tests.tar.xz | tar xf -)
  QRITA_TEST_LARGE=1 timeout 240 /tmp/qrita_tests --gtest_brief=1 --gtest_output=json:$R/tests.json > $R/tests.log 2>&1; echo "tests rc=$? $(date -u +%T)" | tee -a $R/device_tests.txt
  tail -6 $R/tests.log
  QRITA_TEST_UNDER_TOOL=1 timeout 200 compute-sanitizer --tool memcheck /tmp/qrita_tests --gtest_brief=1 --gtest_filter='*Cuda*:-*ServingSizes*' > $R/memcheck.log 2>&1; echo "memcheck rc=$? $(date -u +%T)" | tee -a $R/device_tests.txt
  tail -4 $R/memcheck.log
  ;;
ncu)
  (cd /tmp && xz -dc $HERE/bin/perfs.tar.xz | tar xf - && chmod +x perf_*)
  for cell in randn/p0.7/V:128256/B:1/ randn/p0.7/V:128256/B:64/; do
    for c in qrita qrita-sample qrita-cand64; do
      timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum --launch-skip 40 --launch-count 60 --print-summary per-kernel /tmp/perf_${NCU_BUILD:-l1} --benchmark_filter="^$c/$cell" --benchmark_min_time=0.05 > $R/ncu_t_${c}_$(echo $cell | tr '/:' '__').txt 2>&1
      echo "$c $cell rc=$? $(date -u +%T)" | tee -a $R/device_ncu.txt
    done
  done
  ;;
esac
pack $1; rm -rf $R
