# SPDX-License-Identifier: Apache-2.0
"""The reference itself rejects wrong masks, so the other tests can fail."""

import numpy as np
import pytest

from reference import check_mask


def _masked(row, keep):
    out = np.full_like(row, -np.inf)
    out[keep] = row[keep]
    return out


def test_rejects_a_dropped_tie_and_a_wrong_tie_and_an_extra_entry():
    row = np.array([3.0, 1.0, 2.0, 2.0, 0.0], dtype=np.float32)
    check_mask(row, _masked(row, [0, 2]), k=2)  # the tie at 2.0 keeps the lower index
    with pytest.raises(AssertionError):
        check_mask(row, _masked(row, [0, 3]), k=2)  # the higher index of the tie
    with pytest.raises(AssertionError):
        check_mask(row, _masked(row, [0, 2, 3]), k=2)  # the whole tie group
    with pytest.raises(AssertionError):
        check_mask(row, _masked(row, [0]), k=2)  # one short


def test_rejects_a_wrong_nucleus_and_a_changed_value():
    row = np.log(np.array([0.5, 0.3, 0.15, 0.05], dtype=np.float32))
    check_mask(row, _masked(row, [0, 1]), p=0.8)  # 0.5 + 0.3 reaches 0.8
    with pytest.raises(AssertionError):
        check_mask(row, _masked(row, [0, 1, 2]), p=0.75)
    bad = _masked(row, [0, 1])
    bad[1] = np.nextafter(bad[1], np.float32(0))
    with pytest.raises(AssertionError):
        check_mask(row, bad, p=0.8)
    with pytest.raises(AssertionError):
        check_mask(row, row.copy(), p=0.8)  # nothing masked
