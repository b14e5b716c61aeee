#!/bin/bash
# CUDA graph test (test_cuda_graph.cpp + test_main, sm_90, the committed headers), then memcheck on it.
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/lib:$LD_LIBRARY_PATH
R=/tmp/res; mkdir -p $R
xz -dc bin/qrita_tests.xz > /tmp/qrita_tests && chmod +x /tmp/qrita_tests
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > $R/device.txt; date -u >> $R/device.txt
QRITA_TEST_LARGE=1 timeout 200 /tmp/qrita_tests > $R/graph.log 2>&1; echo "graph tests rc=$? $(date -u +%T)" | tee -a $R/device.txt
tail -4 $R/graph.log
QRITA_TEST_UNDER_TOOL=1 timeout 200 compute-sanitizer --tool memcheck /tmp/qrita_tests > $R/graph_memcheck.log 2>&1; echo "memcheck rc=$? $(date -u +%T)" | tee -a $R/device.txt
tail -3 $R/graph_memcheck.log
tar cf - -C $R . | xz -6 > $OUT/res.tar.xz
