// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_DETAIL_ROW_ACCESS_HPP
#define QRITA_DETAIL_ROW_ACCESS_HPP

// Whole-row passes read the logits 16 bytes at a time: four floats, or
// eight 16-bit values (qrita::bfloat16, qrita::float16).
//
// The two full reads of a row (the gather and the masked write) are bound by
// memory bandwidth. One 16-byte load per thread and iteration instead of
// four 4-byte loads puts four times the bytes in flight per instruction,
// which is what lets a few resident teams per multiprocessor keep HBM busy.
// A row is split into a scalar head (up to the first 16-byte boundary), a
// body of aligned groups, and a scalar tail, so any row pointer and any
// vocabulary size work; the iteration space [0, body + head + tail) lists
// the body's groups first, then the loose entries.
//
// Every entry is handed to the kernels as its exact float value (to_float);
// the only values ever stored are -inf and kept entries' own values.

#include <qrita/detail/compat.hpp>
#include <qrita/types.hpp>

#include <cstdint>
#include <type_traits>

namespace qrita {
namespace detail {

// Entries per 16-byte group.
template <class T>
struct Lanes {
  static_assert(is_storage_type<T>::value,
                "qrita: logits must hold float, qrita::bfloat16 or qrita::float16");
  static constexpr int n = int(16 / sizeof(T));
};

template <class T>
struct alignas(16) Group {
  T v[Lanes<T>::n];
};

// -inf in each format.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T neg_inf_of();
template <>
KOKKOS_FORCEINLINE_FUNCTION float neg_inf_of<float>() {
  return bits_as_float(0xFF800000u);
}
template <>
KOKKOS_FORCEINLINE_FUNCTION bfloat16 neg_inf_of<bfloat16>() {
  return bfloat16{0xFF80u};
}
template <>
KOKKOS_FORCEINLINE_FUNCTION float16 neg_inf_of<float16>() {
  return float16{0xFC00u};
}

// Whether x is stored as -inf (exactly those bits: a NaN is not).
KOKKOS_FORCEINLINE_FUNCTION bool stored_neg_inf(float x) {
  return float_as_bits(x) == 0xFF800000u;
}
KOKKOS_FORCEINLINE_FUNCTION bool stored_neg_inf(bfloat16 x) { return x.bits == 0xFF80u; }
KOKKOS_FORCEINLINE_FUNCTION bool stored_neg_inf(float16 x) { return x.bits == 0xFC00u; }

struct RowSplit {
  int head;   // loose entries before the first 16-byte boundary
  int body;   // aligned groups
  int tail;   // loose entries after the body
  int lanes;  // entries per group

  KOKKOS_FORCEINLINE_FUNCTION int iterations() const { return body + head + tail; }
  // Column of the loose entry handled by iteration i >= body.
  KOKKOS_FORCEINLINE_FUNCTION int loose_column(int i) const {
    const int j = i - body;
    return j < head ? j : head + lanes * body + (j - head);
  }
};

template <class T>
KOKKOS_FORCEINLINE_FUNCTION RowSplit split_row(const T* row, int n) {
  constexpr int L = Lanes<T>::n;
  // Entries are sizeof(T)-aligned, so the misalignment is 0..L-1 entries.
  const int mis =
      int((reinterpret_cast<std::uintptr_t>(row) / sizeof(T)) & std::uintptr_t(L - 1));
  int head = mis == 0 ? 0 : L - mis;
  if (head > n) head = n;
  const int body = (n - head) / L;
  return RowSplit{head, body, n - head - L * body, L};
}

// Aligned 16-byte load and store (p must be 16-byte aligned: split_row's
// body is).
template <class T>
KOKKOS_FORCEINLINE_FUNCTION Group<T> load_group(const T* p) {
  return *reinterpret_cast<const Group<T>*>(p);
}
template <class T>
KOKKOS_FORCEINLINE_FUNCTION void store_group(T* p, Group<T> const& x) {
  *reinterpret_cast<Group<T>*>(p) = x;
}

// The entries of a group as f(value, column), with constant indices: a loop
// over them with a large visitor is not always unrolled by device
// compilers, and a group indexed at run time lives in local memory (seen on
// sm_90: every 16-byte load stored to the stack and read back an entry at a
// time).
template <int I = 0, class T, class F>
KOKKOS_FORCEINLINE_FUNCTION void visit_group(Group<T> const& x, int column, F const& f) {
  if constexpr (I < Lanes<T>::n) {
    f(to_float(x.v[I]), column + I);
    visit_group<I + 1>(x, column, f);
  }
}

// Masks a group in place: drop(value, column) says whether an entry becomes
// -inf. Returns whether any entry changed (constant indices, as above).
template <int I = 0, class T, class F>
KOKKOS_FORCEINLINE_FUNCTION bool drop_in_group(Group<T>& x, int column, F const& drop) {
  if constexpr (I < Lanes<T>::n) {
    const bool d = drop(to_float(x.v[I]), column + I);
    if (d) x.v[I] = neg_inf_of<T>();
    const bool rest = drop_in_group<I + 1>(x, column, drop);
    return d || rest;
  } else {
    return false;
  }
}

// Visits every group of a row from one of W workers (worker j of [0, W)):
// v.group(x, g) for the body's groups g = j, j + W, j + 2W, ... (x, the
// group loaded, may be changed and stored by v; its first column is
// split.head + L * g), then v.loose(column) for the loose entries j,
// j + W, ... . With Unroll = 2 each worker issues two 16-byte loads before
// it looks at either: a thread's loads then overlap instead of waiting one
// after another, which is what lets fewer teams saturate HBM. On a device,
// workers are a team's threads, so consecutive threads read consecutive
// groups (coalesced); on a host backend W is 1.
// The visitor is a struct whose members are forced inline (its group body
// appears twice per step).
template <int Unroll, class T, class V>
KOKKOS_FORCEINLINE_FUNCTION void visit_groups(T* row, RowSplit const& split, int j, int W,
                                              V const& v) {
  static_assert(Unroll == 1 || Unroll == 2, "visit_groups: Unroll is 1 or 2");
  constexpr int L = Lanes<std::remove_const_t<T>>::n;
  T* body         = row + split.head;
  for (int g = j; g < split.body; g += Unroll * W) {
    const int g2   = g + W;
    const bool two = Unroll == 2 && g2 < split.body;
    auto a         = load_group(body + L * g);
    auto b         = a;
    if (two) b = load_group(body + L * g2);
    v.group(a, g);
    if (two) v.group(b, g2);
  }
  for (int l = j; l < split.head + split.tail; l += W) v.loose(split.loose_column(split.body + l));
}

// visit_row's visitor: every entry as f(value, column).
template <class T, class F>
struct EntryVisitor {
  const T* row;
  int head;  // split.head: the first group's first column
  F const& f;
  KOKKOS_FORCEINLINE_FUNCTION void group(Group<T> const& x, int g) const {
    visit_group(x, head + Lanes<T>::n * g, f);
  }
  KOKKOS_FORCEINLINE_FUNCTION void loose(int column) const { f(to_float(row[column]), column); }
};

// Visits every entry of a row as f(value, column), from one of W workers
// (see visit_groups).
template <int Unroll, class T, class F>
KOKKOS_FORCEINLINE_FUNCTION void visit_row(const T* row, RowSplit const& split, int j,
                                      int W, F const& f) {
  visit_groups<Unroll>(row, split, j, W, EntryVisitor<T, F>{row, split.head, f});
}

// A whole row as a search source (see Source in candidates.hpp): the same
// interface over the row's stored values.
template <class T>
struct RowSource {
  const T* data = nullptr;
  int size      = 0;
  KOKKOS_FORCEINLINE_FUNCTION int count() const { return size; }
  KOKKOS_FORCEINLINE_FUNCTION float operator[](int i) const { return to_float(data[i]); }
};

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_ROW_ACCESS_HPP
