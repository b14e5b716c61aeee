#ifndef QRITA_DETAIL_ROW_ACCESS_HPP
#define QRITA_DETAIL_ROW_ACCESS_HPP

// Whole-row passes read the logits four floats at a time.
//
// The two full reads of a row (the gather and the masked write) are bound by
// memory bandwidth. One 16-byte load per thread and iteration instead of
// four 4-byte loads puts four times the bytes in flight per instruction,
// which is what lets a few resident teams per multiprocessor keep HBM busy.
// A row is split into a scalar head (up to the first 16-byte boundary), a
// body of aligned groups of four, and a scalar tail, so any row pointer and
// any vocabulary size work; the iteration space [0, body + head + tail)
// lists the body's groups first, then the loose entries.

#include <qrita/detail/compat.hpp>

#include <cstdint>

namespace qrita {
namespace detail {

struct alignas(16) Float4 {
  float v[4];
};

struct RowSplit {
  int head;  // loose entries before the first 16-byte boundary
  int body;  // aligned groups of four
  int tail;  // loose entries after the body

  KOKKOS_INLINE_FUNCTION int iterations() const { return body + head + tail; }
  // Column of the loose entry handled by iteration i >= body.
  KOKKOS_INLINE_FUNCTION int loose_column(int i) const {
    const int j = i - body;
    return j < head ? j : head + 4 * body + (j - head);
  }
};

KOKKOS_INLINE_FUNCTION RowSplit split_row(const float* row, int n) {
  // Floats are 4-byte aligned, so the misalignment is 0..3 floats.
  const int mis =
      int((reinterpret_cast<std::uintptr_t>(row) / sizeof(float)) & 3u);
  int head = mis == 0 ? 0 : 4 - mis;
  if (head > n) head = n;
  const int body = (n - head) / 4;
  return RowSplit{head, body, n - head - 4 * body};
}

// Aligned 16-byte load and store (p must be 16-byte aligned: split_row's
// body is).
KOKKOS_INLINE_FUNCTION Float4 load4(const float* p) {
  return *reinterpret_cast<const Float4*>(p);
}
KOKKOS_INLINE_FUNCTION void store4(float* p, Float4 const& x) {
  *reinterpret_cast<Float4*>(p) = x;
}

// The four entries of a group, with constant indices: a loop over them
// with a large visitor is not always unrolled by device compilers, and a
// Float4 indexed at run time lives in local memory (seen on sm_90: every
// 16-byte load stored to the stack and read back an entry at a time).
template <class F>
KOKKOS_INLINE_FUNCTION void visit4(Float4 const& x, int column, F const& f) {
  f(x.v[0], column);
  f(x.v[1], column + 1);
  f(x.v[2], column + 2);
  f(x.v[3], column + 3);
}

// Visits every entry of a row as f(value, column), from one of T workers
// (worker j of [0, T)): the body's groups j, j + T, j + 2T, ... and the
// loose entries j, j + T, ... . With Unroll = 2 each worker issues two
// 16-byte loads before it looks at either: a thread's loads then overlap
// instead of waiting one after another, which is what lets fewer teams
// saturate HBM. On a device, workers are a team's threads, so consecutive
// threads read consecutive groups (coalesced); on a host backend T is 1.
template <int Unroll, class F>
KOKKOS_INLINE_FUNCTION void visit_row(const float* row, RowSplit const& split,
                                      int j, int T, F const& f) {
  static_assert(Unroll == 1 || Unroll == 2, "visit_row: Unroll is 1 or 2");
  const float* body = row + split.head;
  for (int g = j; g < split.body; g += Unroll * T) {
    const int g2     = g + T;
    const bool two   = Unroll == 2 && g2 < split.body;
    const Float4 a   = load4(body + 4 * g);
    Float4 b{{0, 0, 0, 0}};
    if (two) b = load4(body + 4 * g2);
    visit4(a, split.head + 4 * g, f);
    if (two) visit4(b, split.head + 4 * g2, f);
  }
  for (int l = j; l < split.head + split.tail; l += T) {
    const int column = split.loose_column(split.body + l);
    f(row[column], column);
  }
}

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_ROW_ACCESS_HPP
