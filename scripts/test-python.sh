#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Python package (pip install ., OpenMP build) into a virtual
# environment with torch, NumPy and pytest from PyPI, and runs its suite:
#
#   scripts/test-python.sh [pytest arguments...]
#
# The environment is build/venv (QRITA_VENV overrides it), made with
# python3 (QRITA_PYTHON); the Kokkos it links is scripts/install-deps.sh's.
# The suite runs from outside the source tree, on the installed package.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
say() { printf '[qrita python] %s\n' "$*"; }

python=${QRITA_PYTHON:-python3}
venv=${QRITA_VENV:-$repo/build/venv}
scripts/install-deps.sh --backend openmp
if [ ! -x "$venv/bin/python" ]; then
  say "making a virtual environment in $venv ($("$python" --version))"
  if ! "$python" -m venv "$venv" 2> /dev/null; then
    # Debian's own python3 needs its venv and headers packages.
    apt-get install -y -qq --no-install-recommends python3-venv python3-dev > /dev/null
    rm -rf "$venv"
    "$python" -m venv "$venv"
  fi
fi
if ! "$venv/bin/python" -c "import torch, numpy, pytest" 2> /dev/null; then
  say "installing torch, numpy and pytest from PyPI"
  "$venv/bin/pip" install -q --disable-pip-version-check "torch>=2.4" numpy pytest
fi
say "pip install . (builds the extension with CMake)"
start=$SECONDS
"$venv/bin/pip" install -q --disable-pip-version-check "$repo"
say "installed in $((SECONDS - start)) s; running pytest"
cd "$venv"
OMP_PROC_BIND=${OMP_PROC_BIND:-false} "$venv/bin/python" -m pytest "$repo/python/tests" -q \
  -p no:cacheprovider "$@"
