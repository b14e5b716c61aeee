// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_DETAIL_PIVOT_SEARCH_HPP
#define QRITA_DETAIL_PIVOT_SEARCH_HPP

// Stage 2, the pivot search with duplicate bookkeeping (paper section 3.2,
// Algorithm 2), for top-k and top-p alike.
//
// The search set is a list of values plus, optionally, `boundary_count`
// copies of one value `floor` that sit below all of them (top-p after top-k
// uses this: the survivors of top-k are everything above its boundary key
// plus only some copies of it). A measure gives each entry a weight: 1 for
// top-k, its fixed-point probability for top-p. The search finds the key K
// such that
//     M(> K) < target <= M(>= K)
// where M(> x) is the weight of the set above x. It keeps two bounds,
// M(> lo) >= target > M(> hi), and each pass evaluates NP pivots between
// them, counting for each pivot the weight above it, the smallest key above
// it and how many entries hold that key. A pivot whose smallest-key group
// straddles the target ends the search (the paper's termination rule); every
// other pivot narrows the range, and a pivot that is too low moves `lo` up to
// its smallest key above, not just to the pivot.
//
// The search runs on order keys, not float values, so the range is a range
// of integers: it shrinks at least (NP + 1)-fold per pass, and once it is
// one key wide the lower bound's group must straddle the target. Hence at
// most 17 passes (quaternary) or 33 (binary) on any input, NaN, infinities
// and ties included.

#include <qrita/detail/candidates.hpp>
#include <qrita/detail/compat.hpp>
#include <qrita/detail/keys.hpp>
#include <qrita/detail/reducers.hpp>

namespace qrita {
namespace detail {

// Top-k measure: every entry weighs 1.
struct CountMeasure {
  KOKKOS_INLINE_FUNCTION weight_type operator()(float) const { return 1; }
  KOKKOS_INLINE_FUNCTION weight_type unit(key_type) const { return 1; }
};

// Top-p measure: exp((z - row max) / T) in fixed point (see keys.hpp).
struct MassMeasure {
  float ref;    // the row's maximum
  float scale;  // 2^F
  float inv_t;  // 1 / temperature
  KOKKOS_INLINE_FUNCTION weight_type operator()(float z) const {
    return fixed_weight(z, ref, scale, inv_t);
  }
  // The weight of a candidate, 0 for a non-candidate, without a branch
  // (candidate_weight).
  KOKKOS_FORCEINLINE_FUNCTION weight_type candidate(float z) const {
    return candidate_weight(z, ref, scale, inv_t);
  }
  KOKKOS_INLINE_FUNCTION weight_type unit(key_type key) const {
    return fixed_weight(key_value(key), ref, scale, inv_t);
  }
};

template <int NP>
struct PivotStats {
  weight_type above[NP];          // weight of entries with key > pivot
  key_type min_key[NP];           // smallest key > pivot
  std::uint32_t min_count[NP];    // entries with that key

  KOKKOS_INLINE_FUNCTION static void init(PivotStats& v) {
    for (int j = 0; j < NP; ++j) {
      v.above[j]     = 0;
      v.min_key[j]   = no_key;
      v.min_count[j] = 0;
    }
  }
  KOKKOS_INLINE_FUNCTION static void join(PivotStats& a, const PivotStats& b) {
    for (int j = 0; j < NP; ++j) {
      a.above[j] += b.above[j];
      if (b.min_key[j] < a.min_key[j]) {
        a.min_key[j]   = b.min_key[j];
        a.min_count[j] = b.min_count[j];
      } else if (b.min_key[j] == a.min_key[j]) {
        a.min_count[j] += b.min_count[j];
      }
    }
  }
};

// Where the boundary of the kept set lies.
struct Boundary {
  key_type key;               // K: keys above it are kept
  std::uint32_t keep;         // how many entries with key K are kept
  std::uint32_t group;        // how many entries of the search set have key K
  int passes;                 // pivot-search passes taken
};

// Total weight of the entries of `src` with key > floor. A source is the
// gathered set (Source) or a whole row (RowSource): count() and values.
template <class Member, class Src, class Measure>
KOKKOS_INLINE_FUNCTION weight_type sum_above(Member const& team,
                                             Src const& src,
                                             Measure const& measure,
                                             key_type floor) {
  weight_type total = 0;
  team_reduce(
      team, src.count(),
      [&](int i, weight_type& acc) {
        const float z = src[i];
        if (order_key(z) > floor) acc += measure(z);
      },
      Kokkos::Sum<weight_type>(total));
  return total;
}

// Upper bound on passes; the search provably needs at most 17 (NP = 3) or
// 33 (NP = 1). The bound only guards against a broken invariant.
constexpr int max_search_passes = 64;

// Requires M(> lo) >= target > M(> hi) and target >= 1, where M counts the
// entries of `src` with key > floor plus `boundary_count` copies of `floor`.
// Where `below` is given, the search writes M(> K) there at its last pass
// (0 where it did not end): the weight of the set above the boundary's
// key. An out-parameter, so that Boundary, which every decision carries,
// stays four words (a fifth word costs every kernel registers or stack).
template <int NP, class Member, class Src, class Measure>
KOKKOS_INLINE_FUNCTION Boundary pivot_search(Member const& team,
                                             Src const& src,
                                             Measure const& measure,
                                             key_type floor,
                                             std::uint32_t boundary_count,
                                             weight_type target, key_type lo,
                                             key_type hi, weight_type* below_out = nullptr) {
  const weight_type boundary_unit =
      boundary_count > 0 ? measure.unit(floor) : weight_type(0);
  Boundary result{hi, 0, 0, 0};
  if (below_out != nullptr) *below_out = 0;
  for (int pass = 1; pass <= max_search_passes; ++pass) {
    key_type pivot[NP];
    const std::uint64_t width = std::uint64_t(hi) - std::uint64_t(lo);
    for (int j = 0; j < NP; ++j)
      pivot[j] = lo + key_type((width * std::uint64_t(j + 1)) / (NP + 1));

    PivotStats<NP> s;
    team_reduce(
        team, src.count(),
        [&](int i, PivotStats<NP>& acc) {
          const float z      = src[i];
          const key_type key = order_key(z);
          if (key <= floor) return;
          const weight_type w = measure(z);
          for (int j = 0; j < NP; ++j) {
            if (key > pivot[j]) {
              acc.above[j] += w;
              if (key < acc.min_key[j]) {
                acc.min_key[j]   = key;
                acc.min_count[j] = 1;
              } else if (key == acc.min_key[j]) {
                acc.min_count[j] += 1;
              }
            }
          }
        },
        StructReducer<PivotStats<NP>>(s));

    if (boundary_count > 0) {
      // The boundary copies lie below every listed entry.
      for (int j = 0; j < NP; ++j) {
        if (floor > pivot[j]) {
          s.above[j] += boundary_unit * boundary_count;
          s.min_key[j]   = floor;
          s.min_count[j] = boundary_count;
        }
      }
    }

    // Termination: a pivot whose smallest group straddles the target.
    for (int j = 0; j < NP; ++j) {
      if (s.above[j] < target) continue;
      const weight_type unit  = measure.unit(s.min_key[j]);
      const weight_type group = unit * s.min_count[j];
      const weight_type below = s.above[j] - group;  // M(> min_key)
      if (below < target) {
        // unit > 0 here: group > target - below > 0.
        result.key    = s.min_key[j];
        result.keep   = std::uint32_t((target - below + unit - 1) / unit);
        result.group  = s.min_count[j];
        result.passes = pass;
        if (below_out != nullptr) *below_out = below;
        return result;
      }
    }

    // Narrow the range. A pivot with enough weight above it, which did not
    // end the search, still has enough weight above its smallest key.
    for (int j = 0; j < NP; ++j) {
      if (s.above[j] >= target) {
        if (s.min_key[j] > lo) lo = s.min_key[j];
      } else if (pivot[j] < hi) {
        hi = pivot[j];
      }
    }
  }
  result.passes = -1;  // unreachable while the invariant holds
  return result;
}

// The search of Search::quaternary (three pivots per round) or
// Search::binary (one), chosen at run time. Force-inlined, so that a caller
// that inlines the search gets the same code as if it had written the
// branch itself.
template <class Member, class Src, class Measure>
KOKKOS_FORCEINLINE_FUNCTION Boundary pivot_search_by_kind(
    bool binary, Member const& team, Src const& src, Measure const& measure,
    key_type floor, std::uint32_t boundary_count, weight_type target, key_type lo,
    key_type hi, weight_type* below = nullptr) {
  if (binary)
    return pivot_search<1>(team, src, measure, floor, boundary_count, target, lo,
                           hi, below);
  return pivot_search<3>(team, src, measure, floor, boundary_count, target, lo, hi, below);
}

// The same, kept out of line: one copy per search set and measure instead
// of one at each of a kernel's dozen call sites. The sampler's unsplit
// kernel on CUDA calls this one (RowCall's OutOfLineSearch,
// Policy::sampler_search_out_of_line); the other kernels inline it. A free
// function, it takes only what it uses: an out-of-line member call on the
// kernel argument would copy the whole functor to local memory
// (docs/DESIGN.md, "Code shape on GPUs").
template <class Member, class Src, class Measure>
KOKKOS_FUNCTION QRITA_NOINLINE Boundary pivot_search_out_of_line(
    bool binary, Member const& team, Src const& src, Measure const& measure,
    key_type floor, std::uint32_t boundary_count, weight_type target, key_type lo,
    key_type hi, weight_type* below = nullptr) {
  return pivot_search_by_kind(binary, team, src, measure, floor, boundary_count,
                             target, lo, hi, below);
}

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_PIVOT_SEARCH_HPP
