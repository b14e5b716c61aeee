#!/bin/bash
# relink.sh OBJ OUT: prune the object to sm_90 SASS (no PTX), link as build_perf.sh does, strip
set -e
export PATH=/usr/bin:$PATH NVCC_APPEND_FLAGS=""
D=/work/main/build/deps
W=$D/kokkos-cuda/bin/nvcc_wrapper
nvprune -arch sm_90 $1 -o $2.pruned.o
$W -ccbin g++-11 -I$D/cuda-include-shim -O3 -DNDEBUG -DKOKKOS_DEPENDENCE -arch=sm_90 $2.pruned.o -o $2 -Wl,-rpath,/usr/lib/x86_64-linux-gnu/nvidia/current /usr/lib/x86_64-linux-gnu/libbenchmark.so.1.7.1 $D/kokkos-cuda/lib/libkokkoskernels.a $D/kokkos-cuda/lib/libkokkoscontainers.a $D/kokkos-cuda/lib/libkokkoscore.a /usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so /usr/lib/x86_64-linux-gnu/libcudart.so /usr/lib/x86_64-linux-gnu/libdl.a /usr/lib/x86_64-linux-gnu/libcublas.so /usr/lib/x86_64-linux-gnu/libcusparse.so
strip $2
