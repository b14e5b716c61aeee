// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_DETAIL_RESOLVE_TIES_HPP
#define QRITA_DETAIL_RESOLVE_TIES_HPP

// Stage 3, duplicate handling and the in-place mask (paper section 3.3,
// Algorithm 3).
//
// Keys above the boundary K are kept. Of the entries equal to K, the first
// `keep` in index order are kept. When the kept set was gathered, a search
// on columns finds the rightmost kept member of the group and the row is
// written once; otherwise a scan over the row numbers the group in order of
// appearance. When the whole group is kept, which is the common case on
// real logits, the pass is a plain masked write.

#include <qrita/detail/candidates.hpp>
#include <qrita/detail/keys.hpp>
#include <qrita/detail/reducers.hpp>
#include <qrita/detail/row_access.hpp>

#include <climits>

namespace qrita {
namespace detail {

// Writes -inf over n entries from p without reading them (16-byte stores
// for the aligned body).
template <class Member, class T>
KOKKOS_FORCEINLINE_FUNCTION void fill_neg_inf(Member const& team, T* p, int n) {
  constexpr int L      = Lanes<T>::n;
  const RowSplit split = split_row(p, n);
  Group<T> fill;
  for (int l = 0; l < L; ++l) fill.v[l] = neg_inf_of<T>();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, split.iterations()), [&](int i) {
    if (i < split.body)
      store_group(p + split.head + L * i, fill);
    else
      p[split.loose_column(i)] = neg_inf_of<T>();
  });
}

// Writes -inf over every entry of `row` not kept. Kept entries and entries
// already -inf are not written (so they stay bitwise as they were).
// `group_in_row` is how many entries of the row have key K; of them, those
// up to column `tie_column` are kept (INT_MAX: all), or, with tie_column
// < 0, the first `keep` in column order, numbered by an ordered scan.
//
// The comparisons use the boundary's float value instead of keys: for K a
// candidate key, key(z) >= K exactly when z >= value(K) (NaN fails both;
// -0.0 and +0.0 compare equal in both), and likewise for > and ==.
template <class Member, class T>
KOKKOS_FORCEINLINE_FUNCTION void apply_mask(Member const& team, T* row, int vocab,
                                       key_type K, std::uint32_t keep,
                                       std::uint32_t group_in_row,
                                       int tie_column) {
  constexpr int L      = Lanes<T>::n;
  const float cut      = key_value(K);
  const RowSplit split = split_row(row, vocab);
  if (tie_column >= 0 && group_in_row == std::uint32_t(vocab)) {
    // Every entry equals the cut: the kept ones are the columns up to the
    // bound, and the others need no read to be written.
    if (tie_column < vocab - 1)
      fill_neg_inf(team, row + tie_column + 1, vocab - 1 - tie_column);
  } else if (tie_column >= 0) {
    // Groups are read and, when any of them changes, written whole (the
    // unchanged entries with their own bits).
    const auto drop = [&](float z, int column) {
      return !(z > cut || (z == cut && column <= tie_column)) && !stored_neg_inf(z);
    };
    Kokkos::parallel_for(
        Kokkos::TeamThreadRange(team, split.iterations()), [&](int i) {
          if (i < split.body) {
            T* at      = row + split.head + L * i;
            Group<T> x = load_group(at);
            if (drop_in_group(x, split.head + L * i, drop)) store_group(at, x);
          } else {
            const int j = split.loose_column(i);
            if (drop(to_float(row[j]), j)) row[j] = neg_inf_of<T>();
          }
        });
  } else {
    Kokkos::parallel_scan(
        Kokkos::TeamThreadRange(team, vocab),
        [&](int i, std::uint32_t& rank, bool final) {
          const float z  = to_float(row[i]);
          const bool tie = z == cut;
          if (final) {
            const bool kept = z > cut || (tie && rank < keep);
            if (!kept && !stored_neg_inf(z)) row[i] = neg_inf_of<T>();
          }
          if (tie) rank += 1;
        });
  }
}

// Column bound of a partly kept tie group in a gathered set: the largest
// column C such that exactly `keep` of the set's entries with key K lie in
// columns <= C (keep >= 1, fewer than the group). Every entry of the row
// with key K must be in the set. A quaternary search on columns, as the
// pivot search is on keys: each pass counts, for three column pivots, the
// group members at or left of them; at most log4(vocab) + 1 passes over the
// set, whatever the size of the group (a pairwise ranking would cost group
// x set comparisons: bf16 rows have groups of thousands).
struct ColumnCounts {
  std::uint32_t at_or_left[3];
  KOKKOS_INLINE_FUNCTION static void init(ColumnCounts& v) {
    for (int j = 0; j < 3; ++j) v.at_or_left[j] = 0;
  }
  KOKKOS_INLINE_FUNCTION static void join(ColumnCounts& a, const ColumnCounts& b) {
    for (int j = 0; j < 3; ++j) a.at_or_left[j] += b.at_or_left[j];
  }
};

//
// keep = 1 (no tie, or the first of a group: the draw's usual case, and
// every fp32 list's) is the group's smallest column, one reduction instead
// of the search's log4(vocab) + 1.
template <class Member>
KOKKOS_INLINE_FUNCTION int tie_column_bound(Member const& team,
                                            Candidates const& set, int n,
                                            key_type K, std::uint32_t keep,
                                            int vocab) {
  const float cut = key_value(K);
  if (keep == 1) {
    int first = vocab - 1;
    team_reduce(
        team, n,
        [&](int i, int& acc) {
          if (!(set.value(i) == cut)) return;
          const int col = set.column(i);
          if (col < acc) acc = col;
        },
        Kokkos::Min<int>(first));
    return first < vocab ? first : vocab - 1;  // (no member: as the search)
  }
  // count(<= lo) < keep <= count(<= hi)
  int lo = -1, hi = vocab - 1;
  while (hi - lo > 1) {
    int pivot[3];
    for (int j = 0; j < 3; ++j) {
      pivot[j] = lo + int((std::int64_t(hi - lo) * (j + 1)) / 4);
      if (pivot[j] <= lo) pivot[j] = lo + 1;
    }
    ColumnCounts c;
    team_reduce(
        team, n,
        [&](int i, ColumnCounts& acc) {
          if (!(set.value(i) == cut)) return;
          const int col = set.column(i);
          for (int j = 0; j < 3; ++j)
            if (col <= pivot[j]) acc.at_or_left[j] += 1;
        },
        StructReducer<ColumnCounts>(c));
    for (int j = 0; j < 3; ++j) {
      if (c.at_or_left[j] >= keep) {
        if (pivot[j] < hi) hi = pivot[j];
      } else if (pivot[j] > lo) {
        lo = pivot[j];
      }
    }
  }
  return hi;
}

// Whether gathered entry z at `column` is kept by the boundary (cut,
// tie_column): above the cut, or on it and no further right than the bound.
KOKKOS_FORCEINLINE_FUNCTION bool kept(float z, int column, float cut, int tie_column) {
  return z > cut || (z == cut && column <= tie_column);
}

// The mask when every kept entry lies in the gathered set: the row is
// overwritten with -inf without being read, then the kept entries are
// written back from the set with their own bits. One write of the row
// instead of a read and a write. The end state is the one apply_mask leaves
// (entries that were -inf get -inf again, bit for bit).
template <class Member, class T>
KOKKOS_INLINE_FUNCTION void apply_mask_from_set(Member const& team, T* row,
                                                int vocab, Candidates const& set,
                                                int n, key_type K,
                                                int tie_column) {
  const float cut = key_value(K);
  fill_neg_inf(team, row, vocab);
  team.team_barrier();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n), [&](int j) {
    const float z = set.value(j);
    const int c   = set.column(j);
    if (kept(z, c, cut, tie_column)) row[c] = from_float<T>(z);
  });
}

// After a pass that already wrote -inf over everything below the gathered
// range and kept everything above it: -inf over the gathered entries that
// are not kept (a scattered write of a few entries, not a pass).
template <class Member, class T>
KOKKOS_INLINE_FUNCTION void mask_gathered(Member const& team, T* row,
                                          Candidates const& set, int n,
                                          key_type K, int tie_column) {
  const float cut = key_value(K);
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n), [&](int j) {
    const int c = set.column(j);
    if (!kept(set.value(j), c, cut, tie_column)) row[c] = neg_inf_of<T>();
  });
}

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_RESOLVE_TIES_HPP
