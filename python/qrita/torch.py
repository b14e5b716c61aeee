# SPDX-License-Identifier: Apache-2.0
"""qrita on PyTorch tensors, as custom ops.

    import qrita.torch as qt
    qt.top_k_top_p_mask_(logits, k, p)                  # in place
    tokens = qt.sample(logits, k=k, p=p, seeds=s, offsets=o)
    ids, probs, logprobs, counts = qt.candidates(logits, 20, p=p)

Logits: float32, bfloat16 or float16, [batch][vocab], contiguous columns
(any row stride), on the device of this build (``qrita.device``). Per-row
parameters are tensors of one entry per row on the same device, or None
(the filter is off); Python numbers are broadcast to every row. ``k`` may
be any integer type (values beyond int32 are clamped, which keeps their
meaning: off), ``p``, ``temperature``, ``min_p`` any floating type (used as
float32). ``seeds`` and ``offsets`` are int64 (or uint64) tensors.

Calls run on the current CUDA stream of the logits' device and neither
allocate device memory of their own nor synchronise the host: outputs come
from torch's allocator, and the scratch memory is a ``Workspace`` the caller
makes once (None works too: the same answers, using on-chip memory only,
which is slower on rows whose boundary set is large). So a decoding step can
be captured in a CUDA graph and replayed with new logits, seeds and offsets.

Each call is a torch.library custom op (``torch.ops.qrita.*``) with a fake
implementation, so ``torch.compile(fullgraph=True)`` traces through it.
Called eagerly on plain tensors, the public functions skip the dispatcher and
call the extension directly (the op's own body, the same result): the
custom-op machinery costs more host time than the rest of a call. Anything
that must see the op (torch.compile's tracing, a dispatch mode such as
FakeTensor or make_fx, tensor subclasses, autograd on the logits) gets it.
"""

from typing import Optional, Tuple

import torch
from torch import Tensor

from . import _qrita
from ._arrays import torch_desc as _desc

__all__ = ["Workspace", "top_k_top_p_mask_", "sample", "candidates"]

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
# Read once: torch.compile traces the checks below, but not into the extension.
_DEVICE_TYPE = _qrita.device_type()
_BACKEND = _qrita.backend()


def _default_device():
    if _DEVICE_TYPE == 1:
        return torch.device("cpu")
    return torch.device("cuda", torch.cuda.current_device())


class Workspace:
    """Scratch memory for calls on at most ``max_batch`` x ``vocab`` logits
    on ``device`` (default: this build's device, the current CUDA device):
    a zero-filled uint8 tensor (``.tensor``) from torch's allocator, made
    once and reused by every call; the calls leave it zero-filled. Use one
    workspace per stream: calls that share one must not run at once."""

    def __init__(self, max_batch: int, vocab: int, device=None):
        device = _default_device() if device is None else torch.device(device)
        if device.type == "cuda" and device.index is None:
            device = torch.device("cuda", torch.cuda.current_device())
        self.max_batch = int(max_batch)
        self.vocab = int(vocab)
        self.nbytes = _qrita.workspace_bytes(self.max_batch, self.vocab, device.index or 0)
        self.tensor = torch.zeros(self.nbytes, dtype=torch.uint8, device=device)

    def __repr__(self):
        return (f"qrita.torch.Workspace(max_batch={self.max_batch}, vocab={self.vocab}, "
                f"device='{self.tensor.device}', bytes={self.nbytes})")


def _opt(t):
    return None if t is None else _desc(t)


# The current stream's handle without making a torch.cuda.Stream object
# (Inductor's generated code reads it the same way).
_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def _stream(t: Tensor) -> int:
    if t.device.type != "cuda":
        return 0
    if _raw_stream is not None:
        return _raw_stream(t.device.index)
    return torch.cuda.current_stream(t.device).cuda_stream


# The depth of the dispatch-mode stack (FakeTensor, functionalization,
# make_fx's proxy mode, ...); where torch does not say, every call takes the op.
_dispatch_modes = getattr(torch._C, "_len_torch_dispatch_stack", None)


def _direct(logits: Tensor, *tensors) -> bool:
    """Whether an eager call may skip the dispatcher: nothing is tracing,
    no dispatch mode is on, every tensor is a plain one, and autograd has
    nothing to record on the logits."""
    if _dispatch_modes is None or torch.compiler.is_compiling() or _dispatch_modes() != 0:
        return False
    if type(logits) is not Tensor or (logits.requires_grad and torch.is_grad_enabled()):
        return False
    return all(t is None or type(t) is Tensor for t in tensors)


# --- the ops' bodies: tensors in, the extension called ------------------------


def _run_mask(logits, k, p, min_p, temperature, workspace):
    _qrita.mask_(_desc(logits), _opt(k), _opt(p), _opt(min_p), _opt(temperature),
                 _opt(workspace), _stream(logits))


def _run_sample(logits, k, p, min_p, temperature, seeds, offsets, tokens, workspace):
    _qrita.sample(_desc(logits), _opt(k), _opt(p), _opt(min_p), _opt(temperature),
                  _desc(seeds), _desc(offsets), _desc(tokens), _opt(workspace), _stream(logits))


def _run_candidates(logits, C, k, p, min_p, temperature, workspace):
    b = logits.shape[0]
    ids = torch.empty((b, C), dtype=torch.int32, device=logits.device)
    probs = torch.empty((b, C), dtype=torch.float32, device=logits.device)
    logprobs = torch.empty((b, C), dtype=torch.float32, device=logits.device)
    counts = torch.empty(b, dtype=torch.int32, device=logits.device)
    _qrita.candidates(_desc(logits), _opt(k), _opt(p), _opt(min_p), _opt(temperature),
                      _desc(ids), _desc(probs), _desc(logprobs), _desc(counts),
                      _opt(workspace), _stream(logits))
    return ids, probs, logprobs, counts


# --- the custom ops: tensors in, no conversions -----------------------------


@torch.library.custom_op("qrita::top_k_top_p_mask_", mutates_args=("logits", "workspace"))
def _mask_op(logits: Tensor, k: Optional[Tensor], p: Optional[Tensor], min_p: Optional[Tensor],
             temperature: Optional[Tensor], workspace: Optional[Tensor]) -> None:
    _run_mask(logits, k, p, min_p, temperature, workspace)


@_mask_op.register_fake
def _(logits, k, p, min_p, temperature, workspace):
    return None


# The draw writes into a tokens tensor the caller allocates (an out-variant:
# Inductor lowers a single-tensor result next to a mutated optional
# workspace badly in torch 2.11).
@torch.library.custom_op("qrita::sample", mutates_args=("tokens", "workspace"))
def _sample_op(logits: Tensor, k: Optional[Tensor], p: Optional[Tensor],
               min_p: Optional[Tensor], temperature: Optional[Tensor], seeds: Tensor,
               offsets: Tensor, tokens: Tensor, workspace: Optional[Tensor]) -> None:
    _run_sample(logits, k, p, min_p, temperature, seeds, offsets, tokens, workspace)


@_sample_op.register_fake
def _(logits, k, p, min_p, temperature, seeds, offsets, tokens, workspace):
    return None


@torch.library.custom_op("qrita::candidates", mutates_args=("workspace",))
def _candidates_op(logits: Tensor, C: int, k: Optional[Tensor], p: Optional[Tensor],
                   min_p: Optional[Tensor], temperature: Optional[Tensor],
                   workspace: Optional[Tensor]) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    return _run_candidates(logits, C, k, p, min_p, temperature, workspace)


@_candidates_op.register_fake
def _(logits, C, k, p, min_p, temperature, workspace):
    b = logits.shape[0]
    return (logits.new_empty((b, C), dtype=torch.int32),
            logits.new_empty((b, C), dtype=torch.float32),
            logits.new_empty((b, C), dtype=torch.float32),
            logits.new_empty(b, dtype=torch.int32))


# --- the public functions: argument checks and conversions, then the op -------


def _check_logits(logits):
    if not isinstance(logits, Tensor):
        raise TypeError(f"argument 'logits' must be a torch.Tensor, got {type(logits).__name__}")
    if logits.dtype not in (torch.float32, torch.bfloat16, torch.float16):
        raise TypeError(f"argument 'logits' must hold float32, bfloat16 or float16, got "
                        f"{logits.dtype}")
    if logits.dim() != 2:
        raise ValueError(f"argument 'logits' must have 2 dimensions [batch][vocab], got "
                         f"{logits.dim()}")
    if logits.shape[1] > 1 and logits.stride(1) != 1:
        raise ValueError(f"argument 'logits' must have contiguous columns (column stride 1), "
                         f"got {logits.stride(1)}")
    if (logits.device.type == "cpu") != (_DEVICE_TYPE == 1):
        raise ValueError(f"argument 'logits' is on {logits.device}; this build of qrita "
                         f"computes on the {'cpu' if _DEVICE_TYPE == 1 else 'cuda'} device "
                         f"(backend {_BACKEND})")


def _check_column(value, name, logits):
    """A tensor of one entry per row, on the logits' device."""
    if value.device != logits.device:
        raise ValueError(f"argument '{name}' is on {value.device}; 'logits' is on "
                         f"{logits.device}")
    if value.dim() != 1 or value.shape[0] != logits.shape[0]:
        raise ValueError(f"argument '{name}' must have one entry per row of 'logits' "
                         f"({logits.shape[0]}), got shape {tuple(value.shape)}")


def _row_param(value, name, logits, kind):
    """A per-row parameter as the op takes it: None, or a rank-1 tensor of
    one entry per row on the logits' device, int32 (kind 'int') or float32."""
    if value is None:
        return None
    rows = logits.shape[0]
    dtype = torch.int32 if kind == "int" else torch.float32
    if isinstance(value, bool) or not isinstance(value, (int, float, Tensor)):
        raise TypeError(f"argument '{name}' must be a tensor, a number or None, got "
                        f"{type(value).__name__}")
    if not isinstance(value, Tensor):
        if kind == "int":
            if not isinstance(value, int):
                raise TypeError(f"argument '{name}' must be an integer, got {value!r}")
            value = max(_INT32_MIN, min(_INT32_MAX, value))
        return torch.full((rows,), value, dtype=dtype, device=logits.device)
    _check_column(value, name, logits)
    if kind == "int":
        if value.dtype.is_floating_point or value.dtype.is_complex or value.dtype == torch.bool:
            raise TypeError(f"argument '{name}' must hold integers, got {value.dtype}")
        if value.dtype != torch.int32:
            value = value.clamp(_INT32_MIN, _INT32_MAX).to(torch.int32)
    else:
        if not value.dtype.is_floating_point:
            raise TypeError(f"argument '{name}' must hold floating-point values, got "
                            f"{value.dtype}")
        if value.dtype != torch.float32:
            value = value.to(torch.float32)
    return value


def _seeds(value, name, logits):
    rows = logits.shape[0]
    if isinstance(value, bool) or not isinstance(value, (int, Tensor)):
        raise TypeError(f"argument '{name}' must be an int64 tensor or an integer, got "
                        f"{type(value).__name__}")
    if isinstance(value, int):
        return torch.full((rows,), value, dtype=torch.int64, device=logits.device)
    _check_column(value, name, logits)
    if value.dtype not in (torch.int64, getattr(torch, "uint64", torch.int64)):
        if value.dtype.is_floating_point or value.dtype.is_complex or value.dtype == torch.bool:
            raise TypeError(f"argument '{name}' must hold 64-bit integers, got {value.dtype}")
        value = value.to(torch.int64)
    return value


def _workspace(workspace, logits):
    if workspace is None:
        return None
    if not isinstance(workspace, Workspace):
        raise TypeError(f"argument 'workspace' must be a qrita.torch.Workspace or None, got "
                        f"{type(workspace).__name__}")
    t = workspace.tensor
    if t.device != logits.device:
        raise ValueError(f"argument 'workspace' is on {t.device}; 'logits' is on "
                         f"{logits.device}")
    b, v = logits.shape
    if b > workspace.max_batch or v > workspace.vocab:
        raise ValueError(f"argument 'workspace' was made for at most {workspace.max_batch} x "
                         f"{workspace.vocab} logits; these are {b} x {v}")
    return t


def _checked_filters(logits, k, p, temperature, min_p):
    """The logits checked, and the filters as the ops take them."""
    _check_logits(logits)
    return (_row_param(k, "k", logits, "int"), _row_param(p, "p", logits, "float"),
            _row_param(min_p, "min_p", logits, "float"),
            _row_param(temperature, "temperature", logits, "float"))


def top_k_top_p_mask_(logits: Tensor, k=None, p=None, *, temperature=None, min_p=None,
                      workspace: Optional[Workspace] = None) -> Tensor:
    """Top-k, top-p and min-p (with temperature), in vLLM's order, on every
    row of ``logits`` in place: kept entries keep their bits, the others
    become -inf. Returns ``logits``."""
    kt, pt, mt, tt = _checked_filters(logits, k, p, temperature, min_p)
    wt = _workspace(workspace, logits)
    if _direct(logits, kt, pt, mt, tt, wt):
        _run_mask(logits, kt, pt, mt, tt, wt)
        # What the op's declared mutation does: autograd sees a new version.
        torch.autograd.graph.increment_version(logits)
    else:
        torch.ops.qrita.top_k_top_p_mask_(logits, kt, pt, mt, tt, wt)
    return logits


def sample(logits: Tensor, *, k=None, p=None, temperature=None, min_p=None, seeds,
           offsets, workspace: Optional[Workspace] = None) -> Tensor:
    """One token per row, drawn exactly from the filtered distribution with
    Philox keyed by (seed, offset): int32 ids, -1 for a row without a
    candidate. ``logits`` are not written."""
    kt, pt, mt, tt = _checked_filters(logits, k, p, temperature, min_p)
    s = _seeds(seeds, "seeds", logits)
    o = _seeds(offsets, "offsets", logits)
    tokens = torch.empty(logits.shape[0], dtype=torch.int32, device=logits.device)
    wt = _workspace(workspace, logits)
    if _direct(logits, kt, pt, mt, tt, s, o, wt):
        _run_sample(logits, kt, pt, mt, tt, s, o, tokens, wt)
    else:
        torch.ops.qrita.sample(logits, kt, pt, mt, tt, s, o, tokens, wt)
    return tokens


def candidates(logits: Tensor, C: int, *, k=None, p=None, temperature=None, min_p=None,
               workspace: Optional[Workspace] = None):
    """Each row's first ``C`` kept entries in descending order (ties by
    lower index): ``(ids, probs, logprobs, counts)``, ids int32 [batch][C]
    (-1 past the list), probabilities and log-probabilities float32 under
    the filtered distribution, counts int32 (the kept set's size, which may
    exceed C). ``logits`` are not written."""
    kt, pt, mt, tt = _checked_filters(logits, k, p, temperature, min_p)
    if isinstance(C, bool) or not isinstance(C, int):
        raise TypeError(f"argument 'C' must be an int, got {type(C).__name__}")
    if C < 0:
        raise ValueError(f"argument 'C' must be >= 0, got {C}")
    wt = _workspace(workspace, logits)
    if _direct(logits, kt, pt, mt, tt, wt):
        return _run_candidates(logits, C, kt, pt, mt, tt, wt)
    return torch.ops.qrita.candidates(logits, C, kt, pt, mt, tt, wt)
