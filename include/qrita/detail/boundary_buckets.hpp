// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_DETAIL_BOUNDARY_BUCKETS_HPP
#define QRITA_DETAIL_BOUNDARY_BUCKETS_HPP

// The miss path: when the gathered outliers do not hold the answer, the
// histogram of the gathering read says which buckets hold the boundary.
// One more read of the row then decides every entry outside them (kept
// above, -inf below, written in the same pass) and gathers the entries
// inside them, and the pivot search runs on those few. A miss thus costs
// three whole-row passes in all (read; read + write), whatever the logits,
// instead of a pivot search over the whole row.
//
// Top-k: counts are exact, so the boundary bucket is known exactly.
// Top-p: a bucket's mass is known only within the bounds its value range
// gives (count x exp(edge - max)); the range of buckets that may hold the
// boundary under those bounds is gathered, and the second read sums the
// exact fixed-point weights of the row and of everything above the range,
// so the search then decides with the same integers a whole-row search
// would use.

#include <qrita/detail/candidates.hpp>
#include <qrita/detail/histogram.hpp>
#include <qrita/detail/keys.hpp>
#include <qrita/detail/pivot_search.hpp>
#include <qrita/detail/reducers.hpp>
#include <qrita/detail/row_access.hpp>

#include <type_traits>

namespace qrita {
namespace detail {

// Largest index b in [0, nb] such that head + sum of value(b') for
// b <= b' < nb is >= target (index nb: the head alone); -1 if none. `slot`
// is a team-scratch int. Values are unsigned integers, so the sums are
// exact: the crossing is one bucket, the same at any team size.
//
// One chunk: each thread sums a contiguous run of buckets from the top,
// one team_scan gives every run the sum above it, and the one thread whose
// run holds the crossing walks it again. (A TeamThreadRange parallel_scan
// walks the range in chunks of the team size, a team scan and a broadcast
// each, and calls `value` twice per bucket, where a top-p plan's value is
// a weight bound with an exp: on 2048 buckets far more than one scan.)
template <class T, class Member, class Value>
KOKKOS_INLINE_FUNCTION int suffix_crossing(Member const& team, int nb, T head,
                                           Value const& value, T target,
                                           int* slot) {
  static_assert(std::is_integral<T>::value && std::is_unsigned<T>::value,
                "qrita: suffix_crossing sums unsigned integers (exact sums make "
                "the crossing unique and independent of the team size)");
  if (head >= target) return nb;  // the same in every thread
  const int threads = team.team_size();
  const int run     = (nb + threads - 1) / threads;
  const int first   = team.team_rank() * run;
  const int last    = first + run < nb ? first + run : nb;
  T sum             = 0;
  for (int i = first; i < last; ++i) sum += value(nb - 1 - i);
  team.team_barrier();  // earlier readers of *slot are done
  const T start = head + team.team_scan(sum);
  // start < target in thread 0; the sums only grow: exactly one thread
  // holds the crossing, or the last one finds that the total falls short.
  if (start < target && target - start <= sum) {
    T acc = start;
    for (int i = first; i < last; ++i) {
      const int b = nb - 1 - i;
      const T v   = value(b);
      if (target - acc <= v) {
        *slot = b;
        break;
      }
      acc += v;
    }
  } else if (team.team_rank() == threads - 1 && start < target) {
    *slot = -1;
  }
  team.team_barrier();
  const int b = *slot;
  team.team_barrier();
  return b;
}

// Buckets lo..hi (inclusive; hi == nb includes the outliers above t).
struct BucketRange {
  int lo = 0;
  int hi = -1;
};

// Entries in the range, and entries above it, from the counts.
struct RangeCounts {
  std::uint32_t inside;
  std::uint32_t above;
  KOKKOS_INLINE_FUNCTION static void init(RangeCounts& v) {
    v.inside = 0;
    v.above  = 0;
  }
  KOKKOS_INLINE_FUNCTION static void join(RangeCounts& a, const RangeCounts& b) {
    a.inside += b.inside;
    a.above += b.above;
  }
};

template <class Member>
KOKKOS_INLINE_FUNCTION RangeCounts count_range(Member const& team,
                                               const std::uint32_t* hist,
                                               int nb, std::uint32_t head,
                                               BucketRange r) {
  RangeCounts c;
  team_reduce(
      team, nb,
      [&](int b, RangeCounts& acc) {
        if (b > r.hi)
          acc.above += hist[b];
        else if (b >= r.lo)
          acc.inside += hist[b];
      },
      StructReducer<RangeCounts>(c));
  if (r.hi >= nb)
    c.inside += head;
  else
    c.above += head;
  return c;
}

// Keys that bound what a read of the buckets `r` gathers, from the
// buckets' value bounds (BucketMap::lower and upper, each widened by two
// keys for the double to float rounding): every gathered key is above
// range_bottom_key and at most range_top_key. A search on such a set may
// start from them instead of -inf and the row's maximum: its answer is the
// same (it depends only on the set), and the passes that only bring the
// bounds in from there to the set are saved (about half of them on a
// 128256-entry randn row).
KOKKOS_INLINE_FUNCTION key_type range_top_key(BucketMap const& map, BucketRange r,
                                              key_type max_key) {
  if (r.hi >= map.nb - 1) return max_key;
  const float u = float(map.upper(r.hi));
  if (!(u == u)) return max_key;
  const key_type k = order_key(u);
  return k > neg_inf_key && k < max_key - 2u ? k + 2u : max_key;
}
KOKKOS_INLINE_FUNCTION key_type range_bottom_key(BucketMap const& map, BucketRange r) {
  if (r.lo <= 0) return neg_inf_key;
  const float l = float(map.lower(r.lo));
  if (!(l == l)) return neg_inf_key;
  const key_type k = order_key(l);
  return k > neg_inf_key + 2u ? k - 2u : neg_inf_key;
}

// Whether a read of the buckets `r` would gather anything and fit a set of
// `capacity` entries (the third read's precondition, on both kernels).
template <class Member>
KOKKOS_INLINE_FUNCTION bool range_fits(Member const& team, const std::uint32_t* hist,
                                       int nb, std::uint32_t head, BucketRange r,
                                       int capacity) {
  const RangeCounts c = count_range(team, hist, nb, head, r);
  return c.inside > 0 && c.inside <= std::uint32_t(capacity);
}

// Integer bounds on the fixed-point weight (fixed_weight) of the c entries
// of bucket b, at most c x the scale (the most they weigh), from the
// bucket's value bounds (BucketEdges), the row maximum, the scale and the
// inverse temperature.
//
// exp in float, of the bound's exponent rounded to float, with a relative
// slack: the weights' own exp_f is of a float exponent too, and every
// exponent that gives a weight lies above -128, where the two roundings
// and the two exps differ by far less than the slack. With the edges taken
// once (BucketEdges), a bucket's two bounds take less than half the
// instructions that an exp and a division in double per bound take, and a
// plan bounds every bucket.
struct WeightBounds {
  static constexpr double rel = 1e-4;  // the relative slack
  BucketEdges edges;
  double M = 0, I = 0, S = 0, up = 0, down = 0;
  weight_type full = 0;

  KOKKOS_INLINE_FUNCTION static WeightBounds of(BucketMap const& map, float max, float scale,
                                                float inv_t) {
    WeightBounds w;
    w.edges = BucketEdges::of(map);
    w.M     = double(max);
    w.I     = double(inv_t);
    w.S     = double(scale);
    w.up    = w.S * (1.0 + rel);
    w.down  = w.S * (1.0 - rel);
    w.full  = weight_type(w.S);
    return w;
  }
  KOKKOS_INLINE_FUNCTION double grow(double edge) const {
    return double(exp_f(float((edge - M) * I)));
  }
  KOKKOS_INLINE_FUNCTION weight_type upper(int b, std::uint32_t c) const {
    if (c == 0) return 0;
    const weight_type w    = weight_ceil(double(c) * grow(edges.upper(b)) * up);
    const weight_type most = weight_type(c) * full;
    return w < most ? w : most;
  }
  KOKKOS_INLINE_FUNCTION weight_type lower(int b, std::uint32_t c) const {
    if (c == 0) return 0;
    const double w = grow(edges.lower(b)) * down - 1.0;
    if (!(w > 0.0)) return 0;
    const weight_type l = static_cast<weight_type>(w < S ? w : S);
    return weight_type(c) * l;
  }
};

// Top-p: the buckets that may hold the boundary, given the exact mass of
// the outliers above t (head_mass), bounds on the exact target
// ceil(p * total), the row maximum and the weight scale. A bucket's bounds
// (WeightBounds) are integers: the sums stay exact and below 2^62.
//
// Two scans, each with a loop of bounds: inlined where the caller has room
// (RowCall::inline_topp), else called out of line (topp_range below).
template <class Member>
KOKKOS_INLINE_FUNCTION BucketRange topp_range_inline(Member const& team,
                                                     const std::uint32_t* hist,
                                                     BucketMap const& map,
                                                     double head_mass, double target_lo,
                                                     double target_hi, float max,
                                                     float scale, float inv_t, int* slot) {
  const WeightBounds bounds = WeightBounds::of(map, max, scale, inv_t);
  const auto upper = [&](int b) { return bounds.upper(b, hist[b]); };
  const auto lower = [&](int b) { return bounds.lower(b, hist[b]); };
  const weight_type head = weight_ceil(head_mass);
  BucketRange r;
  // Above hi even the upper bounds fall short of the smallest target; at or
  // above lo even the lower bounds reach the largest one.
  r.hi = suffix_crossing<weight_type>(team, map.nb, head, upper, weight_ceil(target_lo), slot);
  r.lo = suffix_crossing<weight_type>(team, map.nb, head, lower, weight_ceil(target_hi), slot);
  if (r.hi < 0) r.hi = 0;  // unreachable with consistent bounds
  if (r.lo < 0) r.lo = 0;
  // One bucket of margin on each side: entries sit on bucket edges.
  r.lo = r.lo > 0 ? r.lo - 1 : 0;
  r.hi = r.hi < map.nb ? r.hi + 1 : map.nb;
  return r;
}

// The same, out of line. Inlined into the unsplit 16-bit mask kernels and
// the split list kernel, it pushes them past what nvcc 11.8 inlines, and the
// calls left out of line then copy the kernel functor into every thread's
// local memory (docs/DESIGN.md, "Code shape on GPUs").
template <class Member>
KOKKOS_FUNCTION QRITA_NOINLINE BucketRange topp_range(Member const& team,
                                                      const std::uint32_t* hist,
                                                      BucketMap const& map,
                                                      double head_mass, double target_lo,
                                                      double target_hi, float max,
                                                      float scale, float inv_t, int* slot) {
  return topp_range_inline(team, hist, map, head_mass, target_lo, target_hi, max, scale,
                           inv_t, slot);
}

// Exact fixed-point weights summed by the second read.
struct RangeMass {
  weight_type above;  // entries above the range
  weight_type total;  // every candidate of the row
  KOKKOS_INLINE_FUNCTION static void init(RangeMass& v) {
    v.above = 0;
    v.total = 0;
  }
  KOKKOS_INLINE_FUNCTION static void join(RangeMass& a, const RangeMass& b) {
    a.above += b.above;
    a.total += b.total;
  }
};

// What gather_two_ranges sums: RangeMass's, and the weight above the
// second range.
struct TwoRangeMass {
  weight_type above;   // entries above the first range
  weight_type above2;  // entries above the second range
  weight_type total;   // every candidate of the row
  KOKKOS_INLINE_FUNCTION static void init(TwoRangeMass& v) {
    v.above  = 0;
    v.above2 = 0;
    v.total  = 0;
  }
  KOKKOS_INLINE_FUNCTION static void join(TwoRangeMass& a, const TwoRangeMass& b) {
    a.above += b.above;
    a.above2 += b.above2;
    a.total += b.total;
  }
};

// What the mask's second read does with an entry (PhasedVisitor).
enum class Gathered { keep, push, drop };

// The mask's second read's visitor (see visit_groups). A group's entries
// are handled in two phases. First, side by side and without a branch per
// entry, each entry's bucket (`map.index_flat`) and, where the read
// weighs, its exact weight, summed by `sum(z, bucket, acc)`; then, one
// entry at a time, `classify(z, bucket)` says whether it is pushed to
// `set`, made -inf, or left. A group that changed is stored, a loose entry
// that changed is written. With a branch per entry (as visit_row) the
// branches around the bucket, the weight and the push (their convergence
// bookkeeping, BSSY/BSYNC in CUDA SASS) keep one entry's chain of
// dependent instructions from overlapping the next one's. The reads that
// only gather (the sampler's and the list's) have short chains and gain
// nothing from the phases: they keep a visit per entry (visit_row).
template <class T, class Classify, class Sum>
struct PhasedVisitor {
  T* row;
  int head;  // split.head: the first group's first column
  int column_base;
  bool weighed;
  BucketMap map;
  Classify const& classify;  // (z, bucket) -> Gathered
  Sum const& sum;            // (z, bucket, acc)
  Candidates set;
  RangeMass& acc;

  static constexpr int L = Lanes<T>::n;

  // Returns whether z changes (to -inf).
  KOKKOS_FORCEINLINE_FUNCTION bool act(float z, int bucket, int column) const {
    const Gathered c = classify(z, bucket);
    if (c == Gathered::push) set.push(z, column);
    return c == Gathered::drop;
  }
  template <int I = 0>
  KOKKOS_FORCEINLINE_FUNCTION void buckets(Group<T> const& x, int* b) const {
    if constexpr (I < L) {
      b[I] = map.index_flat(to_float(x.v[I]));
      buckets<I + 1>(x, b);
    }
  }
  template <int I = 0>
  KOKKOS_FORCEINLINE_FUNCTION void weights(Group<T> const& x, const int* b) const {
    if constexpr (I < L) {
      sum(to_float(x.v[I]), b[I], acc);
      weights<I + 1>(x, b);
    }
  }
  template <int I = 0>
  KOKKOS_FORCEINLINE_FUNCTION bool acts(Group<T>& x, const int* b, int column) const {
    if constexpr (I < L) {
      const bool d = act(to_float(x.v[I]), b[I], column + I);
      if (d) x.v[I] = neg_inf_of<T>();
      const bool rest = acts<I + 1>(x, b, column);
      return d || rest;
    } else {
      return false;
    }
  }
  KOKKOS_FORCEINLINE_FUNCTION void group(Group<T>& x, int g) const {
    const int at = head + L * g;
    int b[L];
    buckets(x, b);
    if (weighed) weights(x, b);
    if (acts(x, b, column_base + at)) store_group(row + at, x);
  }
  KOKKOS_FORCEINLINE_FUNCTION void loose(int column) const {
    const float z    = to_float(row[column]);
    const int bucket = map.index_flat(z);
    if (weighed) sum(z, bucket, acc);
    if (act(z, bucket, column_base + column)) row[column] = neg_inf_of<T>();
  }
};

// Which exact weights a gathering read sums (gather_range): none, or every
// candidate's (RangeMass::total) and those above the range (::above). The
// list's third read weighs none: it ranks by counts alone, and its
// entries then take no exp. The draw's third read needs the weight above
// its buckets; summing only that would take an exp only for the entries
// above them, a branch that diverges within a warp, so it weighs all.
enum class Weigh { none, all };

// The second read (and, with Write, write) of a miss, over `vocab`
// entries from `row` (a whole row, or a segment whose first column is
// column_base): entries above the range are kept (left as they are),
// entries below it and non-candidates (NaN) become -inf, entries inside it
// are offered to `set` and left for the decision. Without Write (the
// sampler and the candidate list, which never write the logits) nothing is
// stored. Sums the exact weights relative to the row maximum that `weigh`
// asks for. Each thread keeps Unroll 16-byte loads in flight (visit_groups).
// The mask's read (Write) handles a group's entries in two phases
// (PhasedVisitor), the others one entry at a time (visit_row).
// `set`, `map` and `mass` are taken by value (so are those of
// gather_two_ranges and scan_row): through a reference into the caller's
// frame the compiler reloaded them from the stack after every store a push
// makes, since such a store might alias them (CUDA SASS: the caller's row
// state is in local memory wherever its address reaches an out-of-line
// call); a copy in registers cannot alias.
template <int Unroll, bool Write, class Member, class T>
KOKKOS_FORCEINLINE_FUNCTION RangeMass gather_range(Member const& team, T* row,
                                              int vocab, const BucketMap map,
                                              BucketRange r,
                                              const Candidates set,
                                              Weigh weigh,
                                              const MassMeasure mass,
                                              int column_base = 0) {
  const RowSplit split = split_row(row, vocab);
  RangeMass result;
  const int workers = team.team_size();
  if constexpr (Write) {
    // A non-candidate has bucket 0 and weighs 0.
    const auto classify = [&](float z, int idx) {
      const Gathered other     = stored_neg_inf(z) ? Gathered::keep : Gathered::drop;
      const Gathered candidate = idx > r.hi    ? Gathered::keep
                                 : idx >= r.lo ? Gathered::push
                                               : Gathered::drop;
      return is_candidate_value(z) ? candidate : other;
    };
    const auto sum = [&](float z, int idx, RangeMass& acc) {
      const weight_type w = mass.candidate(z);
      acc.total += w;
      acc.above += idx > r.hi ? w : weight_type(0);
    };
    const bool weighed = weigh == Weigh::all;
    team_reduce(
        team, workers,
        [&](int j, RangeMass& acc) {
          visit_groups<Unroll>(
              row, split, j, workers,
              PhasedVisitor<T, decltype(classify), decltype(sum)>{
                  row, split.head, column_base, weighed, map, classify, sum, set, acc});
        },
        StructReducer<RangeMass>(result));
  } else {
    // The candidate test on the value (one comparison, not a key), and the
    // weight above the range added by a select: the per-entry chain is what
    // bounds these reads on a GPU (docs/DESIGN.md, "Whole-row passes").
    const auto visit = [&](float z, int column, RangeMass& acc) {
      if (!is_candidate_value(z)) return;
      const int idx       = map.index(z);
      const weight_type w = weigh == Weigh::all ? mass(z) : weight_type(0);
      const bool above    = idx > r.hi;
      acc.total += w;
      acc.above += above ? w : weight_type(0);
      if (above) return;
      if (idx >= r.lo) set.push(z, column);
    };
    team_reduce(
        team, workers,
        [&](int j, RangeMass& acc) {
          visit_row<Unroll>(row, split, j, workers, [&](float z, int column) {
            visit(z, column_base + column, acc);
          });
        },
        StructReducer<RangeMass>(result));
  }
  return result;
}

// A read of a whole row or a segment (nothing written) that gathers two
// bucket ranges at once, `r` into `set` and `r2` (above r: r2.lo > r.hi)
// into `set2`, and sums the exact weights of every candidate, of those
// above r and of those above r2. The list's second kernel gathers the
// top-p boundary's buckets and those of its first C entries in it
// (list_with_cut, row/list.hpp); the split path's deferred rows, those and
// the draw's target's buckets (SplitKernel::deferred_gather).
template <int Unroll, class Member, class T>
KOKKOS_FORCEINLINE_FUNCTION TwoRangeMass gather_two_ranges(
    Member const& team, const T* row, int vocab, const BucketMap map, BucketRange r,
    const Candidates set, BucketRange r2, const Candidates set2,
    const MassMeasure mass, int column_base = 0) {
  const RowSplit split = split_row(row, vocab);
  const auto visit = [&](float z, int column, TwoRangeMass& acc) {
    if (!is_candidate_value(z)) return;
    const int idx       = map.index(z);
    const weight_type w = mass(z);
    acc.total += w;
    acc.above2 += idx > r2.hi ? w : weight_type(0);
    acc.above += idx > r.hi ? w : weight_type(0);
    if (idx > r.hi) {
      if (idx >= r2.lo && idx <= r2.hi) set2.push(z, column);
    } else if (idx >= r.lo) {
      set.push(z, column);
    }
  };
  TwoRangeMass result;
  const int workers = team.team_size();
  team_reduce(
      team, workers,
      [&](int j, TwoRangeMass& acc) {
        visit_row<Unroll>(row, split, j, workers,
                          [&](float z, int column) { visit(z, column_base + column, acc); });
      },
      StructReducer<TwoRangeMass>(result));
  return result;
}

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_BOUNDARY_BUCKETS_HPP
