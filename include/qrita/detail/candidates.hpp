// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_DETAIL_CANDIDATES_HPP
#define QRITA_DETAIL_CANDIDATES_HPP

// Where a team gathers entries of a row: (value, column) pairs, first in
// team scratch (on chip), then, when those are full, in the team's slice of
// the workspace's device memory (the "tier"). A gathering pass appends in
// any order (an atomic counter hands out places); everything that reads the
// set afterwards is order-independent (integer sums, min, max, counts by
// column), so the order never shows in an answer.

#include <qrita/detail/compat.hpp>

namespace qrita {
namespace detail {

// A list of values in up to two contiguous pieces: the gathered candidates
// (on chip, then tier) or a whole row (one piece).
struct Source {
  const float* data  = nullptr;
  int size           = 0;
  const float* data2 = nullptr;
  int size2          = 0;

  KOKKOS_FORCEINLINE_FUNCTION int count() const { return size + size2; }
  KOKKOS_FORCEINLINE_FUNCTION float operator[](int i) const {
    return i < size ? data[i] : data2[i - size];
  }
};

struct Candidates {
  float* vals0   = nullptr;  // team scratch
  int* cols0     = nullptr;
  int cap0       = 0;
  float* vals1   = nullptr;  // device tier (cap1 may be 0)
  int* cols1     = nullptr;
  int cap1       = 0;
  int* counter   = nullptr;  // team scratch: entries offered since reset

  KOKKOS_FORCEINLINE_FUNCTION int capacity() const { return cap0 + cap1; }

  // Appends (z, column) if there is room; the counter counts it either way,
  // so a full set still learns how many entries it was offered.
  KOKKOS_FORCEINLINE_FUNCTION void push(float z, int column) const {
    const int pos = Kokkos::atomic_fetch_add(counter, 1);
    if (pos < cap0) {
      vals0[pos] = z;
      cols0[pos] = column;
    } else if (pos - cap0 < cap1) {
      vals1[pos - cap0] = z;
      cols1[pos - cap0] = column;
    }
  }

  KOKKOS_FORCEINLINE_FUNCTION float value(int i) const {
    return i < cap0 ? vals0[i] : vals1[i - cap0];
  }
  KOKKOS_FORCEINLINE_FUNCTION int column(int i) const {
    return i < cap0 ? cols0[i] : cols1[i - cap0];
  }

  // The first n gathered values (n <= capacity()).
  KOKKOS_FORCEINLINE_FUNCTION Source source(int n) const {
    const int n0 = n < cap0 ? n : cap0;
    return Source{vals0, n0, vals1, n - n0};
  }

  // Empties the set. Every thread of the team must be past its last read of
  // the set before, and the caller must place a barrier after.
  template <class Member>
  KOKKOS_FORCEINLINE_FUNCTION void reset(Member const& team) const {
    Kokkos::single(Kokkos::PerTeam(team), [&]() { *counter = 0; });
  }
};

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_CANDIDATES_HPP
