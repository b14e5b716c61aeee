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
_DEVICE_CODES = None


def _torch_tables():
    """torch's dtypes and device types as the extension's codes (made on the
    first call: this module does not import torch)."""
    global _TORCH_CODES, _DEVICE_CODES
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
    _DEVICE_CODES = {"cpu": 1, "cuda": 10 if torch.version.hip else 2}
    _TORCH_CODES = codes


def torch_desc(t):
    """A torch tensor's description (no copy, no synchronisation). Called a
    few times per call, so it reads each attribute once."""
    if _TORCH_CODES is None:
        _torch_tables()
    device = t.device
    shape = t.shape
    stride = t.stride()
    nd = len(stride)
    return (
        t.data_ptr(),
        _TORCH_CODES.get(t.dtype, OTHER),
        _DEVICE_CODES.get(device.type, 0),
        device.index or 0,
        nd,
        shape[0] if nd > 0 else 0,
        shape[1] if nd > 1 else 0,
        stride[0] if nd > 0 else 0,
        stride[1] if nd > 1 else 0,
    )


def dlpack_desc(a):
    """Any DLPack array's description (NumPy, CuPy, ...)."""
    return _qrita.describe(a)
