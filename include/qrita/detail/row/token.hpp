// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_DETAIL_ROW_TOKEN_HPP
#define QRITA_DETAIL_ROW_TOKEN_HPP

// sample_tokens: the entry where the kept set's cumulative weight, in the
// definition's order, first exceeds floor(u W / 2^64), u the row's
// Philox draw.

#include <qrita/detail/draw.hpp>
#include <qrita/detail/resolve_ties.hpp>
#include <qrita/detail/row/boundary.hpp>
#include <qrita/detail/row/gather.hpp>
#include <qrita/detail/row/kept.hpp>
#include <qrita/detail/row/search.hpp>
#include <qrita/detail/row/state.hpp>

#include <cstdint>

namespace qrita {
namespace detail {

// sample_tokens: the entry where the kept set's cumulative weight, in
// the definition's order, first exceeds floor(u W / 2^64). The search is
// top-p's, on the kept set (keys above the cut plus cut.keep copies of
// it), with that integer target; the drawn entry is the last one the
// search keeps.
template <class CallT>
KOKKOS_INLINE_FUNCTION void write_token(CallT const& call, typename CallT::member_type const& team,
                                        std::int64_t r, const typename CallT::value_type* row,
                                        Filters const& f, RowScan const& scan, BucketMap const& map,
                                        Decision d, RowScratch const& s) {
  int token = -1;
  if (scan.candidates > 0) {
    const MassMeasure mass = mass_of(call, scan, f);
    Boundary cut           = d.cut;
    if (d.drawn) {
      token = tie_column_bound(team, s.set, d.set_size, cut.key, cut.keep, call.prm.vocab);
    } else if (whole_row_group(call, d, scan)) {
      // A flat row without -inf or NaN: the kept entries are columns
      // 0 .. keep-1, of equal weight; the n-th is column n - 1.
      const weight_type unit = mass.unit(cut.key);
      const weight_type t    = mul_high_64(f.u, unit * cut.keep) + 1;
      token                  = int((t + unit - 1) / unit) - 1;
    } else if (CallT::deferred && d.partial &&
               draw_partial(call, team, row, f, scan, map, d, s, token)) {
      // Drawn from the buckets that hold the target (a third read).
    } else if (kept_in_set(call, d) || gather_kept(call, team, row, cut, s, d)) {
      if (!draw_by_rank(call, team, f, d, s, mass, token)) {
        const Source src    = s.set.source(d.set_size);
        const weight_type W = sum_above(team, src, mass, cut.key) + mass.unit(cut.key) * cut.keep;
        const Boundary b = search(call, team, src, mass, cut.key, cut.keep, mul_high_64(f.u, W) + 1,
                                  key_type(cut.key - 1), scan.max_key);
        token            = tie_column_bound(team, s.set, d.set_size, b.key, b.keep, call.prm.vocab);
      }
    } else {
      // The kept set is larger than the candidate tiers: the same search
      // over the row.
      const RowSource<typename CallT::value_type> src{row, call.prm.vocab};
      const weight_type W = sum_above(team, src, mass, cut.key) + mass.unit(cut.key) * cut.keep;
      const Boundary b = search(call, team, src, mass, cut.key, cut.keep, mul_high_64(f.u, W) + 1,
                                key_type(cut.key - 1), scan.max_key);
      token            = column_in_row(call, team, row, b.key, b.keep, s);
    }
  }
  put_token(call, team, r, token);
}

template <class CallT>
KOKKOS_INLINE_FUNCTION void put_token(CallT const& call, typename CallT::member_type const& team,
                                      std::int64_t r, int token) {
  Kokkos::single(Kokkos::PerTeam(team),
                 [&]() { call.io.tokens[r * call.io.tokens_stride] = token; });
}

// The draw by ranking (draw.hpp), out of line on CUDA.
template <class CallT>
KOKKOS_INLINE_FUNCTION bool draw_by_rank(CallT const& call, typename CallT::member_type const& team,
                                         Filters const& f, Decision const& d, RowScratch const& s,
                                         MassMeasure const& mass, int& token) {
  if (s.hist == nullptr || rank_draw_scratch > call.prm.buckets + 1) return false;
  if constexpr (Policy<typename CallT::execution_space>::sampler_search_out_of_line)
    return draw_ranked_out_of_line(team, s.set, d.set_size, d.cut, mass, f.u, call.prm.vocab,
                                   s.hist, s.result, token);
  else
    return detail::draw_ranked(team, s.set, d.set_size, d.cut, mass, f.u, call.prm.vocab, s.hist,
                               s.result, token);
}

// sample_tokens on a partial decision. false when the buckets read miss
// the target or do not fit the set.
template <class CallT>
KOKKOS_INLINE_FUNCTION bool draw_partial(CallT const& call, typename CallT::member_type const& team,
                                         const typename CallT::value_type* row, Filters const& f,
                                         RowScan const& scan, BucketMap const& map,
                                         Decision const& d, RowScratch const& s, int& token) {
  if (s.hist == nullptr) return false;
  const MassMeasure mass  = mass_of(call, scan, f);
  weight_type target      = 0;
  const BucketRange range = draw_range(call, team, f, scan, map, d, s, mass, target);
  const AnswerSet got     = gather_answer(call, team, row, map, range, d, s, mass, scan.max_key);
  return draw_in_answer(call, team, d, s, mass, target, got, token);
}

// The draw's exact target floor(u W / 2^64) + 1 on a partial decision
// (W from the set the decision was searched on), and the buckets that
// hold it by the first read's histogram.
template <class CallT>
KOKKOS_INLINE_FUNCTION BucketRange draw_range(CallT const& call,
                                              typename CallT::member_type const& team,
                                              Filters const& f, RowScan const& scan,
                                              BucketMap const& map, Decision const& d,
                                              RowScratch const& s, MassMeasure const& mass,
                                              weight_type& target) {
  const weight_type W = kept_mass(call, team, d, s, mass);
  target              = mul_high_64(f.u, W) + 1;
  // The target is exact; the slack covers the histogram's rounding.
  const double slack = 1e-6 * double(W) + 4.0 * double(call.prm.vocab) + 4.0;
  return topp_buckets(call, team, s.hist, map, d.head, double(target) - slack,
                      double(target) + slack, key_value(scan.max_key), f.inv_t, s.result);
}

// The draw on what a third read gathered (the set). false when it does
// not hold the target.
template <class CallT>
KOKKOS_INLINE_FUNCTION bool draw_in_answer(CallT const& call,
                                           typename CallT::member_type const& team,
                                           Decision const& d, RowScratch const& s,
                                           MassMeasure const& mass, weight_type target,
                                           AnswerSet const& got, int& token) {
  if (got.n < 0) return false;
  const Boundary cut       = d.cut;
  const Source src         = s.set.source(got.n);
  const weight_type above  = got.exact.above;
  const weight_type inside = sum_above(team, src, mass, cut.key) + mass.unit(cut.key) * got.copies;
  // Above the range: kept entries of exact weight `above` (when the
  // range reaches the cut's bucket; otherwise inside is 0).
  if (!(target > above && target - above <= inside)) return false;
  const Boundary b = search(call, team, src, mass, cut.key, got.copies, target - above,
                            answer_low(got, cut), got.top);
  token            = tie_column_bound(team, s.set, got.n, b.key, b.keep, call.prm.vocab);
  return true;
}

// The buckets a deferred row's draw target lies in, placed before the
// cut from the partial plan and the merged histogram. The target
// floor(u W / 2^64) + 1 depends on the cut through W: the kept set
// weighs at least the top-p target ceil(p * total) and less than it plus
// its last entry, which lies in the boundary's buckets (so weighs at
// most their upper bound, or the weight scale where they reach above t),
// the exact total within the plan's slack of its estimate; the range
// covers every such W. Empty (lo > hi) where there is none; what it
// gathers is checked with exact integers (SplitKernel::finish_from_ahead).
// Without the call: SplitKernel::draw_ahead calls it out of line, and an
// out-of-line function that took the call would copy the kernel argument.
template <class Member>
KOKKOS_INLINE_FUNCTION BucketRange draw_buckets(Member const& team, const std::uint32_t* hist,
                                                BucketMap const& map, BucketPlan const& plan,
                                                Filters const& f, key_type max_key,
                                                float weight_scale, int vocab, int* slot) {
  const double slack = 1e-5 * plan.total + 4.0 * double(vocab) + 4.0;
  const double share = double(f.u) * 0x1p-64;
  const double last  = double(last_entry_bound(map, plan, max_key, weight_scale, f.inv_t));
  const double lo    = share * double(f.p) * (plan.total - slack) - slack;
  const double hi    = share * (double(f.p) * (plan.total + slack) + last) + slack;
  return topp_range_inline(team, hist, map, plan.head, lo, hi, key_value(max_key), weight_scale,
                           f.inv_t, slot);
}

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_ROW_TOKEN_HPP
