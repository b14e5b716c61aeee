#!/bin/bash
# s41.sh PART: the forty-first session's device calls.
#  tests: the whole CUDA suite (QRITA_TEST_LARGE=1), memcheck on the sampler's and
#         profiling tests (the A/B call ran perf --smoke)
#  ncu:   per-kernel times of mask / sampler / list on big nuclei, and warp-stall
#         samples by SASS instruction of the sampler's split_gather (B = 1) and
#         second kernel (B = 1024)
cd "$(dirname "$0")"; HERE=$PWD
export LD_LIBRARY_PATH=$PWD/lib:$LD_LIBRARY_PATH
R=$OUT/res; mkdir -p $R
(cd /tmp && xz -dc $HERE/bin/perfs.tar.xz | tar xf - perf_m41; [ -f $HERE/bin/tests.tar.xz ] && xz -dc $HERE/bin/tests.tar.xz | tar xf -)
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > $R/device_$1.txt; date -u >> $R/device_$1.txt
P=/tmp/perf_m41
case $1 in
tests)
  QRITA_TEST_LARGE=1 timeout 330 /tmp/qrita_tests --gtest_brief=1 --gtest_output=json:$R/tests.json > $R/tests.log 2>&1; echo "tests rc=$? $(date -u +%T)" | tee -a $R/device_tests.txt
  tail -6 $R/tests.log
  QRITA_TEST_UNDER_TOOL=1 timeout 150 compute-sanitizer --tool memcheck /tmp/qrita_tests --gtest_brief=1 --gtest_filter='Sampling*Cuda*:Profiling*Cuda*:-*ServingSizes*' > $R/memcheck.log 2>&1; echo "memcheck rc=$? $(date -u +%T)" | tee -a $R/device_tests.txt
  tail -4 $R/memcheck.log
  ;;
ncu)
  [ -n "$SKIP_TIMES" ] || for cell in randn/p0.7/V:128256/B:1/ randn/p0.7/V:128256/B:64/ randn/p0.7/V:128256/B:1024/; do
    for c in qrita qrita-sample qrita-cand64; do
      timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum --launch-skip 40 --launch-count 60 --print-summary per-kernel $P --benchmark_filter="^$c/$cell" --benchmark_min_time=0.05 > $R/ncu_t_${c}_$(echo $cell | tr '/:' '__').txt 2>&1
    done
  done
  echo "times done $(date -u +%T)"
  timeout 120 ncu --clock-control none --section SourceCounters --section WarpStateStats --section SpeedOfLight --section LaunchStats --section Occupancy --launch-skip 30 --launch-count 4 -o $R/src_b1 -f $P --benchmark_filter='^qrita-sample/randn/p0.7/V:128256/B:1/' --benchmark_min_time=0.05 > $R/src_b1.log 2>&1; echo "src b1 rc=$?"
  timeout 150 ncu --clock-control none --section SourceCounters --section WarpStateStats --section SpeedOfLight --section LaunchStats --section Occupancy --launch-skip 10 --launch-count 2 -o $R/src_b1024 -f $P --benchmark_filter='^qrita-sample/randn/p0.7/V:128256/B:1024/' --benchmark_min_time=0.05 > $R/src_b1024.log 2>&1; echo "src b1024 rc=$?"
  for r in src_b1 src_b1024; do
    ncu -i $R/$r.ncu-rep --page details --csv > $R/${r}_details.csv 2>&1
    ncu -i $R/$r.ncu-rep --page source --csv --print-source sass > $R/${r}_sass.csv 2>&1; echo "$r export rc=$? $(wc -c < $R/${r}_sass.csv)"
    head -c 600 $R/${r}_sass.csv; echo
    xz -6 $R/${r}_sass.csv
  done
  echo "ncu done $(date -u +%T)"
  rm -f $R/*.ncu-rep
  ;;
esac
tar cf - -C $R . | xz -6 > $OUT/res_$1.tar.xz; rm -rf $R
