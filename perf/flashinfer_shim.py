# SPDX-License-Identifier: Apache-2.0
"""Stand-ins for the few FlashInfer modules that flashinfer/sampling.py imports
besides its JIT, so that the sampling module runs with only torch,
apache-tvm-ffi and filelock (no cutlass-dsl, cudnn, nccl, ...).

perf/fetch_flashinfer.py copies this file into the extracted package as
flashinfer/_qrita_shim.py, points the module-level `from .api_logging`,
`from .jit.cake_blackwell_softmax`, `from .trace.templates.sampling` and
`from .utils` imports of sampling.py here, and appends the utils functions
sampling.py calls (_get_cache_buf, device_support_pdl,
get_default_generators and what they call) verbatim from the wheel's
flashinfer/utils.py. Only the runtime paths are reproduced:

- flashinfer_api: FlashInfer's API-logging decorator returns the function
  unchanged at its default FLASHINFER_LOGLEVEL=0 ("zero overhead"); so does
  this one.
- register_custom_op / register_fake_op: FlashInfer's own are `lambda x: x`
  in both branches of their torch-version test (torch.library.custom_op is
  commented out there for its overhead); so are these.
- gen_blackwell_softmax_module: the Blackwell-only softmax, never reached
  on Hopper by the calls perf/peers.py makes.
"""

import functools  # noqa: F401  (used by the appended utils functions)
from typing import Dict, List, Tuple  # noqa: F401

import torch  # noqa: F401


def flashinfer_api(func=None, *, trace=None):
    if func is None:
        return lambda f: f
    return func


def register_custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None):
    return lambda x: x


def register_fake_op(name, fn=None):
    return lambda x: x


def gen_blackwell_softmax_module():
    raise RuntimeError("flashinfer's Blackwell softmax is not part of qrita's extract")


# --- verbatim from the wheel's flashinfer/utils.py (appended by fetch_flashinfer.py) ---
