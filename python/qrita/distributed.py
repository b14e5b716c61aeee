# SPDX-License-Identifier: Apache-2.0
"""qrita's calls on logits whose vocabulary is split across the ranks of a
torch.distributed process group, without gathering the vocabulary.

Tensor parallelism leaves each rank one shard of the LM head's output,
``[batch][columns]``, columns ``[first_column, first_column + columns)``
of rows of ``vocab`` columns. Every rank calls with its own shard and the
same filters, seeds and offsets:

    import qrita.distributed as qd
    qd.top_k_top_p_mask_(shard, first_column, vocab, k, p)   # its own shard
    tokens = qd.sample(shard, first_column, vocab, p=p, seeds=s, offsets=o)
    ids, probs, logprobs, counts = qd.candidates(shard, first_column, vocab, 20, p=p)

The answers equal qrita.torch's on the concatenated rows, bit for bit: the
mask of each rank's shard, the same tokens (columns of the whole row) and
the same lists on every rank. Shards may be uneven or empty, in any order
of the ranks, as long as they tile ``[0, vocab)``. What crosses the wire per
row is a few histograms and the list, never the row (docs/SHARDED.md gives
the bytes of each call).

The group (``group``; None: the default group) is the caller's: an NCCL
group for CUDA tensors (the collectives run on the current stream; no host
synchronisation with ``check_agreement=False`` and a ``Workspace``, so a
step can be captured in a CUDA graph), a Gloo group for CPU tensors. With
``check_agreement`` (the default), each call first exchanges a record of
its arguments, so that arguments that are wrong on one rank, or differ
across the ranks, raise on every rank instead of hanging the others: the
rank at fault raises its own TypeError or ValueError, the others a
ValueError naming it. These calls are eager functions, not custom ops.
"""

import ctypes
from typing import Optional

import torch
import torch.distributed as dist
from torch import Tensor

from . import _qrita
from .torch import _checked_filters, _default_device, _desc, _opt, _seeds, _stream

__all__ = ["Workspace", "top_k_top_p_mask_", "sample", "candidates"]

_SIGN = -(2**63)  # flips the sign bit: unsigned order as signed order


class _DeviceWords:
    """n int64 words at a CUDA address, for torch.as_tensor without a copy."""

    def __init__(self, address, n):
        self.__cuda_array_interface__ = {
            "shape": (n,), "typestr": "<i8", "data": (address, False), "version": 3,
        }


class _Collectives:
    """The collectives qrita's sharded calls make, on a torch.distributed
    group: on buffers of uint64 words the extension names by address."""

    def __init__(self, group, device):
        if not dist.is_available() or not dist.is_initialized():
            raise RuntimeError("qrita.distributed: torch.distributed is not initialized "
                               "(call torch.distributed.init_process_group first)")
        self.group = group
        self.device = device
        self.rank = dist.get_rank(group)
        self.size = dist.get_world_size(group)
        if self.rank < 0:
            raise ValueError("argument 'group': this process is not a member of it")
        self._into_tensor = dist.get_backend(group) == "nccl"

    def _words(self, address, n):
        if self.device.type == "cuda":
            return torch.as_tensor(_DeviceWords(address, n), device=self.device)
        return torch.frombuffer((ctypes.c_int64 * n).from_address(address), dtype=torch.int64)

    # uint64 words travel as int64: a sum wraps the same way; a maximum
    # compares them with the sign bit flipped.
    def allreduce_sum(self, address, n):
        if n:
            dist.all_reduce(self._words(address, n), op=dist.ReduceOp.SUM, group=self.group)

    def allreduce_max(self, address, n):
        if n:
            t = self._words(address, n)
            t.bitwise_xor_(_SIGN)
            dist.all_reduce(t, op=dist.ReduceOp.MAX, group=self.group)
            t.bitwise_xor_(_SIGN)

    def allgather(self, send, recv, n):
        if n:
            s = self._words(send, n)
            r = self._words(recv, n * self.size)
            if self._into_tensor:
                dist.all_gather_into_tensor(r, s, group=self.group)
            else:
                dist.all_gather(list(r.view(self.size, n).unbind(0)), s, group=self.group)


def _device_of(logits):
    """The device of the collectives' buffers: this build's, the logits'
    where they are on it."""
    device = _default_device()
    if isinstance(logits, Tensor) and logits.device.type == device.type:
        device = logits.device
    return device


def _stream_of(device):
    """The current stream's handle on `device` (0 on the host)."""
    return torch.cuda.current_stream(device).cuda_stream if device.type == "cuda" else 0


def _collectives(group, logits):
    return _Collectives(dist.group.WORLD if group is None else group, _device_of(logits))


def _int(value, name):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"argument '{name}' must be an int, got {type(value).__name__}")
    return value


def _checked(comm, check_agreement, device, checks):
    """Runs the local checks; where one fails and the ranks check their
    agreement, this rank takes part in the exchange of argument records as
    a failed rank, so that the others raise too, then raises its error."""
    try:
        return checks()
    except Exception:
        if check_agreement:
            _qrita.sharded_announce_failure(comm, device.index or 0, _stream_of(device))
        raise


class Workspace:
    """The buffers of sharded calls on at most ``max_batch`` rows of this
    rank's shard (columns ``[first_column, first_column + columns)`` of
    ``vocab``) with lists of at most ``list_capacity`` entries. Making one
    is collective (every rank of the group makes its own) and synchronises;
    a call with it allocates nothing."""

    def __init__(self, first_column: int, columns: int, vocab: int, max_batch: int,
                 list_capacity: int = 0, *, group=None):
        device = _default_device()
        comm = _Collectives(dist.group.WORLD if group is None else group, device)

        def checks():
            return tuple(_int(v, n) for v, n in ((first_column, "first_column"),
                                                 (columns, "columns"), (vocab, "vocab"),
                                                 (max_batch, "max_batch"),
                                                 (list_capacity, "list_capacity")))

        args = _checked(comm, True, device, checks)
        self.device = device
        self._impl = _qrita.sharded_workspace(comm, *args, device.index or 0, _stream_of(device))

    first_column = property(lambda self: self._impl.first_column)
    columns = property(lambda self: self._impl.columns)
    vocab = property(lambda self: self._impl.vocab)
    max_batch = property(lambda self: self._impl.max_batch)
    list_capacity = property(lambda self: self._impl.list_capacity)
    ranks = property(lambda self: self._impl.ranks)

    def __repr__(self):
        return (f"qrita.distributed.Workspace(first_column={self.first_column}, "
                f"columns={self.columns}, vocab={self.vocab}, max_batch={self.max_batch}, "
                f"list_capacity={self.list_capacity}, ranks={self.ranks})")


def _workspace(workspace):
    if workspace is None:
        return None
    if not isinstance(workspace, Workspace):
        raise TypeError(f"argument 'workspace' must be a qrita.distributed.Workspace or None, "
                        f"got {type(workspace).__name__}")
    return workspace._impl


def top_k_top_p_mask_(logits: Tensor, first_column: int, vocab: int, k=None, p=None, *,
                      temperature=None, min_p=None, group=None,
                      workspace: Optional[Workspace] = None,
                      check_agreement: bool = True) -> Tensor:
    """Masks this rank's shard ``logits`` in place as qrita.torch's mask
    masks those columns of the whole rows, and returns it."""
    comm = _collectives(group, logits)

    def checks():
        return (_checked_filters(logits, k, p, temperature, min_p), _int(first_column,
                "first_column"), _int(vocab, "vocab"), _workspace(workspace))

    (kt, pt, mt, tt), first, v, ws = _checked(comm, check_agreement, _device_of(logits), checks)
    _qrita.sharded_mask_(_desc(logits), _opt(kt), _opt(pt), _opt(mt), _opt(tt), first, v, comm,
                         ws, bool(check_agreement), _stream(logits))
    return logits


def sample(logits: Tensor, first_column: int, vocab: int, *, k=None, p=None, temperature=None,
           min_p=None, seeds, offsets, group=None, workspace: Optional[Workspace] = None,
           check_agreement: bool = True) -> Tensor:
    """One token per row, the same on every rank: int32 columns of the
    whole row (-1 for a row without a candidate), as qrita.torch.sample
    draws on the whole rows. ``logits`` are not written."""
    comm = _collectives(group, logits)

    def checks():
        f = _checked_filters(logits, k, p, temperature, min_p)
        return (f, _seeds(seeds, "seeds", logits), _seeds(offsets, "offsets", logits),
                _int(first_column, "first_column"), _int(vocab, "vocab"), _workspace(workspace))

    (kt, pt, mt, tt), s, o, first, v, ws = _checked(comm, check_agreement, _device_of(logits),
                                                    checks)
    tokens = torch.empty(logits.shape[0], dtype=torch.int32, device=logits.device)
    _qrita.sharded_sample(_desc(logits), _opt(kt), _opt(pt), _opt(mt), _opt(tt), _desc(s),
                          _desc(o), _desc(tokens), first, v, comm, ws, bool(check_agreement),
                          _stream(logits))
    return tokens


def candidates(logits: Tensor, first_column: int, vocab: int, C: int, *, k=None, p=None,
               temperature=None, min_p=None, group=None, workspace: Optional[Workspace] = None,
               check_agreement: bool = True):
    """Each row's first ``C`` kept entries of the whole row, the same on
    every rank: ``(ids, probs, logprobs, counts)`` as qrita.torch.candidates
    lists them (ids are columns of the whole row). ``logits`` are not
    written."""
    comm = _collectives(group, logits)

    def checks():
        f = _checked_filters(logits, k, p, temperature, min_p)
        c = _int(C, "C")
        if c < 0:
            raise ValueError(f"argument 'C' must be >= 0, got {c}")
        return f, c, _int(first_column, "first_column"), _int(vocab, "vocab"), _workspace(workspace)

    (kt, pt, mt, tt), c, first, v, ws = _checked(comm, check_agreement, _device_of(logits),
                                                 checks)
    b = logits.shape[0]
    ids = torch.empty((b, c), dtype=torch.int32, device=logits.device)
    probs = torch.empty((b, c), dtype=torch.float32, device=logits.device)
    logprobs = torch.empty((b, c), dtype=torch.float32, device=logits.device)
    counts = torch.empty(b, dtype=torch.int32, device=logits.device)
    _qrita.sharded_candidates(_desc(logits), _opt(kt), _opt(pt), _opt(mt), _opt(tt), _desc(ids),
                              _desc(probs), _desc(logprobs), _desc(counts), first, v, comm, ws,
                              bool(check_agreement), _stream(logits))
    return ids, probs, logprobs, counts
