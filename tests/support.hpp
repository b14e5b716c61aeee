// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_TESTS_SUPPORT_HPP
#define QRITA_TESTS_SUPPORT_HPP

// Test support: the list of enabled backends, a host-side batch, a runner
// that masks it on any backend, and check_row, which holds a masked row to
// the rule of SEMANTICS.md through qrita::oracle::verify.

#include <qrita/oracle.hpp>
#include <qrita/qrita.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace qtest {

// --- backends ---------------------------------------------------------------

template <class Tuple>
struct to_types;
template <class... T>
struct to_types<std::tuple<T...>> {
  using type = ::testing::Types<T...>;
};

using BackendTuple = decltype(std::tuple_cat(
#if defined(KOKKOS_ENABLE_SERIAL)
    std::declval<std::tuple<Kokkos::Serial>>(),
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
    std::declval<std::tuple<Kokkos::OpenMP>>(),
#endif
#if defined(KOKKOS_ENABLE_THREADS)
    std::declval<std::tuple<Kokkos::Threads>>(),
#endif
#if defined(KOKKOS_ENABLE_CUDA)
    std::declval<std::tuple<Kokkos::Cuda>>(),
#endif
#if defined(KOKKOS_ENABLE_HIP)
#if KOKKOS_VERSION >= 40000
    std::declval<std::tuple<Kokkos::HIP>>(),
#else
    std::declval<std::tuple<Kokkos::Experimental::HIP>>(),
#endif
#endif
    std::declval<std::tuple<>>()));

using Backends = to_types<BackendTuple>::type;

struct BackendName {
  template <class Exec>
  static std::string GetName(int) {
    return Exec::name();
  }
};

constexpr float inf = std::numeric_limits<float>::infinity();
inline float nan_value() { return std::numeric_limits<float>::quiet_NaN(); }

// Rounds x to T and back: the exact value a T logit holds.
template <class T>
float round_to(float x) {
  return qrita::to_float(qrita::from_float<T>(x));
}

template <class T>
void round_all(std::vector<float>& v) {
  for (float& x : v) x = round_to<T>(x);
}

inline std::uint32_t bits(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

// --- a batch on the host ------------------------------------------------------

enum class Filters { both, k_only, p_only };

struct Batch {
  std::int64_t batch  = 0;
  std::int64_t vocab  = 0;
  std::int64_t stride = 0;  // >= vocab; entries past vocab are padding
  std::vector<float> logits;
  std::vector<int> k;
  std::vector<float> p;

  Batch() = default;
  Batch(std::int64_t b, std::int64_t v, std::int64_t s = 0)
      : batch(b), vocab(v), stride(s > 0 ? s : v),
        logits(std::size_t(b * (s > 0 ? s : v)), 0.0f),
        k(std::size_t(b), 0), p(std::size_t(b), 1.0f) {}

  float* row(std::int64_t b) { return logits.data() + b * stride; }
  const float* row(std::int64_t b) const { return logits.data() + b * stride; }
};

struct Result {
  std::vector<float> logits;
  std::vector<qrita::RowStats> stats;
};

// Whether a call gets a qrita::Workspace (the production path) or none
// (on-chip candidates only).
enum class Memory { workspace, none };

// Masks a copy of `in` on backend Exec and returns it with the row stats.
template <class Exec>
Result run(Batch const& in, qrita::Options const& opts = {},
           Filters filters = Filters::both, Memory memory = Memory::workspace) {
  using mem = typename Exec::memory_space;
  Kokkos::View<float**, Kokkos::LayoutRight, mem> full(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "logits"),
      std::size_t(in.batch), std::size_t(in.stride));
  auto logits = Kokkos::subview(full, Kokkos::ALL,
                                std::make_pair(std::size_t(0), std::size_t(in.vocab)));
  Kokkos::View<int*, mem> k("k", std::size_t(in.batch));
  Kokkos::View<float*, mem> p("p", std::size_t(in.batch));
  Kokkos::View<qrita::RowStats*, mem> stats("stats", std::size_t(in.batch));

  auto full_h = Kokkos::create_mirror_view(full);
  auto k_h    = Kokkos::create_mirror_view(k);
  auto p_h    = Kokkos::create_mirror_view(p);
  if (!in.logits.empty())
    std::memcpy(full_h.data(), in.logits.data(), in.logits.size() * sizeof(float));
  for (std::int64_t b = 0; b < in.batch; ++b) {
    k_h(b) = in.k[b];
    p_h(b) = in.p[b];
  }
  Kokkos::deep_copy(full, full_h);
  Kokkos::deep_copy(k, k_h);
  Kokkos::deep_copy(p, p_h);

  Exec space;
  const bool ws = memory == Memory::workspace;
  const qrita::Workspace<Exec> workspace =
      ws ? qrita::Workspace<Exec>(space, in.batch, in.vocab, opts) : qrita::Workspace<Exec>();
  switch (filters) {
    case Filters::both:
      if (ws)
        qrita::sample_mask(space, logits, k, p, opts, workspace, stats);
      else
        qrita::sample_mask(space, logits, k, p, opts, stats);
      break;
    case Filters::k_only:
      if (ws)
        qrita::sample_mask(space, logits, k, opts, workspace);
      else
        qrita::sample_mask(space, logits, k, opts);
      break;
    case Filters::p_only:
      if (ws)
        qrita::sample_mask(space, logits, p, opts, workspace);
      else
        qrita::sample_mask(space, logits, p, opts);
      break;
  }
  space.fence();

  Result out;
  Kokkos::deep_copy(full_h, full);
  out.logits.assign(full_h.data(), full_h.data() + in.logits.size());
  if (filters == Filters::both) {
    auto stats_h = Kokkos::create_mirror_view(stats);
    Kokkos::deep_copy(stats_h, stats);
    out.stats.assign(stats_h.data(), stats_h.data() + in.batch);
  }
  return out;
}

// --- the checker ------------------------------------------------------------

// Checks one masked row against the oracle (see the top of this file).
inline ::testing::AssertionResult check_row(const float* in, const float* out,
                                            std::int64_t vocab, int k, float p) {
  const std::string problem = qrita::oracle::verify(in, out, vocab, k, p);
  if (problem.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << problem << " (vocab " << vocab << ", k " << k << ", p " << p << ")";
}

// k and p as the kernel saw them for a call with the given filters.
inline int k_of(Batch const& b, std::int64_t r, Filters f) {
  return f == Filters::p_only ? 0 : b.k[r];
}
inline float p_of(Batch const& b, std::int64_t r, Filters f) {
  return f == Filters::k_only ? 1.0f : b.p[r];
}

// Checks every row of a result, and that padding was not touched.
inline ::testing::AssertionResult check_batch(Batch const& in, Result const& out,
                                              Filters f = Filters::both) {
  for (std::int64_t r = 0; r < in.batch; ++r) {
    auto ok = check_row(in.row(r), out.logits.data() + r * in.stride, in.vocab,
                        k_of(in, r, f), p_of(in, r, f));
    if (!ok) return ok << " in row " << r << " of " << in.batch;
    for (std::int64_t i = in.vocab; i < in.stride; ++i)
      if (bits(in.row(r)[i]) != bits(out.logits[std::size_t(r * in.stride + i)]))
        return ::testing::AssertionFailure()
               << "padding entry " << i << " of row " << r << " was written";
  }
  return ::testing::AssertionSuccess();
}

// The kept indices of a masked row (entries left unchanged and above -inf).
inline std::vector<std::int64_t> kept_indices(const float* in, const float* out,
                                              std::int64_t vocab) {
  std::vector<std::int64_t> idx;
  for (std::int64_t i = 0; i < vocab; ++i)
    if (qrita::oracle::is_candidate(in[i]) && bits(in[i]) == bits(out[i])) idx.push_back(i);
  return idx;
}

}  // namespace qtest

#endif  // QRITA_TESTS_SUPPORT_HPP
