#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# From a fresh Debian 12 machine to a masked batch, in one command:
# installs the dependencies (scripts/install-deps.sh), configures the
# `openmp` preset, builds qrita-cli (only it: the test suite is built by
# scripts/test.sh), then runs it on a generated batch of logits.
# Arguments are passed to qrita-cli (try --help).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
say() { printf '[qrita] %s\n' "$*"; }

scripts/install-deps.sh --backend openmp
say "configuring (cmake --preset openmp)"
cmake --preset openmp > build/quickstart-configure.log 2>&1 || {
  cat build/quickstart-configure.log
  exit 1
}
say "building qrita-cli (cmake --build --preset openmp --target qrita-cli): about a minute on 2 cores"
# The compiler is silent while it builds the one large source file: say
# every 30 s that it is still at work.
start=$SECONDS
(
  while sleep 30; do say "  still building ($((SECONDS - start)) s)"; done
) &
ticker=$!
trap 'kill "$ticker" 2> /dev/null || true' EXIT
cmake --build --preset openmp --target qrita-cli
kill "$ticker" 2> /dev/null || true
wait "$ticker" 2> /dev/null || true
trap - EXIT
say "built in $((SECONDS - start)) s; the test suite: scripts/test.sh"
say "running build/openmp/src/qrita-cli $*"
export OMP_PROC_BIND=${OMP_PROC_BIND:-false}
exec build/openmp/src/qrita-cli "$@"
