// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_DETAIL_ROW_DECIDE_HPP
#define QRITA_DETAIL_ROW_DECIDE_HPP

// A row's decision after its first read: trivial and flat rows, the hit
// path (the boundary among the gathered outliers), or what comes next
// (Next): the boundary's buckets, the whole-row search, or the second
// kernel.

#include <qrita/detail/row/search.hpp>
#include <qrita/detail/row/state.hpp>
#include <qrita/detail/row_access.hpp>

#include <cstdint>

namespace qrita {
namespace detail {

// Every candidate of the row kept (written by a masked read + write):
// the keys above -inf's, and none of -inf's group. (Said as "the smallest
// key and all of the row" it would be right for the mask, but not as a
// boundary the sampler's and the list's searches add copies of.)
KOKKOS_INLINE_FUNCTION Decision all_candidates(RowScan const&, RowStats& st) {
  Decision d;
  d.cut   = Boundary{neg_inf_key, 0, 0, 0};
  d.write = Write::row;
  st.row_passes += 2;
  return d;
}

// Every candidate equal: the first k (and of those, as many as top-p's
// share needs) in column order.
template <class CallT>
KOKKOS_INLINE_FUNCTION Decision decide_flat(CallT const& call, typename CallT::member_type const&,
                                            Filters const& f, RowScan const& scan, RowStats& st) {
  std::uint32_t keep = scan.candidates;
  if (f.topk && std::uint32_t(f.k) < keep) keep = std::uint32_t(f.k);
  if (f.topp) {
    // Equal weights (the maximum's, 2^F): the target over the unit.
    const MassMeasure mass   = mass_of(call, scan, f);
    const weight_type unit   = mass.unit(scan.max_key);
    const weight_type target = mass_target(f.p, double(unit * keep));
    const std::uint32_t need = std::uint32_t((target + unit - 1) / unit);
    if (need < keep) keep = need;
  }
  mark(st, f, RowPath::flat);
  st.row_passes =
      std::int16_t(st.row_passes + (scan.candidates == std::uint32_t(call.prm.vocab) ? 1 : 2));
  Decision d;
  d.cut   = Boundary{scan.max_key, keep, scan.candidates, 0};
  d.write = Write::row;
  return d;
}

// Whether a top-p cut made for mass_target(p, head.total) is the cut of
// the row's exact total W (every entry weighed relative to the maximum).
// head.total weighs the tail relative to the threshold t and rescales it;
// per entry that is off by the rounding of two float exponents (z - M and
// z - t, times 1/T: at most 36 * 2^-23 each for an entry of non-zero
// weight, exp(-36) * 2^50 < 1), two expf errors (2 ulp each) and the
// truncation of both weights (1 unit each): below 1e-5 of the tail's
// weight and 2 units per entry. Twice that is the slack: the cut stands
// where every target a total within it gives keeps the same entries, i.e.
// the prefix without its last entry stays below the least target and the
// prefix reaches the greatest. `above` is the weight of the entries above
// cut.key, `unit` the weight of one of its group; a search that did not
// end (cut.keep 0) never stands.
KOKKOS_INLINE_FUNCTION bool cut_stands(float p, HeadMass const& head, int vocab, weight_type above,
                                       Boundary const& cut, weight_type unit) {
  const double slack = 2e-5 * (head.total - head.head) + 4.0 * double(vocab) + 4.0;
  const weight_type least    = mass_target(p, head.total - slack);
  const weight_type greatest = mass_target(p, head.total + slack);
  const weight_type upto     = above + weight_type(cut.keep) * unit;
  return cut.keep > 0 && upto - unit < least && upto >= greatest;
}

// The hit path: the boundary lies among the gathered outliers.
template <class CallT>
KOKKOS_INLINE_FUNCTION bool try_outliers(CallT const& call, typename CallT::member_type const& team,
                                         Filters const& f, Threshold const& th, RowScan const& scan,
                                         int outliers, RowScratch const& s, Decision& d,
                                         HeadMass& head, RowStats& st) {
  if (outliers > s.set.capacity()) return false;
  const Source src       = s.set.source(outliers);
  const key_type lo      = order_key(th.t);
  const MassMeasure mass = mass_of(call, scan, f);
  Boundary cut;
  if (f.topk) {
    if (outliers < f.k || outliers == 0) return false;
    cut = search_k_then_p(call, team, src, f, mass, weight_type(f.k), lo, scan.max_key,
                          RowPath::truncated, st);
  } else {
    if (!(f.topp && f.tail)) return false;
    head = head_mass(team, src, th, scan, mass);
    // A draw needs the exact total of the row's weights, which only a
    // second read gives: never a hit.
    if (f.draw) return false;
    const weight_type target = mass_target(f.p, head.total);
    if (!(head.head >= double(target))) return false;
    weight_type above = 0;  // the set's weight above the cut's key, from the search
    cut = search(call, team, src, mass, neg_inf_key, 0, target, lo, scan.max_key, &above);
    // The target came from a rounded total: the cut stands only where the
    // exact total's target makes it too; otherwise a second read weighs
    // the row exactly.
    if (!cut_stands(f.p, head, call.prm.vocab, above, cut, mass.unit(cut.key))) return false;
    st.topp_path   = RowPath::truncated;
    st.topp_passes = std::int16_t(cut.passes);
  }
  st.tier = outliers > s.set.cap0;
  st.row_passes += 1;
  d.cut      = cut;
  d.write    = Write::from_set;
  d.set_size = outliers;
  return true;
}

// The exact weight of the first read's outliers (src) and, with the
// tail it weighed relative to t rescaled to the max, the row's total.
template <class Member, class Src>
KOKKOS_INLINE_FUNCTION HeadMass head_mass(Member const& team, Src const& src, Threshold const& th,
                                          RowScan const& scan, MassMeasure const& mass) {
  HeadMass head;
  head.head = double(sum_above(team, src, mass, neg_inf_key));
  // (A row whose maximum is +inf gives its finite tail weight 0.)
  const double down = (double(th.t) - double(mass.ref)) * double(mass.inv_t);
  head.total        = head.head + (down == down ? double(scan.tail) * exp_d(down) : 0.0);
  head.known        = true;
  return head;
}

template <class CallT>
KOKKOS_INLINE_FUNCTION Next decide_after_scan(CallT const& call,
                                              typename CallT::member_type const& team, RowState& rs,
                                              RowScratch const& s) {
  Filters& f           = rs.f;
  Threshold const& th  = rs.th;
  BucketMap const& map = rs.map;
  RowScan const& scan  = rs.scan;
  const int outliers   = rs.outliers;
  Decision& d          = rs.d;
  BucketPlan& plan     = rs.plan;
  RowStats& st         = rs.st;
  if (scan.candidates == 0) {
    mark(st, f, RowPath::trivial);  // all -inf / NaN: left as it is
    return Next::write;
  }
  if (scan.min_key == scan.max_key && !f.draw) {
    d = decide_flat(call, team, f, scan, st);
    return Next::write;
  }
  if (scan.min_key == scan.max_key) {
    d = all_candidates(scan, st);  // a draw on a flat row: by column
    return Next::write;
  }
  if (f.topk && scan.candidates <= std::uint32_t(f.k)) {
    st.topk_path = RowPath::trivial;  // no more candidates than k
    f.topk       = false;
  }
  if (!f.any()) {
    // Top-k kept every candidate: only NaN entries change (to -inf).
    d = all_candidates(scan, st);
    return Next::write;
  }
  HeadMass head;
  if (th.valid() && try_outliers(call, team, f, th, scan, outliers, s, d, head, st))
    return Next::write;
  if (th.valid() && plan_buckets(call, team, f, map, scan, outliers, head, s, plan))
    return Next::gather_boundary;
  if constexpr (!CallT::deferred && CallT::mode != Mode::mask)
    if (plan.partial) return Next::defer;
  return Next::whole_row;
}

// The whole-row search: the paper's ablation without truncation, and the
// fallback when no candidate tier can hold the boundary.
template <class CallT>
KOKKOS_INLINE_FUNCTION Decision decide_whole_row(CallT const& call,
                                                 typename CallT::member_type const& team,
                                                 const typename CallT::value_type* row,
                                                 Filters const& f, RowScan const& scan,
                                                 RowStats& st) {
  // A draw over the whole row is write_token's (it needs the total).
  if (f.draw) return all_candidates(scan, st);
  const RowSource<typename CallT::value_type> src{row, call.prm.vocab};
  const MassMeasure mass = mass_of(call, scan, f);
  const key_type lo      = key_type(scan.min_key - 1);
  Boundary cut{scan.min_key, scan.candidates, scan.candidates, 0};
  if (f.topk) {
    cut = search_k_then_p(call, team, src, f, mass, weight_type(f.k), lo, scan.max_key,
                          RowPath::full, st);
    st.row_passes += std::int16_t(st.topk_passes + (f.topp ? 1 + st.topp_passes : 0));
  } else if (f.topp) {
    const weight_type target = mass_target(f.p, double(sum_above(team, src, mass, neg_inf_key)));
    cut            = search(call, team, src, mass, neg_inf_key, 0, target, lo, scan.max_key);
    st.topp_path   = RowPath::full;
    st.topp_passes = std::int16_t(cut.passes);
    st.row_passes += std::int16_t(1 + cut.passes);
  }
  st.row_passes += 2;
  Decision d;
  d.cut   = cut;
  d.write = (f.topk || f.topp) ? Write::row : Write::none;
  return d;
}

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_ROW_DECIDE_HPP
