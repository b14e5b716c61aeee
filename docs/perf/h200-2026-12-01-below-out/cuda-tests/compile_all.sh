#!/bin/bash
# the CUDA test objects for call C (sm_90, k's headers in /tmp/tree_k), two at a time, then the link; test_scan.o was compiled again
# on its own after the maybe-uninitialized fix in tests/test_scan.cpp (the first compile failed on it)

C=/work/main/docs/perf/h200-h100-2026-11-27-fused-finish/cuda-tests/compile.sh
printf "%s\n" test_sampling test_random test_scan test_cuda_graph test_main | xargs -P 2 -I{} bash $C /tmp/tree_k {}
cd /tmp/tree_k && PATH=/usr/bin:$PATH g++-11 -O2 -DNDEBUG -std=c++17 -Isrc -Iinclude -c src/npy.cpp -o /tmp/ct/obj/npy.o && echo ok npy
bash /work/main/docs/perf/h200-h100-2026-11-27-fused-finish/cuda-tests/link.sh test_main test_scan test_sampling test_random test_cuda_graph npy
echo done-all
