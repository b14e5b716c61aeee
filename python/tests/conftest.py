# SPDX-License-Identifier: Apache-2.0
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))

import qrita  # noqa: E402


@pytest.fixture
def device():
    """The device of this build ("cpu" or "cuda")."""
    return qrita.device


@pytest.fixture
def rng():
    return np.random.default_rng(20261205)
