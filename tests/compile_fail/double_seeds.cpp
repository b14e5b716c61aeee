// SPDX-License-Identifier: Apache-2.0
// Must not compile: seeds hold double (they must be 64-bit integers).
#include <qrita/qrita.hpp>
int main() {
  Kokkos::View<float**> logits("logits", 2, 8);
  qrita::SamplingParams<Kokkos::DefaultExecutionSpace::memory_space> params;
  Kokkos::View<double*> seeds("seeds", 2);
  Kokkos::View<std::uint64_t*> offsets("offsets", 2);
  Kokkos::View<int*> tokens("tokens", 2);
  qrita::sample_tokens(Kokkos::DefaultExecutionSpace(), logits, params, seeds, offsets, tokens);
}
