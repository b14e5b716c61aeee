#ifndef QRITA_DETAIL_RESOLVE_TIES_HPP
#define QRITA_DETAIL_RESOLVE_TIES_HPP

// Stage 3, duplicate handling and the in-place mask (paper section 3.3,
// Algorithm 3).
//
// Keys above the boundary K are kept. Of the entries equal to K, the first
// `keep` in index order are kept: a scan over the row numbers them in order
// of appearance. When the whole group is kept, which is the common case on
// real logits, no scan is needed and the pass is a plain masked write.

#include <qrita/detail/keys.hpp>
#include <qrita/detail/row_access.hpp>

namespace qrita {
namespace detail {

// Writes -inf over every entry of `row` not kept. Kept entries and entries
// already -inf are not written (so they stay bitwise as they were).
// `group_in_row` is how many entries of the row have key K.
//
// The comparisons use the boundary's float value instead of keys: for K a
// candidate key, key(z) >= K exactly when z >= value(K) (NaN fails both;
// -0.0 and +0.0 compare equal in both), and likewise for > and ==.
template <class Member>
KOKKOS_INLINE_FUNCTION void apply_mask(Member const& team, float* row,
                                       int vocab, key_type K,
                                       std::uint32_t keep,
                                       std::uint32_t group_in_row) {
  const float neg_inf = bits_as_float(neg_inf_bits);
  const float cut     = key_value(K);
  if (keep >= group_in_row) {
    // Groups of four are read and, when any of them changes, written whole
    // (the unchanged ones with their own bits).
    const RowSplit split = split_row(row, vocab);
    Kokkos::parallel_for(
        Kokkos::TeamThreadRange(team, split.iterations()), [&](int i) {
          if (i < split.body) {
            float* at       = row + split.head + 4 * i;
            Float4 x        = load4(at);
            bool changed    = false;
            for (int c = 0; c < 4; ++c) {
              if (!(x.v[c] >= cut) && float_as_bits(x.v[c]) != neg_inf_bits) {
                x.v[c]  = neg_inf;
                changed = true;
              }
            }
            if (changed) store4(at, x);
          } else {
            const int j   = split.loose_column(i);
            const float z = row[j];
            if (!(z >= cut) && float_as_bits(z) != neg_inf_bits) row[j] = neg_inf;
          }
        });
  } else {
    Kokkos::parallel_scan(
        Kokkos::TeamThreadRange(team, vocab),
        [&](int i, std::uint32_t& rank, bool final) {
          const float z  = row[i];
          const bool tie = z == cut;
          if (final) {
            const bool kept = z > cut || (tie && rank < keep);
            if (!kept && float_as_bits(z) != neg_inf_bits) row[i] = neg_inf;
          }
          if (tie) rank += 1;
        });
  }
}

// Ties larger than this are ranked by the ordered scan of apply_mask rather
// than pairwise in the buffer (which costs group x buffer comparisons).
constexpr std::uint32_t max_buffer_ties = 256;

// The same mask when every kept entry lies in the gathered buffer (values
// `vals`, columns `cols`, n entries, all of the row's entries above t): the
// row is overwritten with -inf without being read, then the kept entries are
// written back from the buffer with their own bits. One write of the row
// instead of a read and a write. The end state is the one apply_mask leaves
// (entries that were -inf get -inf again, bit for bit). Of a partly kept
// tie group, an entry is kept when fewer than `keep` members of the group
// sit in lower columns.
template <class Member>
KOKKOS_INLINE_FUNCTION void apply_mask_from_buffer(
    Member const& team, float* row, int vocab, const float* vals,
    const int* cols, int n, key_type K, std::uint32_t keep,
    std::uint32_t group) {
  const float neg_inf = bits_as_float(neg_inf_bits);
  const float cut     = key_value(K);
  const RowSplit split = split_row(row, vocab);
  const Float4 fill{{neg_inf, neg_inf, neg_inf, neg_inf}};
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, split.iterations()),
                       [&](int i) {
                         if (i < split.body)
                           store4(row + split.head + 4 * i, fill);
                         else
                           row[split.loose_column(i)] = neg_inf;
                       });
  team.team_barrier();
  const bool whole_group = keep >= group;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n), [&](int j) {
    const float z = vals[j];
    bool kept     = z > cut;
    if (!kept && z == cut) {
      kept = whole_group;
      if (!kept) {
        const int c         = cols[j];
        std::uint32_t lower = 0;
        for (int m = 0; m < n; ++m)
          if (vals[m] == cut && cols[m] < c) ++lower;
        kept = lower < keep;
      }
    }
    if (kept) row[cols[j]] = z;
  });
}

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_RESOLVE_TIES_HPP
