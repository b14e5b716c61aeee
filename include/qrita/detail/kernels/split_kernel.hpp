// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_DETAIL_KERNELS_SPLIT_KERNEL_HPP
#define QRITA_DETAIL_KERNELS_SPLIT_KERNEL_HPP

// Small batches: a row split across several teams. When the batch is
// smaller than the teams the device runs at once, one team per row leaves
// most of it idle and a row's reads are limited by what one multiprocessor
// keeps in flight. Here S teams share a row, in three launches on the same
// execution-space instance (ordered, no host synchronisation):
//
//   qrita::split_scan     S teams per row: the sample, then the gathering
//                         read of one segment each (outliers into the row's
//                         candidate list in the workspace, counts into its
//                         histogram, a partial RowScan per segment). The
//                         last team of the row to finish then decides it:
//                         the steps of mask_row on the merged scan (hit,
//                         flat, or the plan of a miss).
//   qrita::split_gather   S teams per row, rows that missed: the second read
//                         and write of one segment each; the last team to
//                         finish runs the search on the gathered buckets.
//                         (Deferred rows, below: their first gathering.)
//                         The mask: each team writes its segment's mask
//                         (rows decided by split_scan), and a missed
//                         row's last team writes the gathered entries'
//                         (no launch of its own for the writes). The
//                         sampler and the list write nothing; without the
//                         deferred launches below, split_gather clears
//                         their rows.
//
// The sampler and the list (given p values and a workspace) launch
// split_gather in its Deferred variant, and one or two others, for rows
// whose top-p kept set passes the candidate tiers
// (Next::defer; see "deferred rows" below):
//
//   qrita::split_deferred_plan     one team per row, before split_gather:
//                         the boundary's buckets planned from the merged
//                         histogram, and the sampler's ahead range (the
//                         draw's target buckets, SplitRow::ahead) (where
//                         the teams run in more than one wave; otherwise
//                         each team of split_gather plans them itself);
//   qrita::split_gather   (Deferred) S teams per row: those buckets
//                         gathered, and in the same read those of the
//                         ahead range where one was placed (the list's by
//                         split_scan); the last team cuts the set, then
//                         draws or lists from the ahead range's set
//                         (finish_from_ahead) or places the draw's target or
//                         the list's first C entries in buckets for a
//                         third read. (In split_gather, not a launch of
//                         its own: one launch fewer on every such call,
//                         whether a row defers or not.)
//   qrita::split_deferred_finish   S teams per row: those buckets gathered;
//                         the last team draws or lists. Also the rows'
//                         clearing. Where every split team is resident at
//                         once (CUDA, Policy::split_fused_finish), not a
//                         launch: split_gather's teams of a deferred row
//                         wait for its cut and do this work there
//                         (SplitKernel::deferred_end), and split_gather
//                         clears the other rows. There, too, one or two
//                         of the waiting teams search the ahead range's
//                         set while the last team cuts (help_cut: the
//                         draw's boundaries at the least and greatest
//                         target the cut allows, or the list's C-th
//                         entry), so the last team's chain holds the cut
//                         and at most a short search after it.
//
// "Last team": each team publishes its partial results, fences, and takes a
// ticket from the row's arrival counter; the team holding ticket S - 1 sees
// every other team's results. The decisions are those of RowKernel's
// functions on the same integers (sample sums, counts, fixed-point weights,
// candidate capacity), so a row gets bitwise the same mask whether it is
// split or not, whichever team decides. Rows that need the whole-row
// search, or an ordered scan of a tie group, are finished by the deciding
// team alone (rare; same answer, slower).

#include <qrita/detail/kernels/row_kernel.hpp>
#include <qrita/detail/row/boundary.hpp>
#include <qrita/detail/row/decide.hpp>
#include <qrita/detail/row/deferred.hpp>
#include <qrita/detail/row/filters.hpp>
#include <qrita/detail/row/kept.hpp>
#include <qrita/detail/row/list.hpp>
#include <qrita/detail/row/state.hpp>
#include <qrita/detail/row/threshold.hpp>
#include <qrita/detail/row/token.hpp>
#include <qrita/detail/row/write_mask.hpp>

#include <climits>
#include <cstddef>
#include <cstdint>

namespace qrita {
namespace detail {

// What the later launches do with a row.
enum class SplitMode : std::int8_t {
  none,      // nothing more: the row stays as it is, or was finished
  from_set,  // write-only mask from the candidate list
  gather,    // a miss: second read, search, then -inf over the losers
  row,       // masked read + write of each segment, tie bound known
  deferred,  // the sampler's or the list's kept set passes the tiers:
             // split_gather (Deferred) cuts it on the boundary's buckets
  answer,    // and split_deferred_finish reads the draw's or list's buckets
  cutting    // a fused split_gather's last team cuts the set, its helpers
             // search the ahead range's set (SplitKernel::help_cut)
};

// What a deferred row's helper teams found in its ahead range's set while
// the last team cut (SplitKernel::help_cut), slot h for helper h. The
// sampler's two: the draw's boundary at the least and the greatest target
// the kept weight allows; the list's one: the boundary of its first C
// entries and the cut key's highest listed column.
struct AheadHelp {
  Boundary b[2];
  weight_type below[2];   // their M(> K)
  weight_type target[2];  // the searches' targets, within the set
  int n[2];               // the set's size as the helper read it
  int ok[2];              // whether the search ran (the set held its target)
  int bound;              // the list's
};

// Everything a row carries from one launch to the next (workspace memory).
struct SplitRow {
  RowState row;  // its filters, first read, plan and decision (outliers: in the list)
  int tie_column;
  SplitMode mode;
  // A deferred row's third read (SplitMode::answer): its buckets, and the
  // draw's target or the list's K and W.
  BucketRange answer;
  // A deferred row's boundary buckets (split_deferred_plan), and whether
  // they fit the candidate tiers.
  BucketPlan deferred_plan;
  bool planned;
  // A deferred row's ahead range (the buckets of the list's first C
  // entries, list_ahead, placed by split_scan; or of the
  // draw's target, draw_buckets, placed by
  // split_deferred_plan, else by each split_gather team: ahead_for_gather),
  // which split_gather gathers with the boundary's into the list's last
  // ahead_size places (empty, lo > hi, where it does not lie above the
  // boundary's buckets or both do not fit the list), and how many entries
  // that read offered it.
  BucketRange ahead;
  int ahead_size;
  int ahead_counter;
  weight_type target;
  weight_type kept_mass;
  std::uint32_t kept_count;
  // The fused split_gather's helpers (SplitMode::cutting): the last
  // team's segment, the helpers done, and what they found.
  int help_from;
  int help_done;
  AheadHelp help;
};

// Where the split rows' state lies in the workspace; offsets in bytes.
struct SplitLayout {
  int teams_per_row = 1;  // S
  // Whether a deferred row's buckets are planned by split_deferred_plan
  // (one team per row) or by each team of split_gather (see
  // launch_split).
  bool plan_apart = false;
  // Whether split_gather (Deferred) also does split_deferred_finish's work
  // (Policy::split_fused_finish: CUDA, every split team resident at once;
  // see SplitKernel::deferred_end).
  bool fused_finish    = false;
  std::int64_t rows    = 0;  // rows the workspace holds state for
  int list_capacity    = 0;  // candidates per row
  int buckets          = 0;
  std::size_t values   = 0;  // float[rows][list_capacity]
  std::size_t columns  = 0;  // int[rows][list_capacity]
  std::size_t hist     = 0;  // uint32[rows][buckets + 1]
  std::size_t counters = 0;  // int[rows]
  std::size_t arrivals = 0;  // int[rows]: teams done with the launch
  std::size_t scans    = 0;  // RowScan[rows][S]
  std::size_t masses   = 0;  // TwoRangeMass[rows][S]
  std::size_t states   = 0;  // SplitRow[rows]
  std::size_t bytes    = 0;  // end

  static std::size_t align(std::size_t n) { return (n + 255) / 256 * 256; }

  static SplitLayout make(std::size_t base, int teams_per_row, std::int64_t rows, int list_capacity,
                          int buckets) {
    SplitLayout l;
    l.teams_per_row     = teams_per_row;
    l.rows              = rows;
    l.list_capacity     = list_capacity;
    l.buckets           = buckets;
    const std::size_t R = std::size_t(rows), S = std::size_t(teams_per_row);
    std::size_t at = align(base);
    // clang-format off
    l.values   = at; at = align(at + R * std::size_t(list_capacity) * sizeof(float));
    l.columns  = at; at = align(at + R * std::size_t(list_capacity) * sizeof(int));
    l.hist     = at; at = align(at + R * std::size_t(buckets + 1) * sizeof(std::uint32_t));
    l.counters = at; at = align(at + R * sizeof(int));
    l.arrivals = at; at = align(at + R * sizeof(int));
    l.scans    = at; at = align(at + R * S * sizeof(RowScan));
    l.masses   = at; at = align(at + R * S * sizeof(TwoRangeMass));
    l.states   = at; at = align(at + R * sizeof(SplitRow));
    l.bytes    = at;
    // clang-format on
    return l;
  }
};

struct SplitScan {};
struct SplitGather {};
struct SplitDeferredPlan {};
struct SplitDeferredFinish {};

// Deferred: the variant whose row steps are RowKernel's Deferred ones,
// for the launches that finish the sampler's and the list's deferred
// rows (SplitGather, SplitDeferredFinish) on calls that can defer rows;
// the others take the first.
template <class ExecutionSpace, class T = float, Mode M = Mode::mask, bool Deferred = false>
struct SplitKernel {
  static_assert(!Deferred || M != Mode::mask, "qrita: only the sampler and the list defer rows");
  using Call        = RowCall<ExecutionSpace, T, M, false, Deferred>;
  using member_type = typename Call::member_type;
  template <class U>
  using scratch_view = typename Call::template scratch_view<U>;
  Call call;           // the rows, their inputs and outputs, the parameters
  char* ws = nullptr;  // workspace base
  SplitLayout lay;

  // --- workspace views of row r ---------------------------------------------

  KOKKOS_INLINE_FUNCTION SplitRow& state(std::int64_t r) const {
    return reinterpret_cast<SplitRow*>(ws + lay.states)[r];
  }
  KOKKOS_INLINE_FUNCTION std::uint32_t* hist(std::int64_t r) const {
    return reinterpret_cast<std::uint32_t*>(ws + lay.hist) + r * (lay.buckets + 1);
  }
  KOKKOS_INLINE_FUNCTION int* counter(std::int64_t r) const {
    return reinterpret_cast<int*>(ws + lay.counters) + r;
  }
  KOKKOS_INLINE_FUNCTION int* arrivals(std::int64_t r) const {
    return reinterpret_cast<int*>(ws + lay.arrivals) + r;
  }
  KOKKOS_INLINE_FUNCTION RowScan* scans(std::int64_t r) const {
    return reinterpret_cast<RowScan*>(ws + lay.scans) + r * lay.teams_per_row;
  }
  // The segments' sums of a launch's read (a read of one range leaves
  // above2 zero).
  KOKKOS_INLINE_FUNCTION TwoRangeMass* masses(std::int64_t r) const {
    return reinterpret_cast<TwoRangeMass*>(ws + lay.masses) + r * lay.teams_per_row;
  }
  // The row's candidate list, as the Candidates the row steps take.
  KOKKOS_INLINE_FUNCTION Candidates list(std::int64_t r) const {
    const std::int64_t at = r * lay.list_capacity;
    return Candidates{reinterpret_cast<float*>(ws + lay.values) + at,
                      reinterpret_cast<int*>(ws + lay.columns) + at,
                      lay.list_capacity,
                      nullptr,
                      nullptr,
                      0,
                      counter(r)};
  }

  // Segment s of a row: columns [begin, end), 16-byte aligned starts.
  KOKKOS_INLINE_FUNCTION int seg_begin(int s) const {
    const std::int64_t c = std::int64_t(s) * call.prm.vocab / lay.teams_per_row;
    return int(c) & ~(Lanes<T>::n - 1);
  }
  KOKKOS_INLINE_FUNCTION int seg_end(int s) const {
    return s + 1 == lay.teams_per_row ? call.prm.vocab : seg_begin(s + 1);
  }

  KOKKOS_INLINE_FUNCTION T* row_of(std::int64_t r) const {
    return call.logits + r * call.prm.row_stride;
  }

  // The S partial results of a row (RowScan, TwoRangeMass), joined.
  template <class V>
  KOKKOS_INLINE_FUNCTION V joined(member_type const& team, const V* parts) const {
    V v;
    team_reduce(
        team, lay.teams_per_row, [&](int i, V& acc) { V::join(acc, parts[i]); },
        StructReducer<V>(v));
    return v;
  }

  // Segment s's sums of a read of one range, and the S segments' joined.
  KOKKOS_INLINE_FUNCTION void put_mass(member_type const& team, std::int64_t r, int s,
                                       RangeMass const& m) const {
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      masses(r)[s] = TwoRangeMass{m.above, 0, m.total};
    });
  }
  KOKKOS_INLINE_FUNCTION RangeMass joined_mass(member_type const& team, std::int64_t r) const {
    const TwoRangeMass m = joined(team, masses(r));
    return RangeMass{m.above, m.total};
  }

  // Whether this team is the last of row r's S teams to get here, after
  // all of them published their results (see the top of the file). The
  // last team resets the counter for the next launch.
  KOKKOS_INLINE_FUNCTION bool last_team(member_type const& team, std::int64_t r, int* slot) const {
    team.team_barrier();
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      Kokkos::memory_fence();
      const int ticket = Kokkos::atomic_fetch_add(arrivals(r), 1);
      const bool last  = ticket == lay.teams_per_row - 1;
      if (last) {
        *arrivals(r) = 0;
        Kokkos::memory_fence();
      }
      *slot = last ? 1 : 0;
    });
    team.team_barrier();
    const bool last = *slot == 1;
    team.team_barrier();
    return last;
  }

  // --- the launches -------------------------------------------------------------

  KOKKOS_INLINE_FUNCTION void operator()(SplitScan, member_type const& team) const {
    const std::int64_t r = team.league_rank() / lay.teams_per_row;
    const int s          = team.league_rank() % lay.teams_per_row;
    T* row               = row_of(r);
    Filters f            = row_filters(call, r);
    const int b          = seg_begin(s);
    // Team scratch: the segment's histogram, two shared ints, and room for
    // the deciding team's copy of the candidate list (see decide).
    scratch_view<std::uint32_t> local(team.team_scratch(0), std::size_t(call.prm.buckets + 1));
    scratch_view<int> slot(team.team_scratch(0), 2);
    scratch_view<float> chip_values(team.team_scratch(0), std::size_t(call.prm.capacity));
    scratch_view<int> chip_columns(team.team_scratch(0), std::size_t(call.prm.capacity));
    RowScan scan;
    RowScan::init(scan);
    if (f.work()) {
      // Every team samples the row: bitwise the same threshold everywhere.
      const Threshold th = threshold(call, team, row, f);
      const BucketMap map =
          BucketMap::make(histogram_low(call, th, f), th.t,
                          th.valid() && call.prm.buckets > 1 ? call.prm.buckets : 1);
      f.tail           = th.valid() && f.topp && !f.topk;
      std::uint32_t* h = map.nb > 1 ? local.data() : nullptr;
      if (h != nullptr)
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, map.nb + 1), [&](int i) { h[i] = 0; });
      team.team_barrier();
      scan = scan_row<Call::row_unroll>(team, row + b, seg_end(s) - b, map, list(r), h, f.tail,
                                        call.prm.weight_scale, f.inv_t, b);
      team.team_barrier();
      if (h != nullptr) {
        std::uint32_t* global = hist(r);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, map.nb), [&](int i) {
          if (i > 0 && h[i] > 0) Kokkos::atomic_add(&global[i], h[i]);
        });
      }
      if (s == 0)
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          RowState& first = state(r).row;
          first.f         = f;
          first.th        = th;
          first.map       = map;
        });
    }
    Kokkos::single(Kokkos::PerTeam(team), [&]() { scans(r)[s] = scan; });
    if (last_team(team, r, slot.data()))
      decide(team, r, slot.data() + 1, chip_values.data(), chip_columns.data());
  }

  // Row r's decision, by one team, once every segment has been scanned.
  // The team first copies the head of the row's candidate list into its
  // scratch (chip_*, call.prm.capacity entries): the search then reads on-chip
  // memory on every pass, and sees the same set with the same capacity as
  // an unsplit team (on chip, then the tier).
  KOKKOS_INLINE_FUNCTION void decide(member_type const& team, std::int64_t r, int* slot,
                                     float* chip_values, int* chip_columns) const {
    T* row        = row_of(r);
    SplitRow& sr  = state(r);
    Call const& c = call;
    RowState rs;
    rs.f = row_filters(c, r);
    rs.st =
        RowStats{RowPath::off, RowPath::off, 0, 0, 0, 0, std::int16_t(lay.teams_per_row), 0, false};
    SplitMode mode      = SplitMode::none;
    int tie_column      = INT_MAX;
    constexpr bool mask = M == Mode::mask;
    if (rs.f.work()) {
      rs.f.tail        = sr.row.f.tail;
      rs.th            = sr.row.th;
      rs.map           = sr.row.map;
      rs.scan          = joined(team, scans(r));
      std::uint32_t* h = hist(r);
      Kokkos::single(Kokkos::PerTeam(team), [&]() { h[0] = rs.scan.below; });
      team.team_barrier();
      const Candidates global = list(r);
      rs.outliers             = *global.counter;
      const int C             = c.prm.capacity;
      const int copied        = rs.outliers < C ? rs.outliers : C;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, copied), [&](int i) {
        chip_values[i]  = global.vals0[i];
        chip_columns[i] = global.cols0[i];
      });
      team.team_barrier();
      RowScratch s;
      s.set    = Candidates{chip_values,     chip_columns,  C, global.vals0 + C, global.cols0 + C,
                         global.cap0 - C, global.counter};
      s.hist   = rs.map.nb > 1 ? h : nullptr;
      s.result = slot;
      rs.st.outliers   = rs.outliers;
      rs.st.row_passes = 1;
      team.team_barrier();
      // The sampler and the list finish a decided row here, at one call
      // site: a second one keeps nvcc from inlining finish_row, and the
      // out-of-line call on the kernel argument makes every thread of
      // every split_scan team copy the whole functor (2.4 KB) into local
      // memory at the kernel's entry (ptxas -v, sm_90).
      bool finish = false;
      switch (decide_after_scan(c, team, rs, s)) {
        case Next::gather_boundary:
          mode = SplitMode::gather;
          break;
        case Next::defer:
          // Finished by split_gather (Deferred) and split_deferred_finish
          // (or split_gather alone, fused), from the merged histogram and
          // the plan's head mass.
          mode = SplitMode::deferred;
          break;
        case Next::whole_row:
          rs.d = decide_whole_row(c, team, row, rs.f, rs.scan, rs.st);
          if (mask) write_mask(c, team, row, rs.d, s);
          finish = !mask;
          mode   = SplitMode::none;
          break;
        case Next::write:
          if (!mask) {
            // The later launches only clear the row's state.
            finish = true;
            mode   = SplitMode::none;
            break;
          }
          mode = rs.d.write == Write::from_set ? SplitMode::from_set
                 : rs.d.write == Write::row    ? SplitMode::row
                                               : SplitMode::none;
          break;
      }
      if constexpr (!mask) {
        if (finish) finish_row(c, team, r, row, rs.f, rs.scan, rs.map, rs.d, s);
      }
      BucketRange ahead;
      int ahead_size = 0;
      if constexpr (M == Mode::candidates) {
        if (mode == SplitMode::deferred)
          ahead = list_ahead_fitted(team, rs.map, rs.plan, s, ahead_size);
      }
      // As unsplit: whether the searched set went past on-chip capacity.
      rs.st.tier = mode == SplitMode::from_set && rs.d.set_size > c.prm.capacity;
      if (mask && (mode == SplitMode::from_set || mode == SplitMode::row))
        tie_column = detail::tie_column(c, team, rs.d, s.set);
      if (mode == SplitMode::row && tie_column < 0) {
        // Ranks of a tie group across segments: one team writes the row.
        write_mask(c, team, row, rs.d, s);
        mode = SplitMode::none;
      }
      team.team_barrier();
      Kokkos::single(Kokkos::PerTeam(team), [&]() {
        sr.row.f         = rs.f;
        sr.row.scan      = rs.scan;
        sr.row.plan      = rs.plan;
        sr.row.d         = rs.d;
        sr.tie_column    = tie_column;
        sr.ahead         = ahead;
        sr.ahead_size    = ahead_size;
        sr.ahead_counter = 0;
        // The list is refilled (a deferred row's by split_gather;
        // its outliers' count and weight are in the plan).
        if (mode == SplitMode::gather || mode == SplitMode::deferred) *counter(r) = 0;
      });
    }
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      sr.row.st = rs.st;
      sr.mode   = mode;
    });
  }

  // A deferred list row's ahead range (list_ahead) where it
  // fits (ahead_fits), with its count (size); else empty.
  KOKKOS_INLINE_FUNCTION BucketRange list_ahead_fitted(member_type const& team,
                                                       BucketMap const& map, BucketPlan const& plan,
                                                       RowScratch const& s, int& size) const {
    return ahead_fits(team, s.hist, map.nb, plan, list_ahead(call, team, map, plan, s),
                      lay.list_capacity, size);
  }

  // An ahead range `e` where it lies above the boundary's buckets and both
  // fit the list of `capacity` entries, with its count (size); else empty.
  // n1: the boundary's buckets' count (plan.range's), counted here unless
  // the caller has it.
  KOKKOS_INLINE_FUNCTION static BucketRange ahead_fits(member_type const& team,
                                                       const std::uint32_t* hist, int nb,
                                                       BucketPlan const& plan, BucketRange e,
                                                       int capacity, int& size,
                                                       std::uint32_t const* n1 = nullptr) {
    if (!(e.hi >= e.lo && e.lo > plan.range.hi)) return BucketRange{};
    const std::uint32_t n_boundary =
        n1 != nullptr ? *n1 : count_range(team, hist, nb, plan.outliers, plan.range).inside;
    const std::uint32_t n2 = count_range(team, hist, nb, plan.outliers, e).inside;
    if (n2 == 0 || n_boundary + n2 > std::uint32_t(capacity)) return BucketRange{};
    size = int(n2);
    return e;
  }

  // A deferred sampler row's ahead range: the draw's target buckets
  // (draw_buckets) where they fit (ahead_fits), planned where
  // the boundary's are (split_deferred_plan, or each split_gather team).
  // On CUDA out of line and static (Policy::deferred_out_of_line): the
  // call copies no functor, and split_scan's deciding code, which every
  // sampler call runs, does not carry it (placed there, it would weigh on
  // every sampler row, deferred or not).
  // Elsewhere inlined: hipcc 5.2 for gfx908 fails on the out-of-line
  // function ("unhandled SGPR spill to memory"), as on the others.
  KOKKOS_INLINE_FUNCTION static BucketRange draw_ahead(member_type const& team, SplitRow const& sr,
                                                       const std::uint32_t* hist,
                                                       BucketPlan const& plan, float weight_scale,
                                                       int vocab, int capacity, int* slot,
                                                       int& size) {
    if constexpr (Policy<ExecutionSpace>::deferred_out_of_line) {
      return draw_ahead_out_of_line(team, sr, hist, plan, weight_scale, vocab, capacity, slot,
                                    size);
    } else {
      return draw_ahead_inline(team, sr, hist, plan, weight_scale, vocab, capacity, slot, size);
    }
  }
  KOKKOS_FUNCTION QRITA_NOINLINE static BucketRange draw_ahead_out_of_line(
      member_type const& team, SplitRow const& sr, const std::uint32_t* hist,
      BucketPlan const& plan, float weight_scale, int vocab, int capacity, int* slot, int& size) {
    return draw_ahead_inline(team, sr, hist, plan, weight_scale, vocab, capacity, slot, size);
  }
  KOKKOS_INLINE_FUNCTION static BucketRange draw_ahead_inline(
      member_type const& team, SplitRow const& sr, const std::uint32_t* hist,
      BucketPlan const& plan, float weight_scale, int vocab, int capacity, int* slot, int& size) {
    const BucketRange e = draw_buckets(team, hist, sr.row.map, plan, sr.row.f, sr.row.scan.max_key,
                                       weight_scale, vocab, slot);
    // The plan is plan_partial's, which counted its buckets (plan.inside).
    return ahead_fits(team, hist, sr.row.map.nb, plan, e, capacity, size, &plan.inside);
  }

  // draw_ahead where the boundary's buckets were planned and the plan is
  // partial (size: its count); else empty (size 0).
  KOKKOS_INLINE_FUNCTION BucketRange planned_draw_ahead(member_type const& team, SplitRow const& sr,
                                                        RowScratch const& sc,
                                                        BucketPlan const& plan, bool planned,
                                                        int& size) const {
    size = 0;
    if (!planned || !plan.partial) return BucketRange{};
    return draw_ahead(team, sr, sc.hist, plan, call.prm.weight_scale, call.prm.vocab,
                      lay.list_capacity, sc.result, size);
  }

  // A deferred row's ahead range and its count, for split_gather's team:
  // the list's from split_scan, the draw's from split_deferred_plan or
  // placed here.
  KOKKOS_INLINE_FUNCTION BucketRange ahead_for_gather(member_type const& team, SplitRow const& sr,
                                                      RowScratch const& sc, BucketPlan const& plan,
                                                      bool planned, int& size) const {
    size = sr.ahead_size;
    if constexpr (M == Mode::sample) {
      if (!lay.plan_apart) return planned_draw_ahead(team, sr, sc, plan, planned, size);
    } else {
      (void)team, (void)sc, (void)plan, (void)planned;
    }
    return sr.ahead;
  }

  KOKKOS_INLINE_FUNCTION void operator()(SplitGather, member_type const& team) const {
    const std::int64_t r = team.league_rank() / lay.teams_per_row;
    const int s          = team.league_rank() % lay.teams_per_row;
    SplitRow const& sr   = state(r);
    if (sr.mode == SplitMode::deferred) {
      // (Only the Deferred variant's calls defer rows.)
      if constexpr (Deferred) deferred_gather(team, r, s);
      return;
    }
    RangeMass m;
    RangeMass::init(m);
    if (sr.mode == SplitMode::gather) {
      // The row's state is read once, into registers: passed by reference
      // into the workspace, every entry read the map again (the list's
      // stores may alias it).
      const BucketMap map     = sr.row.map;
      const BucketRange range = sr.row.plan.range;
      const Filters f         = sr.row.f;
      const int b             = seg_begin(s);
      const MassMeasure mass  = mass_of(call, sr.row.scan, f);
      m = gather_range<Call::gather_unroll, M == Mode::mask>(team, row_of(r) + b, seg_end(s) - b,
                                                             map, range, list(r),
                                                             Call::boundary_weigh(f), mass, b);
    }
    put_mass(team, r, s, m);
    if (sr.mode != SplitMode::gather) {
      if constexpr (M == Mode::mask) write_segment(team, r, s);
      if (clears_in_gather() && s == 0) clear(team, r);
      return;
    }
    scratch_view<int> slot(team.team_scratch(0), 2);
    if (!last_team(team, r, slot.data())) return;
    resolve(team, r, slot.data() + 1);
    if (clears_in_gather()) {
      team.team_barrier();
      clear(team, r);
    }
  }

  // Whether split_gather leaves the rows clear for the next call: every
  // mask call, the sampler's and the list's calls that launch no deferred
  // rows' launches (split_deferred_finish clears those), and fused ones
  // (deferred rows: deferred_end clears them).
  KOKKOS_INLINE_FUNCTION bool clears_in_gather() const {
    return M == Mode::mask || call.prm.deferred_end == nullptr || lay.fused_finish;
  }

  // The search on a missed row's gathered buckets, by one team, once every
  // segment has been read.
  KOKKOS_INLINE_FUNCTION void resolve(member_type const& team, std::int64_t r, int* slot) const {
    SplitRow& sr          = state(r);
    const RangeMass exact = joined_mass(team, r);
    RowScratch s;
    s.set       = list(r);
    s.hist      = hist(r);
    s.result    = slot;
    const int n = *s.set.counter;
    Decision d;
    RowStats st = sr.row.st;
    resolve_buckets(call, team, sr.row.f, sr.row.scan, sr.row.map, sr.row.plan, exact, n, s, d, st);
    st.tier = n > call.prm.capacity;
    if constexpr (M != Mode::mask) {
      // The sampler or the list: finished here (cleared by the caller, or
      // by split_deferred_finish after the deferred launches where that
      // is a launch).
      finish_row(call, team, r, row_of(r), sr.row.f, sr.row.scan, sr.row.map, d, s);
      team.team_barrier();
      Kokkos::single(Kokkos::PerTeam(team), [&]() { sr.mode = SplitMode::none; });
      return;
    }
    // The second read wrote -inf below the gathered range and kept what
    // lies above it: -inf over the gathered entries that lose. (The other
    // teams' writes are done, and none touched a gathered entry.)
    const int tie_column = detail::tie_column(call, team, d, s.set);
    mask_gathered(team, row_of(r), s.set, d.set_size, d.cut.key, tie_column);
    Kokkos::single(Kokkos::PerTeam(team), [&]() { sr.row.st = st; });
  }

  // The mask of segment s of a row split_scan decided (from_set, row); a
  // missed row's (gather) is written by split_gather's reads and its last
  // team.
  KOKKOS_INLINE_FUNCTION void write_segment(member_type const& team, std::int64_t r, int s) const {
    SplitRow const& sr = state(r);
    T* row             = row_of(r);
    const int b = seg_begin(s), e = seg_end(s);
    const Candidates set = list(r);
    const float cut      = key_value(sr.row.d.cut.key);
    switch (sr.mode) {
      case SplitMode::from_set: {
        fill_neg_inf(team, row + b, e - b);
        team.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, sr.row.d.set_size), [&](int j) {
          const int c = set.column(j);
          if (c < b || c >= e) return;
          const float z = set.value(j);
          if (kept(z, c, cut, sr.tie_column)) row[c] = from_float<T>(z);
        });
        team.team_barrier();
        break;
      }
      case SplitMode::row:
        // A bound below INT_MAX here is a whole-row group (tie_column):
        // its columns past the bound become -inf, unread.
        // Otherwise every entry at or above the cut is kept (group 0: no
        // whole-row shortcut inside a segment).
        if (sr.tie_column != INT_MAX) {
          const int from = sr.tie_column + 1 > b ? sr.tie_column + 1 : b;
          if (e > from) fill_neg_inf(team, row + from, e - from);
        } else {
          apply_mask(team, row + b, e - b, sr.row.d.cut.key, 0u, 0u, INT_MAX);
        }
        team.team_barrier();
        break;
      default:  // none (decided and written), gather (above)
        break;
    }
  }

  // Leaves row r's counts zero for the next call, and reports.
  KOKKOS_INLINE_FUNCTION void clear(member_type const& team, std::int64_t r) const {
    std::uint32_t* h = hist(r);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, lay.buckets + 1), [&](int i) { h[i] = 0; });
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      *counter(r) = 0;
      if (call.io.stats != nullptr) call.io.stats[r * call.io.stats_stride] = state(r).row.st;
    });
  }

  // --- the sampler's and the list's deferred rows (Deferred) ------------------
  //
  // A row whose top-p kept set passes the tiers (Next::defer)
  // is finished as RowKernel's second kernel finishes it, with its reads
  // split across the row's S teams like the mask's: split_deferred_plan
  // plans the boundary's buckets from the merged histogram (one team per
  // row), split_gather (this variant) gathers them and, on the row's last
  // team, cuts the set and places the draw's target or the list's first C
  // entries in buckets; split_deferred_finish (or, fused, split_gather's
  // teams once the cut is made: deferred_end) gathers those and its last
  // team draws or lists. Where a check fails, that team finishes the row
  // as the second kernel would (draw_partial, list_partial, whole-row
  // search). split_deferred_finish (fused: split_gather) also clears the
  // rows.

  // The ahead range's set: the list's last `size` places.
  KOKKOS_INLINE_FUNCTION Candidates ahead_set(std::int64_t r, int size) const {
    SplitRow& sr         = state(r);
    const Candidates all = list(r);
    const int at         = all.cap0 - size;
    return Candidates{all.vals0 + at, all.cols0 + at, size, nullptr, nullptr, 0, &sr.ahead_counter};
  }

  KOKKOS_INLINE_FUNCTION RowScratch row_scratch(std::int64_t r, int* result) const {
    RowScratch s;
    s.set    = list(r);
    s.hist   = hist(r);
    s.result = result;
    return s;
  }

  // The boundary's buckets of a deferred row: where split_scan's last team
  // placed them (the partial plan it recorded, plan_buckets), counted on
  // the merged histogram. The same integers give the same plan on every
  // team that calls it.
  KOKKOS_INLINE_FUNCTION bool plan_deferred(member_type const& team, SplitRow const& sr,
                                            RowScratch const& sc, BucketPlan& plan) const {
    plan = sr.row.plan;
    return plan_partial(call, team, sr.row.map, sc, plan);
  }

  // One team per row: the boundary's buckets of a deferred row, planned
  // from the merged histogram once, for split_gather's teams
  // (SplitLayout::plan_apart). Where each of those teams plans them itself
  // and the teams run in two waves, the plans of the first wave delay the
  // second by a large share of the launch.
  KOKKOS_INLINE_FUNCTION void operator()(SplitDeferredPlan, member_type const& team) const {
    const std::int64_t r = team.league_rank();
    SplitRow& sr         = state(r);
    if (sr.mode != SplitMode::deferred) return;
    scratch_view<int> slot(team.team_scratch(0), 2);
    const RowScratch sc = row_scratch(r, slot.data() + 1);
    BucketPlan plan;
    const bool planned = plan_deferred(team, sr, sc, plan);
    BucketRange ahead;
    int ahead_size = 0;
    if constexpr (M == Mode::sample)
      ahead = planned_draw_ahead(team, sr, sc, plan, planned, ahead_size);
    team.team_barrier();
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      sr.deferred_plan = plan;
      sr.planned       = planned;
      if constexpr (M == Mode::sample) {
        sr.ahead      = ahead;
        sr.ahead_size = ahead_size;
      }
    });
  }

  // split_gather's work on a deferred row (segment s): the planned buckets
  // gathered, and on the row's last team the cut.
  KOKKOS_INLINE_FUNCTION void deferred_gather(member_type const& team, std::int64_t r,
                                              int s) const {
    SplitRow& sr = state(r);
    scratch_view<int> slot(team.team_scratch(0), 2);
    const RowScratch sc = row_scratch(r, slot.data() + 1);
    const Filters f     = sr.row.f;
    BucketPlan plan;
    bool planned;
    if (lay.plan_apart) {
      plan    = sr.deferred_plan;
      planned = sr.planned;
    } else {
      // Every team the same plan, from the same integers.
      planned = plan_deferred(team, sr, sc, plan);
    }
    TwoRangeMass m;
    TwoRangeMass::init(m);
    int ahead_size          = 0;
    const BucketRange ahead = ahead_for_gather(team, sr, sc, plan, planned, ahead_size);
    if (planned) {
      const BucketMap map    = sr.row.map;
      const int b            = seg_begin(s);
      const MassMeasure mass = mass_of(call, sr.row.scan, f);
      if (ahead.hi >= ahead.lo) {
        // The boundary's buckets into the list's first places, the ahead
        // range's into its last ahead_size.
        Candidates cut_set = sc.set;
        cut_set.cap0 -= ahead_size;
        m = gather_two_ranges<Call::gather_unroll>(team, row_of(r) + b, seg_end(s) - b, map,
                                                   plan.range, cut_set, ahead,
                                                   ahead_set(r, ahead_size), mass, b);
      } else {
        const RangeMass one = gather_range<Call::gather_unroll, false>(
            team, row_of(r) + b, seg_end(s) - b, map, plan.range, sc.set, Weigh::all, mass, b);
        m = TwoRangeMass{one.above, 0, one.total};
      }
    }
    Kokkos::single(Kokkos::PerTeam(team), [&]() { masses(r)[s] = m; });
    const bool last = last_team(team, r, slot.data());
    if (!last && !lay.fused_finish) return;
    if constexpr (Policy<ExecutionSpace>::deferred_out_of_line) {
      // On a copy made here, for a deferred row's teams only: inlined, or
      // out of line on the kernel argument itself, nvcc copied the whole
      // functor (2.5 KB) into every thread's local memory at the kernel's
      // entry, row or no row (see finish_deferred_out_of_line).
      const SplitKernel copy(*this);
      copy.deferred_end_out_of_line(team, r, s, last, plan, planned, ahead, ahead_size, sc,
                                    slot.data());
    } else {
      deferred_end(team, r, s, last, plan, planned, ahead, ahead_size, sc, slot.data());
    }
  }

  KOKKOS_FUNCTION QRITA_NOINLINE void deferred_end_out_of_line(
      member_type const& team, std::int64_t r, int s, bool last, BucketPlan const& plan,
      bool planned, BucketRange ahead, int ahead_size, RowScratch const& sc, int* slot) const {
    deferred_end(team, r, s, last, plan, planned, ahead, ahead_size, sc, slot);
  }

  // A deferred row's teams after their gathering: the last cuts the set
  // (deferred_cut). Where the launch is fused (SplitLayout::fused_finish),
  // every team then waits for the cut and, where it placed a third read,
  // does split_deferred_finish's work on its segment at once: one launch
  // fewer on every sampler or list call with p values. The wait is on a
  // team that has already arrived and runs (the last), and every split
  // team of a fused launch is resident at once, so it ends (with other
  // kernels on the device, teams starting in order: docs/DESIGN.md).
  KOKKOS_INLINE_FUNCTION void deferred_end(member_type const& team, std::int64_t r, int s,
                                           bool last, BucketPlan const& plan, bool planned,
                                           BucketRange ahead, int ahead_size, RowScratch const& sc,
                                           int* slot) const {
    if (last) deferred_cut(team, r, s, plan, planned, ahead, ahead_size, sc);
    if constexpr (Policy<ExecutionSpace>::split_fused_finish) {
      if (!lay.fused_finish) return;
      SplitMode now = await_cut(team, r, slot, SplitMode::deferred);
      if (now == SplitMode::cutting) {
        help_cut(team, r, s, plan, ahead, ahead_size);
        now = await_cut(team, r, slot, SplitMode::cutting);
      }
      if (now == SplitMode::answer) {
        answer_read(team, r, s, slot);
      } else if (last) {
        team.team_barrier();
        clear(team, r);
      }
    } else {
      (void)s, (void)slot;
    }
  }

  // The row's mode once it is no longer `from` (deferred: the last team
  // has begun the cut, cutting; cutting: it has cut the set, none or
  // third), for every thread of the team. One thread polls the row's state
  // in global memory, past the caches (volatile), then fences: what the
  // last team wrote before the mode (deferred_cut fences there) is then
  // seen.
  KOKKOS_INLINE_FUNCTION SplitMode await_cut(member_type const& team, std::int64_t r, int* slot,
                                             SplitMode from) const {
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      volatile SplitMode* mode = &state(r).mode;
      SplitMode now            = *mode;
      while (now == from) now = *mode;
      Kokkos::memory_fence();
      *slot = int(now);
    });
    team.team_barrier();
    const SplitMode now = SplitMode(*slot);
    team.team_barrier();
    return now;
  }

  // The last team of a deferred row: the cut on the boundary's buckets
  // (or the whole-row search), then the buckets of the draw's target or of
  // the list's first C entries for split_deferred_finish, or the row
  // finished here where those do not fit.
  KOKKOS_INLINE_FUNCTION void deferred_cut(member_type const& team, std::int64_t r, int s,
                                           BucketPlan const& plan, bool planned, BucketRange ahead,
                                           int ahead_size, RowScratch const& sc) const {
    SplitRow& sr    = state(r);
    const T* row    = row_of(r);
    const Filters f = sr.row.f;
    RowStats st     = sr.row.st;
    SplitMode mode  = SplitMode::none;
    Decision d;
    const bool help = helped(f, plan, planned, ahead);
    if (help)
      Kokkos::single(Kokkos::PerTeam(team), [&]() {
        sr.help_from = s;
        sr.help_done = 0;
        Kokkos::memory_fence();
        sr.mode = SplitMode::cutting;
      });
    if (!planned) {
      // As the second kernel: the whole-row search.
      d = decide_whole_row(call, team, row, f, sr.row.scan, st);
      finish_row(call, team, r, row, f, sr.row.scan, sr.row.map, d, sc);
    } else {
      const TwoRangeMass both = joined(team, masses(r));
      const RangeMass exact{both.above, both.total};
      resolve_buckets(call, team, f, sr.row.scan, sr.row.map, plan, exact, *sc.set.counter, sc, d,
                      st);
      const MassMeasure mass = mass_of(call, sr.row.scan, f);
      BucketRange range;
      bool read          = false;
      weight_type target = 0;
      KeptSum kept{0, 0};
      // The draw or the list from the ahead range's set, where it holds
      // the answer; else from buckets placed here, for a third read.
      const bool done = d.partial && ahead.hi >= ahead.lo &&
                        finish_from_ahead(team, r, f, d, sc, ahead, ahead_size, mass, both, help);
      if (d.partial && !done) {
        if constexpr (M == Mode::sample) {
          range = draw_range(call, team, f, sr.row.scan, sr.row.map, d, sc, mass, target);
          read  = true;
        } else {
          read = list_range(call, team, sr.row.map, d, sc, mass, kept, range) == ListRange::read;
        }
      }
      if (read)
        read = range_fits(team, sc.hist, sr.row.map.nb, d.outliers, range, sc.set.capacity());
      if (read) {
        mode = SplitMode::answer;
      } else if (!done) {
        finish_row(call, team, r, row, f, sr.row.scan, sr.row.map, d, sc);
      }
      team.team_barrier();
      Kokkos::single(Kokkos::PerTeam(team), [&]() {
        sr.row.d      = d;
        sr.answer     = range;
        sr.target     = target;
        sr.kept_mass  = kept.mass;
        sr.kept_count = kept.count;
        if (mode == SplitMode::answer) *counter(r) = 0;  // the list is refilled
      });
    }
    // The helpers are done before the mode leaves cutting: a third read
    // refills the list they read.
    if constexpr (Policy<ExecutionSpace>::split_fused_finish) {
      if (help) await_helpers(team, r);
    }
    team.team_barrier();
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      sr.row.st = st;
      // Everything above before the mode: a fused launch's other teams
      // read it once they see the mode (await_cut).
      Kokkos::memory_fence();
      sr.mode = mode;
    });
  }

  // A deferred row's draw or list from its ahead range's set, which
  // split_gather gathered with the boundary's, checked with exact integers
  // as a third read's set is (draw_third, list_third). false where it does
  // not hold the answer. The set's count is read past the caches
  // (volatile): this team read the row's state, which holds it, before the
  // other teams' pushes were done.
  KOKKOS_INLINE_FUNCTION bool finish_from_ahead(member_type const& team, std::int64_t r,
                                                Filters const& f, Decision const& d,
                                                RowScratch const& sc, BucketRange range, int size,
                                                MassMeasure const& mass, TwoRangeMass const& exact,
                                                bool help) const {
    SplitRow& sr = state(r);
    AnswerSet got;
    const int n     = *static_cast<volatile int*>(&sr.ahead_counter);
    got.n           = n <= size ? n : -1;
    got.exact.above = exact.above2;
    got.exact.total = exact.total;
    bound_answer(got, sr.row.map, range, d.cut, sr.row.scan.max_key);
    RowScratch ahead = sc;
    ahead.set        = ahead_set(r, size);
    // The sampler needs W alone, the list K and W.
    KeptSum kept{0, 0};
    if constexpr (M == Mode::sample)
      kept.mass = kept_mass(call, team, d, sc, mass);
    else
      kept = partial_kept(call, team, d, sc, mass);
    // The helpers' searches (help_cut) hold where the ahead set lies above
    // the cut: no copies of its key, searched from the set's own bottom.
    bool from_help = false;
    if constexpr (Policy<ExecutionSpace>::split_fused_finish) {
      if (help) await_helpers(team, r);
      from_help = help && got.n >= 0 && got.copies == 0 && answer_low(got, d.cut) == got.bottom;
    } else {
      (void)help;
    }
    if constexpr (M == Mode::sample) {
      const weight_type target = mul_high_64(f.u, kept.mass) + 1;
      int token                = -1;
      bool drawn               = false;
      if constexpr (Policy<ExecutionSpace>::split_fused_finish)
        drawn = from_help && draw_helped(team, ahead, mass, target, got, sr.help, token);
      if (!drawn && !draw_in_answer(call, team, d, ahead, mass, target, got, token)) return false;
      put_token(call, team, r, token);
    } else {
      const int C = call.io.list_size;
      int listed  = 0;
      bool placed = false;
      if (!(kept.count > std::uint32_t(C))) return false;
      if constexpr (Policy<ExecutionSpace>::split_fused_finish) {
        const AheadHelp& e = sr.help;
        if (from_help && e.ok[0] && e.n[0] == got.n) {
          // The helper's boundary of the first C entries: C listed.
          listed = list_placed(call, team, r, ahead, got.n, e.b[0], e.bound, C, mass, kept, f);
          placed = true;
        }
      }
      if (!placed && !list_in_answer(call, team, r, f, d, ahead, mass, kept, got, listed))
        return false;
      list_tail(call, team, r, listed, kept.count);
    }
    return true;
  }

  // Teams that search a deferred row's ahead set while its last team cuts
  // the boundary's set (a fused split_gather): the sampler's two, the
  // list's one (Tuning). The cut's chain then holds no search of the ahead set.
  static constexpr int ahead_helpers =
      M == Mode::sample ? Tuning::sampler_ahead_helpers : Tuning::list_ahead_helpers;

  // Whether a deferred row's ahead set is searched by helpers; the same on
  // every team of the row (the same plan and state). The sampler's: top-p
  // alone, whose kept weight W the helpers bound (helper_target).
  KOKKOS_INLINE_FUNCTION bool helped(Filters const& f, BucketPlan const& plan, bool planned,
                                     BucketRange ahead) const {
    if (!Policy<ExecutionSpace>::split_fused_finish || !lay.fused_finish || !planned ||
        !plan.partial || !(ahead.hi >= ahead.lo) || lay.teams_per_row <= ahead_helpers)
      return false;
    if constexpr (M == Mode::sample)
      return f.topp && !f.topk && !f.draw;
    else
      return call.io.list_size > 0;
  }

  // The draw's target at the least (h = 0) or greatest (h = 1) kept
  // weight: W lies in [T, T + U - 1], T the top-p target ceil(p * total)
  // of the exact total, U an upper bound on the weight of one entry of the
  // boundary's buckets, where the cut lies (its unit: the search keeps
  // fewer than a unit past T).
  KOKKOS_INLINE_FUNCTION weight_type helper_target(SplitRow const& sr, BucketPlan const& plan,
                                                   TwoRangeMass const& both, int h) const {
    const weight_type least = mass_target(sr.row.f.p, double(both.total));
    const weight_type unit  = last_entry_bound(sr.row.map, plan, sr.row.scan.max_key,
                                               call.prm.weight_scale, sr.row.f.inv_t);
    return mul_high_64(sr.row.f.u, h == 0 ? least : least + (unit - 1)) + 1;
  }

  // A helper's work (a team of a fused split_gather that sees the row's
  // mode cutting): helper h = (s - help_from - 1) mod S, if below
  // ahead_helpers, searches the ahead set (every gathering team has
  // arrived: the last team announced the cut after its ticket) and
  // publishes what it found.
  KOKKOS_INLINE_FUNCTION void help_cut(member_type const& team, std::int64_t r, int s,
                                       BucketPlan const& plan, BucketRange ahead, int size) const {
    SplitRow& sr = state(r);
    const int S  = lay.teams_per_row;
    const int h  = (s - sr.help_from + S - 1) % S;
    if (h >= ahead_helpers) return;
    const int count       = *static_cast<volatile int*>(&sr.ahead_counter);
    const int n           = count <= size ? count : -1;
    const Candidates set  = ahead_set(r, size);
    const key_type bottom = range_bottom_key(sr.row.map, ahead);
    const key_type top    = range_top_key(sr.row.map, ahead, sr.row.scan.max_key);
    Boundary b{top, 0, 0, 0};
    weight_type below  = 0;
    bool ok            = false;
    weight_type target = 0;
    int bound          = INT_MAX;
    if (n >= 0) {
      const Source src = set.source(n);
      if constexpr (M == Mode::sample) {
        const MassMeasure mass   = mass_of(call, sr.row.scan, sr.row.f);
        const TwoRangeMass both  = joined(team, masses(r));
        const weight_type inside = sum_above(team, src, mass, neg_inf_key);
        const weight_type t      = helper_target(sr, plan, both, h);
        ok                       = t > both.above2 && t - both.above2 <= inside;
        target                   = ok ? t - both.above2 : 0;
        if (ok) b = search(call, team, src, mass, neg_inf_key, 0, target, bottom, top, &below);
      } else {
        const weight_type C = weight_type(call.io.list_size);
        ok                  = sum_above(team, src, CountMeasure{}, neg_inf_key) >= C;
        target              = C;
        if (ok) {
          b     = search(call, team, src, CountMeasure{}, neg_inf_key, 0, C, bottom, top);
          bound = tie_column_bound(team, set, n, b.key, b.keep, call.prm.vocab);
        }
      }
    }
    team.team_barrier();
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      AheadHelp& e = sr.help;
      e.b[h]       = b;
      e.below[h]   = below;
      e.target[h]  = target;
      e.n[h]       = n;
      e.ok[h]      = ok ? 1 : 0;
      if (h == 0) e.bound = bound;
      Kokkos::memory_fence();
      Kokkos::atomic_fetch_add(&sr.help_done, 1);
    });
  }

  // The last team waits for its helpers (polled past the caches, then a
  // fence: what they published is seen).
  KOKKOS_INLINE_FUNCTION void await_helpers(member_type const& team, std::int64_t r) const {
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      volatile int* done = &state(r).help_done;
      while (*done < ahead_helpers) {
      }
      Kokkos::memory_fence();
    });
    team.team_barrier();
  }

  // The draw between the helpers' boundaries: the target t lies between
  // theirs, so the drawn entry's key between their keys K1 <= K0. Each
  // helper's search returned M(> K) of its key: where t falls in K0's or
  // K1's group (the usual case: the two keys are one or two entries
  // apart), the boundary is known without a pass; otherwise it lies
  // strictly between them, where the search starts from. false where the
  // helpers do not bracket the target.
  KOKKOS_INLINE_FUNCTION bool draw_helped(member_type const& team, RowScratch const& ahead,
                                          MassMeasure const& mass, weight_type target,
                                          AnswerSet const& got, AheadHelp const& e,
                                          int& token) const {
    const weight_type above = got.exact.above;
    if (!(e.ok[0] && e.ok[1] && e.n[0] == got.n && e.n[1] == got.n && target > above &&
          e.b[0].passes > 0 && e.b[1].passes > 0))
      return false;
    const weight_type t = target - above;
    const Boundary &b0 = e.b[0], &b1 = e.b[1];
    if (t < e.target[0] || t > e.target[1] || b1.key > b0.key) return false;
    Boundary b = b0;
    bool known = false;
    for (int h = 0; h < 2 && !known; ++h) {
      const Boundary& bh     = e.b[h];
      const weight_type over = e.below[h];  // M(> K) of helper h's key
      const weight_type unit = mass.unit(bh.key);
      if (t > over && t - over <= unit * bh.group) {
        b      = bh;
        b.keep = std::uint32_t((t - over + unit - 1) / unit);
        known  = true;
      }
    }
    if (!known) {
      // M(> K1) >= t > M(>= K0) = M(> K0 - 1).
      if (!(e.below[1] >= t && key_type(b0.key - 1) > b1.key)) return false;
      b = search(call, team, ahead.set.source(got.n), mass, neg_inf_key, 0, t, b1.key,
                 key_type(b0.key - 1));
      if (b.passes <= 0) return false;
    }
    token = tie_column_bound(team, ahead.set, got.n, b.key, b.keep, call.prm.vocab);
    return true;
  }

  KOKKOS_INLINE_FUNCTION void operator()(SplitDeferredFinish, member_type const& team) const {
    const std::int64_t r = team.league_rank() / lay.teams_per_row;
    const int s          = team.league_rank() % lay.teams_per_row;
    SplitRow& sr         = state(r);
    if (sr.mode != SplitMode::answer) {
      if (s == 0) clear(team, r);
      return;
    }
    scratch_view<int> slot(team.team_scratch(0), 2);
    answer_read(team, r, s, slot.data());
  }

  // A deferred row's third read on segment s (the buckets deferred_cut
  // placed), and on the row's last team the draw or the list, then the
  // row's clearing: split_deferred_finish's work, or a fused
  // split_gather's.
  KOKKOS_INLINE_FUNCTION void answer_read(member_type const& team, std::int64_t r, int s,
                                          int* slot) const {
    SplitRow& sr            = state(r);
    const RowScratch sc     = row_scratch(r, slot + 1);
    const Filters f         = sr.row.f;
    const MassMeasure mass  = mass_of(call, sr.row.scan, f);
    const BucketMap map     = sr.row.map;
    const BucketRange third = sr.answer;
    const int b             = seg_begin(s);
    const RangeMass m       = gather_range<Call::gather_unroll, false>(
        team, row_of(r) + b, seg_end(s) - b, map, third, sc.set, Call::answer_weigh, mass, b);
    put_mass(team, r, s, m);
    if (!last_team(team, r, slot)) return;

    AnswerSet got;
    got.exact   = joined_mass(team, r);
    const int n = *sc.set.counter;
    got.n       = n <= sc.set.capacity() ? n : -1;
    bound_answer(got, sr.row.map, sr.answer, sr.row.d.cut, sr.row.scan.max_key);
    const Decision d = sr.row.d;
    bool done        = false;
    if constexpr (M == Mode::sample) {
      int token = -1;
      done      = draw_in_answer(call, team, d, sc, mass, sr.target, got, token);
      if (done) put_token(call, team, r, token);
    } else {
      const KeptSum kept{sr.kept_mass, sr.kept_count};
      int listed = 0;
      done       = list_in_answer(call, team, r, f, d, sc, mass, kept, got, listed);
      if (done) list_tail(call, team, r, listed, kept.count);
    }
    if (!done) {
      // The set now holds the third read's buckets, not the cut's: the
      // row's other paths from the cut alone (an ordered scan, or the
      // whole-row search), as the second kernel takes them.
      Decision whole = d;
      whole.partial  = false;
      whole.write    = Write::row;
      finish_row(call, team, r, row_of(r), f, sr.row.scan, sr.row.map, whole, sc);
    }
    team.team_barrier();
    Kokkos::single(Kokkos::PerTeam(team), [&]() { sr.mode = SplitMode::none; });
    clear(team, r);
  }
};

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_KERNELS_SPLIT_KERNEL_HPP
