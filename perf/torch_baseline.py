#!/usr/bin/env python3
"""PyTorch baselines for qrita_perf's grid, on a CUDA (or ROCm) GPU.

    python3 perf/torch_baseline.py [--out torch.json] [--quick] [--filter REGEX]

Two masks in plain PyTorch, written from qrita's definition (docs/SEMANTICS.md)
and timed with CUDA events (warm-up, then the median of --reps calls):

  torch-sort  the sort-based exact mask serving engines used before Qrita:
              a stable descending sort of each row, top-k as the first k
              sorted places, softmax + cumulative sum on the sorted row for
              top-p (the shortest prefix with mass >= p, at least one entry),
              then the masked row scattered back through the permutation.
  torch-topk  torch.topk with the batch's largest k, the places past each
              row's k dropped, top-p (if any) on the k survivors' softmax,
              scattered into a row of -inf. Modes with a k only.

Inputs are qrita_perf's "serving" logits (src/synthetic.hpp), generated here
with the same counter-based formula (splitmix64 + Box-Muller in float64), so
the values match qrita_perf's up to the last bit of the GPU's log / cos.
Softmax runs in float32 as serving engines run it, so a top-p decision can
differ from qrita's fp64-exact one where a prefix's mass is within rounding
of p; no NaN is generated (torch.sort orders NaN first, not as -inf).

Per benchmark it records rows_per_ms, x_copy (time / time of a read+write
copy of the same logits), copy_ms and mem_bytes (torch.cuda's peak allocated
memory during a call, above what was allocated before it). The JSON has
Google Benchmark's layout: scripts/plot_perf.py overlays it on qrita_perf's.
"""

import argparse
import datetime
import json
import math
import re
import sys
import time

import torch

VOCABS = [128256, 151936, 201088, 262208]
BATCHES = [1, 8, 32, 64, 128, 256, 512, 1024]
MODES = ["k10", "p0.7", "k50p0.9", "rand"]
MASK64 = (1 << 64) - 1


# --- the serving shape (src/synthetic.hpp), in torch -------------------------

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


def unit_open(u32):
    return (u32 + 0.5) * (1.0 / 4294967296.0)


def normal_from(h):
    """Box-Muller on int64 tensors of random bits (float64)."""
    u1 = (_lsr(h, 32).to(torch.float64) + 0.5) * (1.0 / 4294967296.0)
    u2 = ((h & 0xFFFFFFFF).to(torch.float64) + 0.5) * (1.0 / 4294967296.0)
    return torch.sqrt(-2.0 * torch.log(u1)) * torch.cos(6.283185307179586 * u2)


def serving_row_params(seed, row, vocab):
    """serving_row_params of src/synthetic.hpp, in Python floats."""
    def u(i):
        return unit_open(counter_hash_int(seed, 1, row, i) >> 32)
    mu, sigma, right = -3.0 + 4.0 * u(0), 1.5 + 1.0 * u(1), 0.4 + 0.2 * u(2)
    q = 0.001 * math.pow(50.0, u(3))
    zipf = 1.1 + 1.1 * u(4)
    m = min(100 + int(200.0 * u(5)), vocab // 8)
    p = {"mu": mu, "sigma": sigma, "right": right, "zipf": zipf, "jitter": 0.25,
         "informative": max(m, 0), "offset": 0, "inverse": 0, "top": 0.0}
    if m <= 0:
        return p
    h = counter_hash_int(seed, 1, row, 7)
    stride = 1 + h % (vocab - 1)
    while math.gcd(stride, vocab) != 1:
        stride = stride % (vocab - 1) + 1
    p["offset"] = (h >> 32) % vocab
    p["inverse"] = pow(stride, -1, vocab)
    S = sum(math.pow(1 + j, -zipf) for j in range(m))
    phi = lambda x: 0.5 * math.erfc(-x / math.sqrt(2.0))
    rs = right * sigma
    bulk = (vocab - m) * (math.exp(0.5 * sigma * sigma) * phi(-sigma) +
                          math.exp(0.5 * rs * rs) * phi(rs))
    p["top"] = mu + math.log(bulk) + math.log((1.0 - q) / q) - math.log(S)
    return p


def serving_rows(seed, rows, vocab, device):
    """float32 [len(rows), vocab]: rows of the serving shape."""
    out = torch.empty((len(rows), vocab), dtype=torch.float32, device=device)
    col = torch.arange(vocab, dtype=torch.int64, device=device)
    pre2, pre3 = hash_prefix(seed, 2), hash_prefix(seed, 3)
    for i, r in enumerate(rows):
        p = serving_row_params(seed, r, vocab)
        bulk_h = mix64(col + _signed(mix64_int((pre2 + r) & MASK64)))
        z = normal_from(bulk_h)
        x = p["mu"] + p["sigma"] * torch.where(z < 0, z, p["right"] * z)
        m = p["informative"]
        if m > 0:
            j = torch.remainder(col - p["offset"], vocab) * p["inverse"] % vocab
            zj = normal_from(mix64(j + _signed(mix64_int((pre3 + r) & MASK64))))
            inf = p["top"] - p["zipf"] * torch.log((1 + j).to(torch.float64)) + p["jitter"] * zj
            x = torch.where(j < m, inf, x)
        out[i] = x.to(torch.float32)
    return out


def filters(mode, batch, seed, device):
    """k (int64, 0 = off) and p (float32, 1 = off) per row, as qrita_perf's."""
    k, p = [0] * batch, [1.0] * batch
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
    return (torch.tensor(k, dtype=torch.int64, device=device),
            torch.tensor(p, dtype=torch.float32, device=device))


# --- the masks -------------------------------------------------------------------

def apply_top_p(vals, p):
    """vals: rows sorted descending (dropped places -inf); keeps the shortest
    prefix of each row with softmax mass >= p, at least one entry."""
    probs = torch.softmax(vals, dim=-1)
    before = torch.cumsum(probs, dim=-1) - probs  # mass of the places before
    p_eff = torch.where(p < 1.0, p, torch.full_like(p, float("inf")))
    drop = before >= p_eff[:, None]
    drop[:, 0] = False
    return vals.masked_fill(drop, float("-inf"))


def sort_mask(logits, k, p, use_k, use_p):
    vocab = logits.shape[1]
    vals, idx = torch.sort(logits, dim=-1, descending=True, stable=True)
    if use_k:
        k_eff = torch.where((k > 0) & (k < vocab), k, torch.full_like(k, vocab))
        places = torch.arange(vocab, device=logits.device)
        vals = vals.masked_fill(places[None, :] >= k_eff[:, None], float("-inf"))
    if use_p:
        vals = apply_top_p(vals, p)
    return torch.empty_like(logits).scatter_(1, idx, vals)


def topk_mask(logits, k, p, use_p, k_max):
    vals, idx = torch.topk(logits, k_max, dim=-1, largest=True, sorted=True)
    places = torch.arange(k_max, device=logits.device)
    vals = vals.masked_fill(places[None, :] >= k[:, None], float("-inf"))
    if use_p:
        vals = apply_top_p(vals, p)
    return torch.full_like(logits, float("-inf")).scatter_(1, idx, vals)


# --- timing ------------------------------------------------------------------------

def time_calls(fn, warmup, reps):
    """Median milliseconds of fn() over reps calls (CUDA events) and the peak
    memory a call allocated above what was allocated before it."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(reps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        out = fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
        del out
    peak = torch.cuda.max_memory_allocated() - base
    times.sort()
    return times[len(times) // 2], peak


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="torch_baseline.json", help="JSON output file")
    parser.add_argument("--quick", action="store_true", help="V 128256 and B 1, 64, 1024 only")
    parser.add_argument("--filter", default="", help="regex on benchmark names")
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--reps", type=int, default=10, help="timed calls per benchmark")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--print-row", type=int, default=None, metavar="R",
                        help="print a digest of generated row R at vocab 128256 and exit")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("torch_baseline.py needs a GPU that torch.cuda can use")
    device = torch.device("cuda")

    if args.print_row is not None:
        row = serving_rows(args.seed, [args.print_row], 128256, device)[0].double().cpu()
        top = torch.topk(row, 5)
        print(f"row {args.print_row}: sum {row.sum().item():.9g} first {row[:4].tolist()}"
              f" top {top.values.tolist()} at {top.indices.tolist()}")
        return

    vocabs = [128256] if args.quick else VOCABS
    batches = [1, 64, 1024] if args.quick else BATCHES
    pattern = re.compile(args.filter) if args.filter else None
    results = []
    started = time.time()
    for vocab in vocabs:
        max_b = max(batches)
        pristine = serving_rows(args.seed, list(range(max_b)), vocab, device)
        for batch in batches:
            logits = pristine[:batch]
            dst = torch.empty_like(logits)
            copy_ms, _ = time_calls(lambda: dst.copy_(logits), args.warmup, max(args.reps, 9))
            for mode in MODES:
                k, p = filters(mode, batch, args.seed, device)
                use_k, use_p = mode != "p0.7", mode != "k10"
                kinds = {"torch-sort": lambda: sort_mask(logits, k, p, use_k, use_p)}
                if use_k:
                    k_max = int(k.max().item())
                    kinds["torch-topk"] = lambda: topk_mask(logits, k, p, use_p, k_max)
                for kind, fn in kinds.items():
                    name = f"{kind}/serving/{mode}/V:{vocab}/B:{batch}"
                    if pattern and not pattern.search(name):
                        continue
                    ms, mem = time_calls(fn, args.warmup, args.reps)
                    results.append({
                        "name": name, "run_name": name, "run_type": "iteration",
                        "repetitions": 1, "repetition_index": 0, "threads": 1,
                        "iterations": args.reps, "real_time": ms * 1e3, "cpu_time": ms * 1e3,
                        "time_unit": "us", "batch": batch, "vocab": vocab,
                        "rows_per_ms": batch / ms, "x_copy": ms / copy_ms, "copy_ms": copy_ms,
                        "mem_bytes": mem, "bytes_per_second": batch * vocab * 8 / (ms * 1e-3),
                    })
                    print(f"{name:45s} {ms * 1e3:10.1f} us  {batch / ms:9.2f} rows/ms  "
                          f"x_copy {ms / copy_ms:7.2f}  mem {mem / 2**20:8.1f} MiB", flush=True)
        del pristine
        torch.cuda.empty_cache()
    props = torch.cuda.get_device_properties(0)
    context = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "executable": "perf/torch_baseline.py",
        "torch_version": torch.__version__,
        "device": props.name,
        "kokkos_configuration": f"{props.name} (torch {torch.__version__})",
        "suite": "quick" if args.quick else "full",
        "seed": str(args.seed),
        "timing": f"CUDA events, median of {args.reps} after {args.warmup} warm-up calls",
    }
    with open(args.out, "w") as f:
        json.dump({"context": context, "benchmarks": results}, f, indent=1)
    print(f"wrote {args.out}: {len(results)} benchmarks in {time.time() - started:.0f} s")


if __name__ == "__main__":
    main()
