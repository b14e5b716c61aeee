// SPDX-License-Identifier: Apache-2.0
// Must not compile: k holds int.
#include <qrita/qrita.hpp>
int main() {
  Kokkos::View<float**> logits("logits", 2, 8);
  Kokkos::View<long*> k("k", 2);
  Kokkos::View<float*> p("p", 2);
  qrita::sample_mask(Kokkos::DefaultExecutionSpace(), logits, k, p);
}
