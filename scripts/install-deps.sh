#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what qrita needs on Debian 12 (bookworm) and builds Kokkos.
#
#   scripts/install-deps.sh [--backend openmp|serial|cuda|hip] [--deps-dir DIR]
#
# 1. Debian packages: a C++ compiler, CMake, Ninja, GoogleTest, Google
#    Benchmark, fmt, CLI11, OpenMPI (the sharded calls' tests) (only those
#    missing are installed). --backend cuda adds
#    Debian's CUDA 11.8 (nvidia-cuda-toolkit, from bookworm contrib/non-free)
#    and g++-11, its host compiler; --backend hip adds Debian's ROCm 5.2 hipcc.
# 2. Kokkos 3.4.01 and Kokkos Kernels 3.4.01 from Debian's `trilinos` source
#    package (Debian's binary Kokkos package is unusable: Serial only, C++14,
#    broken CMake config). Only packages/kokkos and packages/kokkos-kernels
#    are extracted from the 165 MB tarball.
# 3. Builds and installs both into DIR/kokkos-<backend> (default DIR:
#    build/deps in the repository), the prefix the CMake presets use, as
#    position-independent code so that the Python extension can link them.
#
# CUDA builds get sm_80 code (Kokkos 3.4's newest arch) plus an sm_90 image
# for Hopper, through NVCC_APPEND_FLAGS; the `cuda` preset sets the same.
# HIP builds target gfx908 (Kokkos 3.4 knows gfx900/906/908 only).
#
# Idempotent: each step is skipped when its result is already there, so a
# second run takes about a second. Set QRITA_DEPS_FORCE=1 to rebuild Kokkos.
set -euo pipefail

backend=openmp
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
deps_dir=${QRITA_DEPS_DIR:-$repo/build/deps}
kokkos_version=3.4.01

while [ $# -gt 0 ]; do
  case "$1" in
    --backend) backend=$2; shift 2 ;;
    --backend=*) backend=${1#*=}; shift ;;
    --deps-dir) deps_dir=$2; shift 2 ;;
    --deps-dir=*) deps_dir=${1#*=}; shift ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "install-deps: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done

# Compiler, flags and extra packages per backend.
extra_packages=()
cxx=$(command -v g++ || echo g++)
cxx_flags=""
case "$backend" in
  openmp) kokkos_backend_flags=(-DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_SERIAL=ON) ;;
  serial) kokkos_backend_flags=(-DKokkos_ENABLE_SERIAL=ON) ;;
  cuda)
    extra_packages=(nvidia-cuda-toolkit g++-11)
    kokkos_backend_flags=(-DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_CUDA_LAMBDA=ON
                          -DKokkos_ENABLE_SERIAL=ON -DKokkos_ARCH_AMPERE80=ON)
    # Debian's nvcc 11.8 (in /usr/bin) must win over a preinstalled newer
    # CUDA: Kokkos 3.4 does not compile with CUDA 13.
    export PATH=/usr/bin:$PATH
    export NVCC_APPEND_FLAGS="${NVCC_APPEND_FLAGS:--gencode arch=compute_90,code=sm_90}"
    cuda_shim=$deps_dir/cuda-include-shim
    cxx_flags="-ccbin g++-11 -I$cuda_shim"
    ;;
  hip)
    extra_packages=(hipcc libamdhip64-dev)
    cxx=hipcc
    kokkos_backend_flags=(-DKokkos_ENABLE_HIP=ON -DKokkos_ENABLE_SERIAL=ON -DKokkos_ARCH_VEGA908=ON)
    # hipcc probes the machine's GPU (rocm_agent_enumerator) for any compile
    # or link without an explicit target, such as CMake's compiler checks;
    # with no GPU that prints a Python traceback. Name the target instead.
    export HCC_AMDGPU_TARGET="${HCC_AMDGPU_TARGET:-gfx908}"
    ;;
  *) echo "install-deps: backend '$backend' is not supported (openmp, serial, cuda, hip)" >&2; exit 2 ;;
esac

say() { printf '[qrita deps] %s\n' "$*"; }
# apt entries this script adds use the mirror apt already has.
. "$repo/scripts/debian-mirror.sh"
mirror_or_fail() {
  local m; m=$(debian_mirror)
  [ -n "$m" ] || { echo "install-deps: no Debian mirror found in apt's sources; set QRITA_DEBIAN_MIRROR" >&2; exit 1; }
  echo "$m"
}
# Runs a build step quietly; on failure shows the end of its log.
logged() {
  local name=$1; shift
  mkdir -p "$deps_dir/logs"
  local log="$deps_dir/logs/$name.log"
  if ! "$@" > "$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "install-deps: step '$name' failed; full log: $log" >&2
    exit 1
  fi
}
jobs=$(nproc 2>/dev/null || echo 2)
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: not root and no sudo to install packages" >&2; exit 1; }
  sudo_cmd=(sudo)
fi

# --- 1. Debian packages -----------------------------------------------------
packages=(g++ cmake ninja-build libgtest-dev libgmock-dev libbenchmark-dev libfmt-dev libcli11-dev
          libopenmpi-dev openmpi-bin ca-certificates "${extra_packages[@]}")
missing=()
for pkg in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
apt_updated=0
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$backend" = cuda ] && ! grep -rqsE '^(deb .*non-free|Components:.*non-free)' \
       /etc/apt/sources.list /etc/apt/sources.list.d/; then
    codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
    mirror=$(mirror_or_fail)
    say "adding Debian $codename contrib/non-free (CUDA 11.8 lives there)"
    printf 'Types: deb\nURIs: %s\nSuites: %s %s-updates\nComponents: contrib non-free\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      "$mirror" "$codename" "$codename" | "${sudo_cmd[@]}" tee /etc/apt/sources.list.d/qrita-non-free.sources >/dev/null
  fi
  say "installing Debian packages: ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update -qq
  apt_updated=1
  logged apt-install "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  say "Debian packages: all present"
fi

# --- 2. Kokkos sources from Debian's trilinos source package ---------------
src_dir=$deps_dir/src
kokkos_src=$src_dir/kokkos-$kokkos_version
kernels_src=$src_dir/kokkos-kernels-$kokkos_version
if [ -f "$kokkos_src/CMakeLists.txt" ] && [ -f "$kernels_src/CMakeLists.txt" ]; then
  say "Kokkos sources: present in $src_dir"
else
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
  if ! grep -rqsE '^(deb-src |Types:.*deb-src)' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    mirror=$(mirror_or_fail)
    say "adding a deb-src entry for Debian $codename main (needed for 'apt-get source')"
    printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      "$mirror" "$codename" | "${sudo_cmd[@]}" tee /etc/apt/sources.list.d/qrita-deb-src.sources >/dev/null
    apt_updated=0
  fi
  if [ $apt_updated -eq 0 ]; then
    say "apt-get update"
    "${sudo_cmd[@]}" apt-get update -qq
  fi
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  say "downloading Debian's trilinos source package (about 165 MB)"
  (cd "$tmp" && apt-get source --download-only trilinos >/dev/null 2>&1) || {
    echo "install-deps: 'apt-get source --download-only trilinos' failed" >&2; exit 1; }
  tarball=$(ls "$tmp"/trilinos_*.orig.tar.* | head -n1)
  say "extracting packages/kokkos and packages/kokkos-kernels from $(basename "$tarball")"
  top=$( (tar -tf "$tarball" 2>/dev/null || true) | head -n1 | cut -d/ -f1)
  tar -xf "$tarball" -C "$tmp" "$top/packages/kokkos" "$top/packages/kokkos-kernels"
  grep -q "Kokkos_VERSION_MINOR 4" "$tmp/$top/packages/kokkos/CMakeLists.txt" || {
    echo "install-deps: the trilinos package does not carry Kokkos $kokkos_version" >&2; exit 1; }
  mkdir -p "$src_dir"
  rm -rf "$kokkos_src" "$kernels_src"
  mv "$tmp/$top/packages/kokkos" "$kokkos_src"
  mv "$tmp/$top/packages/kokkos-kernels" "$kernels_src"
fi

# --- 3. Build and install Kokkos + Kokkos Kernels ---------------------------
if [ "$backend" = cuda ]; then
  cxx=$kokkos_src/bin/nvcc_wrapper
  # Some machine images link a newer CUDA's headers into /usr/local/include,
  # which the host compiler searches before /usr/include, so nvcc 11.8 would
  # see CUDA 13 headers. The shim holds links back to /usr/include for each
  # such name and comes first on the include path (empty when not needed).
  rm -rf "$cuda_shim"; mkdir -p "$cuda_shim"
  if [ -d /usr/local/include ]; then
    for entry in /usr/local/include/*; do
      name=$(basename "$entry")
      [ -e "/usr/include/$name" ] && ln -s "/usr/include/$name" "$cuda_shim/$name"
    done
  fi
  command -v nvcc >/dev/null && nvcc --version | grep -q "release 11\." || {
    echo "install-deps: nvcc on PATH is not CUDA 11 ($(command -v nvcc || echo none))" >&2; exit 1; }
fi
prefix=$deps_dir/kokkos-$backend
stamp=$prefix/.qrita-stamp
want="kokkos=$kokkos_version backend=$backend cxx=$cxx flags=$cxx_flags pic=on"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -z "${QRITA_DEPS_FORCE:-}" ]; then
  say "Kokkos $kokkos_version ($backend): installed in $prefix"
else
  say "building Kokkos $kokkos_version ($backend, C++17) into $prefix"
  rm -rf "$deps_dir/build-kokkos-$backend" "$deps_dir/build-kernels-$backend" "$prefix"
  logged kokkos-$backend-configure cmake -S "$kokkos_src" -B "$deps_dir/build-kokkos-$backend" \
    -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=17 \
    -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_FLAGS="$cxx_flags" \
    -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
    -DCMAKE_INSTALL_PREFIX="$prefix" "${kokkos_backend_flags[@]}"
  logged kokkos-$backend-build cmake --build "$deps_dir/build-kokkos-$backend" -j "$jobs"
  logged kokkos-$backend-install cmake --install "$deps_dir/build-kokkos-$backend"

  say "building Kokkos Kernels $kokkos_version (headers and library, no explicit instantiations)"
  logged kernels-$backend-configure cmake -S "$kernels_src" -B "$deps_dir/build-kernels-$backend" \
    -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=17 \
    -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_FLAGS="$cxx_flags" \
    -DKokkos_ROOT="$prefix" -DCMAKE_INSTALL_PREFIX="$prefix" \
    -DKokkosKernels_INST_DOUBLE=OFF -DKokkosKernels_INST_FLOAT=OFF \
    -DKokkosKernels_INST_COMPLEX_DOUBLE=OFF -DKokkosKernels_INST_COMPLEX_FLOAT=OFF \
    -DKokkosKernels_INST_ORDINAL_INT=OFF -DKokkosKernels_INST_OFFSET_INT=OFF \
    -DKokkosKernels_INST_OFFSET_SIZE_T=OFF -DKokkosKernels_ENABLE_TESTS=OFF
  logged kernels-$backend-build cmake --build "$deps_dir/build-kernels-$backend" -j "$jobs"
  logged kernels-$backend-install cmake --install "$deps_dir/build-kernels-$backend"
  rm -rf "$deps_dir/build-kokkos-$backend" "$deps_dir/build-kernels-$backend"
  echo "$want" > "$stamp"
fi
say "done: configure qrita with -DKokkos_ROOT=$prefix (the '$backend' CMake preset does)"
