# SPDX-License-Identifier: Apache-2.0
"""Drop-ins for vLLM's top-k/top-p sampling (vllm/v1/sample/ops/
topk_topp_sampler.py, vLLM 0.33.0), exact and deterministic:

- ``apply_top_k_top_p(logits, k, p, has_topp_only_rows=True)``: the masked
  logits, in place, with vLLM's signature;
- ``forward(sampler, logits, generators, k, p)``: a replacement for
  ``TopKTopPSampler.forward_native`` / ``forward_cuda``, returning (tokens,
  the processed logits or log-probabilities per ``sampler.logprobs_mode``,
  or None);
- ``patch()``: swaps both into an imported vLLM.

What differs from vLLM's own paths: ties at the k-th value or at p's
boundary keep the lowest indices (exactly k entries; vLLM's sort path keeps
every tied entry); top-p's sums are exact (fixed point), not float; the
draw is Philox keyed by a per-row (seed, offset), not exponential noise.
Rows: vLLM's Sampler applies temperature and takes greedy rows' argmax
before calling the sampler, so these calls use temperature 1 and see only
sampled rows' values.

Per-request generators: row i with a ``torch.Generator`` g draws with seed
``g.initial_seed()`` (the request's seed) and offset the next 62-bit integer
drawn from g on its device (``torch.randint(2**62, (1,), generator=g)``),
so each step consumes g, as vLLM's own path does, and a request's tokens
depend on its seed and step only, never on the batch around it. Rows
without a generator use seeds drawn from torch's default generator and
offset 0.
"""

import torch

from . import torch as _qt

__all__ = ["apply_top_k_top_p", "forward", "patch"]

PROCESSED_MODES = ("processed_logits", "processed_logprobs")


def apply_top_k_top_p(logits, k, p, has_topp_only_rows=True):
    """vLLM's apply_top_k_top_p: top-k then top-p on every row of
    ``logits``, in place; returns the masked logits. ``k`` (rows without
    top-k: ``k >= vocab``) and ``p`` (rows without top-p: ``p >= 1``) are
    tensors or None. ``has_topp_only_rows`` is accepted for the signature;
    qrita needs no hint."""
    del has_topp_only_rows
    if k is None and p is None:
        return logits
    return _qt.top_k_top_p_mask_(logits, k, p)


def seeds_and_offsets(batch, generators, device):
    """The (seed, offset) of each row, as documented above."""
    seeds = torch.empty(batch, dtype=torch.int64, device=device).random_()
    offsets = torch.zeros(batch, dtype=torch.int64, device=device)
    for i, g in generators.items():
        seeds[i] = g.initial_seed() & (2**63 - 1)
        offsets[i] = torch.randint(2**62, (1,), generator=g, device=g.device).to(device)[0]
    return seeds, offsets


def forward(sampler, logits, generators, k, p):
    """TopKTopPSampler.forward_native / forward_cuda: (int64 tokens,
    processed logits or log-probabilities, or None). ``sampler`` needs only
    ``logprobs_mode``; a ``qrita_workspace`` attribute (a
    qrita.torch.Workspace) is used when present."""
    mode = getattr(sampler, "logprobs_mode", "raw_logprobs")
    ws = getattr(sampler, "qrita_workspace", None)
    seeds, offsets = seeds_and_offsets(logits.shape[0], generators or {}, logits.device)
    if mode in PROCESSED_MODES:
        # Mask, then draw from the masked rows: the same tokens as a draw
        # with the filters (the kept set, its weights and W are the same).
        _qt.top_k_top_p_mask_(logits, k, p, workspace=ws)
        tokens = _qt.sample(logits, seeds=seeds, offsets=offsets, workspace=ws)
        out = logits if mode == "processed_logits" else logits.log_softmax(dim=-1,
                                                                           dtype=torch.float32)
        return tokens.long(), out
    tokens = _qt.sample(logits, k=k, p=p, seeds=seeds, offsets=offsets, workspace=ws)
    return tokens.long(), None


def patch():
    """Replaces vLLM's apply_top_k_top_p and TopKTopPSampler's forward
    paths with qrita's, in the imported vLLM (vllm.v1.sample.ops.
    topk_topp_sampler); returns that module."""
    from vllm.v1.sample.ops import topk_topp_sampler as m

    m.apply_top_k_top_p = apply_top_k_top_p

    def _forward(self, logits, generators, k, p):
        return forward(self, logits, generators, k, p)

    m.TopKTopPSampler.forward_native = _forward
    m.TopKTopPSampler.forward_cuda = _forward
    original_init = m.TopKTopPSampler.__init__

    def _init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        self.forward = self.forward_native

    m.TopKTopPSampler.__init__ = _init
    return m
