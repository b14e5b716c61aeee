// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_DETAIL_DRAW_HPP
#define QRITA_DETAIL_DRAW_HPP

// sample_tokens on a small kept set: the draw by ranking instead of by the
// pivot search (write_token, row/token.hpp).
//
// The kept entries of `cut` (keys above it, and the first cut.keep of its
// group by column), all of them in the set, are copied with their weights
// to `scratch` (the histogram's, free once the row is decided). Each then
// finds its cumulative weight in the definition's order (larger key first,
// lower column first among equal keys) by comparing against the others,
// and sums every copy's weight to the kept set's W as it goes (the same
// integers in the same order on every thread, so no team reduction); the
// drawn entry is the one whose cumulative weight first reaches
// floor(u W / 2^64) + 1. These are the integers the search uses (W, the
// target, every entry's weight), so the token is the same, bit for bit,
// after one pass over the set and one over the copies instead of the
// search's passes. Returns false, drawing nothing, when the set holds more
// than rank_draw_limit kept entries.

#include <qrita/detail/candidates.hpp>
#include <qrita/detail/compat.hpp>
#include <qrita/detail/keys.hpp>
#include <qrita/detail/philox.hpp>
#include <qrita/detail/policy.hpp>
#include <qrita/detail/pivot_search.hpp>
#include <qrita/detail/resolve_ties.hpp>

#include <climits>
#include <cstdint>

namespace qrita {
namespace detail {

// Kept entries a ranked draw takes (Tuning::rank_draw_limit).
constexpr int rank_draw_limit = Tuning::rank_draw_limit;
// 32-bit words of scratch it needs: key, column, weight (two halves) of
// each copy, and the drawn column.
constexpr int rank_draw_scratch = 4 * rank_draw_limit + 1;

// `scratch`: rank_draw_scratch team-shared words; `shared`: a team-shared
// int. The set's first n entries hold every kept entry of `cut`.
template <class Member>
KOKKOS_INLINE_FUNCTION bool draw_ranked(Member const& team, Candidates const& set, int n,
                                        Boundary const& cut, MassMeasure const& mass,
                                        std::uint64_t u, int vocab, std::uint32_t* scratch,
                                        int* shared, int& token) {
  constexpr int cap = rank_draw_limit;
  const int bound = cut.keep >= cut.group
                        ? INT_MAX
                        : tie_column_bound(team, set, n, cut.key, cut.keep, vocab);
  // Weights as two 32-bit halves: the scratch is 4-byte aligned.
  std::uint32_t* keys = scratch;
  std::uint32_t* cols = keys + cap;
  std::uint32_t* w_lo = cols + cap;
  std::uint32_t* w_hi = w_lo + cap;
  std::uint32_t* drawn = w_hi + cap;  // the token's column; ~0u (-1): none yet
  const auto weight = [&](int i) {
    return (weight_type(w_hi[i]) << 32) | weight_type(w_lo[i]);
  };
  Kokkos::single(Kokkos::PerTeam(team), [&]() {
    *shared = 0;
    *drawn  = ~0u;
  });
  team.team_barrier();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n), [&](int i) {
    const float z      = set.value(i);
    const key_type key = order_key(z);
    const int column   = set.column(i);
    if (!(key > cut.key || (key == cut.key && column <= bound))) return;
    const int at = Kokkos::atomic_fetch_add(shared, 1);
    if (at >= cap) return;
    const weight_type w = mass(z);
    keys[at]            = key;
    cols[at]            = std::uint32_t(column);
    w_lo[at]            = std::uint32_t(w);
    w_hi[at]            = std::uint32_t(w >> 32);
  });
  team.team_barrier();
  const int m = *shared;
  if (m > cap || m == 0) {
    team.team_barrier();  // every thread has read m before the caller reuses `shared`
    return false;
  }
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, m), [&](int i) {
    const key_type key = keys[i];
    const int column   = int(cols[i]);
    weight_type W       = 0;  // the kept set's weight
    weight_type through = 0;  // weight of the entries up to and with i
    for (int j = 0; j < m; ++j) {
      const weight_type w = weight(j);
      W += w;
      if (keys[j] > key || (keys[j] == key && int(cols[j]) <= column)) through += w;
    }
    const weight_type target = mul_high_64(u, W) + 1;
    if (through >= target && through - weight(i) < target) *drawn = std::uint32_t(column);
  });
  team.team_barrier();
  const std::uint32_t column = *drawn;
  token                      = column == ~0u ? -1 : int(column);
  team.team_barrier();
  return true;
}

// The same, not inlined (CUDA; see write_token): inlined into
// the split launch's first kernel, it made nvcc keep that kernel's body out
// of line with a copy of the functor in local memory (fp16 sampler, sm_90).
template <class Member>
KOKKOS_FUNCTION QRITA_NOINLINE bool draw_ranked_out_of_line(
    Member const& team, Candidates const& set, int n, Boundary const& cut,
    MassMeasure const& mass, std::uint64_t u, int vocab, std::uint32_t* scratch,
    int* shared, int& token) {
  return draw_ranked(team, set, n, cut, mass, u, vocab, scratch, shared, token);
}

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_DRAW_HPP
