# SPDX-License-Identifier: Apache-2.0
"""qrita.torch.sample and candidates: tokens in the kept set, frequencies
that fit the exact probabilities (chi-square), lists in the definition's
order with their probabilities, and batch invariance."""

import math

import numpy as np
import pytest
import torch

import qrita.torch as qt
from reference import allowed, probabilities
from rows import awkward_rows


def _kept(row, **f):
    """The kept set the mask gives this row (checked against the reference
    in test_mask.py)."""
    x = torch.from_numpy(row).reshape(1, -1).clone().to(qrita_device())
    qt.top_k_top_p_mask_(x, **f)
    return set(np.flatnonzero(~np.isneginf(x[0].cpu().numpy())).tolist())


def qrita_device():
    import qrita

    return qrita.device


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_tokens_lie_in_the_kept_set(dtype, device, rng):
    rows = awkward_rows(rng, 3000)
    filters = dict(k=40, p=0.9, temperature=0.8, min_p=0.02)
    x = torch.stack([torch.from_numpy(r) for r in rows.values()]).to(dtype).to(device)
    n = x.shape[0]
    tokens = qt.sample(x, seeds=torch.arange(n, device=device), offsets=7, **filters)
    assert tokens.dtype == torch.int32 and tokens.shape == (n,)
    for i, name in enumerate(rows):
        row = x[i].float().cpu().numpy()
        kept = _kept(row, **filters)
        if not kept:
            assert tokens[i] == -1, name
        else:
            assert int(tokens[i]) in kept, name


def _chi_square_p_value(counts, probs):
    """P-value of Pearson's chi-square; expected counts below 5 pooled."""
    expected = probs * counts.sum()
    small = expected < 5
    obs = np.append(counts[~small], counts[small].sum())
    exp = np.append(expected[~small], expected[small].sum())
    keep = exp > 0
    obs, exp = obs[keep], exp[keep]
    chi2 = float(((obs - exp) ** 2 / exp).sum())
    df = len(obs) - 1
    return float(torch.special.gammaincc(torch.tensor(df / 2.0, dtype=torch.float64),
                                         torch.tensor(chi2 / 2.0, dtype=torch.float64)))


@pytest.mark.parametrize("filters", [dict(k=6), dict(p=0.8, temperature=1.5),
                                     dict(min_p=0.05, temperature=0.7)])
def test_frequencies_fit_the_exact_probabilities(filters, device, rng):
    vocab, draws = 32, 20000
    row = (rng.standard_normal(vocab) * 1.5).astype(np.float32)
    x = torch.from_numpy(row).to(device).expand(draws, vocab)  # row stride 0: one row
    x = x.contiguous()
    tokens = qt.sample(x, seeds=12345, offsets=torch.arange(draws, device=device), **filters)
    cand, lo, hi, _ = allowed(row.astype(np.float64), filters.get("k"), filters.get("p"),
                              filters.get("temperature"), filters.get("min_p"))
    n = len(_kept(row, **filters))
    assert lo <= n <= hi
    ids, probs, _ = probabilities(row, n, filters.get("temperature"))
    counts = np.bincount(tokens.cpu().numpy(), minlength=vocab)[ids]
    assert counts.sum() == draws, "a token outside the kept set"
    assert _chi_square_p_value(counts, probs) > 1e-6


def test_the_chi_square_test_rejects_a_biased_sampler(rng):
    probs = np.array([0.4, 0.3, 0.2, 0.1])
    biased = np.array([0.42, 0.29, 0.19, 0.10])
    counts = np.bincount(rng.choice(4, size=200000, p=biased), minlength=4)
    assert _chi_square_p_value(counts, probs) < 1e-6


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_candidate_lists(dtype, device, rng):
    rows = awkward_rows(rng, 2000)
    C = 24
    filters = dict(k=100, p=0.7, temperature=1.3)
    x = torch.stack([torch.from_numpy(r) for r in rows.values()]).to(dtype).to(device)
    ids, probs, logprobs, counts = qt.candidates(x, C, **filters)
    assert ids.shape == (x.shape[0], C) and counts.shape == (x.shape[0],)
    for i, name in enumerate(rows):
        row = x[i].float().cpu().numpy()
        n = len(_kept(row, **filters))
        assert int(counts[i]) == n, name
        m = min(n, C)
        want_ids, want_p, want_lp = probabilities(row, n, filters["temperature"])
        np.testing.assert_array_equal(ids[i, :m].cpu().numpy(), want_ids[:m], err_msg=name)
        assert (ids[i, m:] == -1).all() and (probs[i, m:] == 0).all(), name
        assert torch.isneginf(logprobs[i, m:]).all(), name
        np.testing.assert_allclose(probs[i, :m].cpu().numpy(), want_p[:m], atol=1e-6,
                                   err_msg=name)
        big = want_p[:m] > 1e-30
        np.testing.assert_allclose(logprobs[i, :m].cpu().numpy()[big], want_lp[:m][big],
                                   atol=1e-5, rtol=0, err_msg=name)


def test_tokens_and_lists_are_batch_invariant(device, rng):
    """A row's token and list depend on the row, its filters, seed and
    offset only: alone, or anywhere in a batch of other rows."""
    v = 5000
    rows = torch.from_numpy(rng.standard_normal((48, v)).astype(np.float32)).to(device)
    k = torch.from_numpy(rng.integers(0, 200, 48)).to(device)
    p = torch.from_numpy(rng.random(48).astype(np.float32)).to(device)
    seeds = torch.from_numpy(rng.integers(0, 2**62, 48)).to(device)
    offsets = torch.from_numpy(rng.integers(0, 1000, 48)).to(device)
    ws = qt.Workspace(48, v, device=device)
    tokens = qt.sample(rows, k=k, p=p, seeds=seeds, offsets=offsets, workspace=ws)
    lists = qt.candidates(rows, 16, k=k, p=p, workspace=ws)
    perm = torch.from_numpy(rng.permutation(48)).to(device)
    tokens_perm = qt.sample(rows[perm], k=k[perm], p=p[perm], seeds=seeds[perm],
                            offsets=offsets[perm])
    assert torch.equal(tokens_perm, tokens[perm])
    for i in (0, 17, 47):
        one = qt.sample(rows[i:i + 1], k=k[i:i + 1], p=p[i:i + 1], seeds=seeds[i:i + 1],
                        offsets=offsets[i:i + 1])
        assert int(one[0]) == int(tokens[i])
        alone = qt.candidates(rows[i:i + 1], 16, k=k[i:i + 1], p=p[i:i + 1])
        for a, b in zip(alone, lists):
            assert torch.equal(a[0], b[i])
    again = qt.sample(rows, k=k, p=p, seeds=seeds, offsets=offsets, workspace=ws)
    assert torch.equal(again, tokens)


def test_greedy_rows_and_rows_without_candidates(device):
    x = torch.tensor([[0.0, 2.0, 2.0, 1.0], [-math.inf] * 4], device=device)
    tokens = qt.sample(x, temperature=0.0, seeds=0, offsets=0)
    assert tokens.tolist() == [1, -1]
