// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_DETAIL_KERNELS_ROW_KERNEL_HPP
#define QRITA_DETAIL_KERNELS_ROW_KERNEL_HPP

// The persistent team kernel: each team takes rows league_rank,
// league_rank + league_size, ... and decides each row in a few named steps
// (mask_row). Paths, by what holds the boundary of the kept set:
//
//   hit       the outliers above t, gathered by the first read: one read and
//             one write of the row (the write does not read).
//   buckets   a truncation miss (too few outliers, or too little mass): the
//             histogram of the first read names the boundary buckets; their
//             read masks everything outside them and gathers them.
//             Read; read + write.
//   flat      every candidate equal: read; read + write.
//   full      sigma-truncation off (the paper's ablation), no threshold, or
//             a boundary set too large for the candidate tiers: the pivot
//             search over the whole row (at most 17 reads), then a masked
//             read + write.
//
// The steps live in row/ (row/state.hpp lists them); docs/DESIGN.md gives
// the reasoning and the pass counts.

#include <qrita/detail/row/decide.hpp>
#include <qrita/detail/row/deferred.hpp>
#include <qrita/detail/row/filters.hpp>
#include <qrita/detail/row/gather.hpp>
#include <qrita/detail/row/state.hpp>
#include <qrita/detail/row/threshold.hpp>
#include <qrita/detail/row/write_mask.hpp>

#include <cstddef>
#include <cstdint>

namespace qrita {
namespace detail {

// One team per row (Call: RowCall, which gives the variant: see there).
// Deferred: the sampler's and the list's second kernel, on the rows the
// first deferred (row/deferred.hpp).
template <class ExecutionSpace, class T = float, Mode M = Mode::mask, bool OutOfLineSearch = false,
          bool Deferred = false>
struct RowKernel {
  using Call        = RowCall<ExecutionSpace, T, M, OutOfLineSearch, Deferred>;
  using policy_type = typename Call::policy_type;
  using member_type = typename Call::member_type;
  template <class U>
  using scratch_view = typename Call::template scratch_view<U>;
  using value_type   = T;

  Call call;

  static std::size_t scratch_bytes(int capacity, int buckets) {
    return Call::scratch_bytes(capacity, buckets);
  }

  KOKKOS_INLINE_FUNCTION void operator()(member_type const& team) const {
    KernelParams const& prm = call.prm;
    scratch_view<float> values(team.team_scratch(0), std::size_t(prm.capacity));
    scratch_view<int> columns(team.team_scratch(0), std::size_t(prm.capacity));
    scratch_view<std::uint32_t> hist(team.team_scratch(0), std::size_t(prm.buckets + 1));
    scratch_view<int> shared(team.team_scratch(0), std::size_t(Call::slots));
    const std::int64_t tier = std::int64_t(team.league_rank()) * prm.tier_capacity;
    RowScratch s;
    s.set    = Candidates{values.data(),
                       columns.data(),
                       prm.capacity,
                       prm.tier_capacity > 0 ? prm.tier_values + tier : nullptr,
                       prm.tier_capacity > 0 ? prm.tier_columns + tier : nullptr,
                       prm.tier_capacity,
                       shared.data()};
    s.hist   = prm.buckets > 1 ? hist.data() : nullptr;
    s.result = shared.data() + 1;
    for (std::int64_t r = team.league_rank(); r < prm.batch; r += team.league_size()) {
      if constexpr (Deferred) {
        if (deferred_flag(call, r) == 0) continue;  // the first kernel finished it
        if constexpr (Policy<ExecutionSpace>::deferred_out_of_line) {
          // The row's work runs on a copy of the call made here, for this
          // row only (see finish_deferred_out_of_line).
          const Call copy(call);
          finish_deferred_out_of_line(copy, team, r, s);
        } else {
          finish_deferred(call, team, r, s);
        }
      } else {
        mask_row(team, r, s);
      }
    }
  }

  // A row: its filters, the threshold, the first read, min-p, the
  // decision, then what the decision needs, and the output.
  KOKKOS_INLINE_FUNCTION void mask_row(member_type const& team, std::int64_t r,
                                       RowScratch const& s) const {
    Call const& c = call;
    T* row        = c.logits + r * c.prm.row_stride;
    RowState rs;
    rs.f = row_filters(c, r);
    if (!rs.f.work()) return record(c, team, r, rs.st);

    rs.th            = threshold(c, team, row, rs.f);
    rs.map           = BucketMap::make(histogram_low(c, rs.th, rs.f), rs.th.t,
                             rs.th.valid() && c.prm.buckets > 1 ? c.prm.buckets : 1);
    rs.f.tail        = rs.th.valid() && rs.f.topp && !rs.f.topk;
    rs.scan          = gather_outliers(c, team, row, rs.map, s, rs.f);
    rs.outliers      = *s.set.counter;
    rs.st.outliers   = rs.outliers;
    rs.st.row_passes = 1;
    team.team_barrier();
    if (rs.f.minp) apply_min_p(c, team, row, rs.f, rs.th, rs.scan, rs.outliers, s, rs.st);

    switch (decide_after_scan(c, team, rs, s)) {
      case Next::gather_boundary:
        gather_boundary(c, team, row, rs, s);
        break;
      case Next::whole_row:
        rs.d = decide_whole_row(c, team, row, rs.f, rs.scan, rs.st);
        break;
      case Next::write:
        break;
      case Next::defer:
        if constexpr (M != Mode::mask) return defer(c, team, r, rs.f, rs.map, rs.scan, rs.plan, s);
        break;
    }
    if constexpr (M == Mode::mask) {
      write_mask(c, team, row, rs.d, s);
      record(c, team, r, rs.st);
    } else {
      finish_row(c, team, r, row, rs.f, rs.scan, rs.map, rs.d, s);
    }
  }
};

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_KERNELS_ROW_KERNEL_HPP
