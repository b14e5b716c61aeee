#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The PyTorch baselines alone: perf/peers.py with --kinds torch-sort,torch-topk.

    python3 perf/torch_baseline.py [--out torch.json] [peers.py flags]

perf/peers.py has the grid, the shapes (generated with src/synthetic.hpp's
formulas), the timing and the exactness check; this name is kept for old
command lines.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers  # noqa: E402

if __name__ == "__main__":
    if not any(a == "--kinds" or a.startswith("--kinds=") for a in sys.argv[1:]):
        sys.argv[1:1] = ["--kinds", "torch-sort,torch-topk"]
    if not any(a == "--out" or a.startswith("--out=") for a in sys.argv[1:]):
        sys.argv[1:1] = ["--out", "torch_baseline.json"]
    peers.main()
