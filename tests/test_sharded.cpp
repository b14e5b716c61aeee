// SPDX-License-Identifier: Apache-2.0
// The sharded calls on every enabled backend with qrita::SingleRank (the
// whole vocabulary as the one shard): the same kept sets, tokens and lists
// as the plain calls, bit for bit, on rows of every kind the definition
// names, and arguments checked before anything is written. The MPI tests
// (tests/sharded) run the same comparison on 1 to 4 ranks.

#include "support.hpp"

#include <qrita/sharded.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>

namespace {

template <class Exec>
class Sharded : public ::testing::Test {};
TYPED_TEST_SUITE(Sharded, qtest::Backends, qtest::BackendName);

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

Rows make_rows(int B, int V, std::uint64_t seed) {
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

TYPED_TEST(Sharded, SingleRankEqualsThePlainCalls) {
  using Exec   = TypeParam;
  using memory = typename Exec::memory_space;
  Exec space;
  const qrita::SingleRank comm;
  for (int V : {1, 7, 1000, 40000}) {
    const Rows w = make_rows(32, V, std::uint64_t(V) + 5);
    const qrita::sharded::Shard shard{0, V, V};
    Device<Exec> plain(w), mine(w);
    qrita::sample_mask(space, plain.logits, plain.params);
    qrita::sharded::sample_mask(space, comm, mine.logits, shard, mine.params);
    EXPECT_EQ(differing_words(on_host(plain.logits), on_host(mine.logits)), 0) << "V = " << V;

    const Device<Exec> d(w);
    Kokkos::View<int*, memory> t0("t0", 32), t1("t1", 32);
    qrita::sample_tokens(space, d.logits, d.params, d.seeds, d.offsets, t0);
    qrita::sharded::sample_tokens(space, comm, d.logits, shard, d.params, d.seeds, d.offsets,
                                  t1);
    EXPECT_EQ(differing_words(on_host(t0), on_host(t1)), 0) << "V = " << V;

    const int C = V < 9 ? V : 9;  // the plain list holds at most the row
    Kokkos::View<int**, memory> i0("i0", 32, C), i1("i1", 32, C);
    Kokkos::View<float**, memory> p0("p0", 32, C), p1("p1", 32, C), l0("l0", 32, C),
        l1("l1", 32, C);
    Kokkos::View<int*, memory> n0("n0", 32), n1("n1", 32);
    qrita::candidate_list(space, d.logits, d.params, i0, p0, l0, n0);
    qrita::sharded::candidate_list(space, comm, d.logits, shard, d.params, i1, p1, l1, n1);
    EXPECT_EQ(differing_words(on_host(i0), on_host(i1)), 0) << "V = " << V;
    EXPECT_EQ(differing_words(on_host(p0), on_host(p1)), 0) << "V = " << V;
    EXPECT_EQ(differing_words(on_host(l0), on_host(l1)), 0) << "V = " << V;
    EXPECT_EQ(differing_words(on_host(n0), on_host(n1)), 0) << "V = " << V;
  }
}

// Top-p without top-k, with p within a few ulps of the fp64 mass of a
// short prefix: the device's target then lies within rounding of that
// prefix's mass, where the plain call's first read, which weighs its tail
// relative to the threshold, must still cut where the row's exact total
// does (a second read where its rounded total cannot tell). The sharded
// call always weighs the row exactly.
TYPED_TEST(Sharded, TopPCutsAtTheExactTotalWithinRounding) {
  using Exec   = TypeParam;
  using memory = typename Exec::memory_space;
  Exec space;
  const qrita::SingleRank comm;
  const int rows = 8, steps = 41, B = rows * steps, V = 20000, C = 64;
  Rows w{B, V, std::vector<float>(std::size_t(B) * std::size_t(V)), {}, {}, {}, {}, {}, {}};
  std::mt19937_64 rng(11);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> row(static_cast<std::size_t>(V));
  for (int q = 0; q < rows; ++q) {
    for (float& z : row) z = normal(rng);
    std::vector<double> e(row.begin(), row.end());
    std::sort(e.begin(), e.end(), std::greater<double>());
    const float t = q % 2 == 0 ? 1.0f : 0.7f;
    double total = 0, prefix = 0;
    for (double z : e) total += std::exp((z - e[0]) / double(t));
    for (int i = 0; i < 3 + 5 * q; ++i) prefix += std::exp((e[std::size_t(i)] - e[0]) / double(t));
    float p = float(prefix / total);
    for (int i = 0; i < steps / 2; ++i) p = std::nextafter(p, 0.0f);
    for (int i = 0; i < steps; ++i, p = std::nextafter(p, 1.0f)) {
      const int r = q * steps + i;
      std::copy(row.begin(), row.end(), w.x.begin() + std::ptrdiff_t(r) * V);
      w.p.push_back(p);
      w.k.push_back(0);
      w.m.push_back(0.0f);
      w.t.push_back(t);
      w.seeds.push_back(rng());
      w.offsets.push_back(0);
    }
  }
  const qrita::sharded::Shard shard{0, V, V};
  const qrita::Workspace<Exec> ws(space, B, V);
  Device<Exec> exact(w), plain(w), with_ws(w);
  qrita::sharded::sample_mask(space, comm, exact.logits, shard, exact.params);
  qrita::sample_mask(space, plain.logits, plain.params);
  Kokkos::View<qrita::RowStats*, memory> stats("stats", B);
  qrita::sample_mask(space, with_ws.logits, with_ws.params, qrita::Options{}, ws, stats);
  const auto want = on_host(exact.logits);
  EXPECT_EQ(differing_words(want, on_host(plain.logits)), 0);
  EXPECT_EQ(differing_words(want, on_host(with_ws.logits)), 0);
  // Rows this close to their boundary are not decided from the rounded
  // total: their first read gathered the nucleus, yet many are read again
  // (how many depends on the platform's exp; from a rounded total, none).
  const auto st = on_host(stats);
  int read_again = 0;
  for (int r = 0; r < B; ++r) read_again += st(r).topp_path == qrita::RowPath::buckets;
  EXPECT_GT(read_again, B / 8);

  const Device<Exec> d(w);
  Kokkos::View<int**, memory> i0("i0", B, C), i1("i1", B, C);
  Kokkos::View<float**, memory> p0("p0", B, C), p1("p1", B, C), l0("l0", B, C), l1("l1", B, C);
  Kokkos::View<int*, memory> n0("n0", B), n1("n1", B);
  qrita::sharded::candidate_list(space, comm, d.logits, shard, d.params, i0, p0, l0, n0);
  qrita::candidate_list(space, d.logits, d.params, i1, p1, l1, n1);
  EXPECT_EQ(differing_words(on_host(n0), on_host(n1)), 0);
  EXPECT_EQ(differing_words(on_host(i0), on_host(i1)), 0);
}

// The list's placement scan as a GPU team runs it (Kokkos'
// TeamThreadRange parallel_scan on CUDA and HIP): each entry's step is
// taken on its own, the team adds the steps up, and only the final call
// sees the sum of the steps before it. The places must be those of one
// pass in column order over the definition: every key above the
// boundary's, then its first `keep` members. Few distinct keys, so the
// boundary key has many members and most rows keep only some of them.
TEST(ShardedListScan, PlacesAsOnePassInColumnOrder) {
  namespace qs = qrita::detail::shard;
  using key_type = qrita::detail::key_type;
  std::mt19937 gen(20261207u);
  for (int trial = 0; trial < 500; ++trial) {
    const int width = 1 + int(gen() % 300u);
    std::vector<key_type> keys(std::size_t(width), 0);
    for (auto& k : keys) k = key_type(1000u + gen() % 6u);
    const key_type key = key_type(1000u + gen() % 6u);
    const auto members = std::uint32_t(std::count(keys.begin(), keys.end(), key));
    const std::uint32_t keep = std::uint32_t(gen() % (members + 1u));
    std::vector<int> expected;
    std::uint32_t seen = 0;
    for (int i = 0; i < width; ++i) {
      const key_type k = keys[std::size_t(i)];
      if (k > key || (k == key && seen++ < keep)) expected.push_back(i);
    }
    std::vector<int> placed(expected.size(), -1);
    std::uint64_t before = 0;  // the sum of the steps before entry i
    for (int i = 0; i < width; ++i) {
      const key_type k = keys[std::size_t(i)];
      if (qs::is_listed(k, key, before, keep)) {
        const std::uint64_t at = qs::list_place(before, keep);
        ASSERT_LT(at, placed.size()) << "trial " << trial << ", column " << i;
        ASSERT_EQ(placed[std::size_t(at)], -1) << "trial " << trial << ", column " << i;
        placed[std::size_t(at)] = i;
      }
      before += qs::list_scan_step(k, key);
    }
    EXPECT_EQ(placed, expected) << "trial " << trial;
    EXPECT_EQ(qs::list_place(before, keep), expected.size()) << "trial " << trial;
  }
}

TYPED_TEST(Sharded, BadArgumentsThrowBeforeAnythingIsWritten) {
  using Exec = TypeParam;
  Exec space;
  const qrita::SingleRank comm;
  const Rows w = make_rows(4, 100, 3);
  Device<Exec> d(w);
  const auto before = on_host(d.logits);
  const auto throws = [&](qrita::sharded::Shard const& shard, const char* says) {
    try {
      qrita::sharded::sample_mask(space, comm, d.logits, shard, d.params);
      ADD_FAILURE() << "no error for " << says;
    } catch (std::invalid_argument const& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  throws({0, 99, 100}, "shard.columns");
  throws({1, 100, 100}, "do not lie in a vocabulary");
  throws({0, 100, 0}, "shard.vocab");
  // One rank's shard must be the whole vocabulary.
  throws({0, 100, 200}, "the shards cover 100 columns of a vocabulary of 200");
  EXPECT_EQ(differing_words(before, on_host(d.logits)), 0);
}

}  // namespace
