// SPDX-License-Identifier: Apache-2.0
// Determinism (SEMANTICS.md, definition 5 and case 20): a row's output is
// bitwise the same alone, at any position of a large batch, with any
// neighbours, with any team size or league, on every run, and on every
// backend.

#include "support.hpp"
#include "synthetic.hpp"

#include <qrita/detail/boundary_buckets.hpp>

#include <random>
#include <tuple>

namespace {

using qtest::Batch;
using qtest::Result;

template <class Exec>
class Determinism : public ::testing::Test {};
TYPED_TEST_SUITE(Determinism, qtest::Backends, qtest::BackendName);

constexpr std::int64_t vocab = 20000;

// Rows chosen to exercise every path: ties cut by k and by p, top-p alone
// and after top-k, truncation misses.
Batch probes() {
  using qrita::synthetic::Shape;
  const Shape shapes[] = {Shape::lm, Shape::ties, Shape::spread, Shape::peaked,
                          Shape::sparse, Shape::flat, Shape::ties, Shape::lm};
  const int ks[]       = {50, 37, 0, 10, 1000, 5, 0, 0};
  const float ps[]     = {0.9f, 1.0f, 0.7f, 0.95f, 0.8f, 0.5f, 0.93f, 0.999f};
  Batch b(8, vocab);
  std::mt19937_64 rng(5);
  for (std::int64_t r = 0; r < 8; ++r) {
    qrita::synthetic::fill_row(b.row(r), vocab, shapes[r], rng);
    b.k[r] = ks[r];
    b.p[r] = ps[r];
  }
  return b;
}

// `count` random neighbours with the probes at the given positions.
Batch embed(Batch const& probe, std::int64_t count, std::vector<std::int64_t> const& at,
            std::uint64_t seed) {
  Batch b(count, vocab);
  std::mt19937_64 rng(seed);
  for (std::int64_t r = 0; r < count; ++r) {
    qrita::synthetic::fill_row(b.row(r), vocab, qrita::synthetic::Shape::lm, rng);
    b.k[r] = int(rng() % 200);
    b.p[r] = 0.5f + float(rng() % 60) / 100.0f;
  }
  for (std::size_t j = 0; j < at.size(); ++j) {
    std::copy(probe.row(std::int64_t(j)), probe.row(std::int64_t(j)) + vocab, b.row(at[j]));
    b.k[at[j]] = probe.k[j];
    b.p[at[j]] = probe.p[j];
  }
  return b;
}

std::vector<float> row_of(Result const& r, std::int64_t row) {
  return std::vector<float>(r.logits.begin() + row * vocab,
                            r.logits.begin() + (row + 1) * vocab);
}

TYPED_TEST(Determinism, SameRowSameOutputAnywhere) {
  const Batch probe = probes();
  std::vector<std::vector<float>> alone;
  for (std::int64_t j = 0; j < probe.batch; ++j) {
    Batch one(1, vocab);
    std::copy(probe.row(j), probe.row(j) + vocab, one.row(0));
    one.k[0] = probe.k[j];
    one.p[0] = probe.p[j];
    alone.push_back(qtest::run<TypeParam>(one).logits);
  }
  // The probes together, three times: bitwise the same each run.
  const Result together = qtest::run<TypeParam>(probe);
  for (int rerun = 0; rerun < 2; ++rerun)
    EXPECT_EQ(qtest::run<TypeParam>(probe).logits, together.logits);
  EXPECT_TRUE(qtest::check_batch(probe, together));

  const std::vector<std::int64_t> at_a = {0, 1, 300, 301, 500, 700, 987, 988};
  const std::vector<std::int64_t> at_b = {988, 3, 400, 2, 650, 17, 1, 0};
  const Batch big_a = embed(probe, 989, at_a, 1);
  const Batch big_b = embed(probe, 989, at_b, 2);
  // Another team size (one thread per team on GPUs, the widest team on
  // host backends) and a different league.
  qrita::Options other;
  const int widest = qrita::detail::floor_power_of_two(
      int(Kokkos::TeamPolicy<TypeParam>(TypeParam(), 1, 1)
              .team_size_max(qrita::detail::RowKernel<TypeParam>{},
                             Kokkos::ParallelForTag())));
  other.team_size = qrita::detail::Policy<TypeParam>::team_size == 1 ? widest : 1;
  other.max_teams = 3;
  const Result in_a = qtest::run<TypeParam>(big_a);
  const Result in_b = qtest::run<TypeParam>(big_b, other);
  for (std::int64_t j = 0; j < probe.batch; ++j) {
    EXPECT_EQ(row_of(together, j), alone[std::size_t(j)]) << "probe " << j;
    EXPECT_EQ(row_of(in_a, at_a[std::size_t(j)]), alone[std::size_t(j)]) << "probe " << j;
    EXPECT_EQ(row_of(in_b, at_b[std::size_t(j)]), alone[std::size_t(j)])
        << "probe " << j << " (team size " << other.team_size << ")";
  }
}

// The bucket plan's suffix scan (boundary_buckets.hpp): one case per team.
// Case c scans values[offset(c), offset(c) + nb(c)) from the top.
template <class Exec, class T>
struct CrossingProbe {
  using mem     = typename Exec::memory_space;
  using scratch = Kokkos::View<int*, typename Exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  Kokkos::View<const T*, mem> values;
  Kokkos::View<const int*, mem> offset, nb;
  Kokkos::View<const T*, mem> head, target;
  Kokkos::View<int*, mem> out;
  KOKKOS_INLINE_FUNCTION void operator()(
      typename Kokkos::TeamPolicy<Exec>::member_type const& team) const {
    const int c = team.league_rank();
    const scratch slot(team.team_scratch(0), 1);
    const T* v  = values.data() + offset(c);
    const int b = qrita::detail::suffix_crossing<T>(
        team, nb(c), head(c), [&](int i) { return v[i]; }, target(c), slot.data());
    Kokkos::single(Kokkos::PerTeam(team), [&]() { out(c) = b; });
  }
};

template <class Exec, class T>
Kokkos::View<const T*, typename Exec::memory_space> on_device(std::vector<T> const& host) {
  Kokkos::View<T*, typename Exec::memory_space> d("qrita_tests::probe", host.size());
  const auto mirror = Kokkos::create_mirror_view(d);
  for (std::size_t i = 0; i < host.size(); ++i) mirror(i) = host[i];
  Kokkos::deep_copy(d, mirror);
  return d;
}

// The definition, walked from the top on the host.
template <class T>
int crossing_reference(std::vector<T> const& v, T head, T target) {
  T acc = head;
  if (acc >= target) return int(v.size());
  for (int b = int(v.size()) - 1; b >= 0; --b) {
    acc += v[std::size_t(b)];
    if (acc >= target) return b;
  }
  return -1;
}

template <class Exec, class T>
void check_suffix_crossing(T max_value) {
  std::mt19937_64 rng(sizeof(T) * 131);
  std::vector<T> values;
  std::vector<int> offset, nb;
  std::vector<T> head, target;
  std::vector<int> want;
  const int sizes[] = {1, 2, 5, 64, 255, 256, 257, 2048, 2049};
  for (int n : sizes) {
    for (int trial = 0; trial < 6; ++trial) {
      std::vector<T> v(static_cast<std::size_t>(n));
      for (T& x : v) x = rng() % 3 == 0 ? T(0) : T(rng() % max_value);
      const T h = trial == 0 ? T(0) : T(rng() % max_value);
      // Targets on every kind of edge: met by the head alone, at an exact
      // suffix sum (inclusive) and one past it, at the total and past it.
      std::vector<T> suffix(std::size_t(n) + 1, h);
      for (std::size_t b = std::size_t(n); b-- > 0;) suffix[b] = suffix[b + 1] + v[b];
      const std::size_t at = std::size_t(rng() % std::uint64_t(n));
      const T targets[] = {h, T(h / 2), suffix[at], T(suffix[at] + 1), suffix[0], T(suffix[0] + 1)};
      for (T t : targets) {
        offset.push_back(int(values.size()));
        nb.push_back(n);
        head.push_back(h);
        target.push_back(t);
        want.push_back(crossing_reference(v, h, t));
      }
      values.insert(values.end(), v.begin(), v.end());
    }
  }
  const int cases = int(want.size());
  CrossingProbe<Exec, T> probe{on_device<Exec>(values), on_device<Exec>(offset),
                               on_device<Exec>(nb),     on_device<Exec>(head),
                               on_device<Exec>(target),
                               Kokkos::View<int*, typename Exec::memory_space>("out", cases)};
  // Team sizes are powers of two in qrita (launch.hpp), as Kokkos' CUDA
  // team scan requires.
  const int widest = int(Kokkos::TeamPolicy<Exec>(Exec(), 1, 1).team_size_max(
      probe, Kokkos::ParallelForTag()));
  const int teams[] = {1, 2, 4, 32, 64, 256, 1024};
  for (int team : teams) {
    if (team > widest) continue;
    Kokkos::deep_copy(probe.out, -7);
    Kokkos::TeamPolicy<Exec> policy(Exec(), cases, team);
    // (shmem_size: the scratch allocator aligns; a bare sizeof(int) left
    // no room for the slot on CUDA.)
    policy.set_scratch_size(0, Kokkos::PerTeam(int(CrossingProbe<Exec, T>::scratch::shmem_size(1))));
    Kokkos::parallel_for("qrita_tests::suffix_crossing", policy, probe);
    const auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), probe.out);
    int wrong = 0;
    for (int c = 0; c < cases; ++c)
      if (got(c) != want[std::size_t(c)] && ++wrong <= 5)
        ADD_FAILURE() << "team size " << team << ", case " << c << " (nb " << nb[std::size_t(c)]
                      << "): " << got(c) << ", want " << want[std::size_t(c)];
    EXPECT_EQ(wrong, 0) << "team size " << team;
  }
}

// The crossing is the definition's at every team size (exact integer sums:
// the same bucket however the team splits the range).
TYPED_TEST(Determinism, SuffixCrossingIsTheDefinitionsAtAnyTeamSize) {
  check_suffix_crossing<TypeParam, std::uint32_t>(1000u);
  check_suffix_crossing<TypeParam, std::uint64_t>(std::uint64_t(1) << 50);
}

// Case 20: the same kept set on every enabled backend.
template <class... Exec>
std::vector<Result> run_everywhere(std::tuple<Exec...>*, Batch const& b) {
  return {qtest::run<Exec>(b)...};
}

TEST(AcrossBackends, Case20_SameKeptSetOnEveryBackend) {
  Batch b(64, 30000);
  std::mt19937_64 rng(20);
  using qrita::synthetic::Shape;
  const Shape shapes[] = {Shape::lm, Shape::ties, Shape::peaked, Shape::sparse};
  for (std::int64_t r = 0; r < b.batch; ++r) {
    qrita::synthetic::fill_row(b.row(r), b.vocab, shapes[r % 4], rng);
    b.k[r] = r % 3 == 1 ? 0 : 1 + int(rng() % 100);
    b.p[r] = r % 3 == 0 ? 1.0f : 0.6f + float(rng() % 39) / 100.0f;
  }
  if (std::tuple_size<qtest::BackendTuple>::value < 2)
    GTEST_SKIP() << "one backend is enabled in this build: nothing to compare it with";
  const std::vector<Result> out =
      run_everywhere(static_cast<qtest::BackendTuple*>(nullptr), b);
  ASSERT_GE(out.size(), 2u);
  for (std::size_t e = 1; e < out.size(); ++e) {
    for (std::int64_t r = 0; r < b.batch; ++r) {
      const auto first = qtest::kept_indices(b.row(r), out[0].logits.data() + r * b.vocab, b.vocab);
      const auto other = qtest::kept_indices(b.row(r), out[e].logits.data() + r * b.vocab, b.vocab);
      if (first == other) continue;
      // Only a top-p boundary within rounding of p may differ, and only
      // between backends whose exp differs (never between host backends).
      const auto ref = qrita::oracle::evaluate(b.row(r), b.vocab, b.k[r], b.p[r]);
      double mass = 0.0;
      for (std::int64_t j = 0; j < ref.kept - 1; ++j) mass += ref.prob[std::size_t(j)];
      const bool near = ref.topp_active &&
                        (std::abs(mass - double(b.p[r])) < 1e-6 ||
                         std::abs(mass + ref.prob[std::size_t(ref.kept - 1)] - double(b.p[r])) < 1e-6);
      EXPECT_TRUE(near) << "row " << r << ": backend " << e << " keeps " << other.size()
                        << " entries, backend 0 keeps " << first.size();
    }
  }
}

}  // namespace
