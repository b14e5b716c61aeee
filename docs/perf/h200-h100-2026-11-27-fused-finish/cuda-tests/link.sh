#!/bin/bash
export PATH=/usr/bin:$PATH NVCC_APPEND_FLAGS=""
D=/work/main/build/deps
objs=""; for n in "$@"; do objs="$objs /tmp/ct/obj/$n.o"; done
$D/kokkos-cuda/bin/nvcc_wrapper -ccbin g++-11 -I$D/cuda-include-shim -O3 -DNDEBUG -DKOKKOS_DEPENDENCE -arch=sm_90 $objs -o /tmp/ct/qrita_tests -Wl,-rpath,/usr/lib/x86_64-linux-gnu/nvidia/current /usr/lib/x86_64-linux-gnu/libgtest.a /usr/lib/x86_64-linux-gnu/libgmock.a $D/kokkos-cuda/lib/libkokkoscontainers.a $D/kokkos-cuda/lib/libkokkoscore.a /usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so /usr/lib/x86_64-linux-gnu/libcudart.so /usr/lib/x86_64-linux-gnu/libdl.a /usr/lib/x86_64-linux-gnu/libgtest.a && strip /tmp/ct/qrita_tests && echo linked
