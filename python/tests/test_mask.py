# SPDX-License-Identifier: Apache-2.0
"""qrita.torch.top_k_top_p_mask_: exact kept sets against the NumPy
reference, on every logit type and the awkward rows."""

import itertools
import math

import numpy as np
import pytest
import torch

import qrita.torch as qt
from reference import check_mask
from rows import awkward_rows

FILTERS = [  # (k, p, temperature, min_p)
    (1, None, None, None),
    (10, None, None, None),
    (None, 0.9, None, None),
    (50, 0.8, None, None),
    (None, 0.5, 2.0, None),
    (None, None, None, 0.1),
    (20, 0.95, 0.7, 0.05),
    (None, 0.0, None, None),
    (None, None, 0.0, None),  # greedy
    (None, None, None, None),  # nothing active: the row is left alone
]


def _col(values, dtype, device, fill):
    """One entry per row; `fill` (a value that is off) where a row has None."""
    if all(v is None for v in values):
        return None
    return torch.tensor([fill if v is None else v for v in values], dtype=dtype, device=device)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("vocab", [7, 1000, 32000])
@pytest.mark.parametrize("with_workspace", [False, True])
def test_awkward_rows_every_filter(dtype, vocab, with_workspace, device, rng):
    rows = awkward_rows(rng, vocab)
    cases = list(itertools.product(rows.items(), FILTERS))
    x = torch.stack([torch.from_numpy(r) for (_, r), _ in cases]).to(dtype).to(device)
    before = x.clone()
    ks, ps, ts, ms = zip(*[f for _, f in cases])
    ws = qt.Workspace(len(cases), vocab, device=device) if with_workspace else None
    qt.top_k_top_p_mask_(x, _col(ks, torch.int32, device, 0),
                         _col(ps, torch.float32, device, math.nan),
                         temperature=_col(ts, torch.float32, device, 1.0),
                         min_p=_col(ms, torch.float32, device, 0.0), workspace=ws)
    view = torch.int16 if dtype != torch.float32 else torch.int32
    b_bits = before.cpu().view(view).numpy()
    a_bits = x.cpu().view(view).numpy()
    npdt = np.uint16 if dtype != torch.float32 else np.uint32
    for i, ((name, _), (k, p, t, m)) in enumerate(cases):
        b = before[i].float().cpu().numpy()
        a = x[i].float().cpu().numpy()
        try:
            # Values in float; the bits are compared through the storage type.
            if dtype == torch.float32:
                check_mask(b, a, k, p, t, m)
            else:
                check_mask(b, a, k, p, t, m)
                kept = ~np.isneginf(a)
                assert np.array_equal(a_bits[i].view(npdt)[kept], b_bits[i].view(npdt)[kept])
        except AssertionError as e:
            raise AssertionError(f"row '{name}', k={k} p={p} T={t} min_p={m}: {e}") from None


def test_matches_sort_on_random_batches(device, rng):
    """Random rows and random per-row filters (some off), as vLLM's tests draw them."""
    b, v = 64, 4096
    x = torch.from_numpy(rng.standard_normal((b, v)).astype(np.float32)).to(device)
    k = torch.from_numpy(rng.integers(1, v + 100, b)).to(device)  # int64: converted
    p = torch.from_numpy(rng.random(b) * 1.2).to(device)  # float64, some >= 1 (off)
    before = x.clone()
    qt.top_k_top_p_mask_(x, k, p)
    for i in range(b):
        check_mask(before[i].cpu().numpy(), x[i].cpu().numpy(), int(k[i]), float(np.float32(float(p[i]))))


def test_padded_rows_and_scalars(device, rng):
    """A row stride above the vocabulary (a slice of a wider buffer): the
    padding is never touched. Python numbers apply to every row."""
    full = torch.from_numpy(rng.standard_normal((8, 600)).astype(np.float32)).to(device)
    pad = full[:, 500:].clone()
    x = full[:, :500]
    before = x.clone()
    qt.top_k_top_p_mask_(x, 5, 0.5)
    assert torch.equal(full[:, 500:], pad)
    for i in range(8):
        check_mask(before[i].cpu().numpy(), x[i].cpu().numpy(), 5, 0.5)


def test_empty_batch(device):
    x = torch.empty((0, 100), device=device)
    qt.top_k_top_p_mask_(x, 5, 0.5)
    assert x.shape == (0, 100)
