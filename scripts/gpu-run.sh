#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the whole GPU check on a machine with an NVIDIA GPU, from a bundle
# made by scripts/gpu-pack.sh: the test suite (serving sizes included), the
# suite under compute-sanitizer (memcheck and racecheck, reduced sizes), the
# sharded calls through NCCL with one rank, the
# CLI against the oracle, the perf suite, qrita's peers on the same inputs
# (perf/peers.py, with qrita's Python ops when the bundle has the package)
# and the performance page written from them
# (scripts/perf_page.py). Everything lands in one folder:
#
#   device.txt   the bundle's MANIFEST, nvidia-smi's name, driver, memory and
#                clocks, the date
#   tests.json, tests.log, sanitizer-memcheck.log, sanitizer-racecheck.log,
#   nccl-tests.json, nccl-tests.log (the sharded calls through NCCL, one
#   rank; NCCL from the machine's PyTorch), cli.log, calibrate.txt
#   perf.json, perf.txt        qrita_perf (the default grid and the copy)
#   python.log, python-tests.xml  the Python package's pytest suite on CUDA
#                (when the bundle has its wheel: gpu-pack.sh --python 3.12)
#   vllm-tests.log, vllm-tests.xml  vLLM's tests of its kernel against
#                qrita's drop-in (scripts/vllm-tests.py; .peers/vllm-src)
#   peers.json, peers.log      perf/peers.py (every peer whose files are there)
#   PERFORMANCE.md, perf/*.png the page and its plots (plots need matplotlib)
#   summary.txt                every step's outcome
#
# scripts/perf_page.py DIR --keep docs/perf/data then stores the raw data in
# the repository and rewrites docs/PERFORMANCE.md.
#
#   scripts/gpu-run.sh [--bundle DIR] [--out DIR] [--skip STEP]...
#                      [--peers-args "ARGS"] [-- PERF_FLAGS]
#
# STEP: tests, sanitizer, nccl, cli, perf, python, peers, page. PERF_FLAGS go to qrita_perf
# (e.g. --benchmark_filter=qrita/serving), ARGS to perf/peers.py (e.g.
# "--kinds flashinfer-sample,vllm-sample"). Defaults: bundle ship/, results
# in results/<date>-<gpu>/. FlashInfer's sampling module (.peers/flashinfer,
# scripts/fetch-peers.sh) is unpacked into .peers-cache/flashinfer
# (git-ignored), where a JIT build, if one is needed, stays for the next run
# on the same machine. Exit status: non-zero if any check failed (the later
# steps still run).
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bundle=$repo/ship
out=""
skip=" "
perf_flags=()
peers_args=""
while [ $# -gt 0 ]; do
  case "$1" in
    --peers-args) peers_args=$2; shift 2 ;;
    --bundle) bundle=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --skip) skip="$skip$2 "; shift 2 ;;
    --) shift; perf_flags=("$@"); break ;;
    -h|--help) sed -n '3,39p' "$0"; exit 0 ;;
    *) echo "gpu-run: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
bundle=$(cd "$bundle" 2> /dev/null && pwd) || { echo "gpu-run: no folder $bundle" >&2; exit 2; }
bin=$bundle/bin
[ -x "$bin/qrita_tests" ] || { echo "gpu-run: no bundle in $bundle (run scripts/gpu-pack.sh)" >&2; exit 2; }
export LD_LIBRARY_PATH="$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1 | tr ' ' '-' || echo gpu)
[ -n "$out" ] || out=$repo/results/$(date -u +%Y-%m-%d)-${gpu:-gpu}
mkdir -p "$out"
start=$(date +%s)
failed=()
step() { printf '\n==== [%4ds] %s\n' "$(( $(date +%s) - start ))" "$*" | tee -a "$out/summary.txt"; }
wanted() { [[ $skip != *" $1 "* ]]; }
record() {  # record NAME STATUS
  if [ "$2" -ne 0 ]; then failed+=("$1"); echo "FAILED: $1 (exit $2)" | tee -a "$out/summary.txt"
  else echo "ok: $1" | tee -a "$out/summary.txt"; fi
}

step "device"
{
  cat "$bundle/MANIFEST" 2>/dev/null
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
  date -u +%Y-%m-%dT%H:%M:%SZ
} | tee "$out/device.txt"

if wanted tests; then
  step "test suite on Cuda and Serial, serving sizes included (QRITA_TEST_LARGE=1)"
  QRITA_TEST_LARGE=1 "$bin/qrita_tests" --gtest_output="json:$out/tests.json" \
    > "$out/tests.log" 2>&1
  record tests $?
  tail -n 3 "$out/tests.log" | tee -a "$out/summary.txt"
fi

if wanted sanitizer; then
  if command -v compute-sanitizer > /dev/null; then
    # Cuda tests only, without the large random batches (minutes under the
    # tools); QRITA_TEST_UNDER_TOOL=1 runs the slowest sampler tests smaller
    # (tests/support_sampling.hpp).
    filter='*Cuda*:-*Random*'
    for tool in memcheck racecheck; do
      step "compute-sanitizer --tool $tool ($filter, QRITA_TEST_UNDER_TOOL=1)"
      QRITA_TEST_UNDER_TOOL=1 compute-sanitizer --tool "$tool" --error-exitcode 9 "$bin/qrita_tests" \
        --gtest_filter="$filter" > "$out/sanitizer-$tool.log" 2>&1
      record "sanitizer-$tool" $?
      grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$out/sanitizer-$tool.log" \
        | tail -n 3 | tee -a "$out/summary.txt"
    done
  else
    echo "compute-sanitizer not found: skipped" | tee -a "$out/summary.txt"
  fi
fi

if wanted nccl && [ -x "$bin/qrita_sharded_nccl_tests" ]; then
  step "the sharded calls through NCCL with one rank (qrita_sharded_nccl_tests)"
  # NCCL from the machine's PyTorch (the nvidia-nccl wheel), or the system's.
  nccl_lib=$(python3 -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib'))" 2> /dev/null || true)
  LD_LIBRARY_PATH=${nccl_lib:+$nccl_lib:}$LD_LIBRARY_PATH "$bin/qrita_sharded_nccl_tests" \
    --gtest_output="json:$out/nccl-tests.json" > "$out/nccl-tests.log" 2>&1
  record "nccl one rank" $?
  tail -n 3 "$out/nccl-tests.log" | tee -a "$out/summary.txt"
fi

if wanted cli && [ -x "$bin/qrita-cli" ]; then
  step "qrita-cli against the oracle (1024 x 128256, k=50 p=0.9; p=0.7; k=10)"
  : > "$out/cli.log"
  for args in "--k 50 --p 0.9" "--k 0 --p 0.7" "--k 10 --p 1"; do
    # shellcheck disable=SC2086
    "$bin/qrita-cli" --batch 1024 --vocab 128256 $args --rows 4 >> "$out/cli.log" 2>&1
    record "cli $args" $?
  done
  grep -E "time|copy|oracle" "$out/cli.log" | tee -a "$out/summary.txt"
fi

if wanted perf && [ -x "$bin/qrita_perf" ]; then
  step "perf: the serving shape against the paper's real-model statistics"
  "$bin/qrita_perf" --calibrate > "$out/calibrate.txt" 2>&1
  record calibrate $?
  step "perf suite (qrita_perf ${perf_flags[*]:-})"
  "$bin/qrita_perf" --benchmark_out="$out/perf.json" --benchmark_out_format=json \
    "${perf_flags[@]}" > "$out/perf.txt" 2>&1
  record perf $?
  tail -n 5 "$out/perf.txt"
fi

# The Python package (a CUDA wheel in the bundle): installed into a folder
# of its own on the PYTHONPATH of the machine's Python (which has torch; a
# virtual environment made from a virtual environment's Python would not
# see it), with NumPy and pytest from the bundle where that Python lacks
# them; then its pytest suite, the CUDA graph test included. The peers step
# runs with the same path, so it times qrita's Python ops beside the peers.
python_path=""
if wanted python && ls "$bundle"/python/qrita-*.whl > /dev/null 2>&1; then
  step "the Python package on CUDA: pip install (from the bundle), pytest"
  site=$(mktemp -d)/site
  wheels=("$bundle"/python/qrita-*.whl)
  for m in numpy pytest; do
    python3 -c "import $m" 2> /dev/null || wheels+=("$bundle"/python/"$m"-*.whl)
  done
  python3 -m pip install -q --no-index --no-deps --no-compile --target "$site" "${wheels[@]}" \
    > "$out/python.log" 2>&1
  record "python install" $?
  (cd "$out" && PYTHONPATH=$site python3 -m pytest "$repo/python/tests" -q -p no:cacheprovider \
    --junitxml="$out/python-tests.xml" >> "$out/python.log" 2>&1)
  record "python tests" $?
  tail -n 3 "$out/python.log" | tee -a "$out/summary.txt"
  python_path=$site
  # vLLM's own tests of its kernel, with qrita's apply_top_k_top_p in its
  # place (scripts/vllm-tests.py; the tests from .peers/vllm-src).
  for d in "$bundle/.peers/vllm-src" "$repo/.peers/vllm-src"; do
    src=$(ls -d "$d"/vllm-*/ 2> /dev/null | head -n1)
    [ -n "$src" ] && [ -d "$bundle/.peers/vllm_ops" -o -d "$repo/.peers/vllm_ops" ] || continue
    ops=$bundle/.peers/vllm_ops; [ -d "$ops" ] || ops=$repo/.peers/vllm_ops
    step "vLLM's kernel tests (TestTritonTopkTopp) against qrita's apply_top_k_top_p"
    PYTHONPATH=$site python3 "$repo/scripts/vllm-tests.py" --src "$src" --peers-dir "$ops" \
      --junit "$out/vllm-tests.xml" > "$out/vllm-tests.log" 2>&1
    record "vllm tests" $?
    tail -n 1 "$out/vllm-tests.log" | tee -a "$out/summary.txt"
    break
  done
fi

# Peers (perf/peers.py) on the same inputs: vLLM's Triton kernel, PyTorch
# sort path and sampler, and FlashInfer's fused sampler from .peers/
# (scripts/fetch-peers.sh; in the bundle or the repository), and torch.topk.
# Without .peers/ only the PyTorch masks run.
if wanted peers && [ -f "$repo/perf/peers.py" ]; then
  peers_dir=""
  for d in "$bundle/.peers/vllm_ops" "$repo/.peers/vllm_ops"; do
    [ -f "$d/topk_topp_triton.py" ] && { peers_dir=$d; break; }
  done
  fi_dir=""
  for d in "$bundle/.peers/flashinfer" "$repo/.peers/flashinfer"; do
    [ -f "$d/flashinfer-sampling.tgz" ] && { fi_dir=$d; break; }
  done
  if ! python3 -c "import torch; assert torch.cuda.is_available()" 2> /dev/null; then
    echo "no PyTorch with CUDA here: peers skipped" | tee -a "$out/summary.txt"
  else
    step "peers: inputs against qrita-cli's (bitwise), then ${peers_dir:+vLLM Triton, vLLM PyTorch, the vLLM sampler, }${fi_dir:+the FlashInfer sampler, }torch.topk${peers_dir:- and a torch sort mask (no .peers/vllm_ops)}"
    if [ -x "$bin/qrita-cli" ]; then
      mkdir -p "$out/peers-inputs"
      for s in serving ordered randn uniform temp2 serving-bf16; do
        "$bin/qrita-cli" --batch 2 --vocab 262144 --shape "$s" --seed 1234 --rows 0 \
          --save-input "$out/peers-inputs/$s-262144.npy" > /dev/null 2>&1
      done
      python3 "$repo/perf/peers.py" --verify-inputs "$out/peers-inputs" > "$out/peers-inputs.log" 2>&1
      record "peers inputs" $?
      cat "$out/peers-inputs.log" | tee -a "$out/summary.txt"
      rm -rf "$out/peers-inputs"
    else
      echo "no qrita-cli in the bundle: the peers' inputs are not checked against qrita's" \
        | tee -a "$out/summary.txt"
    fi
    # shellcheck disable=SC2086
    PYTHONPATH=$python_path${PYTHONPATH:+:$PYTHONPATH} python3 "$repo/perf/peers.py" --out "$out/peers.json" ${peers_dir:+--peers-dir "$peers_dir"} \
      ${fi_dir:+--flashinfer-dir "$fi_dir"} --flashinfer-cache "$repo/.peers-cache/flashinfer" \
      $peers_args > "$out/peers.log" 2>&1
    record peers $?
    grep -E "^peers: (FlashInfer|kinds)|left out" "$out/peers.log" | tee -a "$out/summary.txt"
    tail -n 3 "$out/peers.log"
  fi
fi

if wanted page && [ -f "$out/perf.json" ]; then
  step "the performance page and its plots (scripts/perf_page.py)"
  plots=()
  python3 -c "import matplotlib" 2> /dev/null && plots=(--plots)
  python3 "$repo/scripts/perf_page.py" "$out" --out "$out/PERFORMANCE.md" ${plots[@]+"${plots[@]}"} \
    > "$out/page.log" 2>&1
  record page $?
  sed -n '/^## At a glance/,/^## Method/p' "$out/PERFORMANCE.md" 2> /dev/null | grep '^|' \
    | tee -a "$out/summary.txt"
  [ ${#plots[@]} -gt 0 ] || echo "no matplotlib here: the page without its plots" | tee -a "$out/summary.txt"
fi

step "done: results in $out"
if [ ${#failed[@]} -gt 0 ]; then
  echo "failed: ${failed[*]}" | tee -a "$out/summary.txt"
  exit 1
fi
echo "all passed" | tee -a "$out/summary.txt"
