// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_DETAIL_ROW_WRITE_MASK_HPP
#define QRITA_DETAIL_ROW_WRITE_MASK_HPP

// The mask's write: the tie group's column bound, then -inf over every
// entry the decision does not keep.

#include <qrita/detail/resolve_ties.hpp>
#include <qrita/detail/row/state.hpp>
#include <qrita/detail/row_access.hpp>

#include <climits>
#include <cstdint>

namespace qrita {
namespace detail {

// ------------------------------------------------ stage 3: ties, write

// How many of the boundary group a decision keeps: `keep`, or the whole
// group under the Ties::keep_all ablation.
template <class CallT>
KOKKOS_INLINE_FUNCTION std::uint32_t kept_of(CallT const& call, Boundary const& cut) {
  return call.prm.exact_ties ? cut.keep : cut.group;
}

// The column bound of the boundary group (members in columns up to it are
// kept): INT_MAX when the whole group is kept; for a gathered set, by a
// column search on it; for a masked row write, keep - 1 when the group is
// the whole row (a flat row without -inf or NaN), else -1: the write then
// numbers the group by an ordered scan.
template <class CallT>
KOKKOS_INLINE_FUNCTION int tie_column(CallT const& call, typename CallT::member_type const& team,
                                      Decision const& d, Candidates const& set) {
  const std::uint32_t keep = kept_of(call, d.cut);
  if (keep >= d.cut.group) return INT_MAX;
  if (d.write == Write::row)
    return d.cut.group == std::uint32_t(call.prm.vocab) ? int(keep) - 1 : -1;
  return tie_column_bound(team, set, d.set_size, d.cut.key, keep, call.prm.vocab);
}

template <class CallT>
KOKKOS_INLINE_FUNCTION void write_mask(CallT const& call, typename CallT::member_type const& team,
                                       typename CallT::value_type* row, Decision const& d,
                                       RowScratch const& s) {
  if (d.write == Write::none) return;
  const int bound = tie_column(call, team, d, s.set);
  if (d.write == Write::row)
    apply_mask(team, row, call.prm.vocab, d.cut.key, kept_of(call, d.cut), d.cut.group, bound);
  else if (d.write == Write::from_set)
    apply_mask_from_set(team, row, call.prm.vocab, s.set, d.set_size, d.cut.key, bound);
  else
    mask_gathered(team, row, s.set, d.set_size, d.cut.key, bound);
}

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_ROW_WRITE_MASK_HPP
