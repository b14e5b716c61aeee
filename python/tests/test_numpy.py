# SPDX-License-Identifier: Apache-2.0
"""The framework-neutral calls on NumPy arrays (through DLPack), and the
same answers as the torch ops."""

import numpy as np
import pytest
import torch

import qrita
import qrita.torch as qt
from reference import check_mask


@pytest.fixture(autouse=True)
def host_build(device):
    if device != "cpu":
        pytest.skip("NumPy arrays are host memory")


def test_numpy_mask_sample_and_list_match_torch(rng):
    b, v = 16, 3000
    x = rng.standard_normal((b, v)).astype(np.float32)
    k = rng.integers(1, 100, b).astype(np.int32)
    p = rng.random(b).astype(np.float32)
    masked = x.copy()
    ws = np.zeros(qrita.workspace_bytes(b, v), np.uint8)
    assert qrita.top_k_top_p_mask_(masked, k, p, workspace=ws) is masked
    for i in range(b):
        check_mask(x[i], masked[i], int(k[i]), float(p[i]))
    t = torch.from_numpy(x.copy())
    qt.top_k_top_p_mask_(t, torch.from_numpy(k), torch.from_numpy(p))
    assert np.array_equal(t.numpy().view(np.uint32), masked.view(np.uint32))

    seeds = np.arange(b, dtype=np.uint64)
    offsets = np.full(b, 3, np.int64)
    tokens = qrita.sample(x, seeds=seeds, offsets=offsets, tokens=np.empty(b, np.int32), k=k,
                          p=p, workspace=ws)
    want = qt.sample(torch.from_numpy(x), k=torch.from_numpy(k), p=torch.from_numpy(p),
                     seeds=torch.arange(b), offsets=3)
    assert np.array_equal(tokens, want.numpy())

    ids, probs, logprobs, counts = qrita.candidates(
        x, ids=np.empty((b, 8), np.int32), probs=np.empty((b, 8), np.float32),
        logprobs=None, counts=np.empty(b, np.int32), k=k, p=p)
    assert logprobs is None
    w_ids, w_probs, _, w_counts = qt.candidates(torch.from_numpy(x), 8, k=torch.from_numpy(k),
                                                p=torch.from_numpy(p))
    assert np.array_equal(ids, w_ids.numpy()) and np.array_equal(counts, w_counts.numpy())
    assert np.array_equal(probs, w_probs.numpy())


def test_read_only_arrays_are_refused():
    x = np.zeros((2, 10), np.float32)
    x.setflags(write=False)
    with pytest.raises((TypeError, ValueError)):
        qrita.top_k_top_p_mask_(x, np.array([1, 1], np.int32))
