# SPDX-License-Identifier: Apache-2.0
"""Stand-ins for the few vLLM helpers that vLLM's top-k/top-p Triton kernel
file imports, so that the file runs with only torch and triton (no vllm).

scripts/fetch-peers.sh copies this next to the extracted vLLM files in
.peers/vllm_ops/ and points their `from vllm... import` lines here. Only the
runtime paths are reproduced: the dispatch decorator launches the kernel the
way vLLM's does (dispatch function -> grid and launch keywords; its own
arguments bound to the kernel's by name: x, x_ptr, X, X_PTR; X_STRIDE_<d>
filled from the bound tensor's strides); vLLM's ahead-of-time warm-up
machinery is not needed and not reproduced.
"""

import contextlib
import functools
import inspect

import torch


class _Platform:
    def is_cuda_alike(self):
        return torch.cuda.is_available()

    def is_cuda(self):
        return torch.cuda.is_available() and torch.version.hip is None

    def is_rocm(self):
        return torch.version.hip is not None


current_platform = _Platform()


def gpu_sync_allowed():
    return contextlib.nullcontext()


def next_power_of_2(n):
    return 1 if n < 1 else 1 << (int(n) - 1).bit_length()


@functools.lru_cache(maxsize=None)
def num_compute_units(device_index=None):
    index = torch.cuda.current_device() if device_index is None else device_index
    return torch.cuda.get_device_properties(index).multi_processor_count


# Warm-up descriptions: only evaluated by vLLM's warm-up, never here.
class WarmupChoices(tuple):
    def __new__(cls, *choices):
        return super().__new__(cls, choices)


class WarmupIntRange:
    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi


def _when(condition):
    return condition


class TritonWarmupTensor:
    def __init__(self, dtype, *args, **kwargs):
        self.dtype = dtype


DispatchSpec = tuple


def _bind(kernel_args, dispatch_names, values, launch):
    """vLLM's _launch_binding_plan: dispatch arguments onto kernel arguments."""
    arg_set = set(kernel_args)
    kwargs = dict(launch)
    for name, value in zip(dispatch_names, values):
        for cand in (name, f"{name}_ptr", name.upper(), f"{name}_ptr".upper()):
            if cand in arg_set:
                if cand not in launch:
                    kwargs[cand] = value
                break
    for target in kernel_args:
        if target in kwargs:
            continue
        for sep in ("_stride", "_STRIDE"):
            base, found, dim = target.rpartition(sep)
            if not found:
                continue
            dim = dim.removeprefix("_")
            if dim and not dim.isdigit():
                continue
            source = base if base in kwargs else (f"{base}_PTR" if sep == "_STRIDE" else f"{base}_ptr")
            if source in kwargs:
                kwargs[target] = kwargs[source].stride(int(dim or 0))
            break
    return kwargs


class _Dispatcher:
    def __init__(self, kernel, dispatch):
        self.kernel = kernel
        self.dispatch = dispatch
        sig = inspect.signature(dispatch)
        self.names = tuple(sig.parameters)
        self.defaults = {n: p.default for n, p in sig.parameters.items()
                         if p.default is not inspect.Parameter.empty}
        functools.update_wrapper(self, dispatch, updated=())

    def __call__(self, *args, **kwargs):
        spec = self.dispatch(*args, **kwargs)
        grid, launch = spec[0], spec[1]
        values = tuple(args) + tuple(kwargs[n] if n in kwargs else self.defaults[n]
                                     for n in self.names[len(args):])
        bound = _bind(tuple(self.kernel.arg_names), self.names, values, launch)
        self.kernel[grid](**bound)
        return spec[2] if len(spec) == 3 else None

    def __getitem__(self, grid):
        return self.kernel[grid]


def triton_kernel_dispatcher_with_warmup(*, warmup_inputs, kernel=None):
    def decorate(dispatch):
        if kernel is None:
            return dispatch  # a bare kernel: call it as kernel[grid](...)
        return _Dispatcher(kernel, dispatch)
    return decorate
