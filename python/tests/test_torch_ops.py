# SPDX-License-Identifier: Apache-2.0
"""The custom ops under torch.library.opcheck, torch.compile(fullgraph=True)
and, on CUDA builds, CUDA graph capture and replay."""

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import qrita.torch as qt


def _args(device, b=6, v=300, dtype=torch.float32):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(b, v, generator=g).to(dtype).to(device)
    k = torch.randint(1, 50, (b,), generator=g, dtype=torch.int32).to(device)
    p = torch.rand(b, generator=g).to(device)
    t = (torch.rand(b, generator=g) + 0.5).to(device)
    m = (torch.rand(b, generator=g) * 0.1).to(device)
    return x, k, p, t, m


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_opcheck(dtype, device):
    x, k, p, t, m = _args(device, dtype=dtype)
    ws = qt.Workspace(6, 300, device=device).tensor
    seeds = torch.arange(6, device=device)
    offsets = torch.zeros(6, dtype=torch.int64, device=device)
    tokens = torch.empty(6, dtype=torch.int32, device=device)
    ops = torch.ops.qrita
    cases = [
        (ops.top_k_top_p_mask_.default, (x.clone(), k, p, m, t, ws)),
        (ops.top_k_top_p_mask_.default, (x.clone(), None, p, None, None, None)),
        (ops.sample.default, (x, k, p, m, t, seeds, offsets, tokens, ws)),
        (ops.sample.default, (x, None, None, None, None, seeds, offsets, tokens, None)),
        (ops.candidates.default, (x, 8, k, p, m, t, ws)),
    ]
    for op, args in cases:
        torch.library.opcheck(op, args)


def _step(x, k, p, t, m, seeds, offsets):
    """A decoding step: mask, draw, list."""
    masked = qt.top_k_top_p_mask_(x.clone(), k, p, temperature=t, min_p=m)
    tokens = qt.sample(x, k=k, p=p, temperature=t, min_p=m, seeds=seeds, offsets=offsets)
    ids, probs, logprobs, counts = qt.candidates(x, 5, k=k, p=p, temperature=t, min_p=m)
    return masked, tokens, ids, probs, logprobs, counts


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_compile_fullgraph_equals_eager(backend, device):
    torch._dynamo.reset()
    x, k, p, t, m = _args(device)
    seeds = torch.arange(6, device=device)
    offsets = torch.full((6,), 4, dtype=torch.int64, device=device)
    compiled = torch.compile(_step, fullgraph=True, backend=backend)
    got = compiled(x, k, p, t, m, seeds, offsets)
    want = _step(x, k, p, t, m, seeds, offsets)
    for a, b in zip(got, want):
        assert torch.equal(a, b)


def test_cuda_graph_replay_equals_direct_calls(device):
    if device != "cuda":
        pytest.skip("CUDA graphs need the CUDA build")
    b, v = 8, 50000
    x = torch.randn(b, v, device=device)
    k = torch.randint(1, 100, (b,), dtype=torch.int32, device=device)
    p = torch.rand(b, device=device)
    seeds = torch.zeros(b, dtype=torch.int64, device=device)
    offsets = torch.zeros(b, dtype=torch.int64, device=device)
    ws = qt.Workspace(b, v, device=device)
    static = x.clone()

    def step():
        tokens = qt.sample(static, k=k, p=p, seeds=seeds, offsets=offsets, workspace=ws)
        ids, probs, logprobs, counts = qt.candidates(static, 16, k=k, p=p, workspace=ws)
        masked = qt.top_k_top_p_mask_(static, k, p, workspace=ws)
        return tokens, ids, probs, logprobs, counts, masked

    # One call on the capture stream before capturing: qrita makes its
    # execution-space instance for a stream on the stream's first call.
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        step()
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    static.copy_(x)
    with torch.cuda.graph(graph, stream=s):
        out = step()
    for i in range(3):
        new = torch.randn(b, v, device=device)
        static.copy_(new)
        seeds.copy_(torch.randint(0, 2**62, (b,), device=device))
        offsets.fill_(i)
        graph.replay()
        torch.cuda.synchronize()
        replayed = [o.clone() for o in out]
        static.copy_(new)
        direct = step()
        for a, d in zip(replayed, direct):
            assert torch.equal(a, d)


def test_eager_calls_equal_the_ops(device):
    """Eager calls on plain tensors skip the dispatcher: they give what the
    ops give, and the in-place mask bumps the logits' version as the op's
    declared mutation does."""
    x, k, p, t, m = _args(device)
    ws = qt.Workspace(6, 300, device=device)
    seeds = torch.arange(6, device=device)
    offsets = torch.full((6,), 3, dtype=torch.int64, device=device)
    ops = torch.ops.qrita

    direct = x.clone()
    version = direct._version
    qt.top_k_top_p_mask_(direct, k, p, temperature=t, min_p=m, workspace=ws)
    assert direct._version > version
    via_op = x.clone()
    ops.top_k_top_p_mask_(via_op, k, p, m, t, ws.tensor)
    assert torch.equal(direct, via_op)
    assert not torch.equal(direct, x)

    tokens = qt.sample(x, k=k, p=p, temperature=t, min_p=m, seeds=seeds, offsets=offsets,
                       workspace=ws)
    want = torch.empty(6, dtype=torch.int32, device=device)
    ops.sample(x, k, p, m, t, seeds, offsets, want, ws.tensor)
    assert torch.equal(tokens, want)

    got = qt.candidates(x, 7, k=k, p=p, temperature=t, min_p=m, workspace=ws)
    for a, b in zip(got, ops.candidates(x, 7, k, p, m, t, ws.tensor)):
        assert torch.equal(a, b)


class _OpRecorder(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.names = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.names.append(str(func))
        return func(*args, **(kwargs or {}))


def test_dispatch_modes_see_the_ops(device):
    """Under a dispatch mode (as FakeTensor, functionalization and make_fx
    are), the public functions call the ops, so the mode sees each call."""
    x, k, p, t, m = _args(device)
    seeds = torch.arange(6, device=device)
    offsets = torch.zeros(6, dtype=torch.int64, device=device)
    with _OpRecorder() as rec:
        masked = qt.top_k_top_p_mask_(x.clone(), k, p)
        tokens = qt.sample(x, k=k, seeds=seeds, offsets=offsets)
        ids = qt.candidates(x, 4, p=p)[0]
    for op in ("qrita.top_k_top_p_mask_", "qrita.sample", "qrita.candidates"):
        assert any(n.startswith(op) for n in rec.names), (op, rec.names)
    assert torch.equal(masked, qt.top_k_top_p_mask_(x.clone(), k, p))
    assert torch.equal(tokens, qt.sample(x, k=k, seeds=seeds, offsets=offsets))
    assert torch.equal(ids, qt.candidates(x, 4, p=p)[0])
