#!/bin/bash
# qrita-cli for sm_90 alone against the stamped headers in /tmp/st46
set -e
export PATH=/usr/bin:$PATH NVCC_APPEND_FLAGS=""
D=/work/main/build/deps
cd /tmp/st46
$D/kokkos-cuda/bin/nvcc_wrapper -DFMT_SHARED -DFMT_USE_CONSTEXPR=1 -DKOKKOS_DEPENDENCE -I/tmp/st46/include -I/tmp/st46/src -isystem $D/kokkos-cuda/include -ccbin g++-11 -I$D/cuda-include-shim -O3 -DNDEBUG -expt-extended-lambda -Wext-lambda-captures-this -arch=sm_90 -std=c++17 -o cli.o -c /tmp/st46/src/qrita_cli.cpp
$D/kokkos-cuda/bin/nvcc_wrapper -ccbin g++-11 -I$D/cuda-include-shim -O3 -DNDEBUG -DKOKKOS_DEPENDENCE -arch=sm_90 cli.o -o qrita-cli-stamp -Wl,-rpath,/usr/lib/x86_64-linux-gnu/nvidia/current /work/main/build/cuda/src/libqrita_npy.a /usr/lib/x86_64-linux-gnu/libfmt.so.9.1.0 $D/kokkos-cuda/lib/libkokkoscontainers.a $D/kokkos-cuda/lib/libkokkoscore.a /usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so /usr/lib/x86_64-linux-gnu/libcudart.so /usr/lib/x86_64-linux-gnu/libdl.a
strip qrita-cli-stamp
echo done $(date +%T)
