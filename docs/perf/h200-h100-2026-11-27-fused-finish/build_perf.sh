#!/bin/bash
# build.sh TREE OUT: qrita_perf for sm_90 alone from TREE/{include,src,perf}
set -e
T=$1; O=$2
export PATH=/usr/bin:$PATH NVCC_APPEND_FLAGS=""
D=/work/main/build/deps
W=$D/kokkos-cuda/bin/nvcc_wrapper
$W -DKOKKOS_DEPENDENCE -DQRITA_PERF_HAVE_KOKKOSKERNELS -I$T/src -I$T/include -isystem $D/kokkos-cuda/include -ccbin g++-11 -I$D/cuda-include-shim -O3 -DNDEBUG -expt-extended-lambda -Wext-lambda-captures-this -arch=sm_90 -Wall -Wextra -Wshadow -Wconversion -Wno-sign-conversion -Wnon-virtual-dtor -Wcast-align -Woverloaded-virtual -Wnull-dereference -Wdouble-promotion -Xcudafe --diag_error=20011 -Xcudafe --diag_error=20014 -Werror -std=c++17 -o $O.o -c $T/perf/bench_sample_mask.cpp
$W -ccbin g++-11 -I$D/cuda-include-shim -O3 -DNDEBUG -DKOKKOS_DEPENDENCE -arch=sm_90 $O.o -o $O -Wl,-rpath,/usr/lib/x86_64-linux-gnu/nvidia/current /usr/lib/x86_64-linux-gnu/libbenchmark.so.1.7.1 $D/kokkos-cuda/lib/libkokkoskernels.a $D/kokkos-cuda/lib/libkokkoscontainers.a $D/kokkos-cuda/lib/libkokkoscore.a /usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so /usr/lib/x86_64-linux-gnu/libcudart.so /usr/lib/x86_64-linux-gnu/libdl.a /usr/lib/x86_64-linux-gnu/libcublas.so /usr/lib/x86_64-linux-gnu/libcusparse.so
strip -o $O.stripped $O
echo done $O
