// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_DETAIL_ROW_SEARCH_HPP
#define QRITA_DETAIL_ROW_SEARCH_HPP

// The pivot search on the call (pivot_search.hpp: quaternary, or binary
// under Search::binary): top-k by count, then top-p on its survivors.

#include <qrita/detail/pivot_search.hpp>
#include <qrita/detail/row/state.hpp>

#include <cstdint>

namespace qrita {
namespace detail {

// ------------------------------------------------------ stage 2: search

template <class CallT, class Src, class Measure>
KOKKOS_INLINE_FUNCTION Boundary search(CallT const& call, typename CallT::member_type const& team,
                                       Src const& src, Measure const& measure, key_type floor,
                                       std::uint32_t boundary_count, weight_type target,
                                       key_type lo, key_type hi, weight_type* below = nullptr) {
  if constexpr (CallT::out_of_line_search)
    return pivot_search_out_of_line(call.prm.binary_search, team, src, measure, floor,
                                    boundary_count, target, lo, hi, below);
  else
    return pivot_search_by_kind(call.prm.binary_search, team, src, measure, floor, boundary_count,
                               target, lo, hi, below);
}

// Top-p on the survivors of a top-k cut in `src`: keys above cut.key plus
// cut.keep copies of it. Returns the combined boundary.
template <class CallT, class Src>
KOKKOS_INLINE_FUNCTION Boundary topp_after_topk(CallT const& call,
                                                typename CallT::member_type const& team,
                                                Src const& src, MassMeasure const& mass,
                                                Boundary const& cut, float pr, key_type hi,
                                                RowStats& st) {
  const double total = double(sum_above(team, src, mass, cut.key) + mass.unit(cut.key) * cut.keep);
  const Boundary b   = search(call, team, src, mass, cut.key, cut.keep, mass_target(pr, total),
                              key_type(cut.key - 1), hi);
  st.topp_passes     = std::int16_t(b.passes);
  // A boundary on the top-k cut keeps fewer of the same row group.
  return Boundary{b.key, b.keep, b.key == cut.key ? cut.group : b.group, b.passes};
}

// Top-k by count, then top-p on its survivors when the row has a p; the
// search set `src` holds every survivor. `target` is k less the entries
// known to lie above the set.
template <class CallT, class Src>
KOKKOS_INLINE_FUNCTION Boundary search_k_then_p(CallT const& call,
                                                typename CallT::member_type const& team,
                                                Src const& src, Filters const& f,
                                                MassMeasure const& mass, weight_type target,
                                                key_type lo, key_type hi, RowPath path,
                                                RowStats& st) {
  Boundary cut   = search(call, team, src, CountMeasure{}, neg_inf_key, 0, target, lo, hi);
  st.topk_path   = path;
  st.topk_passes = std::int16_t(cut.passes);
  if (f.topp) {
    cut          = topp_after_topk(call, team, src, mass, cut, f.p, hi, st);
    st.topp_path = path;
  }
  return cut;
}

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_ROW_SEARCH_HPP
