// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_TESTS_SUPPORT_ROWS_HPP
#define QRITA_TESTS_SUPPORT_ROWS_HPP

// Rows of every kind the definition names, with filters drawn per row, on
// any backend; and bitwise comparison of outputs. For the tests that hold
// one path's answers to another's bit for bit (the sharded calls, the
// sampler's digit path).

#include "support.hpp"

#include <cstring>
#include <random>

namespace qtest {

template <class Exec, class E>
Kokkos::View<E*, typename Exec::memory_space> device_column(std::vector<E> const& v) {
  Kokkos::View<E*, typename Exec::memory_space> d("column", v.size());
  auto h = Kokkos::create_mirror_view(d);
  for (std::size_t i = 0; i < v.size(); ++i) h(i) = v[i];
  Kokkos::deep_copy(d, h);
  return d;
}

// Rows of several kinds (randn, ties, bf16-like ties, a near-flat row with
// a nucleus of most of it, mostly -inf, NaN, +inf entries, all equal, no
// candidate) and filters drawn per row.
struct Rows {
  int B, V;
  std::vector<float> x;
  std::vector<int> k;
  std::vector<float> p, m, t;
  std::vector<std::uint64_t> seeds, offsets;
};

inline Rows make_rows(int B, int V, std::uint64_t seed) {
  Rows w{B, V, std::vector<float>(std::size_t(B) * std::size_t(V)), {}, {}, {}, {}, {}, {}};
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int ks[]   = {0, 1, 3, 40, V - 1, V};
  const float ps[] = {1.0f, 0.9f, 0.5f, 0.0f, 0.995f};
  const float ms[] = {0.0f, 0.0f, 0.1f, 1.0f};
  const float ts[] = {1.0f, 0.5f, 3.0f, 0.0f, qtest::inf};
  for (int r = 0; r < B; ++r) {
    for (int i = 0; i < V; ++i) {
      float v = normal(rng);
      switch (r % 8) {
        case 1: v = float(int(v * 2.0f)) / 2.0f; break;
        case 2: v = qtest::round_to<qrita::bfloat16>(3.0f * v); break;
        case 3: v = 1e-3f * v; break;
        case 4: v = rng() % 10 == 0 ? v : -qtest::inf; break;
        case 5: v = i % 3 == 0 ? qtest::nan_value() : v; break;
        case 6: v = i % 50 == 7 ? qtest::inf : v; break;
        case 7: v = r % 16 == 7 ? 2.0f : -qtest::inf; break;
        default: break;
      }
      w.x[std::size_t(r) * std::size_t(V) + std::size_t(i)] = v;
    }
    w.k.push_back(ks[rng() % 6]);
    w.p.push_back(ps[rng() % 5]);
    w.m.push_back(ms[rng() % 4]);
    w.t.push_back(ts[rng() % 5]);
    w.seeds.push_back(rng());
    w.offsets.push_back(rng() % 64);
  }
  return w;
}

template <class Exec>
struct Device {
  using memory = typename Exec::memory_space;
  Kokkos::View<float**, Kokkos::LayoutRight, memory> logits;
  qrita::SamplingParams<memory> params;
  Kokkos::View<std::uint64_t*, memory> seeds, offsets;

  explicit Device(Rows const& w)
      : logits("logits", std::size_t(w.B), std::size_t(w.V)),
        seeds(device_column<Exec>(w.seeds)),
        offsets(device_column<Exec>(w.offsets)) {
    auto h = Kokkos::create_mirror_view(logits);
    std::memcpy(h.data(), w.x.data(), w.x.size() * sizeof(float));
    Kokkos::deep_copy(logits, h);
    params.k           = device_column<Exec>(w.k);
    params.p           = device_column<Exec>(w.p);
    params.min_p       = device_column<Exec>(w.m);
    params.temperature = device_column<Exec>(w.t);
  }
};

template <class V>
auto on_host(V const& v) {
  return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
}

template <class A, class B>
int differing_words(A const& a, B const& b) {
  int n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) n += std::memcmp(a.data() + i, b.data() + i, 4) != 0;
  return n;
}

}  // namespace qtest

#endif  // QRITA_TESTS_SUPPORT_ROWS_HPP
