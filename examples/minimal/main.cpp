// SPDX-License-Identifier: Apache-2.0
// The smallest complete use of qrita: mask a batch of logits with per-row
// top-k and top-p on the default execution space, then check the result
// against the host reference. Exits non-zero on any difference.
#include <qrita/oracle.hpp>
#include <qrita/qrita.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  const int batch = 4, vocab = 32000;
  using space = Kokkos::DefaultExecutionSpace;

  Kokkos::View<float**, Kokkos::LayoutRight, space::memory_space> logits("logits", batch, vocab);
  Kokkos::View<int*, space::memory_space> k("k", batch);
  Kokkos::View<float*, space::memory_space> p("p", batch);

  // Logits with a few clear favourites per row; k and p vary per row
  // (k = 0 or p = 1 switches that filter off for the row).
  auto logits_h = Kokkos::create_mirror_view(logits);
  auto k_h = Kokkos::create_mirror_view(k);
  auto p_h = Kokkos::create_mirror_view(p);
  for (int b = 0; b < batch; ++b) {
    for (int i = 0; i < vocab; ++i)
      logits_h(b, i) = std::sin(0.37f * float(i * (b + 1))) + ((i * 7919) % 1009 == 0 ? 6.0f : 0.0f);
    k_h(b) = (b == 1) ? 0 : 20 * (b + 1);
    p_h(b) = (b == 2) ? 1.0f : 0.9f;
  }
  std::vector<float> expected(logits_h.data(), logits_h.data() + batch * vocab);
  qrita::oracle::mask(expected.data(), batch, vocab, vocab, k_h.data(), p_h.data());

  Kokkos::deep_copy(logits, logits_h);
  Kokkos::deep_copy(k, k_h);
  Kokkos::deep_copy(p, p_h);
  qrita::sample_mask(space(), logits, k, p);  // asynchronous on the instance
  Kokkos::deep_copy(logits_h, logits);        // waits for it

  int failures = 0;
  for (int b = 0; b < batch; ++b) {
    int kept = 0;
    for (int i = 0; i < vocab; ++i) kept += logits_h(b, i) != -INFINITY;
    const bool same = std::memcmp(&logits_h(b, 0), &expected[std::size_t(b) * vocab],
                                  sizeof(float) * vocab) == 0;
    failures += !same;
    std::printf("row %d: k=%d p=%.2f kept %d %s\n", b, k_h(b), double(p_h(b)), kept,
                same ? "(matches the reference)" : "(DIFFERS from the reference)");
  }
  return failures == 0 ? 0 : 1;
}
