// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_DETAIL_HISTOGRAM_HPP
#define QRITA_DETAIL_HISTOGRAM_HPP

// The histogram the gathering read builds of the entries it does not gather
// (those at or below the threshold t), so that a truncation miss knows where
// its boundary lies without searching the row.
//
// Buckets are linear in value between the sample's smallest entry `lo` and
// t: bucket 0 holds the candidates below lo, buckets 1 .. NB-1 split
// [lo, t] evenly, and index NB stands for the gathered outliers above t.
// The map is monotone (a larger value never gets a smaller index; equal
// values, -0.0 and +0.0 included, get the same index), and every pass
// computes it with the same float operations, so a second read of the row
// puts each entry in the bucket the first read counted it in. Bucket edges
// are known only up to float rounding: bounds that use them (the top-p
// range) widen them, and nothing exact depends on them.

#include <qrita/detail/compat.hpp>
#include <qrita/detail/keys.hpp>

namespace qrita {
namespace detail {

struct BucketMap {
  float lo    = 0;  // bucket 1 starts here
  float t     = 0;  // the threshold: index nb above it
  float inv_w = 0;  // (nb - 1) / (t - lo), 0 when t <= lo
  int nb      = 1;  // histogram buckets (index nb: above t)

  KOKKOS_INLINE_FUNCTION static BucketMap make(float lo, float t, int nb) {
    BucketMap m;
    m.lo    = lo;
    m.t     = t;
    m.nb    = nb;
    const float width = t - lo;
    m.inv_w = (width > 0.0f && nb > 1) ? float(nb - 1) / width : 0.0f;
    if (!is_finite_value(m.inv_w)) m.inv_w = 0.0f;
    return m;
  }

  // Index of candidate z: nb above t, 0 below lo (or NaN), else its
  // bucket (index_in_range, of z raised to lo so that its conversion stays
  // in range). Without a branch: the bucket is computed for every z and
  // two selects pick the answer. The gathering reads call this on every
  // entry; with the two tests as branches each entry would also pay their
  // convergence bookkeeping.
  KOKKOS_FORCEINLINE_FUNCTION int index(float z) const {
    const int in = index_in_range(raised_to_lo(z));
    return z > t ? nb : (z >= lo ? in : 0);
  }

  // index(z) as the larger of (z >= lo ? bucket : 0) and (z > t ? nb : 0)
  // (a bucket is below nb), with z raised to lo by fmaxf on a device (NaN
  // z: lo). index's nested selects left nvcc a branch around the bucket
  // where z > t; this form has none. The mask's second read, which buckets
  // a group's entries side by side (boundary_buckets.hpp, PhasedVisitor),
  // uses it; the reads that only gather keep index, whose visit per entry
  // suits them (docs/DESIGN.md, "Whole-row passes").
  KOKKOS_FORCEINLINE_FUNCTION int index_flat(float z) const {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    const int in = index_in_range(fmaxf(z, lo));
#else
    const int in = index_in_range(raised_to_lo(z));
#endif
    const int below = z >= lo ? in : 0;
    const int above = z > t ? nb : 0;
    return below > above ? below : above;
  }

  // z raised to lo (a NaN z: lo), which index_in_range takes.
  KOKKOS_FORCEINLINE_FUNCTION float raised_to_lo(float z) const { return z >= lo ? z : lo; }

  // index(z) for lo <= z <= t, without the two tests: 1 .. nb - 1 (0 when
  // nb == 1). Also defined, and clamped to nb - 1, above t.
  KOKKOS_FORCEINLINE_FUNCTION int index_in_range(float z) const {
    float f = (z - lo) * inv_w;
    const float top = float(nb - 2);
    f = f < top ? f : top;  // NaN (inf * 0): top
    return 1 + int(f);
  }

  // Value bounds of bucket b (1 <= b < nb), widened by float rounding
  // (BucketEdges, below).
  KOKKOS_INLINE_FUNCTION double lower(int b) const;
  KOKKOS_INLINE_FUNCTION double upper(int b) const;
  KOKKOS_INLINE_FUNCTION double slack() const {
    const double a = double(lo) < 0 ? -double(lo) : double(lo);
    const double b = double(t) < 0 ? -double(t) : double(t);
    return 1e-5 * (a + b + 1e-30);
  }
};

// The value bounds of a map's buckets, with the bucket width and the
// slack taken once: a plan that bounds all 2048 buckets (topp_range) then
// pays a multiply-add per bound instead of a division in double and the
// slack. Bucket b (1 <= b < nb - 1) holds z with lo + (b - 1) w <= z <
// lo + b w up to float rounding (w = 1 / inv_w); the bounds reach a
// hundredth of a bucket and the slack past that, far more than the
// rounding of z - lo, of inv_w and of the reciprocal here.
struct BucketEdges {
  double lo    = 0;
  double t     = 0;
  double width = 0;  // 1 / inv_w; 0 when inv_w is
  double slack = 0;
  int nb       = 1;

  KOKKOS_INLINE_FUNCTION static BucketEdges of(BucketMap const& m) {
    BucketEdges e;
    e.lo    = double(m.lo);
    e.t     = double(m.t);
    e.width = m.inv_w == 0.0f ? 0.0 : 1.0 / double(m.inv_w);
    e.slack = m.slack();
    e.nb    = m.nb;
    return e;
  }
  KOKKOS_INLINE_FUNCTION double lower(int b) const {
    if (b <= 0) return -1e300;
    return lo + (double(b - 1) - 0.01) * width - slack;  // width 0: lo - slack
  }
  KOKKOS_INLINE_FUNCTION double upper(int b) const {
    if (b <= 0) return lo + slack;
    if (width == 0.0 || b >= nb - 1) return t;
    const double u = lo + (double(b) + 0.01) * width + slack;
    return u < t ? u : t;
  }
};

KOKKOS_INLINE_FUNCTION double BucketMap::lower(int b) const {
  return BucketEdges::of(*this).lower(b);
}
KOKKOS_INLINE_FUNCTION double BucketMap::upper(int b) const {
  return BucketEdges::of(*this).upper(b);
}

// Counts in team scratch (only: see scratch_atomic_add). A thread adds runs of equal buckets with one
// atomic: rows with long runs of one value (flat rows, bf16 ties, masked
// stretches) would otherwise serialise every lane of a warp on one counter.
struct HistogramRun {
  std::uint32_t* counts;
  bool atomic;
  int bucket          = -1;
  std::uint32_t count = 0;

  KOKKOS_FORCEINLINE_FUNCTION void add(int b) {
    if (b == bucket) {
      ++count;
      return;
    }
    flush();
    bucket = b;
    count  = 1;
  }
  KOKKOS_FORCEINLINE_FUNCTION void flush() {
    if (count == 0) return;
    if (atomic)
      scratch_atomic_add(&counts[bucket], count);
    else
      counts[bucket] += count;
    count = 0;
  }
};

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_HISTOGRAM_HPP
