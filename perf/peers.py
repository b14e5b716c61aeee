#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""qrita's peers on qrita_perf's GPU grid, on the same inputs, in one go.

    python3 perf/peers.py [--out peers.json] [--quick] [--filter REGEX]
                          [--kinds K,K] [--peers-dir .peers/vllm_ops]
                          [--verify-inputs DIR]

Kinds (the KIND of each benchmark name KIND/SHAPE/MODE/V:<v>/B:<b>):

  vllm-triton  vLLM's Triton top-k/top-p kernel (the Qrita port),
               apply_top_k_top_p_triton(logits, k, p), in place
  vllm-torch   vLLM's PyTorch sort path, apply_top_k_top_p_pytorch(logits,
               k, p), in place (sort, mask, scatter back)
  torch-sort   a sort-based exact mask in plain PyTorch, written from qrita's
               definition (out of place; the stand-in for vllm-torch when
               the vLLM files are absent)
  torch-topk   torch.topk with the batch's largest k, then top-p on the k
               survivors (modes with a k only; out of place)
  flashinfer-mask  FlashInfer's top-k mask,
               flashinfer.sampling.top_k_mask_logits(logits, k) with a
               per-row k tensor (the mode with a k and no p only; out of
               place)

Samplers (one token per row; the peers of qrita::sample_tokens, named like
qrita_perf's qrita-sample benchmarks' cells):

  flashinfer-sample   FlashInfer's fused sampler,
               flashinfer.sampling.top_k_top_p_sampling_from_logits(logits,
               k, p, deterministic=True) with per-row k (int32, vocab = off)
               and p (float32, 1 = off) tensors in every mode
  vllm-sample  vLLM's sampler on CUDA (TopKTopPSampler.forward_cuda, its
               default with FlashInfer): flashinfer_sample(logits, k, p),
               which calls FlashInfer's top_k_top_p_sampling_from_logits
               when a mode has k and p, else a softmax and FlashInfer's
               top_k_ or top_p_sampling_from_probs
  vllm-sample-native  vLLM's forward_native: the Triton mask above, a
               float32 softmax and random_sample (an exponential race:
               probs / Exp(1), argmax)

qrita's own Python package (python/, a CUDA build installed with
QRITA_BACKEND=cuda pip install .), timed by the same harness on the same
inputs, with a qrita.torch.Workspace made once per vocabulary:

  qrita-py-mask        qrita.torch.top_k_top_p_mask_(logits, k, p), in place
  qrita-py-mask-graph  the same call captured in a CUDA graph, replayed (the
               binding's cost under a graph; compare both with qrita_perf's
               qrita/... cells at B = 1 for the cost of the Python layer)
  qrita-py-sample      qrita.torch.sample(logits, k=k, p=p, seeds, offsets)
  qrita-py-list        qrita.torch.candidates(logits, 64, k=k, p=p)

They run when qrita imports with a CUDA build (--kinds names them too).

The vLLM kinds need the files scripts/fetch-peers.sh extracts from the
vllm 0.33.0 wheel into .peers/vllm_ops/, the FlashInfer kinds the extract of
flashinfer-python it writes into .peers/flashinfer/ (never committed);
without them they are left out and torch-sort is run instead of vllm-torch.
Default kinds: vllm-triton, vllm-torch, torch-topk, flashinfer-mask,
flashinfer-sample, vllm-sample, vllm-sample-native (those whose files are
there).

FlashInfer: .peers/flashinfer holds its sampling module's Python and CUDA
sources (flashinfer-sampling.tgz), the apache-tvm-ffi wheel it runs on and,
when fetch-peers.sh could build it, the module prebuilt for sm_90a. They
are unpacked (once per content) into --flashinfer-cache (default
.peers-cache/flashinfer, git-ignored; FLASHINFER_WORKSPACE_BASE and
TVM_FFI_CACHE_DIR point there), the prebuilt module is installed as
FlashInfer's AOT module on a GPU of its compute capability, and FlashInfer
JIT-compiles it otherwise (about 2 minutes on an H100 machine, cached there
for the next call on the same machine).

Inputs: qrita_perf's counter shapes (src/synthetic.hpp: serving, ordered,
randn, uniform, temp2, serving-bf16, flat), generated here with the same
formulas (splitmix64, Box-Muller in float64), so they match qrita_perf's up
to the last bit of the GPU's log / cos. --verify-inputs DIR compares them
with .npy files qrita-cli wrote (`--save-input DIR/<shape>-<vocab>.npy`,
seed 1234) and reports differing entries.

Calls as vLLM makes them: k int32 (vocab meaning off), p float32 (1.0
meaning off), None for a filter no row of the mode uses. Timing: CUDA
events around each call, the input restored before each call (not timed),
warm-up calls first, then the median of up to --reps calls (fewer where a
call is long: about --budget seconds per benchmark, at least 3). x_copy is
the time over a read+write copy of the same logits measured here. mem_bytes
is the peak memory torch allocated during a call above what was allocated
before it (an out-of-place output included).

Exactness: after the warm-up, rows 0, 1, B-2, B-1 of the output are checked
in float64 against the definition (docs/SEMANTICS.md): kept entries bitwise
unchanged, the kept set a prefix of the order (descending value, ties by
lower index), of exactly min(k, candidates) entries under top-k alone, and
under top-p the shortest prefix of the top-k survivors' softmax with mass
>= p (a kept count whose boundary mass is within 1e-5 of p also passes:
float32 softmax rounding). `exact` is the fraction of checked rows that
pass; vLLM's kernels keep whole tie groups, so they are not exact on ties.
For the samplers, `exact` is the fraction of checked rows whose token is in
the definition's kept set (within the same top-p rounding freedom).

The JSON has Google Benchmark's layout; scripts/perf_page.py reads it beside
qrita_perf's. perf/README.md has more.
"""

import argparse
import datetime
import glob
import hashlib
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import time
import zipfile

import torch

SHAPES = ["serving", "ordered", "randn", "uniform", "temp2", "serving-bf16", "flat"]
VOCABS = [128256, 262144]
BATCHES = [1, 8, 64, 1024]
MODES = ["k10", "p0.7", "k50p0.9", "rand"]
SAMPLERS = ["flashinfer-sample", "vllm-sample", "vllm-sample-native"]
QRITA_KINDS = ["qrita-py-mask", "qrita-py-mask-graph", "qrita-py-sample", "qrita-py-list"]
# Kinds whose result is a token per row (checked with check_tokens).
TOKEN_KINDS = SAMPLERS + ["qrita-py-sample", "qrita-py-list"]
MASK64 = (1 << 64) - 1
TOL = 1e-5


# --- the counter shapes (src/synthetic.hpp), in torch ----------------------------

def _signed(x):
    x &= MASK64
    return x - (1 << 64) if x >= (1 << 63) else x


GOLDEN = _signed(0x9E3779B97F4A7C15)
MIX1 = _signed(0xBF58476D1CE4E5B9)
MIX2 = _signed(0x94D049BB133111EB)
STREAM = 0xD6E8FEB86659FD93


def mix64_int(z):
    """splitmix64's finaliser on a Python int."""
    z = (z + 0x9E3779B97F4A7C15) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def _lsr(z, k):
    """Logical right shift of int64 tensors holding uint64 bit patterns."""
    return (z >> k) & ((1 << (64 - k)) - 1)


def mix64(z):
    """splitmix64's finaliser on int64 tensors (wrapping arithmetic)."""
    z = z + GOLDEN
    z = (z ^ _lsr(z, 30)) * MIX1
    z = (z ^ _lsr(z, 27)) * MIX2
    return z ^ _lsr(z, 31)


def hash_prefix(seed, stream):
    return mix64_int((seed ^ (stream * STREAM)) & MASK64)


def counter_hash_int(seed, stream, a, b):
    return mix64_int((mix64_int((hash_prefix(seed, stream) + a) & MASK64) + b) & MASK64)


def row_hash(seed, stream, row, b):
    """counter_hash(seed, stream, row, b) for an int64 tensor b."""
    return mix64(b + _signed(mix64_int((hash_prefix(seed, stream) + row) & MASK64)))


def unit_open(u32):
    return (u32 + 0.5) * (1.0 / 4294967296.0)


def normal_from(h):
    """Box-Muller on int64 tensors of random bits (float64)."""
    u1 = (_lsr(h, 32).to(torch.float64) + 0.5) * (1.0 / 4294967296.0)
    u2 = ((h & 0xFFFFFFFF).to(torch.float64) + 0.5) * (1.0 / 4294967296.0)
    return torch.sqrt(-2.0 * torch.log(u1)) * torch.cos(6.283185307179586 * u2)


def f32(x):
    """A Python float rounded to float32 (a float member of ServingRow)."""
    return struct.unpack("f", struct.pack("f", x))[0]


def phi(x):
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def serving_row_params(seed, row, vocab):
    """serving_row_params of src/synthetic.hpp, in Python floats."""
    def u(i):
        return unit_open(counter_hash_int(seed, 1, row, i) >> 32)
    mu, sigma, right = -3.0 + 4.0 * u(0), 1.5 + 1.0 * u(1), 0.4 + 0.2 * u(2)
    q = 0.001 * math.pow(50.0, u(3))
    zipf = 1.1 + 1.1 * u(4)
    m = min(100 + int(200.0 * u(5)), vocab // 8)
    p = {"mu": mu, "sigma": sigma, "right": right, "zipf": zipf, "jitter": 0.25,
         "informative": max(m, 0), "offset": 0, "inverse": 0, "top": 0.0,
         "flat": f32(-3.0 + 6.0 * u(6)), "bulk_share": f32(q), "low_span": 0}
    if m <= 0:
        return p
    p["offset"], p["inverse"] = scatter(counter_hash_int(seed, 1, row, 7), vocab)
    S = zipf_norm(m, zipf)
    rs = right * sigma
    bulk = (vocab - m) * (math.exp(0.5 * sigma * sigma) * phi(-sigma) +
                          math.exp(0.5 * rs * rs) * phi(rs))
    p["top"] = mu + math.log(bulk) + math.log((1.0 - q) / q) - math.log(S)
    return p


HEAD, KNEE = 16384, 256.0


def scatter(h, n):
    """impl::scatter of src/synthetic.hpp: the offset and the stride's inverse
    of the permutation j -> (offset + stride * j) mod n drawn from h."""
    stride = 1 + h % (n - 1)
    while math.gcd(stride, n) != 1:
        stride = stride % (n - 1) + 1
    return (h >> 32) % n, pow(stride, -1, n)


def zipf_norm(m, zipf):
    """impl::zipf_norm of src/synthetic.hpp, summed in the same order."""
    S = 0.0
    for j in range(m):
        S += math.pow(1 + j, -zipf)
    return S


def ordered_row_params(seed, rows, vocab):
    """ordered_row_params of src/synthetic.hpp for a list of rows. The head's
    expectation is summed in float64 on the CPU in the same order (a cumsum:
    sequential), with torch's log / exp / erfc."""
    out = []
    for row in rows:
        def u(i, row=row):
            return unit_open(counter_hash_int(seed, 1, row, i) >> 32)
        p = serving_row_params(seed, row, vocab)
        p["drift"] = 0.75 + 1.3 * u(8)
        p["spread"] = 0.1 + 0.4 * u(9)
        q = p["bulk_share"]
        if u(10) < 0.4:
            q = 1.0 - math.pow(10.0, -2.0 - 3.0 * u(15))
        p["bulk_share"] = f32(q)
        p["q"] = q
        p["head"] = min(HEAD, vocab)
        p["head_log"] = 1.0 / math.log(1.0 + HEAD / KNEE)
        m = p["informative"]
        p["low_span"] = min(4096, vocab // 4)
        if m <= 0 or p["low_span"] < 2:
            p["low_span"] = 0
            out.append(p)
            continue
        p["low_count"] = min(int(m * (0.2 + 0.4 * u(11))), p["low_span"] // 8)
        p["rotate"] = int(m * u(12)) % m
        L, R = p["low_span"], vocab - p["low_span"]
        p["low_offset"], p["low_inverse"] = scatter(counter_hash_int(seed, 1, row, 13), L)
        p["offset"], p["inverse"] = scatter(counter_hash_int(seed, 1, row, 14), R)
        p["S"] = zipf_norm(m, p["zipf"])
        out.append(p)
    # top: the bulk's expectation, the head summed column by column.
    todo = [p for p in out if p["low_span"] > 0]
    if todo:
        head = todo[0]["head"]
        c = torch.arange(head, dtype=torch.float64)
        f = 1.0 - torch.log(1.0 + c / KNEE) * todo[0]["head_log"]
        col = lambda key: torch.tensor([p[key] for p in todo], dtype=torch.float64)[:, None]
        sigma, right, drift, spread = col("sigma"), col("right"), col("drift"), col("spread")

        def expect(lift, scale):
            sl = sigma * scale
            sr = right * sigma * scale
            ph = lambda x: 0.5 * torch.special.erfc(-x / math.sqrt(2.0))
            return torch.exp(lift) * (torch.exp(0.5 * sl * sl) * ph(-sl) +
                                      torch.exp(0.5 * sr * sr) * ph(sr))
        terms = expect(sigma * drift * f[None, :], 1.0 + spread * f[None, :])
        for i, p in enumerate(todo):
            s, rs = p["sigma"], p["right"] * p["sigma"]
            e0 = math.exp(0.0) * (math.exp(0.5 * s * s) * phi(-s) + math.exp(0.5 * rs * rs) * phi(rs))
            init = float(vocab - p["head"] - p["informative"]) * e0
            bulk = torch.cumsum(torch.cat([torch.tensor([init], dtype=torch.float64), terms[i]]), 0)[-1].item()
            q = p["q"]
            p["top"] = p["mu"] + math.log(bulk) + math.log((1.0 - q) / q) - math.log(p["S"])
    return out


def counter_rows(shape, seed, rows, vocab, device, params=None):
    """float32 [len(rows), vocab]: rows of a counter shape."""
    out = torch.empty((len(rows), vocab), dtype=torch.float32, device=device)
    col = torch.arange(vocab, dtype=torch.int64, device=device)
    if shape in ("randn", "uniform"):
        for i, r in enumerate(rows):
            if shape == "randn":
                out[i] = normal_from(row_hash(seed, 5, r, col)).to(torch.float32)
            else:
                u24 = _lsr(row_hash(seed, 6, r, col), 40).to(torch.float32)
                out[i] = u24 * (1.0 / 16777216.0)
        return out
    if params is None:
        params = (ordered_row_params(seed, rows, vocab) if shape == "ordered"
                  else [serving_row_params(seed, r, vocab) for r in rows])
    colf = col.to(torch.float64)
    for i, r in enumerate(rows):
        p = params[i]
        if shape == "flat":
            out[i] = p["flat"]
            continue
        z = normal_from(row_hash(seed, 2, r, col))
        m = p["informative"]
        if shape == "ordered":
            f = torch.where(col < p["head"],
                            1.0 - torch.log(1.0 + colf * (1.0 / KNEE)) * p["head_log"],
                            torch.zeros_like(colf))
            x = p["mu"] + p["sigma"] * (p["drift"] * f + (1.0 + p["spread"] * f) *
                                        torch.where(z < 0, z, p["right"] * z))
            if p["low_span"] > 0:
                L = p["low_span"]
                R = vocab - L
                t_low = torch.remainder(col - p["low_offset"], L) * p["low_inverse"] % L
                t_hi = torch.remainder(col - L - p["offset"], R) * p["inverse"] % R
                j = torch.where(col < L,
                                torch.where(t_low < p["low_count"], (p["rotate"] + t_low) % m,
                                            torch.full_like(col, m)),
                                torch.where(t_hi < m - p["low_count"],
                                            (p["rotate"] + p["low_count"] + t_hi) % m,
                                            torch.full_like(col, m)))
                zj = normal_from(row_hash(seed, 3, r, j))
                inf = p["top"] - p["zipf"] * torch.log((1 + j).to(torch.float64)) + p["jitter"] * zj
                x = torch.where(j < m, inf, x)
            out[i] = x.to(torch.float32)
            continue
        x = p["mu"] + p["sigma"] * torch.where(z < 0, z, p["right"] * z)
        if m > 0:
            j = torch.remainder(col - p["offset"], vocab) * p["inverse"] % vocab
            zj = normal_from(row_hash(seed, 3, r, j))
            inf = p["top"] - p["zipf"] * torch.log((1 + j).to(torch.float64)) + p["jitter"] * zj
            x = torch.where(j < m, inf, x)
        x = x.to(torch.float32)
        if shape == "temp2":
            x = x * 0.5
        elif shape == "serving-bf16":
            x = x.to(torch.bfloat16).to(torch.float32)
        out[i] = x
    return out


def filters(mode, batch, vocab, seed, device):
    """k (int32, vocab = off) and p (float32, 1 = off) per row as qrita_perf's,
    None for a filter the mode does not use."""
    k, p = [vocab] * batch, [1.0] * batch
    for b in range(batch):
        if mode == "k10":
            k[b] = 10
        elif mode == "p0.7":
            p[b] = 0.7
        elif mode == "k50p0.9":
            k[b], p[b] = 50, 0.9
        else:
            h = counter_hash_int(seed, 4, b, 0)
            k[b] = 1 + h % 99
            p[b] = 0.5 + 0.5 * (h >> 41) * (1.0 / 8388608.0)
    use_k, use_p = mode != "p0.7", mode != "k10"
    return (torch.tensor(k, dtype=torch.int32, device=device) if use_k else None,
            torch.tensor(p, dtype=torch.float32, device=device) if use_p else None)


# --- the masks ---------------------------------------------------------------------

def apply_top_p(vals, p):
    """vals: rows sorted descending (dropped places -inf); keeps the shortest
    prefix of each row with softmax mass >= p, at least one entry."""
    probs = torch.softmax(vals, dim=-1)
    before = torch.cumsum(probs, dim=-1) - probs
    p_eff = torch.where(p < 1.0, p, torch.full_like(p, float("inf")))
    drop = before >= p_eff[:, None]
    drop[:, 0] = False
    return vals.masked_fill(drop, float("-inf"))


def sort_mask(logits, k, p):
    vocab = logits.shape[1]
    vals, idx = torch.sort(logits, dim=-1, descending=True, stable=True)
    if k is not None:
        k_eff = torch.where((k > 0) & (k < vocab), k, torch.full_like(k, vocab))
        places = torch.arange(vocab, device=logits.device)
        vals = vals.masked_fill(places[None, :] >= k_eff[:, None], float("-inf"))
    if p is not None:
        vals = apply_top_p(vals, p)
    return torch.empty_like(logits).scatter_(1, idx, vals)


def topk_mask(logits, k, p, k_max):
    vals, idx = torch.topk(logits, k_max, dim=-1, largest=True, sorted=True)
    places = torch.arange(k_max, device=logits.device)
    vals = vals.masked_fill(places[None, :] >= k[:, None], float("-inf"))
    if p is not None:
        vals = apply_top_p(vals, p)
    return torch.full_like(logits, float("-inf")).scatter_(1, idx, vals)


def load_vllm(peers_dir):
    """vLLM's functions from the extracted files and their version, or
    (None, None, None, why not). The third is a dict of the sampler's
    functions (random_sample, flashinfer_sample), empty if that file is
    missing."""
    if not peers_dir or not os.path.isfile(os.path.join(peers_dir, "topk_topp_triton.py")):
        return None, None, {}, "no .peers/vllm_ops (run scripts/fetch-peers.sh)"
    sys.path.insert(0, os.path.abspath(peers_dir))
    try:
        import topk_topp_pytorch
        import topk_topp_triton
    except Exception as e:  # noqa: BLE001 - report and run without
        return None, None, {}, f"could not import the vLLM files: {e!r}"
    sampler = {}
    if os.path.isfile(os.path.join(peers_dir, "vllm_sampler.py")):
        try:
            import vllm_sampler
            sampler = {"random_sample": vllm_sampler.random_sample,
                       "flashinfer_sample": vllm_sampler.flashinfer_sample}
        except Exception as e:  # noqa: BLE001
            print(f"peers: vLLM's sampler functions left out: {e!r}", file=sys.stderr)
    version = open(os.path.join(peers_dir, "VERSION")).read().strip() \
        if os.path.exists(os.path.join(peers_dir, "VERSION")) else "vllm"
    return (topk_topp_triton.apply_top_k_top_p_triton,
            topk_topp_pytorch.apply_top_k_top_p_pytorch, sampler, version)


def load_qrita():
    """qrita.torch from an installed CUDA build, or (None, why not)."""
    try:
        import qrita
        import qrita.torch as qt
    except Exception as e:  # noqa: BLE001 - say why and go on
        return None, f"qrita does not import: {e!r}"
    if qrita.device != "cuda":
        return None, f"qrita is a {qrita.backend} build"
    return qt, f"qrita {qrita.__version__} ({qrita.backend})"


def graph_of(fn):
    """fn captured in a CUDA graph (one call on the capture stream first);
    returns the replay."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=s):
        fn()
    return g.replay


def load_flashinfer(fi_dir, cache, allow_aot=True):
    """FlashInfer's sampling extract (scripts/fetch-peers.sh) unpacked into
    `cache`, imported, and its module loaded (prebuilt or JIT-compiled):
    (flashinfer, note) or (None, why not)."""
    tgz = os.path.join(fi_dir or "", "flashinfer-sampling.tgz")
    if not fi_dir or not os.path.isfile(tgz):
        return None, "no .peers/flashinfer (run scripts/fetch-peers.sh)"
    cache = os.path.abspath(cache)
    site = os.path.join(cache, "site")
    wheels = sorted(glob.glob(os.path.join(fi_dir, "*.whl")))
    digest = hashlib.sha256(open(tgz, "rb").read()).hexdigest()
    stamp = os.path.join(site, ".qrita-stamp")
    want = digest + " " + " ".join(os.path.basename(w) for w in wheels)
    if not os.path.isfile(stamp) or open(stamp).read() != want:
        shutil.rmtree(site, ignore_errors=True)
        os.makedirs(site)
        with tarfile.open(tgz) as tar:
            if hasattr(tarfile, "data_filter"):
                tar.extractall(site, filter="data")
            else:
                tar.extractall(site)
        for w in wheels:
            res = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index",
                                  "--no-deps", "--no-compile", "--no-cache-dir", "--target", site, w],
                                 capture_output=True, text=True)
            if res.returncode != 0:  # a wheel is a zip: unpack it instead
                zipfile.ZipFile(w).extractall(site)
        open(stamp, "w").write(want)
    # The module prebuilt by fetch-peers.sh, where FlashInfer looks for AOT
    # modules, on a GPU of the capability it was built for.
    aot = os.path.join(site, "flashinfer", "data", "aot", "sampling", "sampling.so")
    major, minor = torch.cuda.get_device_capability()
    prebuilt = os.path.join(fi_dir, f"sampling-sm{major}{minor}a.so")
    how = "JIT-compiled by FlashInfer"
    if allow_aot and os.path.isfile(prebuilt):
        os.makedirs(os.path.dirname(aot), exist_ok=True)
        shutil.copyfile(prebuilt, aot)
        how = f"prebuilt {os.path.basename(prebuilt)} (scripts/fetch-peers.sh), as FlashInfer's AOT module"
    elif os.path.exists(aot):
        os.remove(aot)
    os.environ["FLASHINFER_WORKSPACE_BASE"] = cache
    os.environ.setdefault("TVM_FFI_CACHE_DIR", os.path.join(cache, "tvm-ffi"))
    sys.path.insert(0, site)
    t0 = time.time()
    try:
        import flashinfer
        import flashinfer.sampling
        flashinfer.sampling.get_sampling_module()
    except Exception as e:  # noqa: BLE001 - report and run without
        return None, f"FlashInfer's sampling module did not load: {e!r}"
    return flashinfer, (f"flashinfer-python {flashinfer.__version__}, sampling module "
                        f"{how}, loaded in {time.time() - t0:.1f} s")


# --- exactness against the definition, in float64 -------------------------------

def check_rows(x, out, k, p):
    """x, out: [n, V] float32 (input, output rows); k, p: per row (k None or
    >= V: off; p None or >= 1: off). Returns (passed, first failure)."""
    n, vocab = x.shape
    xd = x.double()
    xs = torch.where(torch.isnan(xd), torch.full_like(xd, float("-inf")), xd)
    vals, order = torch.sort(xs, dim=-1, descending=True, stable=True)
    passed, why = 0, ""
    for i in range(n):
        cand = int((vals[i] > float("-inf")).sum())
        ki = k[i] if k is not None else 0
        pi = p[i] if p is not None else 1.0
        kept = out[i] != float("-inf")
        reason = ""
        if not torch.equal(out[i][kept], x[i][kept]):
            reason = "a kept entry changed"
        kept_sorted = kept[order[i]]
        nk = int(kept_sorted.sum())
        if not reason and not bool(kept_sorted[:nk].all()):
            reason = "the kept set is not a prefix of the order"
        k_eff = min(ki if 0 < ki < vocab else cand, cand)
        if not reason:
            if cand == 0 or (not (0 < ki < vocab) and not pi < 1.0):
                ok = nk == cand
            elif not pi < 1.0:
                ok = nk == k_eff
            else:
                top = vals[i, :k_eff]
                probs = torch.softmax(top, 0)
                cum = torch.cumsum(probs, 0)
                ref = 1 if pi <= 0 else int((cum < pi).sum()) + 1
                ref = min(ref, k_eff)
                ok = nk == ref
                if not ok and 1 <= nk <= k_eff:
                    # boundary within rounding of p
                    before = float(cum[nk - 2]) if nk >= 2 else 0.0
                    ok = float(cum[nk - 1]) >= pi - TOL and before < pi + TOL
            if not ok:
                reason = f"kept {nk} entries, the definition keeps {'k=%d' % k_eff if not pi < 1 else 'another count'}"
        if reason:
            why = why or reason
        else:
            passed += 1
    return passed, why


def check_tokens(x, tokens, k, p):
    """x: [n, V] float32 input rows; tokens: one per row; k, p as for
    check_rows. A token passes if it is a candidate among the definition's
    kept set: the first min(k, candidates) of the order, under top-p the
    shortest prefix with mass >= p (a boundary within 1e-5 of p also
    counts). Returns (passed, first failure)."""
    n, vocab = x.shape
    xd = x.double()
    xs = torch.where(torch.isnan(xd), torch.full_like(xd, float("-inf")), xd)
    vals, order = torch.sort(xs, dim=-1, descending=True, stable=True)
    passed, why = 0, ""
    for i in range(n):
        cand = int((vals[i] > float("-inf")).sum())
        ki = k[i] if k is not None else 0
        pi = p[i] if p is not None else 1.0
        k_eff = min(ki if 0 < ki < vocab else cand, cand)
        if pi < 1.0:
            if pi <= 0:
                hi = 1
            else:
                cum = torch.cumsum(torch.softmax(vals[i, :k_eff], 0), 0)
                hi = min(int((cum < pi + TOL).sum()) + 1, k_eff)
        else:
            hi = k_eff
        t = int(tokens[i])
        place = (order[i] == t).nonzero() if 0 <= t < vocab else order.new_zeros(0)
        if cand > 0 and place.numel() == 1 and int(place[0]) < hi:
            passed += 1
        elif not why:
            why = (f"token {t} is not among the {hi} kept entries"
                   + (f" (place {int(place[0])} of the order)" if place.numel() == 1 else ""))
    return passed, why


# --- timing ---------------------------------------------------------------------------

def ev():
    return torch.cuda.Event(enable_timing=True)


def time_calls(call, restore, warmup, reps, budget):
    """Median ms of call() (restore() before each, untimed), and the peak
    memory a call allocated above what was allocated before it."""
    times = []
    for _ in range(warmup):
        restore()
        a, b = ev(), ev()
        a.record()
        call()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    n = max(3, min(reps, int(budget * 1e3 / max(min(times), 1e-3))))
    times = []
    peak = 0
    for _ in range(n):
        restore()
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        a, b = ev(), ev()
        a.record()
        out = call()
        b.record()
        b.synchronize()
        peak = max(peak, torch.cuda.max_memory_allocated() - base)
        times.append(a.elapsed_time(b))
        del out
    times.sort()
    return times[len(times) // 2], peak, n


def copy_ms(src, dst):
    t, _, _ = time_calls(lambda: dst.copy_(src), lambda: None, 3, 15, 1.0)
    return t


# --- --verify-inputs ----------------------------------------------------------------

def read_npy(path):
    """float32 C-order .npy (as qrita-cli writes it) -> CPU tensor."""
    with open(path, "rb") as fh:
        data = fh.read()
    assert data[:6] == b"\x93NUMPY", f"{path}: not an .npy file"
    major = data[6]
    hlen = struct.unpack("<H" if major == 1 else "<I", data[8:10] if major == 1 else data[8:12])[0]
    start = (10 if major == 1 else 12) + hlen
    header = data[(10 if major == 1 else 12):start].decode()
    assert "'<f4'" in header and "'fortran_order': False" in header, f"{path}: {header}"
    shape = tuple(int(s) for s in re.search(r"\(([^)]*)\)", header).group(1).split(",") if s.strip())
    t = torch.frombuffer(bytearray(data[start:]), dtype=torch.float32)
    return t.reshape(shape)


def verify_inputs(folder, seed, device):
    """Compares our rows with qrita-cli's (<shape>-<vocab>.npy); returns the
    number of files with a difference beyond one float ulp."""
    bad = 0
    for name in sorted(os.listdir(folder)):
        m = re.match(r"(.+)-(\d+)\.npy$", name)
        if not m or m.group(1) not in SHAPES:
            continue
        shape, vocab = m.group(1), int(m.group(2))
        ref = read_npy(os.path.join(folder, name))
        ours = counter_rows(shape, seed, list(range(ref.shape[0])), vocab, device).cpu()
        exact = int((ours.view(torch.int32) == ref.view(torch.int32)).sum())
        ulp = int(((ours.view(torch.int32) - ref.view(torch.int32)).abs() <= 1).sum())
        total = ref.numel()
        print(f"verify {shape:13s} V={vocab}: {exact}/{total} entries bitwise equal, "
              f"{ulp}/{total} within one ulp")
        limit = total // 1000 if shape == "serving-bf16" else 0
        if total - ulp > limit:
            bad += 1
    return bad


# --- main -------------------------------------------------------------------------

def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="peers.json", help="JSON output file")
    parser.add_argument("--quick", action="store_true",
                        help="V 128256, B 1 and 64 only (about half a minute)")
    parser.add_argument("--filter", default="", help="regex on benchmark names")
    parser.add_argument("--kinds", default="", help="comma-separated kinds (default: see above)")
    repo = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    parser.add_argument("--peers-dir", default=os.path.join(repo, ".peers", "vllm_ops"))
    parser.add_argument("--flashinfer-dir", default=os.path.join(repo, ".peers", "flashinfer"),
                        help="scripts/fetch-peers.sh's FlashInfer extract")
    parser.add_argument("--flashinfer-cache",
                        default=os.environ.get("QRITA_FLASHINFER_CACHE",
                                               os.path.join(repo, ".peers-cache", "flashinfer")),
                        help="where it is unpacked and FlashInfer keeps its JIT cache (reused)")
    parser.add_argument("--flashinfer-jit", action="store_true",
                        help="ignore the prebuilt module: let FlashInfer JIT-compile it")
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--reps", type=int, default=10, help="timed calls per benchmark, at most")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--budget", type=float, default=0.15,
                        help="seconds of timed calls per benchmark (at least 3 calls)")
    parser.add_argument("--verify-inputs", default=None, metavar="DIR",
                        help="compare generated rows with qrita-cli's .npy files in DIR, then exit")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("peers.py needs a GPU that torch.cuda can use")
    device = torch.device("cuda")
    if args.verify_inputs:
        sys.exit(1 if verify_inputs(args.verify_inputs, args.seed, device) else 0)

    vllm_triton, vllm_torch, vllm_sampler, vllm_note = load_vllm(args.peers_dir)
    if args.kinds:
        kinds = args.kinds.split(",")
    elif vllm_triton:
        kinds = ["vllm-triton", "vllm-torch", "torch-topk", "flashinfer-mask"] + SAMPLERS
    else:
        kinds = ["torch-sort", "torch-topk", "flashinfer-mask", "flashinfer-sample"]
    if not vllm_triton and any(k.startswith("vllm") for k in kinds):
        print(f"peers: vLLM kinds left out: {vllm_note}", file=sys.stderr)
        kinds = [k for k in kinds if not k.startswith("vllm")] or ["torch-sort", "torch-topk"]
    if "vllm-sample-native" in kinds and "random_sample" not in vllm_sampler:
        print("peers: vllm-sample-native left out: no .peers/vllm_ops/vllm_sampler.py", file=sys.stderr)
        kinds.remove("vllm-sample-native")
    flashinfer, fi_note = None, "not asked for"
    if any(k in ("flashinfer-mask", "flashinfer-sample", "vllm-sample") for k in kinds):
        flashinfer, fi_note = load_flashinfer(args.flashinfer_dir, args.flashinfer_cache,
                                              allow_aot=not args.flashinfer_jit)
        print(f"peers: FlashInfer: {fi_note}", flush=True)
        drop = ["flashinfer-mask", "flashinfer-sample", "vllm-sample"] if flashinfer is None else \
            ([] if "flashinfer_sample" in vllm_sampler else ["vllm-sample"])
        if drop and any(k in drop for k in kinds):
            print(f"peers: {', '.join(k for k in kinds if k in drop)} left out", file=sys.stderr)
            kinds = [k for k in kinds if k not in drop]
    qt, qrita_note = load_qrita()
    if not args.kinds and qt is not None:
        kinds += QRITA_KINDS
    if qt is None and any(k in QRITA_KINDS for k in kinds):
        print(f"peers: qrita kinds left out: {qrita_note}", file=sys.stderr)
        kinds = [k for k in kinds if k not in QRITA_KINDS]
    print(f"peers: kinds {', '.join(kinds)}" + (f" ({vllm_note})" if vllm_triton else ""), flush=True)

    vocabs = [128256] if args.quick else VOCABS
    batches = [1, 64] if args.quick else BATCHES
    pattern = re.compile(args.filter) if args.filter else None
    results = []
    started = time.time()
    max_b = max(batches)
    for vocab in vocabs:
        serving_params = None
        ws = qt.Workspace(max_b, vocab) if any(k in QRITA_KINDS for k in kinds) else None
        for shape in SHAPES:
            names = [f"{kind}/{shape}/{mode}/V:{vocab}/B:{b}"
                     for kind in kinds for mode in MODES for b in batches]
            if pattern and not any(pattern.search(n) for n in names):
                continue
            t0 = time.time()
            params = None
            if shape in ("serving", "temp2", "serving-bf16", "flat"):
                if serving_params is None:
                    serving_params = [serving_row_params(args.seed, r, vocab) for r in range(max_b)]
                params = serving_params
            pristine = counter_rows(shape, args.seed, list(range(max_b)), vocab, device, params)
            work_all = torch.empty_like(pristine)
            print(f"generated {shape} {max_b}x{vocab} in {time.time() - t0:.1f} s", flush=True)
            for batch in batches:
                src = pristine[:batch]
                work = work_all[:batch]
                cms = copy_ms(src, work)
                for mode in MODES:
                    k, p = filters(mode, batch, vocab, args.seed, device)
                    rows = sorted({r for r in (0, 1, batch - 2, batch - 1) if 0 <= r < batch})
                    k_rows = k[rows].tolist() if k is not None else None
                    p_rows = p[rows].tolist() if p is not None else None
                    # FlashInfer's fused sampler always gets both per-row tensors.
                    k_all = k if k is not None else \
                        torch.full((batch,), vocab, dtype=torch.int32, device=device)
                    p_all = p if p is not None else \
                        torch.ones((batch,), dtype=torch.float32, device=device)
                    for kind in kinds:
                        name = f"{kind}/{shape}/{mode}/V:{vocab}/B:{batch}"
                        if pattern and not pattern.search(name):
                            continue
                        if kind == "torch-topk" and k is None:
                            continue
                        if kind == "flashinfer-mask" and (k is None or p is not None):
                            continue
                        sampler = kind in TOKEN_KINDS
                        if kind == "flashinfer-sample":
                            call = lambda: flashinfer.sampling.top_k_top_p_sampling_from_logits(
                                work, k_all, p_all, deterministic=True)
                        elif kind == "vllm-sample":
                            # TopKTopPSampler.forward_cuda without per-request generators
                            call = lambda: vllm_sampler["flashinfer_sample"](work.contiguous(), k, p, {})
                        elif kind == "vllm-sample-native":
                            def call():  # TopKTopPSampler.forward_native, logprobs_mode raw
                                logits = vllm_triton(work, k, p)
                                probs = logits.softmax(dim=-1, dtype=torch.float32)
                                return vllm_sampler["random_sample"](probs, {})
                        elif kind == "vllm-triton":
                            call = lambda: vllm_triton(work, k, p)
                        elif kind == "vllm-torch":
                            call = lambda: vllm_torch(work, k, p)
                        elif kind == "torch-sort":
                            call = lambda: sort_mask(work, k, p)
                        elif kind == "qrita-py-mask":
                            call = lambda: qt.top_k_top_p_mask_(work, k, p, workspace=ws)
                        elif kind == "qrita-py-mask-graph":
                            call = graph_of(lambda: qt.top_k_top_p_mask_(work, k, p, workspace=ws))
                        elif kind == "qrita-py-sample":
                            seeds = torch.arange(batch, device=device)
                            offsets = torch.zeros(batch, dtype=torch.int64, device=device)
                            call = lambda: qt.sample(work, k=k, p=p, seeds=seeds, offsets=offsets,
                                                     workspace=ws)
                        elif kind == "qrita-py-list":
                            call = lambda: qt.candidates(work, 64, k=k, p=p, workspace=ws)[0][:, 0]
                        elif kind == "flashinfer-mask":
                            call = lambda: flashinfer.sampling.top_k_mask_logits(work, k)
                        elif kind == "torch-topk":
                            k_max = int(k.max().item())
                            call = lambda: topk_mask(work, k, p, k_max)
                        else:
                            sys.exit(f"unknown kind {kind}")
                        restore = lambda: work.copy_(src)
                        try:
                            restore()
                            res = call()
                            torch.cuda.synchronize()
                            res = work if res is None else res
                            if sampler:
                                passed, why = check_tokens(src[rows], res.view(-1)[rows].cpu(),
                                                           k_rows, p_rows)
                            else:
                                passed, why = check_rows(src[rows], res[rows], k_rows, p_rows)
                            del res
                            ms, mem, n = time_calls(call, restore, args.warmup, args.reps, args.budget)
                        except Exception as e:  # noqa: BLE001 - record and go on
                            print(f"{name:45s} FAILED: {e!r}", flush=True)
                            results.append({"name": name, "run_name": name, "run_type": "iteration",
                                            "error_occurred": True, "error_message": repr(e)})
                            torch.cuda.empty_cache()
                            continue
                        exact = passed / len(rows)
                        results.append({
                            "name": name, "run_name": name, "run_type": "iteration",
                            "repetitions": 1, "repetition_index": 0, "threads": 1,
                            "iterations": n, "real_time": ms * 1e3, "cpu_time": ms * 1e3,
                            "time_unit": "us", "batch": batch, "vocab": vocab,
                            "rows_per_ms": batch / ms, "x_copy": ms / cms, "copy_ms": cms,
                            "mem_bytes": mem,
                            "bytes_per_second": batch * vocab * (4 if sampler else 8) / (ms * 1e-3),
                            "exact": exact, "rows_checked": len(rows),
                            **({"inexact": why} if why else {}),
                        })
                        print(f"{name:45s} {ms * 1e3:10.1f} us  x_copy {ms / cms:7.2f}  "
                              f"mem {mem / 2**20:8.1f} MiB  exact {exact:.2f}"
                              + (f"  ({why})" if why else ""), flush=True)
            del pristine, work_all
            torch.cuda.empty_cache()
    props = torch.cuda.get_device_properties(0)
    context = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "executable": "perf/peers.py",
        "torch_version": torch.__version__,
        "device": props.name,
        "kokkos_configuration": f"{props.name} (torch {torch.__version__})",
        "suite": "quick" if args.quick else "full",
        "seed": str(args.seed),
        "kinds": ",".join(kinds),
        "vllm": vllm_note if vllm_triton else f"absent: {vllm_note}",
        "flashinfer": fi_note,
        "qrita": qrita_note,
        "timing": f"CUDA events, median of up to {args.reps} calls (~{args.budget} s) after "
                  f"{args.warmup} warm-up calls; input restored before each call, untimed",
    }
    with open(args.out, "w") as fh:
        json.dump({"context": context, "benchmarks": results}, fh, indent=1)
    print(f"wrote {args.out}: {len(results)} benchmarks in {time.time() - started:.0f} s")


if __name__ == "__main__":
    main()
