#!/bin/bash
# 32nd session: the Sampling tests (test_sampling rebuilt for sm_90 with the landed headers and the new split check,
# linked with test_main) on Cuda and Serial, QRITA_TEST_LARGE=1; memcheck on the ranked-draw test.
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/lib:$LD_LIBRARY_PATH
xz -dc bin/qrita_tests.xz > /tmp/qrita_tests && chmod +x /tmp/qrita_tests
R=/tmp/rest; mkdir -p $R
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > $R/device.txt; date -u >> $R/device.txt
QRITA_TEST_LARGE=1 /tmp/qrita_tests --gtest_output=json:$R/tests.json > $R/tests.log 2>&1; echo "tests rc=$? $(date -u +%T)" | tee -a $R/device.txt
tail -4 $R/tests.log
QRITA_TEST_UNDER_TOOL=1 timeout 200 compute-sanitizer --tool memcheck /tmp/qrita_tests --gtest_filter='Sampling/*Cuda*.RankedDraw*:Sampling/*Cuda*.OneWorkspace*' > $R/memcheck.log 2>&1; echo "memcheck rc=$? $(date -u +%T)" | tee -a $R/device.txt
tail -4 $R/memcheck.log
tar cf - -C $R . | xz -6 > $OUT/rest.tar.xz
