#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds what the test suite needs and runs it, in one command:
#
#   scripts/test.sh [PRESET] [ctest arguments...]
#
# PRESET is a CMake preset with a test preset: openmp (the default), serial,
# asan, ci, kokkos5 or cuda. The script installs the dependencies for its
# backend (scripts/install-deps.sh: each finished step is skipped, so a
# second run takes about a second; kokkos5 brings its own, see
# scripts/kokkos5-root.sh), configures the preset, builds every target ctest
# runs (the GoogleTest suite, qrita-cli for the CLI tests and the perf suite
# for its smoke run), then runs `ctest --preset PRESET` with the remaining
# arguments, e.g. `scripts/test.sh openmp -R Semantics`. With the default
# preset it then installs the Python package and runs its pytest suite
# (scripts/test-python.sh); QRITA_TEST_PYTHON=0 skips that.
#
# Exit status: 0 when every test passes; otherwise the failing step's
# (ctest's is non-zero when a test fails).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
say() { printf '[qrita test] %s\n' "$*"; }

case "${1:-}" in
  -h|--help) sed -n '3,19s/^# \{0,1\}//p' "$0"; exit 0 ;;
esac
preset=openmp
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  preset=$1
  shift
fi
case "$preset" in
  openmp|ci) backend=openmp ;;
  serial|asan) backend=serial ;;
  cuda) backend=cuda ;;
  kokkos5) backend="" ;;
  *) echo "test.sh: no test preset '$preset' (openmp, serial, asan, ci, kokkos5, cuda)" >&2; exit 2 ;;
esac

if [ -n "$backend" ]; then
  scripts/install-deps.sh --backend "$backend"
fi
say "configuring (cmake --preset $preset)"
cmake --preset "$preset"
say "building the tests, qrita-cli and the perf suite (cmake --build --preset $preset)"
start=$SECONDS
cmake --build --preset "$preset"
say "built in $((SECONDS - start)) s; running ctest --preset $preset $*"
export OMP_PROC_BIND=${OMP_PROC_BIND:-false}
ctest --preset "$preset" "$@"
if [ "$preset" = openmp ] && [ $# -eq 0 ] && [ "${QRITA_TEST_PYTHON:-1}" != 0 ]; then
  scripts/test-python.sh
fi
