// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_DETAIL_ROW_BOUNDARY_HPP
#define QRITA_DETAIL_ROW_BOUNDARY_HPP

// A miss: which buckets of the first read's histogram hold the boundary
// (plan_buckets), and the search on what their read gathered
// (resolve_buckets).

#include <qrita/detail/boundary_buckets.hpp>
#include <qrita/detail/row/decide.hpp>
#include <qrita/detail/row/search.hpp>
#include <qrita/detail/row/state.hpp>

#include <cstdint>

namespace qrita {
namespace detail {

// Which buckets a miss gathers: false when none can (no histogram, the
// boundary lies above t among outliers that were not all kept, or the
// range holds more than the candidate tiers).
template <class CallT>
KOKKOS_INLINE_FUNCTION bool plan_buckets(CallT const& call, typename CallT::member_type const& team,
                                         Filters const& f, BucketMap const& map,
                                         RowScan const& scan, int outliers, HeadMass const& head,
                                         RowScratch const& s, BucketPlan& plan) {
  if (s.hist == nullptr) return false;
  const int nb            = map.nb;
  const bool all_outliers = outliers <= s.set.capacity();
  BucketRange range;
  if (f.topk) {
    // Exact counts: the bucket where the count from the top reaches k.
    // With top-p too, everything from there up is gathered (the
    // survivors, fewer than k plus that bucket).
    if (!all_outliers && outliers >= f.k) return false;  // boundary above t
    const std::uint32_t* hist = s.hist;
    range.lo                  = suffix_crossing<std::uint32_t>(
        team, nb, std::uint32_t(outliers), [&](int b) { return hist[b]; }, std::uint32_t(f.k),
        s.result);
    range.hi = f.topp ? nb : range.lo;
    if (range.lo < 0) return false;  // unreachable: candidates > k
  } else if (head.known) {
    const double slack = 1e-5 * head.total + 4.0 * double(call.prm.vocab) + 4.0;
    const double share = f.draw ? double(f.u) * 0x1p-64 : double(f.p);
    const double want  = share * head.total;
    range = topp_buckets(call, team, s.hist, map, head.head, want - slack, want + slack,
                         key_value(scan.max_key), f.inv_t, s.result);
  } else {
    range.lo = 0;  // top-p whose top-k was trivial: every candidate
    range.hi = nb;
  }
  // The sampler and the list need every survivor in the set: the
  // range then reaches the top (a draw needs only its target's buckets).
  // A top-p survivor set larger than the tiers is decided on the
  // boundary's own buckets instead, as the mask does, and finished by a
  // third read (Decision::partial). The first kernel defers such a row
  // (plan.partial, false) to the second, which plans it so. The unsplit
  // first kernel defers every other miss too (KernelParams::defer_misses):
  // the second kernel, planning it afresh, gathers all its survivors.
  // (One count_range in the first kernel: a second one there kept the
  // split path's decide from being inlined.)
  const int boundary_hi = range.hi;
  if (CallT::mode != Mode::mask && !f.draw) range.hi = nb;
  const std::uint32_t cap = std::uint32_t(s.set.capacity());
  RangeCounts counts      = count_range(team, s.hist, nb, std::uint32_t(outliers), range);
  const bool past_tiers   = counts.inside > cap;
  const bool miss_moved   = !CallT::deferred && call.prm.defer_misses && counts.inside > 0;
  if (CallT::mode != Mode::mask && !f.draw && (past_tiers || miss_moved) && !f.topk && head.known &&
      call.prm.deferred_end != nullptr) {
    plan.partial  = true;
    plan.outliers = std::uint32_t(outliers);
    plan.head     = head.head;
    plan.total    = head.total;
    // The boundary's buckets, kept in the partial plan: the split path's
    // deferred launches take them from there (plan_partial) instead of
    // placing them again.
    plan.range = BucketRange{range.lo, boundary_hi};
    if constexpr (!CallT::deferred) return false;
    range.hi = boundary_hi;
    counts   = count_range(team, s.hist, nb, std::uint32_t(outliers), range);
  }
  if (counts.inside > cap || counts.inside == 0) return false;
  plan.range  = range;
  plan.above  = counts.above;
  plan.inside = counts.inside;
  return true;
}

// A deferred row's plan (plan.partial, with the first read's outliers
// and head mass) on the boundary's buckets plan_buckets placed before it
// deferred the row (plan.range): what plan_buckets goes on to do with
// them, from the same histogram. false when they do not fit the set.
template <class CallT>
KOKKOS_INLINE_FUNCTION bool plan_partial(CallT const&, typename CallT::member_type const& team,
                                         BucketMap const& map, RowScratch const& s,
                                         BucketPlan& plan) {
  if (s.hist == nullptr) return false;
  const RangeCounts counts = count_range(team, s.hist, map.nb, plan.outliers, plan.range);
  if (counts.inside > std::uint32_t(s.set.capacity()) || counts.inside == 0) return false;
  plan.above  = counts.above;
  plan.inside = counts.inside;
  return true;
}

// The search on the n entries the second read gathered.
template <class CallT>
KOKKOS_INLINE_FUNCTION void resolve_buckets(CallT const& call,
                                            typename CallT::member_type const& team,
                                            Filters const& f, RowScan const& scan,
                                            BucketMap const& map, BucketPlan const& plan,
                                            RangeMass const& exact, int n, RowScratch const& s,
                                            Decision& d, RowStats& st) {
  const MassMeasure mass = mass_of(call, scan, f);
  const Source src       = s.set.source(n);
  st.row_passes += 2;
  st.gathered = n;
  st.tier     = n > s.set.cap0;
  // The set lies between the range's bounds.
  const key_type bottom = range_bottom_key(map, plan.range);
  const key_type top    = range_top_key(map, plan.range, scan.max_key);
  Boundary cut;
  d.searched_mass = false;
  if (f.topk) {
    const std::uint32_t above = f.topp ? 0u : plan.above;
    cut = search_k_then_p(call, team, src, f, mass, weight_type(std::uint32_t(f.k) - above), bottom,
                          top, RowPath::buckets, st);
  } else {
    // A draw's target: floor(u W / 2^64) + 1 of the exact total W.
    const weight_type target =
        f.draw ? mul_high_64(f.u, exact.total) + 1 : mass_target(f.p, double(exact.total));
    // The range holds the boundary: more than `above`, at most all.
    const weight_type inside = exact.total - exact.above;
    const bool held          = target > exact.above && target - exact.above <= inside;
    if (f.draw && !held) {
      // The planned buckets missed the target (the first read's total is
      // approximate): the draw is taken over the whole row instead.
      d = all_candidates(scan, st);
      return;
    }
    d.drawn = f.draw;
    if constexpr (CallT::mode == Mode::sample) {
      cut = search(call, team, src, mass, neg_inf_key, 0, target - exact.above, bottom, top,
                   &d.cut_below);
      d.searched_mass = cut.passes > 0;
    } else {
      cut = search(call, team, src, mass, neg_inf_key, 0, target - exact.above, bottom, top);
    }
    st.topp_path   = RowPath::buckets;
    st.topp_passes = held ? std::int16_t(cut.passes) : std::int16_t(-1);
  }
  d.cut      = cut;
  d.write    = Write::gathered;
  d.set_size = n;
  if (CallT::deferred && plan.partial) {
    d.partial     = true;
    d.above_mass  = exact.above;
    d.above_count = plan.above;
    d.outliers    = plan.outliers;
    d.head        = plan.head;
  }
}

// topp_range, inlined or not (inline_topp).
template <class CallT>
KOKKOS_INLINE_FUNCTION BucketRange topp_buckets(CallT const& call,
                                                typename CallT::member_type const& team,
                                                const std::uint32_t* hist, BucketMap const& map,
                                                double head_mass, double target_lo,
                                                double target_hi, float max, float inv_t,
                                                int* slot) {
  if constexpr (CallT::inline_topp) {
    return topp_range_inline(team, hist, map, head_mass, target_lo, target_hi, max,
                             call.prm.weight_scale, inv_t, slot);
  } else {
    return topp_range(team, hist, map, head_mass, target_lo, target_hi, max, call.prm.weight_scale,
                      inv_t, slot);
  }
}

// How far past the top-p target ceil(p * total) the kept weight W may
// lie: less than one entry of the boundary's top bucket, which weighs at
// most its upper bound (WeightBounds, capped at the scale), or the scale
// where the buckets reach above t or the bound is 0 (underflow or NaN:
// the scale only widens what uses it). draw_buckets' range and the split
// path's helpers (SplitKernel::helper_target) both bound W so.
KOKKOS_INLINE_FUNCTION weight_type last_entry_bound(BucketMap const& map, BucketPlan const& plan,
                                                    key_type max_key, float weight_scale,
                                                    float inv_t) {
  const weight_type scale = weight_type(weight_scale);
  if (!(plan.range.hi < map.nb)) return scale;
  const weight_type w =
      WeightBounds::of(map, key_value(max_key), weight_scale, inv_t).upper(plan.range.hi, 1);
  return w > 0 ? w : scale;
}

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_ROW_BOUNDARY_HPP
