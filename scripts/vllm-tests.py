#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs vLLM's own tests of its top-k/top-p kernel against qrita.

vLLM 0.33.0's tests/v1/sample/test_topk_topp_sampler.py holds the suite
vLLM's CUDA kernel (``apply_top_k_top_p_triton``) must pass: the class
TestTritonTopkTopp compares it, row by row, with vLLM's PyTorch sort path
(``apply_top_k_top_p_pytorch``) on randn logits, -inf rows, ties, extreme
k and p, non-contiguous rows and batches up to 1024 x 262144. This script
runs that class with ``qrita.vllm.apply_top_k_top_p`` in the kernel's place.

vLLM itself is not installed (0.33.0 needs a newer torch than the GPU
machine's): the script writes, in a temporary folder, the few modules the
test file imports, each a line or two:

  vllm.v1.sample.ops.topk_topp_triton   apply_top_k_top_p_triton = qrita's
  vllm.v1.sample.ops.topk_topp_sampler  vLLM's sort path and random_sample,
                                        from .peers/vllm_ops (verbatim,
                                        scripts/fetch-peers.sh)
  vllm.platforms, vllm.triton_utils, vllm.utils.torch_utils,
  vllm.v1.sample.sampler, tests.utils   the constants and helpers it names

The test file itself comes from vLLM's source distribution (not committed);
scripts/fetch-peers.sh extracts its tests/v1/sample into .peers/vllm-src.

  python3 scripts/vllm-tests.py [--src .peers/vllm-src/vllm-0.33.0]
      [--peers-dir .peers/vllm_ops] [--junit FILE] [-- PYTEST_ARGS]

Needs qrita (a CUDA build) importable, torch with CUDA and pytest.
"""
import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parent.parent
TEST = "tests/v1/sample/test_topk_topp_sampler.py"

MODULES = {
    "vllm/__init__.py": "",
    "vllm/platforms.py": '''
import torch


class _Platform:
    device_type = "cuda" if torch.cuda.is_available() else "cpu"

    def is_cuda(self):
        return torch.cuda.is_available()

    def is_cuda_alike(self):
        return self.is_cuda()

    def is_rocm(self):
        return False

    def num_compute_units(self, device=0):
        return torch.cuda.get_device_properties(device).multi_processor_count

    def get_device_capability(self):
        return None  # keeps FlashInfer's test classes off: not qrita's


current_platform = _Platform()
''',
    "vllm/triton_utils.py": "HAS_TRITON = True\n",
    "vllm/utils/__init__.py": "",
    "vllm/utils/torch_utils.py": '''
import random

import torch


def set_random_seed(seed):
    random.seed(seed)
    torch.manual_seed(seed)
''',
    "vllm/v1/__init__.py": "",
    "vllm/v1/sample/__init__.py": "",
    "vllm/v1/sample/sampler.py": '''
class Sampler:  # vLLM's sampler is not under test here
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("vLLM's Sampler is not part of this run")
''',
    "vllm/v1/sample/ops/__init__.py": "",
    "vllm/v1/sample/ops/topk_topp_sampler.py": '''
from topk_topp_pytorch import apply_top_k_only, apply_top_k_top_p_pytorch  # vLLM's, verbatim
from vllm_sampler import random_sample  # vLLM's, verbatim
from qrita.vllm import apply_top_k_top_p
''',
    "vllm/v1/sample/ops/topk_topp_triton.py": '''
import qrita.vllm


def apply_top_k_top_p_triton(logits, k, p, mask_value=float("-inf"),
                             has_topp_only_rows=True):
    """vLLM's kernel entry point, served by qrita (in place, returns logits)."""
    if mask_value != float("-inf"):
        raise NotImplementedError("qrita masks with -inf")
    return qrita.vllm.apply_top_k_top_p(logits, k, p, has_topp_only_rows)


def _apply_topp_split(*args):
    """vLLM's split top-p launch; qrita has no such separate step."""
    raise AssertionError("not used by qrita")
''',
    "tests/__init__.py": "",
    "tests/v1/__init__.py": "",
    "tests/v1/sample/__init__.py": "",
    "tests/utils.py": '''
import pytest
import torch


def large_gpu_mark(min_gb):
    have = (torch.cuda.get_device_properties(0).total_memory / 2**30
            if torch.cuda.is_available() else 0)
    return pytest.mark.skipif(have < min_gb, reason=f"needs {min_gb} GB of GPU memory")
''',
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", default=str(REPO / ".peers/vllm-src/vllm-0.33.0"),
                    help="the unpacked vLLM source distribution (holds tests/v1/sample)")
    ap.add_argument("--peers-dir", default=str(REPO / ".peers/vllm_ops"),
                    help="vLLM's sort path and sampler (scripts/fetch-peers.sh)")
    ap.add_argument("--junit", help="write pytest's JUnit XML here")
    ap.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    args = ap.parse_args()

    test = pathlib.Path(args.src) / TEST
    if not test.is_file():
        sys.exit(f"vllm-tests: no {test} (see --help for where it comes from)")
    peers = pathlib.Path(args.peers_dir)
    if not (peers / "topk_topp_pytorch.py").is_file():
        sys.exit(f"vllm-tests: no vLLM sort path in {peers} (scripts/fetch-peers.sh)")

    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        for name, text in MODULES.items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text.lstrip())
        shutil.copy(test, root / TEST)
        cmd = [sys.executable, "-m", "pytest", f"{TEST}::TestTritonTopkTopp", "-q",
               "-p", "no:cacheprovider", "-rA", "--rootdir", tmp]
        if args.junit:
            cmd.append(f"--junitxml={pathlib.Path(args.junit).resolve()}")
        env_path = [tmp, str(peers.resolve())]
        env = dict(os.environ)
        if env.get("PYTHONPATH"):
            env_path.append(env["PYTHONPATH"])
        env["PYTHONPATH"] = ":".join(env_path)
        return subprocess.call(cmd + args.pytest_args, cwd=tmp, env=env)


if __name__ == "__main__":
    sys.exit(main())
