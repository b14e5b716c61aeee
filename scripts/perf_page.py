#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes docs/PERFORMANCE.md from the raw results of one GPU run.

    scripts/perf_page.py DATA_DIR [--out docs/PERFORMANCE.md] [--plots] [--check]
    scripts/perf_page.py RUN_DIR --keep docs/perf/data [--plots]

DATA_DIR holds what scripts/gpu-run.sh writes into results/<date>-<gpu>/,
plain or compressed (.xz or .gz):

  perf.json     qrita_perf's Google Benchmark JSON (perf/bench_sample_mask.cpp):
                qrita's calls and a read+write copy of the same logits (required)
  peers*.json   perf/peers.py's JSON, one file or several: vLLM's Triton kernel
                and sort path, torch.topk, FlashInfer's and vLLM's samplers
                (optional; a peer that is absent shows as a dash)
  device.txt    the bundle's MANIFEST (the commit measured), nvidia-smi's
                name, driver and memory, the date (optional; the JSON context
                stands in)
  tests.json    the test suite's JSON (optional)
  sharded-*.json  perf/sharded_mpi.cpp's Google Benchmark JSON, one file per
                rank count (optional; from a CPU run, kept by --keep)

--out     the page (default docs/PERFORMANCE.md); its plots are linked from
          perf/ beside it.
--plots   also (re)writes the plots into perf/ beside the page (needs matplotlib).
--check   writes nothing: exits 1 with a diff if the page on disk is not what
          DATA_DIR gives (the text needs the standard library only).
--keep    copies the files above from a run folder into DEST, compressed with
          xz, with a README.txt, then writes the page from DEST.
"""

import argparse
import difflib
import glob
import gzip
import json
import lzma
import os
import re
import statistics
import sys
from collections import defaultdict

SHAPES = ["serving", "ordered", "randn", "uniform", "temp2", "serving-bf16", "flat"]
MODES = ["k10", "p0.7", "k50p0.9", "rand"]
TMINP = "t0.7-mp0.05-k50-p0.9"
ALL_MODES = MODES + [TMINP]
MODE_TEXT = {"k10": "k=10", "p0.7": "p=0.7", "k50p0.9": "k=50 p=0.9", "rand": "per-row k, p",
             TMINP: "T=0.7 min-p=0.05 k=50 p=0.9"}
# Rows whose p = 0.7 kept set holds thousands to tens of thousands of entries.
LARGE_NUCLEUS_SHAPES = ("randn", "uniform", "temp2", "ordered")
MASK_PEERS = [("vllm-triton", "vLLM Triton"), ("vllm-torch", "vLLM sort"),
              ("torch-sort", "PyTorch sort"), ("torch-topk", "torch.topk"),
              ("flashinfer-mask", "FlashInfer top-k mask")]
ALWAYS_SHOWN = ("vllm-triton", "vllm-torch", "torch-topk")
SAMPLER_PEERS = [("flashinfer-sample", "FlashInfer sampler"), ("vllm-sample", "vLLM sampler"),
                 ("vllm-sample-native", "vLLM native sampler")]
TIME_UNIT_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
DASH = "—"

# Targets.
SAMPLE_OVER_MASK = 1.15
LIST_OVER_MASK = 1.15
BF16_OVER_FP32 = 0.6
SMALL_BATCH = 8  # batches up to this one: targets in us, not in copies
SMALL_MASK_US = 15.0
SMALL_DRAW_US = 18.0  # sample_tokens and candidate_list (C = 64)
PY_ADDED_US = 5.0  # the Python op's time over the C++ call's, per call
PY_GRAPH_ADDED_US = 2.0  # the same, replayed from a CUDA graph


def x_copy_target(shape, batch):
    if batch >= 1024:
        return 1.6 if shape == "serving" else 2.0
    if batch > SMALL_BATCH:
        return 3.0
    return None


# --- reading -----------------------------------------------------------------

def open_text(path):
    if path.endswith(".xz"):
        return lzma.open(path, "rt", encoding="utf-8")
    if path.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def find(folder, stem):
    """folder/stem, stem.xz or stem.gz, whichever is there."""
    for ext in ("", ".xz", ".gz"):
        path = os.path.join(folder, stem + ext)
        if os.path.isfile(path):
            return path
    return None


def peer_files(folder):
    paths = []
    for pattern in ("peers*.json", "peers*.json.xz", "peers*.json.gz"):
        paths += glob.glob(os.path.join(folder, pattern))
    return sorted(paths)


def parse_name(name):
    """KIND/SHAPE/MODE/V:<v>/B:<b>[/manual_time] or copy/V:<v>/B:<b>[/...]."""
    parts = name.split("/")
    v = next((p for p in parts if p.startswith("V:")), None)
    b = next((p for p in parts if p.startswith("B:")), None)
    if v is None or b is None:
        return None
    kind = parts[0]
    shape = mode = None
    if kind != "copy":
        if len(parts) < 5:
            return None
        shape, mode = parts[1], parts[2]
    return kind, shape, mode, int(v[2:]), int(b[2:])


def load(paths):
    """{(kind, shape, mode, vocab, batch): {"us", "x_copy", "exact", "mem"}}
    and each file's context. A benchmark run more than once (repetitions, or
    in two files) takes the median of its times."""
    load.event_medians = False
    runs = defaultdict(list)
    contexts = []
    for path in paths:
        with open_text(path) as f:
            data = json.load(f)
        contexts.append(data.get("context", {}))
        benches = data.get("benchmarks", [])
        medians = {b.get("run_name") for b in benches if b.get("aggregate_name") == "median"}
        if any("median_us" in b for b in benches):
            load.event_medians = True
        for b in benches:
            if b.get("error_occurred") or b.get("skipped"):
                continue
            if b.get("run_type") == "aggregate":
                if b.get("aggregate_name") != "median":
                    continue
            elif b.get("run_name") in medians:
                continue
            key = parse_name(b.get("run_name") or b["name"])
            if key is None or "real_time" not in b:
                continue
            # qrita_perf's median call (median_us) where it reports one;
            # else Google Benchmark's time.
            us = (b["median_us"] if "median_us" in b
                  else b["real_time"] * TIME_UNIT_US.get(b.get("time_unit", "ns"), 1e-3))
            runs[key].append({"us": us, "x_copy": b.get("x_copy"), "exact": b.get("exact"),
                              "mem": b.get("mem_bytes", b.get("workspace_bytes")),
                              "passes": b.get("passes")})
    results = {}
    for key, rs in runs.items():
        xs = [r["x_copy"] for r in rs if r["x_copy"] is not None]
        exact = [r["exact"] for r in rs if r["exact"] is not None]
        mem = [r["mem"] for r in rs if r["mem"] is not None]
        passes = [r["passes"] for r in rs if r["passes"] is not None]
        results[key] = {"us": statistics.median(r["us"] for r in rs),
                        "x_copy": statistics.median(xs) if xs else None,
                        "exact": min(exact) if exact else None,
                        "mem": max(mem) if mem else None,
                        "passes": statistics.median(passes) if passes else None}
    return results, contexts


def read_device(folder, contexts):
    """Device, driver, memory, date and commit: device.txt first, then the
    JSON contexts."""
    info = {}
    path = find(folder, "device.txt")
    lines = []
    if path:
        with open_text(path) as f:
            lines = [line.rstrip("\n") for line in f]
    header = None
    for line in lines:
        m = re.match(r"^(commit|nvcc|kokkos|images):\s*(.*)$", line)
        if m:
            info[m.group(1)] = m.group(2).strip()
        elif line.startswith("name,"):
            header = [re.sub(r"\s*\[.*\]$", "", h.strip()) for h in line.split(",")]
        elif header is not None:
            values = [v.strip() for v in line.split(",")]
            if len(values) == len(header):
                info.update(dict(zip(header, values)))
            header = None
        elif re.match(r"^\d{4}-\d{2}-\d{2}", line) and "date" not in info:
            info["date"] = line[:10]
    perf = contexts[0] if contexts else {}
    if "name" not in info:
        m = re.search(r"(NVIDIA [^\n,:]+?|AMD [^\n,:]+?)(?: capability| \(|,|:|\n|$)",
                      perf.get("kokkos_configuration", ""))
        info["name"] = m.group(1).strip() if m else perf.get("kokkos_execution_space", "unknown device")
    if "date" not in info and perf.get("date"):
        info["date"] = perf["date"][:10]
    kv = perf.get("kokkos_version", "")
    if kv.isdigit() and len(kv) >= 5:
        info["kokkos_version"] = f"{int(kv[:-4])}.{int(kv[-4:-2])}.{kv[-2:]}"
    m = re.search(r"CUDA_VERSION\s*=\s*\d+\s*=\s*version\s*([\d.]+)", perf.get("kokkos_configuration", ""))
    if m:
        info["cuda"] = m.group(1)
    info["qrita_version"] = perf.get("qrita_version")
    for ctx in contexts[1:]:
        if ctx.get("vllm", "").startswith("vllm ") and "vllm" not in info:
            info["vllm"] = ctx["vllm"].split(" ", 1)[1]
        fi = ctx.get("flashinfer", "")
        if fi.startswith("flashinfer-python ") and "flashinfer" not in info:
            info["flashinfer"] = fi.split(",")[0].split(" ", 1)[1]
        if ctx.get("torch_version") and "torch" not in info:
            info["torch"] = ctx["torch_version"]
    return info


def read_tests(folder):
    path = find(folder, "tests.json")
    if not path:
        return None
    with open_text(path) as f:
        data = json.load(f)
    total = data.get("tests", 0)
    failed = data.get("failures", 0) + data.get("errors", 0)
    return total, failed


# --- numbers -----------------------------------------------------------------

def num(x):
    if x is None:
        return DASH
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def times(x):
    if x is None:
        return DASH
    return f"{x:.1f}x" if x >= 10 else f"{x:.2f}x"


def fine(x):
    """A ratio beside a target line: three decimals."""
    return DASH if x is None else f"{x:.3f}x"


def span(values, fmt=times):
    """median (min-max)."""
    if not values:
        return DASH
    med = statistics.median(values)
    if len(values) == 1:
        return fmt(med)
    return f"{fmt(med)} ({fmt(min(values)).rstrip('x')}-{fmt(max(values))})"


def minmax(values, fmt=times):
    if not values:
        return DASH
    lo, hi = min(values), max(values)
    return fmt(lo) if fmt(lo) == fmt(hi) else f"{fmt(lo).rstrip('x')}-{fmt(hi)}"


def us_of(results, kind, cell):
    r = results.get((kind,) + cell)
    return r["us"] if r else None


def large_nucleus(cell):
    return cell[0] in LARGE_NUCLEUS_SHAPES and cell[1] == "p0.7"


def cells_of(results, kind, modes=MODES):
    cells = {(s, m, v, b) for (k, s, m, v, b) in results if k == kind and m in modes}
    return sorted(cells, key=lambda c: (SHAPES.index(c[0]) if c[0] in SHAPES else 99, c[2],
                                        ALL_MODES.index(c[1]) if c[1] in ALL_MODES else 99, c[3]))


def and_list(items):
    """'a, b and c'."""
    items = [str(x) for x in items]
    return ", ".join(items[:-1]) + (" and " if len(items) > 1 else "") + items[-1]


def describe_cells(cells):
    """A short list of cells: 'randn, uniform and temp2 p=0.7 at V = 128256, B = 1024'."""
    groups = defaultdict(list)
    for shape, mode, vocab, batch in cells:
        groups[(mode, vocab, batch)].append(shape)
    parts = []
    for (mode, vocab, batch), shapes in sorted(groups.items(), key=lambda g: (g[0][2], g[0][1])):
        parts.append(f"{and_list(shapes)} {MODE_TEXT.get(mode, mode)} at V = {vocab}, B = {batch}")
    return "; ".join(parts)


# --- the page ----------------------------------------------------------------

def header(info, tests, data_rel, argv_dir):
    name = info.get("name", "unknown device")
    extras = [x for x in (info.get("memory.total"), info.get("driver_version") and
                          f"driver {info['driver_version']}") if x]
    device = f"**{name}**" + (f" ({', '.join(extras)})" if extras else "")
    commit = info.get("commit")
    m = re.match(r"^([0-9a-f]{7,40})\b(.*)$", commit or "")
    if m:
        commit = f"`{m.group(1)}`{m.group(2)}"
    built = ", ".join(x for x in (
        info.get("qrita_version") and f"qrita {info['qrita_version']}",
        info.get("kokkos_version") and f"Kokkos {info['kokkos_version']}",
        info.get("cuda") and f"CUDA {info['cuda']}") if x)
    peers = ", ".join(x for x in (
        info.get("vllm") and f"vLLM {info['vllm']}",
        info.get("flashinfer") and f"FlashInfer {info['flashinfer']}",
        info.get("torch") and f"PyTorch {info['torch']}") if x)
    out = ["# Performance", "",
           f"qrita on one {device}, measured on {info.get('date', 'an unrecorded date')} "
           + (f"at commit {commit}" if commit else "at an unrecorded commit") + "."
           + (f" Built with {built}." if built else "")]
    if peers:
        out[-1] += f" Its peers ran on the same inputs on the same machine: {peers}."
    if tests:
        total, failed = tests
        out[-1] += (f" The test suite passed there ({total} tests)." if not failed else
                    f" The test suite there: {failed} of {total} tests failed.")
    out += ["", f"Generated by `scripts/perf_page.py {argv_dir}` from the raw data in "
            f"[{data_rel}]({data_rel}/); regenerate it rather than edit it.", ""]
    return out


PEER_TEXT = {
    "vllm-triton": "vLLM's Triton kernel (`apply_top_k_top_p_triton`)",
    "vllm-torch": "vLLM's sort path (`apply_top_k_top_p_pytorch`)",
    "torch-sort": "a PyTorch sort mask",
    "torch-topk": "`torch.topk`, then top-p on the survivors",
    "flashinfer-mask": "FlashInfer's top-k mask (`top_k_mask_logits`; k alone)",
    "flashinfer-sample": "FlashInfer's fused sampler (`top_k_top_p_sampling_from_logits`)",
    "vllm-sample": "vLLM's sampler (its FlashInfer path)",
    "vllm-sample-native": "vLLM's native sampler (Triton mask, softmax, exponential race)",
}


def glance(results):
    batches = sorted({b for (k, s, m, v, b) in results if k == "qrita" and m in MODES})
    present = {k[0] for k in results}
    rows = [(k, "`sample_mask`", "qrita") for k, _ in MASK_PEERS if k in ALWAYS_SHOWN or k in present]
    rows += [(k, "`sample_tokens`", "qrita-sample") for k, _ in SAMPLER_PEERS
             if k == "flashinfer-sample" or k in present]
    out = ["## At a glance", "",
           "qrita's speed-up over each peer: the peer's time / qrita's on the same rows and "
           "filters, the median (bold) and range over the 7 input shapes, 4 filters and 2 "
           "vocabularies, and the cells where qrita is faster.", ""]
    out.append("| peer | against qrita's | " + " | ".join(f"B = {b}" for b in batches) + " |")
    out.append("|---|---|" + "---|" * len(batches))
    for kind, against, ours in rows:
        cells = []
        for batch in batches:
            ratios = []
            for cell in cells_of(results, kind):
                mine, theirs = us_of(results, ours, cell), us_of(results, kind, cell)
                if cell[3] == batch and mine and theirs:
                    ratios.append(theirs / mine)
            if ratios:
                cells.append(f"**{times(statistics.median(ratios))}** ({minmax(ratios)}), "
                             f"faster in {sum(r > 1 for r in ratios)}/{len(ratios)}")
            else:
                cells.append(f"{DASH} (not in this run)")
        out.append(f"| {PEER_TEXT.get(kind, kind)} | {against} | " + " | ".join(cells) + " |")
    floor = []
    for vocab in sorted({v for (k, s, m, v, b) in results if k == "copy"}):
        ts = [num(us_of(results, "copy", (None, None, vocab, b))) for b in batches]
        floor.append(f"{' / '.join(ts)} us at V = {vocab}")
    mask_x = []
    for batch in batches:
        xs = [results[("qrita",) + c]["x_copy"] for c in cells_of(results, "qrita")
              if c[3] == batch and results[("qrita",) + c]["x_copy"]]
        if xs:
            mask_x.append(f"**{times(statistics.median(xs))}** ({minmax(xs)}) at B = {batch}")
    out += ["", f"The floor, a read+write copy of the same logits, takes {'; '.join(floor)} "
            f"(B = {' / '.join(str(b) for b in batches)}); qrita's mask takes "
            + ", ".join(mask_x) + " the copy's time."]
    mem = []
    big = max(batches) if batches else None
    for kind, label in [("qrita", "qrita's workspace")] + \
            [(k, lab) for k, lab in MASK_PEERS + SAMPLER_PEERS]:
        vals = [r["mem"] for (k, s, m, v, b), r in results.items()
                if k == kind and b == big and v == 128256 and m in MODES and r["mem"] is not None]
        if vals:
            mem.append(f"{label} {max(vals) / 2**20:.0f} MiB")
    if mem:
        out[-1] += (f" Memory a call allocates besides its input and output at V = 128256, "
                    f"B = {big}: " + ", ".join(mem) + ".")
    out.append("")
    return out


METHOD = """\
## Method

- **The grid**: `qrita_perf` (`perf/bench_sample_mask.cpp`, Google Benchmark) on
  its default GPU grid: seven input shapes (`serving`, calibrated to real
  models' logits; `ordered`, serving with a vocabulary-order bias; `randn`;
  `uniform`; `temp2`, serving at temperature 2; `serving-bf16`, serving rounded
  to bfloat16, with ties; `flat`, every entry equal) x four filters (k = 10; p =
  0.7; k = 50 with p = 0.9; per-row k in [1, 100) and p in [0.5, 1)) x V =
  128256 and 262144 x B = GRID_BATCHES, and temperature 0.7 with min-p 0.05, k
  = 50, p = 0.9 on serving rows. [perf/README.md](../perf/README.md) describes
  the shapes and every benchmark.
- **The floor**: each time is also given as a ratio to a read+write copy
  (`Kokkos::deep_copy`) of the same B x V logits, the median of 9, measured in
  the same process right before. An in-place mask cannot beat it.
- **Timing**: qrita: TIMING_QRITA. Peers
  (`perf/peers.py`): CUDA events around each call, the median of up to 10 calls
  after 2 warm-up calls. The input is restored before every call, untimed, for
  both.
- **Checked before timing**: qrita's warm-up call is compared with the host
  oracle (`qrita::oracle`, the exact definition) on rows 0, 1, B-2 and B-1; a
  mismatch fails the benchmark. The peers' outputs on the same rows are held to
  the same definition in float64; a peer that keeps a different set is timed
  anyway and marked `*` below (vLLM keeps whole tie groups; FlashInfer samples
  outside the kept set on flat rows).
- **Inputs**: `perf/peers.py` generates the same rows in PyTorch from the
  suite's formulas (`src/synthetic.hpp`); `scripts/gpu-run.sh` first checks them
  bitwise against `qrita-cli --save-input`.
"""


def unwrap(text):
    """The page keeps each paragraph and list item on one line (the source
    wraps them): fewer lines to read in a diff of the generated page."""
    out, code = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            code = not code
        joins = (not code and line.strip() and not line.startswith(("#", "- ", "```")) and out
                 and out[-1].strip() and not out[-1].startswith(("#", "```")))
        if joins:
            out[-1] = out[-1].rstrip() + " " + line.strip()
        else:
            out.append(line)
    return out


def sampler_table(results):
    if not any(k[0] == "qrita-sample" for k in results):
        return []
    peers = [(k, label) for k, label in SAMPLER_PEERS if any(key[0] == k for key in results)]
    out = ["## Sampling and candidate lists", "",
           "`qrita::sample_tokens` (one token per row) and `qrita::candidate_list` (C = 64 "
           "entries per row, with probabilities) take the mask's decisions and add the kept "
           "set's weight, the draw or the list. Their time over the mask's on the same rows "
           "(median and range over the cells; the count within the target), and the sampler "
           "peers' time over `sample_tokens`'. Large nuclei: p = 0.7 on "
           + ", ".join(LARGE_NUCLEUS_SHAPES) + " rows, whose kept sets hold thousands of entries.",
           ""]
    head = ["B", "cells", f"sample_tokens / mask (<= {SAMPLE_OVER_MASK})",
            f"candidate_list / mask (<= {LIST_OVER_MASK})"] + \
        [f"{label} / sample_tokens" for _, label in peers]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    cells = cells_of(results, "qrita-sample", ALL_MODES)
    for batch in sorted({c[3] for c in cells}):
        for big, what in ((False, "others"), (True, "large nuclei")):
            group = [c for c in cells if c[3] == batch and large_nucleus(c) == big]
            if not group:
                continue
            row = [str(batch), f"{what} ({len(group)})"]
            for kind, bound in (("qrita-sample", SAMPLE_OVER_MASK), ("qrita-cand64", LIST_OVER_MASK)):
                rs = [us_of(results, kind, c) / us_of(results, "qrita", c) for c in group
                      if us_of(results, kind, c) and us_of(results, "qrita", c)]
                row.append(f"{span(rs)}; {sum(r <= bound for r in rs)}/{len(rs)}" if rs else DASH)
            for kind, _ in peers:
                rs = [us_of(results, kind, c) / us_of(results, "qrita-sample", c) for c in group
                      if us_of(results, kind, c) and us_of(results, "qrita-sample", c)]
                row.append(span(rs) if rs else DASH)
            out.append("| " + " | ".join(row) + " |")
    return out + [""]


def python_table(results):
    """The Python package's cost over the C++ call, per batch: the custom
    op, and the op replayed from a CUDA graph (absent data: no section)."""
    kinds = [("qrita-py-mask", "`qrita.torch.top_k_top_p_mask_`"),
             ("qrita-py-mask-graph", "the same op, replayed from a CUDA graph")]
    if not any(k[0] == kinds[0][0] for k in results):
        return []
    out = ["## From Python", "",
           "The Python package's mask (`perf/peers.py`, the same rows and timing as the peers) "
           "against `qrita::sample_mask` called from C++ (`qrita_perf`): the time it adds per "
           f"call, median and range over the cells (targets: at most {PY_ADDED_US} us, and "
           f"{PY_GRAPH_ADDED_US} us under a CUDA graph).", "",
           "| B | " + " | ".join(f"{label}: added us" for _, label in kinds) + " |",
           "|---|" + "---|" * len(kinds)]
    cells = cells_of(results, kinds[0][0])
    for batch in sorted({c[3] for c in cells}):
        row = [str(batch)]
        for kind, _ in kinds:
            added = [us_of(results, kind, c) - us_of(results, "qrita", c)
                     for c in cells if c[3] == batch and us_of(results, kind, c)
                     and us_of(results, "qrita", c)]
            row.append(span(added, lambda x: f"{x:.1f}") if added else DASH)
        out.append("| " + " | ".join(row) + " |")
    return out + [""]


def targets(results):
    out = ["## Targets", "",
           "Counted over every cell of the grid above; the reasons are what limits the misses.",
           "", "| target | met | the misses, and what limits them |", "|---|---|---|"]
    qcells = cells_of(results, "qrita", ALL_MODES)

    # 1. Faster than every mask peer.
    peer_kinds = [k for k, _ in MASK_PEERS]
    beat, total, worst, lost = 0, 0, [], []
    for c in qcells:
        mine = us_of(results, "qrita", c)
        others = [us_of(results, k, c) for k in peer_kinds if us_of(results, k, c)]
        if mine and others:
            total += 1
            best = min(others)
            beat += mine < best
            worst.append(mine / best)
            if mine >= best:
                lost.append(c)
    if total:
        names = ", ".join(label for k, label in MASK_PEERS if any(key[0] == k for key in results))
        why = (f"qrita takes at most {max(worst):.3f}x the fastest peer's time" if not lost else
               f"lost: {describe_cells(lost)}")
        out.append(f"| `sample_mask` faster than every mask peer measured ({names}) "
                   f"| **{beat} of {total}** | {why} |")

    # 2. The mask against the copy, by batch.
    more = ("more than two passes: a second read of the row and a search (large nuclei; uniform "
            "rows, where the sampled threshold misses)")
    reasons = {
        1: "a small batch leaves most multiprocessors idle, and a row's decision is a chain of "
           "dependent team steps: the split row's scan and gather launches, then the boundary's "
           "search and cut on the row's last team alone. Kernel by kernel (Nsight Compute, "
           "each kernel alone, H100, 2026-12-07, commit 1dfc95d): on randn rows, k = 10, "
           "V = 262144, "
           "`qrita::split_scan` (64 teams, 4096 entries each) takes 50-52 us and "
           "`qrita::split_gather` 12 us, where a copy of the row takes 8 us, launch "
           "included; serving k = 50, p = 0.9, "
           "V = 128256: 65 and 9 us; temp2 p = 0.7, V = 262144 (a miss): 52 and 54 us. "
           "A path that runs every pass of the decision on all of a row's teams is not "
           "built: each pass needs a barrier across the row's teams and the call a launch, "
           "whose costs on this GPU (DESIGN.md, small batches) exceed the target for "
           "top-k with top-p",
        64: "two passes: each row is split across a few teams and decided in two dependent "
            "launches (scan, then gather) against a copy of tens of us; " + more,
        1024: "two passes move the copy's bytes, and the reads' per-entry work (histogram, "
              "candidates) is the rest; " + more,
    }
    for batch in sorted({c[3] for c in qcells}):
        group = [c for c in qcells if c[3] == batch]
        reason = reasons[min(reasons, key=lambda b: abs(b - batch))]
        if x_copy_target(group[0][0], batch) is None:
            ok = [c for c in group if us_of(results, "qrita", c) <= SMALL_MASK_US]
            miss_us = [us_of(results, "qrita", c) for c in group if c not in ok]
            what = f"B = {batch}: <= {SMALL_MASK_US:.0f} us"
            detail = f"{minmax(miss_us, num)} us" if miss_us else ""
        else:
            ok = [c for c in group
                  if (results[("qrita",) + c]["x_copy"] or 1e9) <= x_copy_target(c[0], batch)]
            what = (f"B = {batch}: <= {x_copy_target('other', batch):g}x the copy"
                    + (f" (serving <= {x_copy_target('serving', batch):g}x)"
                       if x_copy_target("serving", batch) != x_copy_target("other", batch) else ""))
            missed = [results[("qrita",) + c] for c in group if c not in ok]
            two = [r["x_copy"] for r in missed if (r["passes"] or 2) <= 2]
            extra = [r["x_copy"] for r in missed if (r["passes"] or 2) > 2]
            detail = ", ".join(p for p in (
                f"{len(two)} at two passes over the row ({minmax(two, fine)})" if two else "",
                f"{len(extra)} at more ({minmax(extra, fine)})" if extra else "") if p)
        text = f"{detail}. {reason[0].upper()}{reason[1:]}" if detail else DASH
        out.append(f"| mask at {what} | {len(ok)} of {len(group)} | {text} |")

    # 3. The sampler and the list against the mask.
    draws = {
        "qrita-sample": ("the draw needs the kept set's exact weight, which depends on the cut, "
                         "before it places the token: on a large nucleus a chain of dependent "
                         "searches on the row's last team that the mask does not have"),
        "qrita-cand64": ("the list needs the kept count and the C-th entry's boundary after the "
                         "cut: the same chain"),
    }
    for kind, bound, what in (("qrita-sample", SAMPLE_OVER_MASK, "`sample_tokens`"),
                              ("qrita-cand64", LIST_OVER_MASK, "`candidate_list` (C = 64)")):
        group = [c for c in cells_of(results, kind, ALL_MODES) if us_of(results, "qrita", c)]
        if not group:
            continue
        ratio = {c: us_of(results, kind, c) / us_of(results, "qrita", c) for c in group}
        missed = [c for c in group if ratio[c] > bound]
        big = [ratio[c] for c in missed if large_nucleus(c)]
        rest = [ratio[c] for c in missed if not large_nucleus(c)]
        parts = [f"{len(big)} large nuclei ({minmax(big, fine)})" if big else "",
                 f"{len(rest)} others ({minmax(rest, fine)})" if rest else ""]
        detail = ", ".join(p for p in parts if p)
        reason = draws[kind] if big else ""
        if rest:
            near = f"the others are within {max(rest) - bound:.3f} of the line"
            reason = f"{reason}; {near}" if reason else near
        out.append(f"| {what} <= {bound}x the mask's time | {len(group) - len(missed)} of "
                   f"{len(group)} | " + (f"{detail}: {reason}" if detail else DASH) + " |")

    # 3b. The sampler and the list in us at small batches.
    for kind, what in (("qrita-sample", "`sample_tokens`"), ("qrita-cand64", "`candidate_list` (C = 64)")):
        cells = cells_of(results, kind, ALL_MODES)
        for batch in sorted({c[3] for c in cells if c[3] <= SMALL_BATCH}):
            group = [us_of(results, kind, c) for c in cells if c[3] == batch]
            miss_us = [us for us in group if us > SMALL_DRAW_US]
            text = (f"{minmax(miss_us, num)} us: the mask's chain (above) and the kept set's "
                    "weight before the draw or the list" if miss_us else DASH)
            out.append(f"| {what} at B = {batch}: <= {SMALL_DRAW_US:.0f} us | "
                       f"{len(group) - len(miss_us)} of {len(group)} | {text} |")

    # 4. The sampler against FlashInfer's.
    group = [c for c in cells_of(results, "flashinfer-sample") if us_of(results, "qrita-sample", c)]
    if group:
        ratio = {c: us_of(results, "qrita-sample", c) / us_of(results, "flashinfer-sample", c)
                 for c in group}
        lost = [c for c in group if ratio[c] >= 1]
        rs = [ratio[c] for c in lost]
        nuclei = " (large nuclei: the draw's chain, above)" if all(large_nucleus(c) for c in lost) else ""
        text = (f"lost: {describe_cells(lost)}{nuclei}, at {minmax(rs, fine)} FlashInfer's time. "
                "FlashInfer samples by rejection without an exact cut: on flat rows its tokens "
                "fall outside the kept set" if lost else DASH)
        out.append(f"| `sample_tokens` faster than FlashInfer's fused sampler at every batch "
                   f"| **{len(group) - len(lost)} of {len(group)}** | {text} |")

    # 5. 16-bit logits.
    group = [c for c in cells_of(results, "qrita-bf16") if c[3] >= 1024 and us_of(results, "qrita", c)]
    if group:
        rs = [us_of(results, "qrita-bf16", c) / us_of(results, "qrita", c) for c in group]
        ok = sum(r <= BF16_OVER_FP32 for r in rs)
        missed = [r for r in rs if r > BF16_OVER_FP32]
        text = (f"{minmax(missed, fine)}: half the bytes, but the same instructions per entry and a "
                "conversion more; the gathering reads are bound by per-entry instructions and "
                "latency, not bandwidth" if missed else DASH)
        out.append(f"| bf16 mask <= {BF16_OVER_FP32}x the fp32 mask's time at B = 1024 "
                   f"| {ok} of {len(group)} | {text} |")
    return out + [""]


def plots_section():
    return ["## Plots", "",
            "![qrita against the mask peers](perf/peers.png)", "",
            "Time per call on serving rows: qrita's mask, its peers and the copy floor.", "",
            "![qrita against the copy, by input shape](perf/x_copy.png)", "",
            "qrita's mask in multiples of the copy on every input shape; dashed: the targets.", "",
            "![sampling](perf/sampler.png)", "",
            "Time per call on serving rows: the mask, `sample_tokens`, `candidate_list` and the "
            "sampler peers.", ""]


REPRODUCE = """\
## Reproduce

On a CPU machine with the CUDA set-up (`scripts/install-deps.sh --backend cuda`)
and the peers fetched (`scripts/fetch-peers.sh`, into `.peers/`), build and
pack; copy the repository with `ship/` to the GPU machine and run everything
there (tests, sanitizers, the grid, the peers); then write the page from its
results folder:

```sh
scripts/gpu-pack.sh                                   # CPU machine: ship/
scripts/gpu-run.sh                                    # GPU machine: results/<date>-<gpu>/
scripts/perf_page.py results/<date>-<gpu> --keep docs/perf/data --plots
```

`--keep` stores the run's raw data compressed in `docs/perf/data/` and writes
this page from there; `scripts/perf_page.py docs/perf/data --check` tells
whether the page matches its data.
"""


MILESTONES = """\
## Milestones

- 2026-11-22: exact top-k/top-p masks on Kokkos teams, checked against a host
  oracle; the perf suite on the Qrita paper's grid; first figures, on an H100.
- 2026-11-23: small batches split each row across teams, bitwise the unsplit
  answer; vLLM's Triton kernel and sort path measured on the same inputs.
- 2026-11-23: `sample_tokens` and `candidate_list`, temperature and min-p
  (`SamplingParams`), bf16 and fp16 logits; FlashInfer's fused sampler joins the
  peers.
- 2026-11-24: sampler and list rows with large top-p sets finish in a second
  kernel instead of searching the whole row.
- 2026-11-26: first figures on an H200; a decoding step captured in a CUDA graph
  and replayed (test).
- 2026-11-28: the gathering reads with fewer branches per entry; every top-p
  miss of the sampler and the list goes to the second kernel.
- 2026-11-29 to 11-30: helper teams and the search's weight above its key
  shorten the sampler's and the list's chain on large nuclei.
- 2026-12-01: every target counted on an H200, the peers on the same inputs in
  the same run.
"""


def standing_table(results):
    mask_peers = [(k, label) for k, label in MASK_PEERS
                  if k in ALWAYS_SHOWN or any(key[0] == k for key in results)]
    fi = ("flashinfer-sample", "FlashInfer sampler")
    absent = [label for k, label in mask_peers + [fi] if not any(key[0] == k for key in results)]
    out = ["## Every cell", "",
           "Times in us per call; `x copy` = qrita's time / the copy's. Speed-up = the fastest "
           "mask peer's time / qrita's mask time. `*`: the peer's output differs from the "
           "definition on some checked rows. " + DASH + ": not measured"
           + (f" (not in this run: {', '.join(absent)})" if absent else "")
           + "; torch.topk runs only the filters with a k, and no peer the one with "
           "temperature and min-p.", ""]
    head = ["shape", "filter", "V", "B", "qrita mask", "x copy"] + [label for _, label in mask_peers] + \
        ["speed-up", "qrita sample_tokens", fi[1]]
    out.append("| " + " | ".join(head) + " |")
    out.append("|---|---|--:|--:|" + "--:|" * (len(head) - 4))

    def peer_cell(kind, cell):
        r = results.get((kind,) + cell)
        if not r:
            return DASH
        return num(r["us"]) + ("*" if r["exact"] is not None and r["exact"] < 1 else "")

    for cell in cells_of(results, "qrita", ALL_MODES):
        shape, mode, vocab, batch = cell
        q = results[("qrita",) + cell]
        others = [us_of(results, k, cell) for k, _ in mask_peers if us_of(results, k, cell)]
        speed = times(min(others) / q["us"]) if others else DASH
        row = [shape, MODE_TEXT[mode], str(vocab), str(batch), num(q["us"]), num(q["x_copy"])]
        row += [peer_cell(k, cell) for k, _ in mask_peers]
        row += [speed, num(us_of(results, "qrita-sample", cell)), peer_cell(fi[0], cell)]
        out.append("| " + " | ".join(row) + " |")
    return out + [""]


def page(data_dir, out_path, argv_dir):
    perf = find(data_dir, "perf.json")
    if perf is None:
        sys.exit(f"perf_page: no perf.json (.xz, .gz) in {data_dir}")
    results, contexts = load([perf] + peer_files(data_dir))
    if not any(k[0] == "qrita" for k in results):
        sys.exit(f"perf_page: no qrita benchmark in {perf}")
    info = read_device(data_dir, contexts)
    data_rel = os.path.relpath(os.path.abspath(data_dir), os.path.dirname(os.path.abspath(out_path)))
    lines = header(info, read_tests(data_dir), data_rel, argv_dir)
    lines += glance(results)
    timing = ("CUDA events on the call's stream around each call, the median of the calls "
              "Google Benchmark makes in 0.05 s" if load.event_medians else
              "the host clock between two device fences around each call, averaged over the "
              "calls Google Benchmark makes in 0.05 s")
    batches = and_list(sorted({b for (k, s, m, v, b) in results if k == "qrita"}))
    lines += unwrap(METHOD.replace("TIMING_QRITA", timing).replace("GRID_BATCHES", batches)) + [""]
    lines += sampler_table(results)
    lines += python_table(results)
    lines += targets(results)
    lines += sharded_section(data_dir)
    lines += plots_section()
    lines += unwrap(REPRODUCE) + [""]
    lines += unwrap(MILESTONES) + [""]
    lines += standing_table(results)
    while lines and lines[-1] == "":
        lines.pop()
    return "\n".join(lines) + "\n", results, info


# --- the sharded calls ------------------------------------------------------

# The NVLink model's parameters (docs/SHARDED.md): the bandwidth of one
# direction of an H100 or H200's NVLink (18 links of 25 GB/s each way), and a
# collective's fixed cost, assumed.
NVLINK_GBPS = 450.0
COLLECTIVE_US = 10.0
HIST_WORDS = 4 * 512  # one select: 4 passes of 256 (count, weight) buckets


def sharded_files(folder):
    paths = []
    for pattern in ("sharded*.json", "sharded*.json.xz", "sharded*.json.gz"):
        paths += glob.glob(os.path.join(folder, pattern))
    return sorted(paths)


def sharded_results(folder):
    """{(approach, V, B, ranks): (median us, bytes received per call)} and
    the first file's context."""
    out, context = {}, {}
    for path in sharded_files(folder):
        with open_text(path) as f:
            data = json.load(f)
        context = context or data.get("context", {})
        for b in data.get("benchmarks", []):
            if b.get("aggregate_name") != "median":
                continue
            parts = b["run_name"].split("/")
            field = {p.split(":")[0]: p.split(":")[1] for p in parts[1:] if ":" in p}
            key = (parts[0], int(field["V"]), int(field["B"]), int(field["ranks"]))
            us = b["real_time"] * TIME_UNIT_US.get(b.get("time_unit", "ns"), 1e-3)
            out[key] = (us, b.get("bytes_received"))
    return out, context


def kb(x):
    return f"{x / 1e3:,.0f} KB" if x < 1e6 else f"{x / 1e6:,.1f} MB"


def sharded_model_rows():
    """The NVLink model: per rank, the bytes a gather of bf16 logits and a
    sharded sample_tokens receive, and the time each implies; and each
    row's (B, gather time / sharded time)."""
    rows, ratios = [], []
    bw = NVLINK_GBPS * 1e3  # bytes per us
    for V in (128256, 262144):
        for tp in (2, 4, 8):
            for B in (1, 64, 1024):
                gather = (tp - 1) / tp * B * V * 2
                t_gather = COLLECTIVE_US + gather / bw
                reduced = B * 8 * (1 + 3 * HIST_WORDS + 1)  # max, 3 selects, token
                sharded = 2 * (tp - 1) / tp * reduced + B * 8 * tp  # ring allreduce, ties
                t_sharded = 15 * COLLECTIVE_US + sharded / bw
                rows.append(f"| {V} | {tp} | {B} | {kb(gather)} | {t_gather:,.0f} | "
                            f"{kb(sharded)} | {t_sharded:,.0f} | {t_gather / t_sharded:.2f} |")
                ratios.append((B, t_gather / t_sharded))
    return rows, ratios


def sharded_section(folder):
    results, context = sharded_results(folder)
    if not results:
        return []
    lines = ["## Sharded calls: the vocabulary across ranks", ""]
    cpus = context.get("num_cpus")
    mhz = context.get("mhz_per_cpu")
    when = (context.get("date") or "")[:10]
    lines += unwrap(f"""\
`qrita::sharded::sample_tokens` (docs/SHARDED.md) against a gather of the
vocabulary (MPI_Allgather of the shards, the columns put back into rows)
and the plain `sample_tokens` on the whole rows, over MPI on the CPU
({cpus} cores at {mhz} MHz, {when}; OpenMP with one thread per rank, so
ranks beyond the cores share them; perf/sharded_mpi.cpp). Even fp32 shards
of randn rows, top-k 50 and top-p 0.9 at T = 0.7; the median of three
repetitions, each timed from a barrier to the slowest rank's end. Bytes:
what one rank receives per call.""") + [""]
    lines += ["| V | B | ranks | sharded (us) | gather + call (us) | gather / sharded | "
              "sharded bytes | gather bytes |", "|---|---|---|---|---|---|---|---|"]
    cells = sorted({(v, b, r) for (_, v, b, r) in results})
    for v, b, r in cells:
        sh, ga = results.get(("sharded", v, b, r)), results.get(("gather", v, b, r))
        if not sh or not ga:
            continue
        lines.append(f"| {v} | {b} | {r} | {sh[0]:,.0f} | {ga[0]:,.0f} | {ga[0] / sh[0]:.2f} | "
                     f"{kb(sh[1])} | {kb(ga[1])} |")
    lines += [""]
    lines += unwrap("""\
On a CPU the ranks share one memory, so moving bytes costs little, and the
sharded call's four reads of its shard per select cost more than the
gather saves. The wire is what tensor parallelism pays for, and on GPUs it
is NVLink. The table below is a model, not a measurement: per rank, the
bytes a gather of bf16 logits receives and those of a sharded
`sample_tokens` (fifteen collectives: the maximum, twelve histogram passes,
the ties and the token; each allreduce as a ring), at 450 GB/s per
direction (NVLink 4, H100 and H200) and an assumed 10 us per collective.
It leaves out the kernels on both sides.""") + [""]
    lines += ["| V | TP | B | gather bytes | gather (us) | sharded bytes | sharded (us) | "
              "gather / sharded |", "|---|---|---|---|---|---|---|---|"]
    rows, ratios = sharded_model_rows()
    lines += rows + [""]
    by_batch = defaultdict(list)
    for b, r in ratios:
        by_batch[b].append(r)
    wins = and_list([f"{minmax(by_batch[b])} at B = {b}"
                     for b in sorted(by_batch)])
    lines += unwrap(f"""\
Gather time over sharded time in this model: {wins}. The sharded calls pay
off where the bytes dominate, at large batches; at small ones fifteen
collectives' latency outweighs a gather of a few hundred KB. Fewer rounds
(wider digits, or top-k and top-p in the same passes) is what would move
the small batches.""") + [""]
    return lines


# --- plots -------------------------------------------------------------------

def plots(results, info, folder):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("perf_page: --plots needs matplotlib (Debian: apt-get install python3-matplotlib)")
    os.makedirs(folder, exist_ok=True)
    device = info.get("name", "")
    vocabs = sorted({v for (k, s, m, v, b) in results if k == "qrita"})
    style = {"qrita": ("qrita sample_mask", "tab:blue", "o", "-"),
             "vllm-triton": ("vLLM Triton", "tab:pink", "*", "-"),
             "vllm-torch": ("vLLM sort path", "tab:brown", "<", "-"),
             "torch-sort": ("PyTorch sort", "tab:orange", "^", "-"),
             "torch-topk": ("torch.topk", "tab:purple", "v", "-"),
             "flashinfer-mask": ("FlashInfer top-k mask", "tab:red", "D", "-"),
             "copy": ("copy (floor)", "black", None, "-."),
             "qrita-sample": ("qrita sample_tokens", "tab:blue", "o", "--"),
             "qrita-cand64": ("qrita candidate_list, C=64", "tab:cyan", "s", "--"),
             "flashinfer-sample": ("FlashInfer sampler", "tab:red", "*", "--"),
             "vllm-sample": ("vLLM sampler", "tab:pink", "P", "--"),
             "vllm-sample-native": ("vLLM native sampler", "tab:brown", "X", "--")}
    shape_colour = {"serving": "tab:blue", "ordered": "tab:red", "randn": "tab:green",
                    "uniform": "tab:purple", "temp2": "tab:olive", "serving-bf16": "tab:orange",
                    "flat": "tab:gray"}

    def points(kind, shape, mode, vocab, value="us"):
        pts = []
        for (k, s, m, v, b), r in results.items():
            if k == kind and v == vocab and (kind == "copy" or (s == shape and m == mode)):
                if r.get(value):
                    pts.append((b, r[value]))
        return sorted(pts)

    def axes_style(ax, title, batches, ylabel, log_y=True):
        ax.set_xscale("log", base=2)
        if log_y:
            ax.set_yscale("log")
        else:
            ax.set_ylim(bottom=0)
        if batches:
            ax.set_xticks(batches)
            ax.set_xticklabels([str(b) for b in batches], fontsize=8)
            ax.set_xticks([], minor=True)
        ax.set_title(title, fontsize=10)
        ax.set_ylabel(ylabel, fontsize=9)
        ax.grid(True, which="major", alpha=0.3)

    def grid_figure(name, title, kinds, modes, shape="serving", value="us", ylabel="us per call",
                    per_shape=False):
        fig, axes = plt.subplots(len(vocabs), len(modes), figsize=(4.0 * len(modes), 3.3 * len(vocabs)),
                                 squeeze=False)
        for row, vocab in enumerate(vocabs):
            for ax, mode in zip(axes[row], modes):
                batches = set()
                lines = [(s, "qrita") for s in SHAPES] if per_shape else [(shape, k) for k in kinds]
                for s, kind in lines:
                    pts = points(kind, s, mode, vocab, value)
                    if not pts:
                        continue
                    if per_shape:
                        label, colour, marker, ls = s, shape_colour.get(s, "gray"), "o", "-"
                    else:
                        label, colour, marker, ls = style[kind]
                    ax.plot(*zip(*pts), label=label, color=colour, marker=marker, linestyle=ls,
                            markersize=4, linewidth=1.3)
                    batches |= {b for b, _ in pts}
                if per_shape:
                    for s, ls in (("serving", ":"), ("randn", "--")):
                        tb = [b for b in sorted(batches) if x_copy_target(s, b)]
                        if tb:
                            ax.plot(tb, [x_copy_target(s, b) for b in tb], color="black", linestyle=ls,
                                    linewidth=0.9, label="target" + (" (serving)" if s == "serving" else ""))
                    ax.axhline(1.0, color="gray", linewidth=0.8)
                axes_style(ax, f"{MODE_TEXT[mode]}, V={vocab}", sorted(batches),
                           ylabel if ax is axes[row][0] else "", log_y=not per_shape)
                if row == len(vocabs) - 1:
                    ax.set_xlabel("batch")
        handles, labels = [], []
        for ax in axes.flat:
            for h, lab in zip(*ax.get_legend_handles_labels()):
                if lab not in labels:
                    handles.append(h)
                    labels.append(lab)
        fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 7), fontsize=9,
                   frameon=False)
        fig.suptitle(f"{title} - {device}", fontsize=11)
        fig.tight_layout(rect=(0, 0.07, 1, 0.95))
        path = os.path.join(folder, name)
        fig.savefig(path, dpi=100)
        plt.close(fig)
        print("wrote", path)

    present = {k[0] for k in results}
    grid_figure("peers.png", "top-k / top-p masks on serving rows",
                [k for k in ("qrita", "vllm-triton", "vllm-torch", "torch-sort", "torch-topk", "copy")
                 if k in present], MODES)
    grid_figure("x_copy.png", "qrita's mask / the copy, by input shape", [], MODES, value="x_copy",
                ylabel="time / copy time", per_shape=True)
    grid_figure("sampler.png", "sampling on serving rows",
                [k for k in ("qrita", "qrita-sample", "qrita-cand64", "flashinfer-sample", "vllm-sample",
                             "vllm-sample-native") if k in present], MODES)


# --- keeping a run's data ----------------------------------------------------

KEEP_README = """\
The raw data behind docs/PERFORMANCE.md, from one run of scripts/gpu-run.sh
on the GPU named in device.txt (scripts/gpu-pack.sh built the binaries).
scripts/perf_page.py {dest} writes the page from these files; --check
tells whether the page matches them.

{files}"""

KEEP_WHAT = {
    "perf.json": "qrita_perf's Google Benchmark JSON: the default grid (qrita's mask,\n"
                 "  sample_tokens, candidate_list, bf16/fp16 masks, the sort baseline, the\n"
                 "  ablations) and the copy",
    "device.txt": "the bundle's MANIFEST (commit, nvcc, Kokkos), nvidia-smi's name, driver and\n"
                  "  memory, and the date",
    "tests.json": "the test suite's JSON (QRITA_TEST_LARGE=1)",
}


def keep(run_dir, dest):
    os.makedirs(dest, exist_ok=True)
    files = []
    for stem in ("perf.json", "device.txt", "tests.json"):
        src = find(run_dir, stem)
        if src:
            files.append((src, stem, KEEP_WHAT[stem]))
    for src in peer_files(run_dir):
        stem = re.sub(r"\.(xz|gz)$", "", os.path.basename(src))
        files.append((src, stem, "perf/peers.py's JSON: the peers on the same grid and inputs"))
    if not any(stem == "perf.json" for _, stem, _ in files):
        sys.exit(f"perf_page: no perf.json in {run_dir}")
    # The sharded calls' data comes from a CPU run: kept unless the run
    # folder brings its own.
    bring_sharded = bool(sharded_files(run_dir))
    for old in glob.glob(os.path.join(dest, "*")):
        if os.path.isfile(old) and (bring_sharded or not os.path.basename(old).startswith("sharded")):
            os.remove(old)
    for src in sharded_files(run_dir):
        stem = re.sub(r"\.(xz|gz)$", "", os.path.basename(src))
        files.append((src, stem, "perf/sharded_mpi.cpp's JSON (CPU, MPI): the sharded sampler "
                                 "against a gather"))
    listing = []
    for src, stem, what in files:
        target = os.path.join(dest, stem if stem == "device.txt" else stem + ".xz")
        with open_text(src) as f:
            text = f.read()
        if stem == "device.txt":
            with open(target, "w") as f:
                f.write(text)
        else:
            with lzma.open(target, "wt", preset=9) as f:
                f.write(text)
        listing.append(f"{os.path.basename(target)}\n  {what}")
    for kept in sorted(glob.glob(os.path.join(dest, "sharded*"))):
        name = os.path.basename(kept)
        if not any(line.startswith(name + "\n") for line in listing):
            listing.append(f"{name}\n  perf/sharded_mpi.cpp's JSON (CPU, MPI): the sharded "
                           "sampler against a gather")
    with open(os.path.join(dest, "README.txt"), "w") as f:
        f.write(KEEP_README.format(dest=dest, files="\n".join(listing) + "\n"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("data", metavar="DATA_DIR")
    parser.add_argument("--out", default=None, help="the page (default docs/PERFORMANCE.md)")
    parser.add_argument("--plots", action="store_true", help="(re)write the PNG plots")
    parser.add_argument("--check", action="store_true", help="exit 1 with a diff if the page differs")
    parser.add_argument("--keep", metavar="DEST", default=None,
                        help="store the run's data compressed in DEST and write the page from there")
    args = parser.parse_args()
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = args.out or os.path.join(repo, "docs", "PERFORMANCE.md")
    data = args.data
    if args.keep:
        if args.check:
            sys.exit("perf_page: --keep and --check do not go together")
        keep(data, args.keep)
        data = args.keep
    shown = os.path.relpath(os.path.abspath(data), repo)
    if shown.startswith(".."):
        shown = data
    text, results, info = page(data, out, shown)
    if args.check:
        try:
            with open(out, encoding="utf-8") as f:
                old = f.read()
        except FileNotFoundError:
            old = ""
        if old != text:
            sys.stdout.writelines(difflib.unified_diff(
                old.splitlines(keepends=True), text.splitlines(keepends=True),
                fromfile=out, tofile=f"{out} from {data}"))
            print(f"perf_page: {out} does not match {data}; run scripts/perf_page.py {shown}",
                  file=sys.stderr)
            return 1
        print(f"perf_page: {out} matches {data}")
        return 0
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {out} ({text.count(chr(10))} lines)")
    if args.plots:
        plots(results, info, os.path.join(os.path.dirname(os.path.abspath(out)), "perf"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
