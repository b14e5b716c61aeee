# SPDX-License-Identifier: Apache-2.0
"""Rows users feed a sampler: random (vLLM's tests use randn and rand),
ordered vocabularies (low ids run hot), 16-bit ties, and the awkward rows of
docs/SEMANTICS.md (ties across the boundary, -inf, NaN, +inf, flat)."""

import numpy as np


def awkward_rows(rng, vocab):
    rows = {
        "randn": rng.standard_normal(vocab),
        "rand": rng.random(vocab),
        "ordered": -np.log1p(np.arange(vocab)) * 2 + 0.3 * rng.standard_normal(vocab),
        "wide": rng.standard_normal(vocab) * 0.05,  # a nucleus of most of the row
        "peaked": np.concatenate([[12.0], rng.standard_normal(vocab - 1)]),
        "ties": np.round(rng.standard_normal(vocab) * 2) / 2,
        "flat": np.full(vocab, 0.25),
        "neg_inf": np.where(rng.random(vocab) < 0.9, -np.inf, rng.standard_normal(vocab)),
        "nan": np.where(rng.random(vocab) < 0.1, np.nan, rng.standard_normal(vocab)),
        "pos_inf": np.where(rng.random(vocab) < 0.01, np.inf, rng.standard_normal(vocab)),
        "all_neg_inf": np.full(vocab, -np.inf),
    }
    return {name: r.astype(np.float32) for name, r in rows.items()}
