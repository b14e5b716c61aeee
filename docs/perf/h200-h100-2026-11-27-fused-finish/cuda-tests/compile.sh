#!/bin/bash
# compile.sh TREE name...: tests/<name>.cpp -> /tmp/ct/obj/<name>.o for sm_90
T=$1; shift
export PATH=/usr/bin:$PATH NVCC_APPEND_FLAGS=""
D=/work/main/build/deps
for n in "$@"; do
  $D/kokkos-cuda/bin/nvcc_wrapper -DKOKKOS_DEPENDENCE -I$T/src -I$T/include -isystem $D/kokkos-cuda/include -ccbin g++-11 -I$D/cuda-include-shim -O3 -DNDEBUG -expt-extended-lambda -Wext-lambda-captures-this -arch=sm_90 -DGTEST_HAS_PTHREAD=1 -Wall -Wextra -Wshadow -Wconversion -Wno-sign-conversion -Wnon-virtual-dtor -Wcast-align -Woverloaded-virtual -Wnull-dereference -Wdouble-promotion -Xcudafe --diag_error=20011 -Xcudafe --diag_error=20014 -Werror -std=c++17 -o /tmp/ct/obj/$n.o -c $T/tests/$n.cpp && echo "ok $n $(date +%T)" || echo "FAIL $n"
done
