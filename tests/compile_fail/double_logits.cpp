// SPDX-License-Identifier: Apache-2.0
// Must not compile: logits of double.
#include <qrita/qrita.hpp>
int main() {
  Kokkos::View<double**> logits("logits", 2, 8);
  Kokkos::View<int*> k("k", 2);
  Kokkos::View<float*> p("p", 2);
  qrita::sample_mask(Kokkos::DefaultExecutionSpace(), logits, k, p);
}
