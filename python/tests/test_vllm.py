# SPDX-License-Identifier: Apache-2.0
"""The vLLM drop-ins, without vLLM: apply_top_k_top_p's contract and the
sampler's outputs per logprobs mode, with per-request generators."""

import types

import numpy as np
import pytest
import torch

import qrita.torch as qt
import qrita.vllm as qv
from reference import check_mask


def test_apply_top_k_top_p(device):
    g = torch.Generator().manual_seed(3)
    b, v = 12, 2000
    x = torch.randn(b, v, generator=g).to(device)
    k = torch.randint(1, v + 1, (b,), generator=g, dtype=torch.int32).to(device)
    k[0] = v  # vLLM's "no top-k"
    p = torch.rand(b, generator=g).to(device)
    p[1] = 1.0  # vLLM's "no top-p"
    before = x.clone()
    out = qv.apply_top_k_top_p(x, k, p)
    assert out.data_ptr() == x.data_ptr()
    for i in range(b):
        check_mask(before[i].cpu().numpy(), out[i].cpu().numpy(), int(k[i]), float(p[i]))
    y = before.clone()
    assert qv.apply_top_k_top_p(y, None, None) is y and torch.equal(y, before)


@pytest.mark.parametrize("mode", ["raw_logprobs", "processed_logits", "processed_logprobs"])
def test_sampler_forward(mode, device):
    g = torch.Generator().manual_seed(4)
    b, v = 6, 1000
    x = torch.randn(b, v, generator=g).to(device)
    k = torch.full((b,), 30, dtype=torch.int32, device=device)
    p = torch.full((b,), 0.8, device=device)
    sampler = types.SimpleNamespace(logprobs_mode=mode)
    gens = {1: torch.Generator(device=device).manual_seed(77),
            4: torch.Generator(device=device).manual_seed(77)}
    tokens, out = qv.forward(sampler, x.clone(), gens, k, p)
    assert tokens.dtype == torch.int64 and tokens.shape == (b,)
    masked = qt.top_k_top_p_mask_(x.clone(), k, p)
    kept = ~torch.isneginf(masked)
    assert kept[torch.arange(b), tokens].all()
    if mode == "raw_logprobs":
        assert out is None
    elif mode == "processed_logits":
        assert torch.equal(out, masked)
    else:
        assert torch.equal(out, masked.log_softmax(dim=-1, dtype=torch.float32))


def test_seeded_requests_are_reproducible_and_batch_invariant(device):
    """Rows with a generator: the token depends on the request's seed and
    step only, wherever the row sits and whatever the other rows are."""
    g = torch.Generator().manual_seed(5)
    v = 4000
    rows = torch.randn(5, v, generator=g).to(device)
    sampler = types.SimpleNamespace(logprobs_mode="raw_logprobs")

    def run(order, seed_row):
        x = rows[order]
        gens = {order.index(seed_row): torch.Generator(device=device).manual_seed(2024)}
        steps = []
        for _ in range(4):
            tokens, _ = qv.forward(sampler, x.clone(), gens, None, torch.full((5,), 0.95,
                                                                            device=device))
            steps.append(int(tokens[order.index(seed_row)]))
        return steps

    a = run([0, 1, 2, 3, 4], 2)
    b = run([4, 2, 0, 3, 1], 2)
    assert a == b
    assert len(set(a)) > 1  # each step consumes the generator


def test_seeds_and_offsets_mapping(device):
    gen = torch.Generator(device=device).manual_seed(99)
    seeds, offsets = qv.seeds_and_offsets(3, {1: gen}, device)
    assert int(seeds[1]) == 99
    expect = torch.randint(2**62, (1,), generator=torch.Generator(device=device).manual_seed(99),
                           device=device)
    assert int(offsets[1]) == int(expect[0])
    assert int(offsets[0]) == 0 and int(offsets[2]) == 0
    assert np.all(seeds.cpu().numpy() >= 0)
