// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_PARAMS_HPP
#define QRITA_PARAMS_HPP

// qrita::SamplingParams: the per-row filters of a call, as one value.
//
//   qrita::SamplingParams<Kokkos::CudaSpace> params;
//   params.temperature = temperature;  // View<float*>, one per row
//   params.min_p       = min_p;        // View<float*>
//   params.k           = k;            // View<int*>
//   params.p           = p;            // View<float*>
//   qrita::sample_mask(space, logits, params);
//   qrita::sample_tokens(space, logits, params, seeds, offsets, tokens);
//
// Every member may be left empty (a default-constructed View): that filter
// is then off on every row. A given View must have one entry per row. Any
// rank-1 View of the element type (or of its const) in MemorySpace can be
// assigned, whatever its layout or stride. The filters apply in vLLM's
// order: temperature, then min-p, then top-k, then top-p; per row:
//
//   temperature T  > 0: probabilities are softmax(x / T) (T = 1: plain
//                  softmax; +inf: uniform over the candidates). T <= 0 or
//                  NaN: greedy, the row keeps only its top entry (lowest
//                  index on ties) and every other filter is ignored.
//                  Temperature never changes a stored value: sample_mask
//                  keeps entries bitwise, and only which entries are kept
//                  (min-p, top-p) and the probabilities depend on T.
//   min_p m        in (0, 1]: keeps the entries whose probability is at
//                  least m times the largest one, i.e. x >= max + T*ln(m)
//                  (computed in double). m > 1 acts as 1 (the maximum's tie
//                  group); m <= 0 or NaN: off.
//   k              top-k on the min-p survivors: 0 < k < vocab keeps the
//                  first k of the order; otherwise off.
//   p              top-p on the survivors' softmax (with T): p >= 1 or NaN:
//                  off; p <= 0 keeps exactly the top entry.
//
// docs/SEMANTICS.md has the whole definition and its edge cases.

#include <Kokkos_Core.hpp>

namespace qrita {

template <class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
struct SamplingParams {
  static_assert(Kokkos::is_memory_space<MemorySpace>::value,
                "qrita::SamplingParams: the template argument must be a Kokkos "
                "memory space");
  using memory_space = MemorySpace;
  template <class T>
  using column = Kokkos::View<const T*, Kokkos::LayoutStride, MemorySpace>;

  column<int> k;              // top-k
  column<float> p;            // top-p
  column<float> min_p;        // min-p
  column<float> temperature;  // temperature (absent: 1 on every row)
};

template <class T>
struct is_sampling_params : std::false_type {};
template <class M>
struct is_sampling_params<SamplingParams<M>> : std::true_type {};

}  // namespace qrita

#endif  // QRITA_PARAMS_HPP
