// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_PYTHON_CALLS_IMPL_HPP
#define QRITA_PYTHON_CALLS_IMPL_HPP

// The definitions of calls.hpp, included by one translation unit per logit
// type.

#include "calls.hpp"

#include <initializer_list>
#include <string>

namespace qrita_python {
namespace calls_detail {

using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
template <class T>
using Matrix = Kokkos::View<T**, Kokkos::LayoutStride, Memory, Unmanaged>;
template <class T>
using Column = Kokkos::View<T*, Kokkos::LayoutStride, Memory, Unmanaged>;

template <class T>
Matrix<T> matrix(Array const& a) {
  return Matrix<T>(a.data<T>(), Kokkos::LayoutStride(std::size_t(a.shape[0]),
                                                     std::size_t(a.stride[0]),
                                                     std::size_t(a.shape[1]), 1));
}

template <class T>
Column<T> column(Array const& a) {
  return Column<T>(a.data<T>(),
                   Kokkos::LayoutStride(std::size_t(a.shape[0]), std::size_t(a.stride[0])));
}

// An argument's device, type and shape: rank `ndim`, `rows` rows.
inline void check_array(Array const& a, std::initializer_list<DType> types, int ndim,
                        std::int64_t rows) {
  check_device(a);
  check_dtype(a, types);
  check_rows(a, ndim, rows);
}

// A filter: rank 1, one entry per row, of its type.
inline void check_filter(std::optional<Array> const& a, DType type, std::int64_t rows) {
  if (a) check_array(*a, {type}, 1, rows);
}

inline qrita::SamplingParams<Memory> params(Filters const& f, std::int64_t rows) {
  check_filter(f.k, DType::int32, rows);
  check_filter(f.p, DType::float32, rows);
  check_filter(f.min_p, DType::float32, rows);
  check_filter(f.temperature, DType::float32, rows);
  qrita::SamplingParams<Memory> prm;
  if (f.k) prm.k = column<const int>(*f.k);
  if (f.p) prm.p = column<const float>(*f.p);
  if (f.min_p) prm.min_p = column<const float>(*f.min_p);
  if (f.temperature) prm.temperature = column<const float>(*f.temperature);
  return prm;
}

// The caller's workspace array as a qrita::Workspace over its memory; the
// constructor checks its size and alignment against the call's plan.
inline std::optional<qrita::Workspace<Space>> workspace(Space const& space,
                                                        Array const& logits,
                                                        std::optional<Array> const& ws) {
  if (!ws) return std::nullopt;
  check_device(*ws);
  check_dtype(*ws, {DType::uint8});
  if (ws->ndim != 1 || (ws->shape[0] > 1 && ws->stride[0] != 1))
    value_error("argument 'workspace' must be a contiguous rank-1 array of bytes "
                "(made by qrita.Workspace)");
  const std::size_t bytes = std::size_t(ws->shape[0]);
  try {
    return qrita::Workspace<Space>(space, logits.shape[0], logits.shape[1], qrita::Options{},
                                   reinterpret_cast<void*>(ws->ptr), bytes);
  } catch (std::invalid_argument const& e) {
    value_error("argument 'workspace' holds " + std::to_string(bytes) +
                " bytes and does not serve this call (" + e.what() +
                "); make it with qrita.Workspace(max_batch, vocab) for at least this batch "
                "and vocabulary");
  }
}

// Host backends run to completion before the call returns; device backends
// stay asynchronous on the caller's stream.
inline void finish(Space const& space) {
  if (Kokkos::SpaceAccessibility<Kokkos::HostSpace, Memory>::accessible) space.fence();
}

inline void check_output(Array const& a, DType type, int ndim, std::int64_t rows) {
  check_array(a, {type}, ndim, rows);
  if (ndim == 2 && a.shape[1] > 1 && a.stride[1] != 1)
    value_error(std::string("argument '") + a.name + "' must have unit column stride");
}

// The sampler's seeds, offsets and tokens.
inline void check_draw(Array const& seeds, Array const& offsets, Array const& tokens,
                       std::int64_t rows) {
  for (Array const* a : {&seeds, &offsets})
    check_array(*a, {DType::int64, DType::uint64}, 1, rows);
  check_output(tokens, DType::int32, 1, rows);
}

// The list's ids, probabilities, log-probabilities and counts.
inline void check_list(Array const& ids, std::optional<Array> const& probs,
                       std::optional<Array> const& logprobs, Array const& counts,
                       std::int64_t rows) {
  check_output(ids, DType::int32, 2, rows);
  for (auto const* a : {&probs, &logprobs}) {
    if (!*a) continue;
    check_output(**a, DType::float32, 2, rows);
    if ((*a)->shape[1] != ids.shape[1])
      value_error(std::string("argument '") + (*a)->name + "' has " +
                  std::to_string((*a)->shape[1]) + " columns; 'ids' has " +
                  std::to_string(ids.shape[1]));
  }
  check_output(counts, DType::int32, 1, rows);
}

// An optional float output as a matrix (empty when absent).
inline Matrix<float> optional_matrix(std::optional<Array> const& a) {
  return a ? matrix<float>(*a) : Matrix<float>();
}

}  // namespace calls_detail

template <class T>
void mask(Space const& space, Array const& logits, Filters const& f,
          std::optional<Array> const& ws) {
  using namespace calls_detail;
  const auto prm = params(f, logits.shape[0]);
  const auto w   = workspace(space, logits, ws);
  const auto x   = matrix<T>(logits);
  if (w)
    qrita::sample_mask(space, x, prm, qrita::Options{}, *w);
  else
    qrita::sample_mask(space, x, prm);
  finish(space);
}

template <class T>
void sample(Space const& space, Array const& logits, Filters const& f, Array const& seeds,
            Array const& offsets, Array const& tokens, std::optional<Array> const& ws) {
  using namespace calls_detail;
  const std::int64_t rows = logits.shape[0];
  const auto prm          = params(f, rows);
  check_draw(seeds, offsets, tokens, rows);
  const auto w = workspace(space, logits, ws);
  const auto x = matrix<const T>(logits);
  const auto s = column<const std::uint64_t>(seeds);
  const auto o = column<const std::uint64_t>(offsets);
  const auto t = column<int>(tokens);
  if (w)
    qrita::sample_tokens(space, x, prm, s, o, t, qrita::Options{}, *w);
  else
    qrita::sample_tokens(space, x, prm, s, o, t);
  finish(space);
}

template <class T>
void candidates(Space const& space, Array const& logits, Filters const& f, Array const& ids,
                std::optional<Array> const& probs, std::optional<Array> const& logprobs,
                Array const& counts, std::optional<Array> const& ws) {
  using namespace calls_detail;
  const std::int64_t rows = logits.shape[0];
  const auto prm          = params(f, rows);
  check_list(ids, probs, logprobs, counts, rows);
  const auto w  = workspace(space, logits, ws);
  const auto x  = matrix<const T>(logits);
  const auto pr = optional_matrix(probs);
  const auto lp = optional_matrix(logprobs);
  if (w)
    qrita::candidate_list(space, x, prm, matrix<int>(ids), pr, lp, column<int>(counts),
                          qrita::Options{}, *w);
  else
    qrita::candidate_list(space, x, prm, matrix<int>(ids), pr, lp, column<int>(counts));
  finish(space);
}

#define QRITA_PYTHON_DEFINE_CALLS(T)                                                   \
  template void mask<T>(Space const&, Array const&, Filters const&,                     \
                        std::optional<Array> const&);                                   \
  template void sample<T>(Space const&, Array const&, Filters const&, Array const&,     \
                          Array const&, Array const&, std::optional<Array> const&);     \
  template void candidates<T>(Space const&, Array const&, Filters const&, Array const&,  \
                              std::optional<Array> const&, std::optional<Array> const&, \
                              Array const&, std::optional<Array> const&);

}  // namespace qrita_python

#endif  // QRITA_PYTHON_CALLS_IMPL_HPP
