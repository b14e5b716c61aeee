# SPDX-License-Identifier: Apache-2.0
"""The definition (docs/SEMANTICS.md), in NumPy float64, with its tolerance
rules: what a row may keep, and the exact probabilities of the kept set."""

import math

import numpy as np


def order(values):
    """The row's order: descending value, ties by lower index; NaN as -inf."""
    v = np.asarray(values, dtype=np.float64).copy()
    v[np.isnan(v)] = -np.inf
    return np.lexsort((np.arange(v.size), -v)), v


def _weights(v_sorted, T):
    """exp((x - M) / T) over candidates in order (T > 0); +inf rules."""
    M = v_sorted[0]
    if M == np.inf:
        return (v_sorted == np.inf).astype(np.float64)
    if T == np.inf:
        return np.ones_like(v_sorted)
    return np.exp((v_sorted - M) / T)


def allowed(values, k=None, p=None, T=None, m=None):
    """(idx, lo, hi, active): the order ``idx`` of the row's candidates and
    the range of kept counts the definition allows (a kept set must be
    idx[:n] with lo <= n <= hi). active: False when the mask leaves the row
    unwritten (no active filter, or no candidate)."""
    idx, v = order(values)
    cand = idx[v[idx] > -np.inf]
    n = cand.size
    V = len(v)
    T = 1.0 if T is None else float(T)
    greedy = math.isnan(T) or T <= 0
    k_on = k is not None and 0 < int(k) < V
    p_on = p is not None and not math.isnan(p) and p < 1
    m_on = m is not None and not math.isnan(m) and m > 0
    if n == 0:
        return cand, 0, 0, False
    if greedy:
        return cand, 1, 1, True
    if not (k_on or p_on or m_on):
        return cand, n, n, False
    vs = v[cand]
    lo = hi = n
    if m_on:
        M = vs[0]
        if M == np.inf:
            c = np.inf
        elif m >= 1:
            c = M
        elif T == np.inf:
            c = -np.inf
        else:
            c = float(np.float64(M) + np.float64(T) * math.log(float(np.float32(m))))
        lo = hi = int(np.sum(vs >= c))
    if k_on:
        lo = hi = min(hi, int(k))
    if p_on:
        if p <= 0:
            return cand, 1, 1, True
        w = _weights(vs[:hi], T)
        cum = np.cumsum(w) / w.sum()
        ok = [j + 1 for j in range(hi)
              if cum[j] >= p - 1e-6 and (j == 0 or cum[j - 1] < p + 1e-6)]
        lo, hi = min(ok), max(ok)
    return cand, lo, hi, True


def check_mask(before, after, k=None, p=None, T=None, m=None):
    """Asserts that ``after`` is a mask of ``before`` the definition allows
    (both 1-D float arrays of the same type); returns the kept count."""
    b = np.asarray(before)
    a = np.asarray(after)
    cand, lo, hi, active = allowed(b.astype(np.float64), k, p, T, m)
    bits_b = b.view(np.uint16 if b.itemsize == 2 else np.uint32)
    bits_a = a.view(np.uint16 if a.itemsize == 2 else np.uint32)
    if not active:
        assert np.array_equal(bits_a, bits_b), "a row without an active filter was written"
        return cand.size
    kept = np.flatnonzero(~np.isneginf(a.astype(np.float64)))
    n = kept.size
    assert lo <= n <= hi, f"kept {n} entries; the definition allows {lo}..{hi}"
    assert set(kept.tolist()) == set(cand[:n].tolist()), "the kept set is not a prefix of the order"
    assert np.array_equal(bits_a[kept], bits_b[kept]), "a kept entry changed"
    return n


def probabilities(values, n, T=None):
    """The exact probabilities and log-probabilities of the first n
    candidates of the order (the kept set), in order."""
    idx, v = order(np.asarray(values, dtype=np.float64))
    T = 1.0 if T is None or math.isnan(T) or T <= 0 else float(T)
    vs = v[idx[:n]]
    if n == 0:
        return idx[:0], np.zeros(0), np.zeros(0)
    w = _weights(vs, T)
    prob = w / w.sum()
    if vs[0] == np.inf:
        logp = np.where(vs == np.inf, -math.log(np.sum(vs == np.inf)), -np.inf)
    elif T == np.inf:
        logp = np.full(n, -math.log(n))
    else:
        logp = (vs - vs[0]) / T - math.log(w.sum())
    return idx[:n], prob, logp
