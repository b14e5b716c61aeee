# SPDX-License-Identifier: Apache-2.0
"""qrita: exact top-k, top-p and min-p truncation of LLM logits, exact
seeded sampling and candidate lists with log-probabilities.

Every call gives the answer of a stable sort (docs/SEMANTICS.md in the
repository): the same kept set, token and list on every run, at any batch
size and position in the batch.

- ``qrita.torch``: PyTorch custom ops (CPU or CUDA tensors, in place or
  out of place, ``torch.compile`` and CUDA graphs).
- ``qrita.vllm``: drop-ins for vLLM's ``apply_top_k_top_p`` and its
  top-k/top-p sampler.
- This module: the same calls on any DLPack array (NumPy, CuPy), and
  ``workspace_bytes``.

A build computes on one kind of device: ``qrita.device`` ("cpu" for the
OpenMP build, "cuda" for the CUDA build) with Kokkos' ``qrita.backend``.
"""

import atexit as _atexit

from . import _qrita
from ._arrays import dlpack_desc as _desc

__version__ = "0.2.0"
__all__ = [
    "backend",
    "device",
    "workspace_bytes",
    "top_k_top_p_mask_",
    "sample",
    "candidates",
]

backend = _qrita.backend()
device = {1: "cpu", 2: "cuda", 10: "cuda"}[_qrita.device_type()]
_atexit.register(_qrita.finalize)


def workspace_bytes(max_batch, vocab, device_index=0):
    """Bytes of the workspace that calls on at most ``max_batch`` x
    ``vocab`` logits may use."""
    return _qrita.workspace_bytes(int(max_batch), int(vocab), int(device_index))


def _opt(a):
    return None if a is None else _desc(a)


def top_k_top_p_mask_(logits, k=None, p=None, *, temperature=None, min_p=None, workspace=None):
    """Masks ``logits`` [batch][vocab] in place (a writable DLPack array of
    float32, bfloat16 or float16) and returns it. ``k`` (int32), ``p``,
    ``temperature``, ``min_p`` (float32): one entry per row, or None.
    ``workspace``: a zero-filled uint8 array of ``workspace_bytes`` bytes
    on the logits' device, or None."""
    _qrita.mask_(_desc(logits), _opt(k), _opt(p), _opt(min_p), _opt(temperature), _opt(workspace))
    return logits


def sample(logits, *, seeds, offsets, tokens, k=None, p=None, temperature=None, min_p=None,
           workspace=None):
    """Draws one token per row into ``tokens`` (int32, one per row; -1 for a
    row without a candidate) and returns it. ``seeds``, ``offsets``: int64
    or uint64, one per row."""
    _qrita.sample(_desc(logits), _opt(k), _opt(p), _opt(min_p), _opt(temperature), _desc(seeds),
                  _desc(offsets), _desc(tokens), _opt(workspace))
    return tokens


def candidates(logits, *, ids, counts, probs=None, logprobs=None, k=None, p=None,
               temperature=None, min_p=None, workspace=None):
    """Lists each row's first C kept entries (C: the columns of ``ids``,
    int32 [batch][C]) with their probabilities and log-probabilities
    (float32 [batch][C], or None to skip) and each row's kept count
    (``counts``, int32). Returns (ids, probs, logprobs, counts)."""
    _qrita.candidates(_desc(logits), _opt(k), _opt(p), _opt(min_p), _opt(temperature), _desc(ids),
                      _opt(probs), _opt(logprobs), _desc(counts), _opt(workspace))
    return ids, probs, logprobs, counts
