// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_DETAIL_ROW_GATHER_HPP
#define QRITA_DETAIL_ROW_GATHER_HPP

// The reads that gather a row's entries into the team's candidate set:
// the first read (outliers above t into the set, the rest into the
// histogram), the boundary's read (a miss: the buckets that hold the
// boundary, masking the rest), the answer's read (a partial decision:
// the draw's target's or the list's first C entries' buckets), and an
// ordered scan that gathers exactly a kept set.

#include <qrita/detail/histogram.hpp>
#include <qrita/detail/row/state.hpp>
#include <qrita/detail/row_access.hpp>

#include <cstdint>

namespace qrita {
namespace detail {

// Pass 1: outliers into the candidate set, the rest into the histogram.
template <class CallT>
KOKKOS_INLINE_FUNCTION RowScan gather_outliers(CallT const& call,
                                               typename CallT::member_type const& team,
                                               const typename CallT::value_type* row,
                                               BucketMap const& map, RowScratch const& s,
                                               Filters const& f) {
  // The set and the histogram are reused row after row: no thread may
  // reset them while another still reads the previous row's.
  team.team_barrier();
  s.set.reset(team);
  std::uint32_t* hist = map.t == map.t && map.nb > 1 ? s.hist : nullptr;
  if (hist != nullptr)
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, map.nb + 1), [&](int b) { hist[b] = 0; });
  team.team_barrier();
  const RowScan scan = scan_row<CallT::row_unroll>(team, row, call.prm.vocab, map, s.set, hist,
                                                   f.tail, call.prm.weight_scale, f.inv_t);
  if (hist != nullptr) Kokkos::single(Kokkos::PerTeam(team), [&]() { hist[0] = scan.below; });
  team.team_barrier();
  return scan;
}

// The miss path (boundary_buckets.hpp): the buckets that hold the
// boundary are gathered by a second read, which masks the rest.
template <class CallT>
KOKKOS_INLINE_FUNCTION void gather_boundary(CallT const& call,
                                            typename CallT::member_type const& team,
                                            typename CallT::value_type* row, RowState& rs,
                                            RowScratch const& s) {
  Filters const& f       = rs.f;
  BucketMap const& map   = rs.map;
  RowScan const& scan    = rs.scan;
  BucketPlan const& plan = rs.plan;
  // From here on the row is partly masked.
  team.team_barrier();
  s.set.reset(team);
  team.team_barrier();
  const MassMeasure mass = mass_of(call, scan, f);
  const RangeMass exact  = gather_range<CallT::gather_unroll, CallT::mode == Mode::mask>(
      team, row, call.prm.vocab, map, plan.range, s.set, CallT::boundary_weigh(f), mass);
  team.team_barrier();
  resolve_buckets(call, team, f, scan, map, plan, exact, *s.set.counter, s, rs.d, rs.st);
}

// Gathers exactly the kept set of `cut` (keys above it, and the first
// cut.keep of its group by column) with an ordered scan of the row.
// Returns false when it holds more entries than the set.
template <class CallT>
KOKKOS_INLINE_FUNCTION bool gather_kept(CallT const& call, typename CallT::member_type const& team,
                                        const typename CallT::value_type* row, Boundary const& cut,
                                        RowScratch const& s, Decision& d) {
  team.team_barrier();
  s.set.reset(team);
  team.team_barrier();
  const float c = key_value(cut.key);
  Kokkos::parallel_scan(Kokkos::TeamThreadRange(team, call.prm.vocab),
                        [&](int i, std::uint32_t& rank, bool final) {
                          const float z  = to_float(row[i]);
                          const bool tie = z == c;
                          if (final && (z > c || (tie && rank < cut.keep))) s.set.push(z, i);
                          if (tie) rank += 1;
                        });
  team.team_barrier();
  d.set_size = *s.set.counter;
  d.write    = Write::from_set;
  team.team_barrier();
  return d.set_size <= s.set.capacity();
}

// Column of the keep-th entry (in column order) with key K in the row.
template <class CallT>
KOKKOS_INLINE_FUNCTION int column_in_row(CallT const& call, typename CallT::member_type const& team,
                                         const typename CallT::value_type* row, key_type K,
                                         std::uint32_t keep, RowScratch const& s) {
  const float c = key_value(K);
  Kokkos::parallel_scan(Kokkos::TeamThreadRange(team, call.prm.vocab),
                        [&](int i, std::uint32_t& rank, bool final) {
                          const bool tie = to_float(row[i]) == c;
                          if (final && tie && rank + 1 == keep) *s.result = i;
                          if (tie) rank += 1;
                        });
  team.team_barrier();
  const int column = *s.result;
  team.team_barrier();
  return column;
}

// How many of the cut's group a third read's set counts: all `keep` when
// the cut's bucket is in the range (the group is then in the set), none
// when the range lies above it. (A range below it holds no kept entry.)
KOKKOS_INLINE_FUNCTION std::uint32_t cut_copies(BucketMap const& map, BucketRange range,
                                                Boundary const& cut) {
  const int b = map.index(key_value(cut.key));
  return b >= range.lo && b <= range.hi ? cut.keep : 0u;
}

// What a third read of the buckets `range` knows before it reads: how
// many of the cut's group its set counts, and the keys that bound the
// set (range_bottom_key, and range_top_key no higher than max_key, the
// row's maximum). Both kernels' third reads fill them here.
KOKKOS_INLINE_FUNCTION void bound_answer(AnswerSet& got, BucketMap const& map, BucketRange range,
                                         Boundary const& cut, key_type max_key) {
  got.copies = cut_copies(map, range, cut);
  got.bottom = range_bottom_key(map, range);
  got.top    = range_top_key(map, range, max_key);
}

// Where a search on a third read's set starts from below: just under the
// cut (whose copies the set counts there), or the set's own bottom when
// the set holds no copies of the cut and that is higher.
KOKKOS_INLINE_FUNCTION key_type answer_low(AnswerSet const& got, Boundary const& cut) {
  const key_type under = cut.key - 1;
  return got.copies == 0 && got.bottom > under ? got.bottom : under;
}

// The third read: gathers the buckets `range` into the set (the row is
// not written) and sums the exact weight above them.
template <class CallT>
KOKKOS_INLINE_FUNCTION AnswerSet gather_answer(CallT const& call,
                                               typename CallT::member_type const& team,
                                               const typename CallT::value_type* row,
                                               BucketMap const& map, BucketRange range,
                                               Decision const& d, RowScratch const& s,
                                               MassMeasure const& mass, key_type max_key) {
  AnswerSet got;
  if (!range_fits(team, s.hist, map.nb, d.outliers, range, s.set.capacity())) return got;
  team.team_barrier();
  s.set.reset(team);
  team.team_barrier();
  // (write = false: nothing is stored through the pointer.) The draw
  // needs the weight above the range, the list no weight.
  got.exact = gather_range<CallT::gather_unroll, false>(
      team, const_cast<typename CallT::value_type*>(row), call.prm.vocab, map, range, s.set,
      CallT::answer_weigh, mass);
  team.team_barrier();
  got.n = *s.set.counter;
  team.team_barrier();
  bound_answer(got, map, range, d.cut, max_key);
  return got;
}

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_ROW_GATHER_HPP
