#!/usr/bin/env bash
# Fetches the peers perf/peers.py compares qrita with, into .peers/
# (git-ignored: third-party code is never committed):
#
#   .peers/vllm_ops/topk_topp_triton.py   vLLM's Triton top-k/top-p kernel
#       (the Qrita port, apply_top_k_top_p_triton), from the vllm 0.33.0
#       wheel on PyPI; its `from vllm... import` lines point at
#       _vllm_shim.py (a copy of perf/vllm_shim.py: triton, triton.language,
#       torch and a small launch helper), nothing else changed.
#   .peers/vllm_ops/topk_topp_pytorch.py  vLLM's PyTorch sort path
#       (apply_top_k_top_p_pytorch, and apply_top_k_only it calls), copied
#       verbatim from the same wheel's topk_topp_sampler.py, whose other
#       imports (vllm config, envs, FlashInfer, aiter) it does not need.
#
#   scripts/fetch-peers.sh [--version V] [--wheel FILE]
#
# Needs pip and network (PyPI) here; the GPU machine then needs only torch
# and triton. Carry .peers/ to the GPU machine with the working tree.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
version=0.33.0
wheel=""
while [ $# -gt 0 ]; do
  case "$1" in
    --version) version=$2; shift 2 ;;
    --wheel) wheel=$2; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "fetch-peers: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
dest=$repo/.peers/vllm_ops
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "$wheel" ]; then
  echo "[fetch-peers] pip download vllm==$version --no-deps"
  python3 -m pip download "vllm==$version" --no-deps -d "$tmp" > "$tmp/pip.log" 2>&1 || {
    cat "$tmp/pip.log" >&2; exit 1; }
  wheel=$(ls "$tmp"/vllm-*.whl)
fi
mkdir -p "$dest"
python3 - "$wheel" "$dest" "$repo/perf/vllm_shim.py" "$version" <<'PY'
import ast, shutil, sys, zipfile
wheel, dest, shim, version = sys.argv[1:]
z = zipfile.ZipFile(wheel)
def source(path):
    return z.read(path).decode()

# 1. The Triton kernel file: only its vllm imports rewritten.
text = source("vllm/v1/sample/ops/topk_topp_triton.py")
lines = text.splitlines(keepends=True)
tree = ast.parse(text)
edits = []
for node in tree.body:
    if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("vllm"):
        names = [a.name if a.asname is None else f"{a.name} as {a.asname}" for a in node.names]
        if node.module == "vllm.triton_utils":
            new = "".join("import triton\n" if n == "triton" else
                          "import triton.language as tl\n" if n == "tl" else
                          f"from _vllm_shim import {n}\n" for n in names)
        else:
            new = f"from _vllm_shim import {', '.join(names)}  # was: from {node.module}\n"
        edits.append((node.lineno - 1, node.end_lineno, new))
for start, end, new in sorted(edits, reverse=True):
    lines[start:end] = [new]
header = (f"# Extracted from the vllm {version} wheel (PyPI) by scripts/fetch-peers.sh;\n"
          "# only the `from vllm... import` lines were rewritten. Not qrita's code.\n")
out = header + "".join(lines)
ast.parse(out)
open(f"{dest}/topk_topp_triton.py", "w").write(out)

# 2. The PyTorch sort path: the two functions, verbatim.
text = source("vllm/v1/sample/ops/topk_topp_sampler.py")
tree = ast.parse(text)
want = ("apply_top_k_top_p_pytorch", "apply_top_k_only")
parts = [ast.get_source_segment(text, n) for n in tree.body
         if isinstance(n, ast.FunctionDef) and n.name in want]
assert len(parts) == len(want), "functions not found: the wheel's layout changed"
out = (f"# Extracted from the vllm {version} wheel (PyPI), vllm/v1/sample/ops/topk_topp_sampler.py,\n"
       "# by scripts/fetch-peers.sh: these two functions verbatim. Not qrita's code.\n"
       "# SPDX-License-Identifier: Apache-2.0\n"
       "# SPDX-FileCopyrightText: Copyright contributors to the vLLM project\n\n"
       "import torch\n\n\n" + "\n\n\n".join(parts) + "\n")
ast.parse(out)
open(f"{dest}/topk_topp_pytorch.py", "w").write(out)
shutil.copy(shim, f"{dest}/_vllm_shim.py")
open(f"{dest}/VERSION", "w").write(f"vllm {version}\n")
PY
python3 -m py_compile "$dest/topk_topp_triton.py" "$dest/topk_topp_pytorch.py" "$dest/_vllm_shim.py"
rm -rf "$dest/__pycache__"
echo "[fetch-peers] wrote $dest:"
ls -la "$dest"
grep -n "^from _vllm_shim\|^import triton" "$dest/topk_topp_triton.py"
