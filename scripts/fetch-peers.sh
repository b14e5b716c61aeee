#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
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
#   .peers/vllm_ops/vllm_sampler.py       vLLM's sampling step from the same
#       file, verbatim: random_sample (and the two helpers it calls) and
#       flashinfer_sample (its FlashInfer path).
#   .peers/vllm-src/                      vLLM's tests of that kernel
#       (tests/v1/sample of the vllm 0.33.0 source distribution on PyPI), for
#       scripts/vllm-tests.py.
#   .peers/flashinfer/                    FlashInfer's sampling operators:
#       perf/fetch_flashinfer.py's extract of the flashinfer-python wheel
#       (flashinfer-sampling.tgz, 2.4 MiB: sampling.py and FlashInfer's JIT
#       verbatim, the module's CUDA sources and the CCCL headers they
#       include), the apache-tvm-ffi wheel it runs on (Python 3.12,
#       manylinux, 3.2 MiB), and, where this machine has nvcc >= 12.8, the
#       module prebuilt for sm_90a (2.2 MiB) with FlashInfer's own build
#       (a few minutes here; it saves the GPU machine's JIT compile).
#
#   scripts/fetch-peers.sh [--version V] [--wheel FILE]
#                          [--flashinfer-version V] [--tvm-ffi-version V]
#                          [--no-flashinfer] [--no-prebuild] [--cuda-home DIR]
#
# Needs pip and network (PyPI) here; the GPU machine then needs only torch,
# triton, filelock and packaging (all in its image). Carry .peers/ to the GPU
# machine with the working tree (scripts/gpu-pack.sh copies it into the
# bundle): about 8 MiB.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
version=0.33.0
wheel=""
fi_version=0.7.2.post1
tvm_version=0.1.15.post2
flashinfer=1
prebuild=1
cuda_home=${CUDA_HOME:-/usr/local/cuda}
while [ $# -gt 0 ]; do
  case "$1" in
    --version) version=$2; shift 2 ;;
    --wheel) wheel=$2; shift 2 ;;
    --flashinfer-version) fi_version=$2; shift 2 ;;
    --tvm-ffi-version) tvm_version=$2; shift 2 ;;
    --no-flashinfer) flashinfer=0; shift ;;
    --no-prebuild) prebuild=0; shift ;;
    --cuda-home) cuda_home=$2; shift 2 ;;
    -h|--help) sed -n '2,37p' "$0"; exit 0 ;;
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

# 2. The PyTorch sort path, and 3. the sampling step: functions, verbatim.
text = source("vllm/v1/sample/ops/topk_topp_sampler.py")
tree = ast.parse(text)
def functions(want, what):
    parts = [ast.get_source_segment(text, n) for n in tree.body
             if isinstance(n, ast.FunctionDef) and n.name in want]
    assert len(parts) == len(want), "functions not found: the wheel's layout changed"
    out = (f"# Extracted from the vllm {version} wheel (PyPI), vllm/v1/sample/ops/topk_topp_sampler.py,\n"
           f"# by scripts/fetch-peers.sh: {what} verbatim. Not qrita's code.\n"
           "# SPDX-License-Identifier: Apache-2.0\n"
           "# SPDX-FileCopyrightText: Copyright contributors to the vLLM project\n\n"
           "import torch\n\n\n" + "\n\n\n".join(parts) + "\n")
    ast.parse(out)
    return out
open(f"{dest}/topk_topp_pytorch.py", "w").write(
    functions(("apply_top_k_top_p_pytorch", "apply_top_k_only"), "these two functions"))
open(f"{dest}/vllm_sampler.py", "w").write(
    functions(("empty_exponential_noise_like", "sample_with_exponential_noise", "random_sample",
               "flashinfer_sample"), "the sampling step (random_sample, flashinfer_sample)"))
shutil.copy(shim, f"{dest}/_vllm_shim.py")
open(f"{dest}/VERSION", "w").write(f"vllm {version}\n")
PY
python3 -m py_compile "$dest/topk_topp_triton.py" "$dest/topk_topp_pytorch.py" \
  "$dest/vllm_sampler.py" "$dest/_vllm_shim.py"
rm -rf "$dest/__pycache__"
echo "[fetch-peers] wrote $dest:"
ls -la "$dest"
grep -n "^from _vllm_shim\|^import triton" "$dest/topk_topp_triton.py"

# vLLM's own tests of its kernel (tests/v1/sample, from the source
# distribution, 47 MB, here only) for scripts/vllm-tests.py. pip cannot
# download that file without building vLLM's metadata, so it is fetched by
# its URL from PyPI's simple index.
src_dest=$repo/.peers/vllm-src
echo "[fetch-peers] vllm-$version.tar.gz (PyPI): tests/v1/sample"
python3 - "$version" "$tmp/vllm-$version.tar.gz" <<'PY'
import json, sys, urllib.request
version, out = sys.argv[1:]
req = urllib.request.Request("https://pypi.org/simple/vllm/",
                             headers={"Accept": "application/vnd.pypi.simple.v1+json"})
files = json.load(urllib.request.urlopen(req, timeout=120))["files"]
url = next(f["url"] for f in files if f["filename"] == f"vllm-{version}.tar.gz")
urllib.request.urlretrieve(url, out)
PY
rm -rf "$src_dest" && mkdir -p "$src_dest"
tar xzf "$tmp/vllm-$version.tar.gz" -C "$src_dest" "vllm-$version/tests/v1/sample"
echo "vllm $version (source distribution, tests/v1/sample)" > "$src_dest/VERSION"
rm -f "$tmp/vllm-$version.tar.gz"

[ $flashinfer -eq 1 ] || exit 0
# FlashInfer: the wheel (62 MB, here only), the apache-tvm-ffi wheel for the
# GPU machine's Python 3.12, and packaging + filelock for the build here.
fi_dest=$repo/.peers/flashinfer
echo "[fetch-peers] pip download flashinfer-python==$fi_version apache-tvm-ffi==$tvm_version"
python3 -m pip download "flashinfer-python==$fi_version" --no-deps -d "$tmp/fi" > "$tmp/pip.log" 2>&1 || {
  cat "$tmp/pip.log" >&2; exit 1; }
python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
  --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  "apache-tvm-ffi==$tvm_version" -d "$tmp/tvm" > "$tmp/pip.log" 2>&1 || { cat "$tmp/pip.log" >&2; exit 1; }
build_args=()
if [ $prebuild -eq 1 ]; then
  nvcc_version=$("$cuda_home/bin/nvcc" --version 2>/dev/null | sed -n 's/.*, V\([0-9]*\.[0-9]*\)\..*/\1/p')
  if [ -n "$nvcc_version" ] && printf '12.8\n%s\n' "$nvcc_version" | sort -V -C; then
    python3 -m pip download --no-deps -q packaging filelock -d "$tmp/build" > "$tmp/pip.log" 2>&1 || {
      cat "$tmp/pip.log" >&2; exit 1; }
    build_args=(--prebuild --cuda-home "$cuda_home" --arch 9.0 --jobs "$(nproc)")
    for w in "$tmp"/build/*.whl; do build_args+=(--build-wheel "$w"); done
  else
    echo "[fetch-peers] no nvcc >= 12.8 in $cuda_home: FlashInfer will JIT-compile on the GPU machine"
  fi
fi
python3 "$repo/perf/fetch_flashinfer.py" --wheel "$(ls "$tmp"/fi/flashinfer_python-*.whl)" \
  --tvm-wheel "$(ls "$tmp"/tvm/apache_tvm_ffi-*.whl)" --dest "$fi_dest" "${build_args[@]}"
echo "[fetch-peers] wrote $fi_dest ($(du -sh "$fi_dest" | cut -f1))"
