# SPDX-License-Identifier: Apache-2.0
# The `cuda` preset's toolchain for builds that cannot use a preset (the
# Python package: QRITA_BACKEND=cuda pip install .): Kokkos 3.4's
# nvcc_wrapper from scripts/install-deps.sh --backend cuda, Debian's nvcc
# 11.8 with g++-11 as its host compiler, and sm_90 code besides Kokkos'
# sm_80. The build's environment must give what the preset's does:
#   PATH=/usr/bin:$PATH NVCC_APPEND_FLAGS="-gencode arch=compute_90,code=sm_90"
# (Debian's nvcc before any newer CUDA, and the Hopper image).
get_filename_component(_qrita_root "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
set(CMAKE_CXX_COMPILER "${_qrita_root}/build/deps/kokkos-cuda/bin/nvcc_wrapper")
set(CMAKE_CXX_FLAGS_INIT "-ccbin g++-11 -I${_qrita_root}/build/deps/cuda-include-shim")
set(Kokkos_ROOT "${_qrita_root}/build/deps/kokkos-cuda" CACHE PATH "")
