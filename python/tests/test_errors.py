# SPDX-License-Identifier: Apache-2.0
"""Bad input raises TypeError or ValueError naming the argument, before
anything is written."""

import numpy as np
import pytest
import torch

import qrita
import qrita.torch as qt


@pytest.fixture
def logits(device):
    return torch.randn(4, 100, device=device)


def _unchanged(x, f):
    before = x.clone()
    f()
    assert torch.equal(x, before)


BAD_MASK_CALLS = [
    ("logits", TypeError, lambda x: qt.top_k_top_p_mask_(x.double(), 5)),
    ("logits", TypeError, lambda x: qt.top_k_top_p_mask_(x.cpu().numpy(), 5)),
    ("logits", ValueError, lambda x: qt.top_k_top_p_mask_(x[0], 5)),
    ("logits", ValueError, lambda x: qt.top_k_top_p_mask_(x.t(), 5)),
    ("k", TypeError, lambda x: qt.top_k_top_p_mask_(x, torch.full((4,), 5.0, device=x.device))),
    ("k", TypeError, lambda x: qt.top_k_top_p_mask_(x, "5")),
    ("k", ValueError, lambda x: qt.top_k_top_p_mask_(x, torch.full((3,), 5, device=x.device))),
    ("k", ValueError, lambda x: qt.top_k_top_p_mask_(x, torch.full((4, 1), 5, device=x.device))),
    ("p", TypeError, lambda x: qt.top_k_top_p_mask_(x, None, torch.ones(4, dtype=torch.int32, device=x.device))),
    ("p", ValueError, lambda x: qt.top_k_top_p_mask_(x, None, torch.ones(5, device=x.device))),
    ("temperature", ValueError, lambda x: qt.top_k_top_p_mask_(x, 5, temperature=torch.ones(2, device=x.device))),
    ("min_p", TypeError, lambda x: qt.top_k_top_p_mask_(x, 5, min_p=[0.1] * 4)),
    ("workspace", TypeError, lambda x: qt.top_k_top_p_mask_(x, 5, workspace=torch.zeros(10))),
    ("workspace", ValueError,
     lambda x: qt.top_k_top_p_mask_(x, 5, workspace=qt.Workspace(2, 100, device=x.device))),
    ("workspace", ValueError,
     lambda x: qt.top_k_top_p_mask_(x, 5, workspace=qt.Workspace(4, 50, device=x.device))),
]


@pytest.mark.parametrize("name,error,call", BAD_MASK_CALLS,
                         ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(BAD_MASK_CALLS)])
def test_mask_rejects(name, error, call, logits):
    with pytest.raises(error, match=name):
        _unchanged(logits, lambda: call(logits))
    assert torch.isfinite(logits).all()


def test_sample_and_candidates_reject(logits):
    with pytest.raises(TypeError, match="seeds"):
        qt.sample(logits, k=5, seeds=torch.zeros(4, device=logits.device), offsets=0)
    with pytest.raises(ValueError, match="offsets"):
        qt.sample(logits, k=5, seeds=0, offsets=torch.zeros(3, dtype=torch.int64, device=logits.device))
    with pytest.raises(TypeError, match="seeds"):
        qt.sample(logits, k=5, seeds=None, offsets=0)
    with pytest.raises(TypeError, match="'C'"):
        qt.candidates(logits, 2.5, k=5)
    with pytest.raises(ValueError, match="'C'"):
        qt.candidates(logits, -1, k=5)
    with pytest.raises(ValueError, match="candidates per row"):
        qt.candidates(logits[:, :1].expand(4, 10**6).contiguous(), 10**6)


def test_a_device_this_build_does_not_compute_on():
    if qrita.device == "cpu":
        if not torch.cuda.is_available():
            pytest.skip("needs a CUDA device to make a CUDA tensor")
        x = torch.randn(2, 10, device="cuda")
    else:
        x = torch.randn(2, 10)
    with pytest.raises(ValueError, match="logits"):
        qt.top_k_top_p_mask_(x, 3)


def test_the_extension_checks_what_reaches_it(device):
    """The checks in C++ hold for callers that skip the Python layer."""
    if device != "cpu":
        pytest.skip("NumPy arrays are host memory")
    x = np.zeros((2, 10), np.float32)
    with pytest.raises(TypeError, match="'k' must hold int32, got int64"):
        qrita.top_k_top_p_mask_(x, np.array([1, 2]))
    with pytest.raises(ValueError, match="'p' has 3 entries, expected 2"):
        qrita.top_k_top_p_mask_(x, None, np.ones(3, np.float32))
    with pytest.raises(TypeError, match="'logits' must hold float32, bfloat16 or float16"):
        qrita.top_k_top_p_mask_(np.zeros((2, 10)), np.array([1, 2], np.int32))
    with pytest.raises(ValueError, match="'workspace' holds 16 bytes"):
        qrita.top_k_top_p_mask_(x, np.array([1, 2], np.int32), workspace=np.zeros(16, np.uint8))
    with pytest.raises(ValueError, match="'tokens' has 3 entries"):
        qrita.sample(x, seeds=np.zeros(2, np.int64), offsets=np.zeros(2, np.int64),
                     tokens=np.zeros(3, np.int32))
