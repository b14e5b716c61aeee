// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_DETAIL_ROW_DEFERRED_HPP
#define QRITA_DETAIL_ROW_DEFERRED_HPP

// The sampler's and the list's deferred rows: the first kernel records
// what its first read found (DeferredRow, the histogram) at the
// workspace's end, and the second kernel finishes the row from there; and
// the sampler's or the list's last step on a decided row (finish_row).

#include <qrita/detail/row/boundary.hpp>
#include <qrita/detail/row/decide.hpp>
#include <qrita/detail/row/gather.hpp>
#include <qrita/detail/row/list.hpp>
#include <qrita/detail/row/state.hpp>
#include <qrita/detail/row/token.hpp>

#include <cstdint>

namespace qrita {
namespace detail {

// Row r's record (deferred_record_bytes): counted from the workspace's
// end, so that a row's record is the same whatever the call's batch,
// and never within the tier or split state of a call the workspace was
// made for. Its last byte is the row's deferral flag: set by the first
// kernel, cleared by the second, so the workspace's flags are all 0
// between calls.
template <class CallT>
KOKKOS_INLINE_FUNCTION std::uint8_t* deferred_record(CallT const& call, std::int64_t r) {
  return call.prm.deferred_end - (r + 1) * call.prm.deferred_stride;
}

template <class CallT>
KOKKOS_INLINE_FUNCTION std::uint8_t& deferred_flag(CallT const& call, std::int64_t r) {
  return deferred_record(call, r)[call.prm.deferred_stride - 1];
}

template <class CallT>
KOKKOS_INLINE_FUNCTION DeferredRow& deferred_row(CallT const& call, std::int64_t r) {
  return *reinterpret_cast<DeferredRow*>(deferred_record(call, r));
}

template <class CallT>
KOKKOS_INLINE_FUNCTION std::uint32_t* deferred_hist(CallT const& call, std::int64_t r) {
  return reinterpret_cast<std::uint32_t*>(deferred_record(call, r) + deferred_header_bytes);
}

// The first kernel leaves row r to the second, with what its first read
// found (DeferredRow, the histogram): the second kernel does not read
// the row again for them. The outliers' count and exact weight come in
// the partial plan (plan_buckets).
template <class CallT>
KOKKOS_INLINE_FUNCTION void defer(CallT const& call, typename CallT::member_type const& team,
                                  std::int64_t r, Filters const& f, BucketMap const& map,
                                  RowScan const& scan, BucketPlan const& plan,
                                  RowScratch const& s) {
  std::uint32_t* kept_hist = deferred_hist(call, r);
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, map.nb + 1),
                       [&](int b) { kept_hist[b] = s.hist[b]; });
  Kokkos::single(Kokkos::PerTeam(team), [&]() {
    DeferredRow& dr        = deferred_row(call, r);
    dr.f                   = f;
    dr.map                 = map;
    dr.scan                = scan;
    dr.head.head           = plan.head;
    dr.head.total          = plan.total;
    dr.head.known          = true;
    dr.outliers            = plan.outliers;
    deferred_flag(call, r) = 1;
  });
}

// The sampler's or the list's last step, once the row is decided.
template <class CallT>
KOKKOS_INLINE_FUNCTION void finish_row(CallT const& call, typename CallT::member_type const& team,
                                       std::int64_t r, const typename CallT::value_type* row,
                                       Filters const& f, RowScan const& scan, BucketMap const& map,
                                       Decision const& d, RowScratch const& s) {
  if constexpr (CallT::mode == Mode::sample)
    write_token(call, team, r, row, f, scan, map, d, s);
  else if constexpr (CallT::mode == Mode::candidates)
    write_list(call, team, r, row, f, scan, map, d, s);
}

// The second kernel's work on a deferred row, from what the first read
// left in the row's record (defer): its histogram back into the team's
// scratch, the boundary's buckets planned and gathered (gather_boundary,
// as for mask_row's misses), then the draw or the list. It clears the
// row's flag.
template <class CallT>
KOKKOS_INLINE_FUNCTION void finish_deferred(CallT const& call,
                                            typename CallT::member_type const& team, std::int64_t r,
                                            RowScratch const& s) {
  typename CallT::value_type* row = call.logits + r * call.prm.row_stride;
  const DeferredRow& dr           = deferred_row(call, r);
  RowState rs;
  rs.f                           = dr.f;
  rs.map                         = dr.map;
  rs.scan                        = dr.scan;
  rs.outliers                    = int(dr.outliers);
  const std::uint32_t* kept_hist = deferred_hist(call, r);
  team.team_barrier();  // the previous row's histogram is read
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rs.map.nb + 1),
                       [&](int b) { s.hist[b] = kept_hist[b]; });
  team.team_barrier();
  const bool planned =
      plan_buckets(call, team, rs.f, rs.map, rs.scan, rs.outliers, dr.head, s, rs.plan);
  bool done = false;
  if constexpr (CallT::mode == Mode::candidates)
    done = planned && rs.plan.partial &&
           list_with_cut(call, team, r, row, rs.f, rs.map, rs.scan, rs.plan, s);
  if (!done) {
    if (planned)
      gather_boundary(call, team, row, rs, s);
    else
      rs.d = decide_whole_row(call, team, row, rs.f, rs.scan, rs.st);
    finish_row(call, team, r, row, rs.f, rs.scan, rs.map, rs.d, s);
  }
  team.team_barrier();  // every thread has read the flag and the record
  Kokkos::single(Kokkos::PerTeam(team), [&]() { deferred_flag(call, r) = 0; });
}

// The same, not inlined, called on a copy of the call that RowKernel
// makes for a deferred row only (CUDA: Policy::deferred_out_of_line).
// nvcc keeps some of the row's functions out of line, and a kernel whose
// functor (a kernel argument) has its address taken copies it whole into
// every thread's local memory at the kernel's entry, deferred row or not
// (docs/DESIGN.md, "Code shape on GPUs"). Here only a deferred row's team
// pays that copy; the idle path stays a read of the flags.
template <class CallT>
KOKKOS_FUNCTION QRITA_NOINLINE void finish_deferred_out_of_line(
    CallT const& call, typename CallT::member_type const& team, std::int64_t r,
    RowScratch const& s) {
  finish_deferred(call, team, r, s);
}

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_ROW_DEFERRED_HPP
