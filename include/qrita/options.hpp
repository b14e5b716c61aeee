// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_OPTIONS_HPP
#define QRITA_OPTIONS_HPP

#include <cstddef>
#include <cstdint>

namespace qrita {

// How the pivot search splits its range each pass.
enum class Search : std::int8_t {
  quaternary,  // three pivots per pass (the paper's default)
  binary       // one pivot per pass (the paper's ablation)
};

// What happens to the tie group straddling the k-th place (or p's boundary).
enum class Ties : std::int8_t {
  exact,    // keep exactly as many as needed, lowest indices first (default)
  keep_all  // keep the whole group: the paper's "no duplicate handling"
            // ablation. NOT exact: more than k entries may survive.
};

// Tuning and ablation switches. The defaults give the exact definition with
// the paper's full algorithm; every other setting except Ties::keep_all
// changes speed only, never the answer.
struct Options {
  // Gaussian sigma-truncation: gather the entries above mu + delta * sigma
  // into team scratch and search there. Off: search the whole row.
  bool sigma_truncation = true;
  Search search = Search::quaternary;
  // The histogram of the gathering read, which bounds a truncation miss to
  // three whole-row passes. Off (an ablation): a miss searches the row.
  bool histogram = true;
  Ties ties = Ties::exact;
  // Entries each team can gather in team scratch (on chip); beyond them a
  // team gathers into the workspace's tier. 0: the backend's default,
  // clamped to the team scratch the backend allows. Changes speed only.
  int candidate_capacity = 0;
  // Entries each team can gather in the workspace's device memory. -1: the
  // backend's default; 0: none (the call then needs no workspace, and a row
  // whose boundary set does not fit on chip is searched whole).
  int tier_capacity = -1;
  // Threads per team, rounded down to a power of two (Kokkos 3.x's GPU team
  // scan needs one). 0: the backend's default (see detail/policy.hpp).
  int team_size = 0;
  // Upper bound on the persistent league. 0: as many teams as the device
  // runs at once.
  int max_teams = 0;
  // Teams that share a row when the batch is small (needs a Workspace).
  // 0: the backend decides (device backends split a row when the batch
  // leaves most teams idle; hosts never do); 1: never; n >= 2: n teams per
  // row at any batch. Changes speed only, never the answer.
  int teams_per_row = 0;
};

// Where a row's boundary was searched, as reported in RowStats.
enum class RowPath : std::int8_t {
  off = 0,        // the filter is not active on this row
  trivial = 1,    // nothing to search (no more candidates than k, or none)
  truncated = 2,  // among the outliers the first read gathered (a hit)
  buckets = 3,    // a truncation miss: in the histogram buckets that hold
                  // the boundary, gathered by a second read
  flat = 4,       // every candidate of the row is equal
  full = 5        // in the whole row (truncation off, or a boundary set no
                  // candidate tier could hold)
};

// Per-row diagnostics, written when the caller passes a stats view.
struct RowStats {
  RowPath topk_path;
  RowPath topp_path;
  std::int16_t topk_passes;  // pivot-search passes (each reads the searched set)
  std::int16_t topp_passes;  // -1: an internal bound failed (a bug: report it)
  std::int32_t outliers;     // entries above the truncation threshold
  std::int16_t row_passes;   // whole-row reads plus whole-row writes
  std::int16_t teams;        // teams that worked on the row
  std::int32_t gathered;     // entries the second read gathered (buckets path)
  bool tier;                 // the searched set spilled into the workspace
};

// How a call is laid out (qrita::plan): what the options and the backend's
// limits resolve to, in the terms a caller can act on (sizes, teams per row,
// the workspace to make).
struct LaunchPlan {
  int team_size          = 0;  // threads per team
  std::int64_t league_size = 0;  // persistent teams (<= batch)
  int candidate_capacity = 0;  // candidates a team gathers on chip
  int tier_capacity      = 0;  // candidates a team may gather in the workspace
  int histogram_buckets  = 0;  // buckets of the first read's histogram
  int teams_per_row      = 1;  // > 1: each row is split across this many teams
  int split_team_size    = 0;  // threads per team of the split launches
  std::size_t team_scratch_bytes = 0;  // on-chip scratch per team
  // Device memory the call needs besides its arguments: the size of the
  // qrita::Workspace to pass (0: none needed).
  std::size_t workspace_bytes = 0;
};

}  // namespace qrita

#endif  // QRITA_OPTIONS_HPP
