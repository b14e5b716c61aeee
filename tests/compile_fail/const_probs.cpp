// SPDX-License-Identifier: Apache-2.0
// Must not compile: probs are const (candidate_list writes them).
#include <qrita/qrita.hpp>
int main() {
  Kokkos::View<float**> logits("logits", 2, 8);
  qrita::SamplingParams<Kokkos::DefaultExecutionSpace::memory_space> params;
  Kokkos::View<int**> ids("ids", 2, 4);
  Kokkos::View<float**> probs("probs", 2, 4);
  Kokkos::View<const float**> read_only = probs;
  Kokkos::View<int*> counts("counts", 2);
  qrita::candidate_list(Kokkos::DefaultExecutionSpace(), logits, params, ids, read_only, probs,
                        counts);
}
