// SPDX-License-Identifier: Apache-2.0
// Must not compile: logits must be [batch][vocab].
#include <qrita/qrita.hpp>
int main() {
  Kokkos::View<float*> logits("logits", 8);
  Kokkos::View<int*> k("k", 1);
  qrita::sample_mask(Kokkos::DefaultExecutionSpace(), logits, k);
}
