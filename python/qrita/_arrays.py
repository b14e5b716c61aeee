# SPDX-License-Identifier: Apache-2.0
"""Array descriptions for the extension: (pointer, dtype, device type,
device index, ndim, shape0, shape1, stride0, stride1), strides in elements.

The torch layer describes tensors here in Python (a few attribute reads, no
DLPack capsule per call); any other array goes through DLPack
(``_qrita.describe``)."""

from . import _qrita

# The extension's type codes (python/src/arrays.hpp, DType).
FLOAT32, BFLOAT16, FLOAT16, INT32, INT64, UINT64, UINT8, FLOAT64, OTHER = 0, 1, 2, 3, 4, 5, 6, 7, 99

_TORCH_CODES = None


def _torch_codes():
    global _TORCH_CODES
    if _TORCH_CODES is None:
        import torch

        codes = {
            torch.float32: FLOAT32,
            torch.bfloat16: BFLOAT16,
            torch.float16: FLOAT16,
            torch.int32: INT32,
            torch.int64: INT64,
            torch.uint8: UINT8,
            torch.float64: FLOAT64,
        }
        if hasattr(torch, "uint64"):
            codes[torch.uint64] = UINT64
        _TORCH_CODES = codes
    return _TORCH_CODES


def _torch_device_type(device):
    if device.type == "cpu":
        return 1
    if device.type == "cuda":
        import torch

        return 10 if torch.version.hip else 2
    return 0


def torch_desc(t):
    """A torch tensor's description (no copy, no synchronisation)."""
    nd = t.dim()
    shape = t.shape
    stride = t.stride()
    return (
        t.data_ptr(),
        _torch_codes().get(t.dtype, OTHER),
        _torch_device_type(t.device),
        t.device.index or 0,
        nd,
        shape[0] if nd > 0 else 0,
        shape[1] if nd > 1 else 0,
        stride[0] if nd > 0 else 0,
        stride[1] if nd > 1 else 0,
    )


def dlpack_desc(a):
    """Any DLPack array's description (NumPy, CuPy, ...)."""
    return _qrita.describe(a)
