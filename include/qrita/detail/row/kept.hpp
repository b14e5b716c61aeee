// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_DETAIL_ROW_KEPT_HPP
#define QRITA_DETAIL_ROW_KEPT_HPP

// The kept set of a decision: whether the gathered set holds it, and its
// size K and fixed-point weight W.

#include <qrita/detail/reducers.hpp>
#include <qrita/detail/row/state.hpp>

#include <cstdint>

namespace qrita {
namespace detail {

// ------------------------------------ sample_tokens and candidate_list

// Whether d keeps the first cut.keep columns of a row whose entries are
// all equal candidates (a flat row without -inf or NaN).
template <class CallT>
KOKKOS_INLINE_FUNCTION bool whole_row_group(CallT const& call, Decision const& d,
                                            RowScan const& scan) {
  return d.write == Write::row && d.cut.key == scan.max_key &&
         d.cut.group == std::uint32_t(call.prm.vocab) && d.cut.keep > 0;
}

// Whether every kept entry of decision d is in the gathered set.
template <class CallT>
KOKKOS_INLINE_FUNCTION bool kept_in_set(CallT const&, Decision const& d) {
  return !(CallT::deferred && d.partial) &&
         (d.write == Write::from_set || d.write == Write::gathered);
}

template <class CallT, class Src>
KOKKOS_INLINE_FUNCTION KeptSum kept_sum(CallT const&, typename CallT::member_type const& team,
                                        Src const& src, MassMeasure const& mass,
                                        Boundary const& cut) {
  KeptSum sum;
  team_reduce(
      team, src.count(),
      [&](int i, KeptSum& acc) {
        const float z = src[i];
        if (order_key(z) > cut.key) {
          acc.mass += mass(z);
          acc.count += 1;
        }
      },
      StructReducer<KeptSum>(sum));
  sum.mass += mass.unit(cut.key) * cut.keep;
  sum.count += cut.keep;
  return sum;
}

// ------------------------------------------- partial decisions: read 3
//
// A top-p survivor set larger than the tiers (Decision::partial) is cut
// as the mask cuts it: the second read gathers the boundary's buckets
// and sums the exact weight above them. That gives the kept set's exact
// weight W and size K; a third read then gathers only the buckets the
// sampler's target or the list's first C entries lie in, found with the
// first read's histogram (the list's, which do not depend on the cut,
// often in the second read: list_with_cut). Three reads in all, the
// first kernel's included, instead of a pivot search over the row; exact
// either way: the gathered buckets are checked to
// hold the answer with exact integers, and when they do not (the
// histogram's mass bounds are approximate) the row is searched whole.

// K and W of a partial decision: the set's kept entries and those above.
template <class CallT>
KOKKOS_INLINE_FUNCTION KeptSum partial_kept(CallT const& call,
                                            typename CallT::member_type const& team,
                                            Decision const& d, RowScratch const& s,
                                            MassMeasure const& mass) {
  KeptSum kept = kept_sum(call, team, s.set.source(d.set_size), mass, d.cut);
  kept.mass += d.above_mass;
  kept.count += d.above_count;
  return kept;
}

// W alone of a partial decision: from the search's own M(> K) where the
// cut is the top-p search's on the set (Decision::searched_mass), the
// sum kept_sum takes in a pass otherwise.
template <class CallT>
KOKKOS_INLINE_FUNCTION weight_type kept_mass(CallT const& call,
                                             typename CallT::member_type const& team,
                                             Decision const& d, RowScratch const& s,
                                             MassMeasure const& mass) {
  if (d.searched_mass) return d.above_mass + d.cut_below + mass.unit(d.cut.key) * d.cut.keep;
  return partial_kept(call, team, d, s, mass).mass;
}

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_ROW_KEPT_HPP
