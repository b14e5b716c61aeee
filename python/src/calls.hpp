// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_PYTHON_CALLS_HPP
#define QRITA_PYTHON_CALLS_HPP

// The three public calls on arrays described from Python: each checks its
// arguments (arrays.hpp), wraps them in unmanaged Kokkos Views without a
// copy, and calls qrita on the given execution-space instance. One
// translation unit per logit type (calls_float32.cpp, ...) instantiates
// them, so that the three build in parallel.

#include "arrays.hpp"

#include <optional>

namespace qrita_python {

// The per-row filters, each absent or a rank-1 array of one entry per row.
struct Filters {
  std::optional<Array> k, p, min_p, temperature;
};

template <class T>
void mask(Space const& space, Array const& logits, Filters const& f,
          std::optional<Array> const& workspace);

template <class T>
void sample(Space const& space, Array const& logits, Filters const& f, Array const& seeds,
            Array const& offsets, Array const& tokens, std::optional<Array> const& workspace);

template <class T>
void candidates(Space const& space, Array const& logits, Filters const& f, Array const& ids,
                std::optional<Array> const& probs, std::optional<Array> const& logprobs,
                Array const& counts, std::optional<Array> const& workspace);

// Bytes of the workspace a call on batch x vocab logits may use (on the
// device `device_id`, where Kokkos is initialised if it is not yet).
std::size_t workspace_bytes(std::int64_t batch, std::int64_t vocab, int device_id);

#define QRITA_PYTHON_DECLARE_CALLS(T)                                                       \
  extern template void mask<T>(Space const&, Array const&, Filters const&,                   \
                               std::optional<Array> const&);                                 \
  extern template void sample<T>(Space const&, Array const&, Filters const&, Array const&,   \
                                 Array const&, Array const&, std::optional<Array> const&);   \
  extern template void candidates<T>(Space const&, Array const&, Filters const&,             \
                                     Array const&, std::optional<Array> const&,              \
                                     std::optional<Array> const&, Array const&,              \
                                     std::optional<Array> const&);
QRITA_PYTHON_DECLARE_CALLS(float)
QRITA_PYTHON_DECLARE_CALLS(qrita::bfloat16)
QRITA_PYTHON_DECLARE_CALLS(qrita::float16)
#undef QRITA_PYTHON_DECLARE_CALLS

}  // namespace qrita_python

#endif  // QRITA_PYTHON_CALLS_HPP
