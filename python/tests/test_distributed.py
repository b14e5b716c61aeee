# SPDX-License-Identifier: Apache-2.0
"""qrita.distributed on a torch.distributed group of 1, 2 and 3 processes
(Gloo on the CPU build, NCCL with one process on the CUDA build): every
rank's mask, tokens and lists equal qrita.torch's on the whole rows, bit for
bit, on the awkward rows (ties across shards, a shard of -inf or NaN, an
empty shard, k beyond any shard, nuclei spanning every shard, bf16 ties);
and arguments that are wrong on one rank, or differ across the ranks, raise
on every rank."""

import os
import tempfile

import numpy as np
import pytest

torch = pytest.importorskip("torch")
dist = pytest.importorskip("torch.distributed")
mp = pytest.importorskip("torch.multiprocessing")

import qrita  # noqa: E402

if not dist.is_available():
    pytest.skip("torch.distributed is not available", allow_module_level=True)

VOCAB = 1500


def _rows(dtype):
    """Rows whose boundaries fall across the shards of _shards."""
    from rows import awkward_rows

    rng = np.random.default_rng(20261207)
    rows = awkward_rows(rng, VOCAB)
    # Ties that straddle every shard boundary: a few values, each repeated
    # across the row.
    rows["straddle"] = np.repeat(np.float32([3.0, 2.5, 2.5, 1.0]), VOCAB // 4 + 1)[:VOCAB]
    # A shard of -inf (the second third) and one of NaN (the last fifth).
    half = rng.standard_normal(VOCAB).astype(np.float32)
    half[VOCAB // 3:2 * VOCAB // 3] = -np.inf
    rows["dead_shard"] = half
    nan = rng.standard_normal(VOCAB).astype(np.float32)
    nan[-VOCAB // 5:] = np.nan
    rows["nan_shard"] = nan
    x = torch.from_numpy(np.stack(list(rows.values())))
    return x.to(dtype)


def _shards(ranks):
    """Uneven shards, not in rank order, one of them empty with 3 ranks."""
    if ranks == 1:
        return [(0, VOCAB)]
    if ranks == 2:
        return [(611, VOCAB - 611), (0, 611)]
    return [(1000, 0), (1000, VOCAB - 1000), (0, 1000)]


def _bits(t):
    """A floating tensor's bits, so that NaN compares equal to itself."""
    return t.contiguous().view(torch.int32 if t.dtype == torch.float32 else torch.int16)


def _filters(b):
    g = torch.Generator().manual_seed(7)
    return {
        "k": torch.randint(1, 1400, (b,), generator=g, dtype=torch.int32),
        "p": 0.5 + 0.5 * torch.rand(b, generator=g),
    }


def _worker(rank, ranks, init_file, dtype_name, device_type, errors):
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import qrita.distributed as qd
    import qrita.torch as qt

    backend = "nccl" if device_type == "cuda" else "gloo"
    dist.init_process_group(backend, init_method=f"file://{init_file}", rank=rank,
                            world_size=ranks)
    try:
        device = torch.device(device_type, 0) if device_type == "cuda" else torch.device("cpu")
        dtype = getattr(torch, dtype_name)
        whole = _rows(dtype).to(device)
        b = whole.shape[0]
        first, cols = _shards(ranks)[rank]
        shard = whole[:, first:first + cols].contiguous()
        f = _filters(b)
        cases = [
            dict(k=f["k"].to(device)),
            dict(p=f["p"].to(device)),
            dict(k=f["k"].to(device), p=f["p"].to(device), temperature=0.7),
            dict(k=1400, min_p=0.05),  # k beyond any shard
            dict(p=0.99, temperature=2.0),  # nuclei across every shard
        ]
        seeds = torch.arange(b, dtype=torch.int64, device=device) * 977 + 5
        offsets = torch.full((b,), 3, dtype=torch.int64, device=device)
        ws = qd.Workspace(first, cols, VOCAB, b, 16)
        for case in cases:
            expect = qt.top_k_top_p_mask_(whole.clone(), **case)[:, first:first + cols]
            for w in (None, ws):
                got = qd.top_k_top_p_mask_(shard.clone(), first, VOCAB, workspace=w, **case)
                assert torch.equal(_bits(got), _bits(expect)), f"mask differs on rank {rank}: {case}"
            tokens = qt.sample(whole, seeds=seeds, offsets=offsets, **case)
            for w in (None, ws):
                got = qd.sample(shard, first, VOCAB, seeds=seeds, offsets=offsets, workspace=w,
                                **case)
                assert torch.equal(got, tokens), f"tokens differ on rank {rank}: {case}"
            lists = qt.candidates(whole, 16, **case)
            for w in (None, ws):
                got = qd.candidates(shard, first, VOCAB, 16, workspace=w, **case)
                for a, e in zip(got, lists):
                    assert torch.equal(a, e), f"lists differ on rank {rank}: {case}"
        if ranks > 1:
            # Arguments that differ across the ranks raise on every rank.
            p = torch.full((b,), 0.9 if rank == 0 else 0.8, device=device)
            try:
                qd.top_k_top_p_mask_(shard.clone(), first, VOCAB, p=p)
                raise AssertionError("differing p did not raise")
            except ValueError as e:
                assert "differs across the ranks" in str(e), str(e)
            # An argument wrong on one rank: that rank raises its own error,
            # the others a ValueError that names the rank.
            k = "ten" if rank == ranks - 1 else 10
            try:
                qd.sample(shard, first, VOCAB, k=k, seeds=seeds, offsets=offsets)
                raise AssertionError("a wrong k on one rank did not raise")
            except TypeError as e:
                assert rank == ranks - 1 and "'k'" in str(e), str(e)
            except ValueError as e:
                assert rank != ranks - 1 and f"rank {ranks - 1}" in str(e), str(e)
            # The calls still agree afterwards.
            got = qd.sample(shard, first, VOCAB, k=10, seeds=seeds, offsets=offsets)
            assert torch.equal(got, qt.sample(whole, k=10, seeds=seeds, offsets=offsets))
    except BaseException as e:  # reported by the parent
        errors.put(f"rank {rank}: {type(e).__name__}: {e}")
        raise
    finally:
        dist.destroy_process_group()


@pytest.mark.parametrize("ranks", [1, 2, 3])
@pytest.mark.parametrize("dtype_name", ["float32", "bfloat16"])
def test_sharded_calls_equal_the_whole_row_calls(ranks, dtype_name, monkeypatch):
    device_type = qrita.device
    if device_type == "cuda" and ranks > torch.cuda.device_count():
        pytest.skip(f"NCCL needs a GPU per rank; {torch.cuda.device_count()} here")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    ctx = mp.get_context("spawn")
    errors = ctx.SimpleQueue()
    with tempfile.TemporaryDirectory() as d:
        try:
            mp.start_processes(_worker, args=(ranks, os.path.join(d, "init"), dtype_name,
                                              device_type, errors),
                               nprocs=ranks, join=True, start_method="spawn")
        except Exception:
            found = []
            while not errors.empty():
                found.append(errors.get())
            pytest.fail("\n".join(found) or "a rank failed")
