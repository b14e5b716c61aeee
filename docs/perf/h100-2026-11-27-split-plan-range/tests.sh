#!/bin/bash
# CUDA tests of the rebuilt test files (sm_90: sampling, semantics_sampling, random, cuda_graph), memcheck on the sampler's and
# the list's CUDA tests; then newB (no split_deferred_plan launch) against new and base at B = 64, two runs each.
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/lib:$LD_LIBRARY_PATH
xz -dc bin/qrita_tests.xz > /tmp/qrita_tests && chmod +x /tmp/qrita_tests
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > $OUT/device.txt; date -u >> $OUT/device.txt
QRITA_TEST_LARGE=1 /tmp/qrita_tests --gtest_output=json:$OUT/tests.json > $OUT/tests.log 2>&1; echo "tests rc=$? $(date -u +%T)" | tee -a $OUT/device.txt
tail -4 $OUT/tests.log
QRITA_TEST_UNDER_TOOL=1 timeout 200 compute-sanitizer --tool memcheck /tmp/qrita_tests --gtest_filter='Sampling*Cuda*:-*ServingSizes*' > $OUT/memcheck.log 2>&1; echo "memcheck rc=$? $(date -u +%T)" | tee -a $OUT/device.txt
tail -4 $OUT/memcheck.log
