#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compares qrita_perf runs of two builds, run one after the other on one GPU.

    scripts/compare_perf.py BASE.json NEW.json [NEW2.json ...] [--cells]

For every benchmark the two builds share, the ratio is the geometric mean
of the NEW runs' times over BASE's time (below 1: the new build is faster).
Prints the spread between the NEW runs (when there are two or more, the
5th-95th percentile of run / run), then the geometric mean of the ratios
by call (mask, sample, cand64, bf16, fp16, ...), by cell class (big nuclei:
p = 0.7 on randn, uniform, temp2, ordered; the others) and by batch, and
with --cells every cell's times.
"""
import argparse
import json
import math
import re
import sys

BIG = re.compile(r"/(randn|uniform|temp2|ordered)/p0\.7/")


def times(path):
    with open(path) as f:
        data = json.load(f)
    out = {}
    for b in data["benchmarks"]:
        if b.get("run_type", "iteration") != "iteration" or "error_occurred" in b:
            continue
        out[b["name"]] = float(b["real_time"])
    return out


def gmean(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def call_of(name):
    head = name.split("/")[0]
    return {"qrita": "mask"}.get(head, head.replace("qrita-", ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base")
    ap.add_argument("new", nargs="+")
    ap.add_argument("--cells", action="store_true", help="print every cell")
    args = ap.parse_args()
    base = times(args.base)
    news = [times(p) for p in args.new]
    names = [n for n in base if all(n in t for t in news) and n.split("/")[0].startswith("qrita")]
    if not names:
        sys.exit("compare_perf: no qrita benchmark in common")
    ratio = {n: gmean([t[n] for t in news]) / base[n] for n in names}
    if len(news) >= 2:
        spread = sorted(news[0][n] / news[1][n] for n in names)
        lo, hi = spread[int(0.05 * (len(spread) - 1))], spread[int(0.95 * (len(spread) - 1))]
        print(f"run 1 / run 2 of the new build: {lo:.3f}-{hi:.3f} (5th-95th percentile, "
              f"{len(spread)} cells)")
    groups = {}
    for n in names:
        batch = re.search(r"/B:(\d+)/", n)
        key = (call_of(n), "big nuclei" if BIG.search(n) else "others",
               int(batch.group(1)) if batch else 0)
        groups.setdefault(key, []).append(ratio[n])
    print(f"{'call':<10} {'cells':<11} {'B':>5} {'n':>4} {'new/base':>9} {'min':>7} {'max':>7}")
    for key in sorted(groups):
        rs = groups[key]
        print(f"{key[0]:<10} {key[1]:<11} {key[2]:>5} {len(rs):>4} {gmean(rs):>9.3f} "
              f"{min(rs):>7.3f} {max(rs):>7.3f}")
    if args.cells:
        print()
        for n in sorted(names):
            print(f"{n:<60} {base[n]:>10.1f} {gmean([t[n] for t in news]):>10.1f} "
                  f"{ratio[n]:>7.3f}")


if __name__ == "__main__":
    main()
