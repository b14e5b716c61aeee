#!/bin/bash
# CUDA tests (sm_90, the committed headers): test_sampling, test_profiling, test_validation (+ test_main), then
# compute-sanitizer memcheck on the split sampler's and list's tests.
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/lib:$LD_LIBRARY_PATH
R=/tmp/res; mkdir -p $R
xz -dc bin/qrita_tests.xz > /tmp/qrita_tests && chmod +x /tmp/qrita_tests
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > $R/device.txt; date -u >> $R/device.txt
QRITA_TEST_LARGE=1 timeout 300 /tmp/qrita_tests --gtest_output=json:$R/tests.json > $R/tests.log 2>&1; echo "tests rc=$? $(date -u +%T)" | tee -a $R/device.txt
tail -5 $R/tests.log
QRITA_TEST_UNDER_TOOL=1 timeout 200 compute-sanitizer --tool memcheck /tmp/qrita_tests --gtest_filter='Sampling*Cuda*:Profiling*Cuda*:-*ServingSizes*' > $R/memcheck.log 2>&1; echo "memcheck rc=$? $(date -u +%T)" | tee -a $R/device.txt
tail -4 $R/memcheck.log
tar cf - -C $R . | xz -6 > $OUT/res.tar.xz
