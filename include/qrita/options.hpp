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
  Ties ties = Ties::exact;
  // Entries each team can gather in scratch; a row with more outliers than
  // this is searched whole (same answer, slower). 0: the backend's default,
  // clamped to the team scratch the backend allows.
  int candidate_capacity = 0;
  // Threads per team, rounded down to a power of two (Kokkos 3.x's GPU team
  // scan needs one). 0: the backend's default (see detail/backend.hpp).
  int team_size = 0;
  // Upper bound on the persistent league. 0: as many teams as the device
  // runs at once.
  int max_teams = 0;
};

// Which way a row went through a stage, as reported in RowStats.
enum class RowPath : std::int8_t {
  off = 0,        // the filter is not active on this row
  trivial = 1,    // nothing to search (e.g. no more candidates than k)
  truncated = 2,  // searched the gathered outliers (truncation hit)
  miss = 3,       // too few outliers or too little mass: searched the row
  overflow = 4,   // more outliers than the candidate buffer: searched the row
  full = 5        // truncation off or not applicable: searched the row
};

// Per-row diagnostics, written when the caller passes a stats view.
struct RowStats {
  RowPath topk_path;
  RowPath topp_path;
  std::int16_t topk_passes;  // pivot-search passes (each reads the set once)
  std::int16_t topp_passes;
  std::int32_t outliers;     // entries above the truncation threshold
};

// How a call is laid out (qrita::plan): what the options and the backend's
// limits resolve to.
struct LaunchPlan {
  int team_size          = 0;  // threads per team
  std::int64_t league_size = 0;  // persistent teams (<= batch)
  int candidate_capacity = 0;  // outliers a team gathers on chip
  std::size_t team_scratch_bytes = 0;  // on-chip scratch per team
  // Device memory the call uses besides its arguments (device-memory team
  // scratch, which Kokkos keeps between calls: repeated calls allocate
  // nothing).
  std::size_t workspace_bytes = 0;
};

}  // namespace qrita

#endif  // QRITA_OPTIONS_HPP
