#!/usr/bin/env bash
# From a fresh Debian 12 machine to a masked batch, in one command:
# installs the dependencies (scripts/install-deps.sh), configures and builds
# the `openmp` preset, then runs qrita-cli on a generated batch of logits.
# Arguments are passed to qrita-cli (try --help).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
say() { printf '[qrita] %s\n' "$*"; }

scripts/install-deps.sh --backend openmp
say "configuring (cmake --preset openmp)"
cmake --preset openmp
say "building (cmake --build --preset openmp); the first build takes a few minutes"
cmake --build --preset openmp
say "running build/openmp/src/qrita-cli $*"
export OMP_PROC_BIND=${OMP_PROC_BIND:-false}
exec build/openmp/src/qrita-cli "$@"
