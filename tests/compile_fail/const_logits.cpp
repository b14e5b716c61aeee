// SPDX-License-Identifier: Apache-2.0
// Must not compile: logits are masked in place, so they cannot be const.
#include <qrita/qrita.hpp>
int main() {
  Kokkos::View<float**> storage("logits", 2, 8);
  Kokkos::View<const float**> logits = storage;
  Kokkos::View<int*> k("k", 2);
  qrita::sample_mask(Kokkos::DefaultExecutionSpace(), logits, k);
}
