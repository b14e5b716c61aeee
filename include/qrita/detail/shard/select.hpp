// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_DETAIL_SHARD_SELECT_HPP
#define QRITA_DETAIL_SHARD_SELECT_HPP

// The sharded calls' one search: the place in a row's order (larger key
// first, lower column first among equal keys) where a cumulative count or
// weight first reaches a target, found over every rank's shard by digits
// instead of pivots.
//
// A select narrows the boundary key by four 8-bit digits, most significant
// first. Each pass, every rank histograms the entries of its shard that lie
// in the row's region and under the digits fixed so far (per bucket: the
// count and the fixed-point weight), the communicator sums the histograms
// (integers: the same totals on every rank, whatever the order of the
// additions), and every rank then picks the same bucket: the one where the
// cumulative measure, from the largest key down, first reaches the target.
// After the fourth digit the key is exact; the count or weight still needed
// fixes how many of its tie group the prefix keeps (ties go by column, and
// the caller numbers a group across shards in the shards' order).
//
// A row's region is the prefix its earlier selects kept: every entry with a
// key above `cut.key`, plus `cut.keep` entries of that key. The partial
// group is added to the summed histogram once, after the reduction (all its
// members weigh the same), so no rank needs to know which of its own
// members are in it.

#include <qrita/detail/compat.hpp>
#include <qrita/detail/keys.hpp>
#include <qrita/detail/philox.hpp>
#include <qrita/detail/pivot_search.hpp>
#include <qrita/detail/row/state.hpp>
#include <qrita/detail/row_access.hpp>

#include <cstdint>

namespace qrita {
namespace detail {
namespace shard {

// One iteration per row, with 64-bit row indices on every backend.
template <class Space>
using RowRange = Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>;

constexpr int digit_bits   = 8;
constexpr int digit_passes = 32 / digit_bits;
constexpr int buckets      = 1 << digit_bits;
// A row's histogram in the buffers: the counts, then the weights.
constexpr int histogram_words = 2 * buckets;

// What a select looks for, and how its target follows from its region.
enum class Goal : std::int8_t {
  top_k,  // the first k (count)
  top_p,  // the shortest prefix holding mass_target(p, region weight)
  draw,   // the entry where the weight passes floor(u W / 2^64)
  list    // the first min(C, region count) (count)
};

KOKKOS_INLINE_FUNCTION constexpr bool by_count(Goal g) {
  return g == Goal::top_k || g == Goal::list;
}

// A prefix of the order: every key above `key` and `keep` of its group.
struct Cut {
  key_type key       = neg_inf_key;
  std::uint32_t keep = 0;
};

// One row of a sharded call, as its steps fill it in.
struct ShardRow {
  Filters f;
  MassMeasure mass{0.0f, 0.0f, 1.0f};
  key_type max_key = neg_inf_key;  // over every shard; neg_inf_key: no candidate
  bool write       = false;        // the mask writes this row
  // The kept region so far and, where known, its size and weight.
  Cut cut;
  std::uint64_t count      = 0;
  weight_type weight       = 0;
  // The select in progress.
  bool active              = false;
  std::uint64_t target     = 0;
  key_type prefix          = 0;
  std::uint64_t above      = 0;  // entries of the region above the digits' range
  weight_type above_weight = 0;
  // The last select's answer: its prefix of the region (for a draw or a
  // list, the entry drawn or the list's last entry is its `keep`-th copy
  // of `key`).
  bool found = false;
  Cut pick;
};

// The digits' range of pass `pass`: the keys sharing the prefix's
// digits above this pass's.
KOKKOS_INLINE_FUNCTION int digit_shift(int pass) { return 32 - digit_bits * (pass + 1); }
KOKKOS_INLINE_FUNCTION bool in_range(key_type key, key_type prefix, int pass) {
  const int above = 32 - digit_bits * pass;  // bits fixed so far: 32 - above
  if (above >= 32) return true;
  return (key >> above) == (prefix >> above);
}
KOKKOS_INLINE_FUNCTION int digit_of(key_type key, int pass) {
  return int((key >> digit_shift(pass)) & key_type(buckets - 1));
}

// One pass's histogram of a shard row: `hist` (histogram_words, zeroed by
// the caller) gets the count and weight of each bucket of the entries in
// the row's region (keys above cut.key: the partial group is the
// reduction's) and in the pass's range, added atomically.
template <class Member, class T>
KOKKOS_INLINE_FUNCTION void histogram_shard(Member const& team, const T* row, int width,
                                            ShardRow const& s, int pass, std::uint64_t* hist) {
  const RowSource<T> src{row, width};
  const key_type floor = s.cut.key;
  const key_type prefix = s.prefix;
  const MassMeasure mass = s.mass;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, width), [&](int i) {
    const float z      = src[i];
    const key_type key = order_key(z);
    if (!(key > floor) || !in_range(key, prefix, pass)) return;
    const int b = digit_of(key, pass);
    atomic_add_u64(&hist[b], 1);
    atomic_add_u64(&hist[buckets + b], std::uint64_t(mass(z)));
  });
}

// The target of a select on a region of `count` entries weighing `weight`.
KOKKOS_INLINE_FUNCTION std::uint64_t goal_target(Goal g, ShardRow const& s, std::uint64_t count,
                                                 weight_type weight, int list_size) {
  switch (g) {
    case Goal::top_k: return std::uint64_t(s.f.k);
    case Goal::top_p: return mass_target(s.f.p, double(weight));
    case Goal::draw: return mul_high_64(s.f.u, weight) + 1;
    case Goal::list:
    default: return count < std::uint64_t(list_size) ? count : std::uint64_t(list_size);
  }
}

// After the reduction of pass `pass`: every rank picks the same digit from
// the summed histogram `hist` of row s (which it may change: the region's
// partial group is added to it). The first pass also takes the region's
// totals and the target; a target the region does not reach keeps the
// whole region (top-k off where k is at least its size). A filter select
// (top-k, top-p) makes its answer the row's region; a draw or a list
// leaves the region and answers in `pick`.
KOKKOS_INLINE_FUNCTION void choose_digit(Goal g, ShardRow& s, std::uint64_t* hist, int pass,
                                         int list_size) {
  if (!s.active) return;
  std::uint64_t* counts  = hist;
  std::uint64_t* weights = hist + buckets;
  if (s.cut.keep > 0 && in_range(s.cut.key, s.prefix, pass)) {
    const int b = digit_of(s.cut.key, pass);
    counts[b] += s.cut.keep;
    weights[b] += weight_type(s.cut.keep) * s.mass.unit(s.cut.key);
  }
  const bool count_goal = by_count(g);
  if (pass == 0) {
    std::uint64_t n = 0;
    weight_type w   = 0;
    for (int b = 0; b < buckets; ++b) {
      n += counts[b];
      w += weights[b];
    }
    s.count        = n;
    s.weight       = w;
    s.target       = goal_target(g, s, n, w, list_size);
    if (s.target == 0 || s.target > (count_goal ? n : w)) {
      // Nothing to find (an empty list), or the whole region.
      s.active = false;
      s.found  = false;
      return;
    }
    s.prefix       = 0;
    s.above        = 0;
    s.above_weight = 0;
  }
  int pick = 0;
  for (int b = buckets - 1; b >= 0; --b) {
    const std::uint64_t reached =
        count_goal ? s.above + counts[b] : std::uint64_t(s.above_weight + weights[b]);
    if (reached >= s.target) {
      pick = b;
      break;
    }
    s.above += counts[b];
    s.above_weight += weights[b];
  }
  s.prefix |= key_type(pick) << digit_shift(pass);
  if (pass + 1 < digit_passes) return;
  // The boundary key is exact: how many of its group the prefix needs.
  const key_type key      = s.prefix;
  const weight_type unit  = s.mass.unit(key);
  const std::uint64_t rest = count_goal ? s.target - s.above : s.target - s.above_weight;
  const std::uint32_t keep =
      count_goal ? std::uint32_t(rest) : std::uint32_t((rest + unit - 1) / unit);
  s.active = false;
  s.found  = true;
  s.pick   = Cut{key, keep};
  if (g == Goal::top_k || g == Goal::top_p) {
    s.cut    = s.pick;
    s.count  = s.above + keep;
    s.weight = s.above_weight + weight_type(keep) * unit;
  }
}

// Starts a select on every row that takes part in it.
KOKKOS_INLINE_FUNCTION void begin_select(Goal g, ShardRow& s) {
  const bool candidate = s.max_key > neg_inf_key;
  switch (g) {
    case Goal::top_k: s.active = candidate && s.f.topk; break;
    case Goal::top_p: s.active = candidate && s.f.topp; break;
    case Goal::draw:
    case Goal::list:
    default: s.active = candidate; break;
  }
  s.found = false;
}

}  // namespace shard
}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_SHARD_SELECT_HPP
