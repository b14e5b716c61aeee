// SPDX-License-Identifier: Apache-2.0
// Must not compile: tokens hold float (they must be int).
#include <qrita/qrita.hpp>
int main() {
  Kokkos::View<float**> logits("logits", 2, 8);
  qrita::SamplingParams<Kokkos::DefaultExecutionSpace::memory_space> params;
  Kokkos::View<std::uint64_t*> seeds("seeds", 2), offsets("offsets", 2);
  Kokkos::View<float*> tokens("tokens", 2);
  qrita::sample_tokens(Kokkos::DefaultExecutionSpace(), logits, params, seeds, offsets, tokens);
}
