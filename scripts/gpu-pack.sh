#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the CUDA test, perf and CLI binaries on this (CPU) machine and packs
# them, with the shared libraries they need that a GPU machine may lack
# (libcudart 11.8, fmt, Google Benchmark, ...), into one folder to copy to a
# GPU machine. There, `scripts/gpu-run.sh` runs everything in one go.
#
#   scripts/gpu-pack.sh [--out DIR] [--build BUILD] [--skip-build]
#                       [--python VERSION]
#
# DIR defaults to ship/ in the repository (git-ignored), BUILD to build/cuda
# (the `cuda` preset's folder; with --skip-build, any folder that holds a
# CUDA build of the three binaries). --python 3.12 also builds the Python
# package's CUDA wheel for that Python (pyenv's, or python3.12 on PATH) and
# downloads the wheels its tests need (pytest, NumPy) into DIR/python, for
# gpu-run.sh's python step (the GPU machine has torch, and no network).
# Needs the CUDA set-up first: scripts/install-deps.sh --backend cuda.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$repo/ship
build_dir=build/cuda
build=1
python_version=""
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --out=*) out=${1#*=}; shift ;;
    --build) build_dir=$2; shift 2 ;;
    --build=*) build_dir=${1#*=}; shift ;;
    --skip-build) build=0; shift ;;
    --python) python_version=$2; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "gpu-pack: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
cd "$repo"
say() { printf '[qrita gpu-pack] %s\n' "$*"; }

if [ $build -eq 1 ]; then
  [ -x build/deps/kokkos-cuda/bin/nvcc_wrapper ] || {
    echo "gpu-pack: no CUDA Kokkos; run scripts/install-deps.sh --backend cuda first" >&2; exit 1; }
  say "configuring and building the cuda preset (tests, perf, CLI)"
  cmake --preset cuda > /dev/null
  cmake --build --preset cuda --target qrita_tests qrita_perf qrita-cli
  # Where NCCL was found (NCCL_ROOT, or the system's), the one-rank test.
  if grep -q qrita_sharded_nccl_tests build/cuda/build.ninja; then
    cmake --build --preset cuda --target qrita_sharded_nccl_tests
  fi
fi

bins=("$build_dir/tests/qrita_tests" "$build_dir/perf/qrita_perf" "$build_dir/src/qrita-cli"
      "$build_dir/tests/qrita_sharded_nccl_tests")
# The test suite is required; the perf suite, the CLI and the one-rank NCCL
# test are packed when built (gpu-run.sh skips the steps that need a
# missing one).
[ -x "${bins[0]}" ] || { echo "gpu-pack: ${bins[0]} is missing (build the cuda preset)" >&2; exit 1; }
present=()
for b in "${bins[@]}"; do
  if [ -x "$b" ]; then present+=("$b"); else say "not built, not packed: $b"; fi
done
bins=("${present[@]}")

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
cp "${bins[@]}" "$out/bin/"
# Host symbols are not needed there (device line info stays in the fat
# binaries); stripped, the bundle fits a 64 MiB transfer once compressed.
strip "$out/bin/"*
# The peers (scripts/fetch-peers.sh; git-ignored), when fetched: vLLM's
# files (0.1 MiB) and FlashInfer's sampling extract (about 8 MiB: sources,
# the apache-tvm-ffi wheel, the module prebuilt for sm_90a).
for p in vllm_ops flashinfer vllm-src; do
  if [ -d "$repo/.peers/$p" ]; then
    mkdir -p "$out/.peers" && cp -r "$repo/.peers/$p" "$out/.peers/"
  fi
done

# Every shared library the binaries load, except the C library family, the
# CUDA driver (libcuda comes with the GPU machine's driver) and NCCL (its
# PyTorch has one; gpu-run.sh finds it).
skip='^(libc|libm|libdl|libpthread|librt|ld-linux[^ ]*|libcuda|libnccl|linux-vdso)\.so'
for b in "${bins[@]}"; do
  ldd "$b" | awk '/=> \// {print $1, $3}' | while read -r name path; do
    if ! [[ $name =~ $skip ]]; then cp -L "$path" "$out/lib/$name"; fi
  done
done

# The Python package for the GPU machine's Python: a CUDA wheel, and the
# test-only wheels its suite needs.
if [ -n "$python_version" ]; then
  py=$(ls -d "$HOME/.pyenv/versions/$python_version"*/bin/python3 2>/dev/null | tail -n1)
  [ -n "$py" ] || py=$(command -v "python$python_version" || true)
  [ -n "$py" ] || { echo "gpu-pack: no Python $python_version here" >&2; exit 1; }
  say "building the Python package's CUDA wheel with $("$py" --version)"
  mkdir -p "$out/python"
  PATH=/usr/bin:$PATH NVCC_APPEND_FLAGS="-gencode arch=compute_90,code=sm_90" QRITA_BACKEND=cuda \
    "$py" -m pip wheel --no-deps -q -w "$out/python" "$repo"
  "$py" -m pip download -q --only-binary :all: --python-version "$python_version" \
    --platform manylinux2014_x86_64 -d "$out/python" pytest numpy
fi

cat > "$out/MANIFEST" <<EOF
qrita GPU bundle
commit:  $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- include src tests perf || echo " (with local changes)")
built:   $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n)
nvcc:    $(PATH=/usr/bin:$PATH nvcc --version | tail -n1)
kokkos:  $(cat build/deps/kokkos-cuda/.qrita-stamp 2>/dev/null || echo unknown)
images:  $(PATH=/usr/bin:$PATH cuobjdump --list-elf "${bins[0]}" 2>/dev/null | grep -o 'sm_[0-9]*' | sort -u | tr '\n' ' ' || echo unknown)
binaries: $(cd "$out/bin" && echo *)
libraries: $(cd "$out/lib" && echo *)
peers:   $(cat "$out"/.peers/*/VERSION 2>/dev/null | tr '\n' ';' || echo none)
python:  $(cd "$out/python" 2>/dev/null && echo qrita-*.whl || echo none)
EOF
say "packed into $out ($(du -sh "$out" | cut -f1)):"
cat "$out/MANIFEST"
