// SPDX-License-Identifier: Apache-2.0
// The sharded calls over MPI, run by CTest with 1, 2, 3 and 4 ranks: every
// rank makes the same batch, keeps its own (uneven, sometimes empty) shard,
// and its sharded answer must equal, bit for bit, the plain call on the
// whole rows (which each rank also makes). Rows are chosen to be awkward:
// ties across shard boundaries, shards of -inf or NaN, k above any shard,
// nuclei spanning every shard, bf16 ties. Wrong or disagreeing arguments on
// one rank must make every rank throw.

#include <qrita/comm/mpi.hpp>
#include <qrita/qrita.hpp>
#include <qrita/sharded.hpp>

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using Space  = Kokkos::DefaultExecutionSpace;
using Memory = Space::memory_space;
constexpr float inf = std::numeric_limits<float>::infinity();

qrita::MpiCommunicator world() { return qrita::MpiCommunicator(MPI_COMM_WORLD); }

template <class T>
float round_to(float x) {
  return qrita::to_float(qrita::from_float<T>(x));
}

std::uint32_t bits_of(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}

// A batch every rank makes alike: rows of several kinds, and per-row
// filters.
struct Batch {
  int B = 0, V = 0;
  std::vector<float> x;  // B x V
  std::vector<int> k;
  std::vector<float> p, min_p, t;
  std::vector<std::uint64_t> seeds, offsets;
};

Batch make_batch(int B, int V, std::uint64_t seed) {
  Batch b;
  b.B = B;
  b.V = V;
  b.x.resize(std::size_t(B) * std::size_t(V));
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  const int ks[]   = {0, 1, 2, 5, 17, 50, V / 3, V - 1, V, V + 7};
  const float ps[] = {1.0f, 0.9f, 0.5f, 0.99f, 0.0f, 0.3f, 0.999f};
  const float ms[] = {0.0f, 0.0f, 0.05f, 0.3f, 1.0f};
  const float ts[] = {1.0f, 1.0f, 0.7f, 2.0f, 0.0f, inf, 5.0f};
  for (int r = 0; r < B; ++r) {
    float* row     = b.x.data() + std::size_t(r) * std::size_t(V);
    const int kind = r % 9;
    for (int i = 0; i < V; ++i) {
      float v = normal(rng);
      switch (kind) {
        case 0: break;                                            // randn
        case 1: v = v - 0.02f * float(i) / float(V) * 50.0f; break;  // low ids hot
        case 2: v = float(int(v * 2.0f)) / 2.0f; break;           // few values: ties
        case 3: v = round_to<qrita::bfloat16>(v * 3.0f); break;   // bf16 ties
        case 4: v = 0.001f * v; break;                            // near flat: big nuclei
        case 5: v = unit(rng) < 0.9f ? -inf : v; break;           // mostly -inf
        case 6: v = i < V / 2 ? std::numeric_limits<float>::quiet_NaN() : v; break;  // a NaN half
        case 7: v = i % 97 == 3 ? inf : v; break;                 // +inf entries
        default: v = 1.0f; break;                                  // all equal
      }
      row[i] = v;
    }
    if (r % 23 == 22)
      for (int i = 0; i < V; ++i) row[i] = -inf;  // no candidate
    b.k.push_back(ks[rng() % 10]);
    b.p.push_back(ps[rng() % 7]);
    b.min_p.push_back(ms[rng() % 5]);
    b.t.push_back(ts[rng() % 7]);
    b.seeds.push_back(rng());
    b.offsets.push_back(rng() % 1000);
  }
  return b;
}

// Uneven shards (some empty) from cut points every rank draws alike.
qrita::sharded::Shard my_shard(int V, int ranks, int rank, std::uint64_t seed) {
  std::mt19937_64 rng(seed * 7919 + std::uint64_t(ranks));
  std::vector<std::int64_t> cuts{0, V};
  for (int q = 1; q < ranks; ++q) {
    // Now and then two cuts coincide: an empty shard.
    cuts.push_back(q == 2 && rng() % 3 == 0 ? cuts.back() : std::int64_t(rng() % std::uint64_t(V)));
  }
  std::sort(cuts.begin(), cuts.end());
  // Ranks hold the shards in a shuffled order.
  std::vector<int> owner(static_cast<std::size_t>(ranks));
  for (int q = 0; q < ranks; ++q) owner[std::size_t(q)] = q;
  std::shuffle(owner.begin(), owner.end(), rng);
  const int s = int(std::find(owner.begin(), owner.end(), rank) - owner.begin());
  return {cuts[std::size_t(s)], cuts[std::size_t(s) + 1] - cuts[std::size_t(s)], V};
}

template <class T>
using Logits = Kokkos::View<T**, Kokkos::LayoutRight, Memory>;

template <class T>
Logits<T> to_view(Batch const& b, std::int64_t first, std::int64_t columns) {
  Logits<T> v("logits", std::size_t(b.B), std::size_t(columns));
  auto h = Kokkos::create_mirror_view(v);
  for (int r = 0; r < b.B; ++r)
    for (std::int64_t c = 0; c < columns; ++c)
      h(std::size_t(r), std::size_t(c)) =
          qrita::from_float<T>(b.x[std::size_t(r) * std::size_t(b.V) + std::size_t(first + c)]);
  Kokkos::deep_copy(v, h);
  return v;
}

template <class E>
Kokkos::View<E*, Memory> column(std::vector<E> const& v, const char* label) {
  Kokkos::View<E*, Memory> d(std::string(label), v.size());
  auto h = Kokkos::create_mirror_view(d);
  for (std::size_t i = 0; i < v.size(); ++i) h(i) = v[i];
  Kokkos::deep_copy(d, h);
  return d;
}

struct Inputs {
  qrita::SamplingParams<Memory> params;
  Kokkos::View<std::uint64_t*, Memory> seeds, offsets;
};

Inputs inputs(Batch const& b, bool with_t, bool with_minp) {
  Inputs in;
  in.params.k = column(b.k, "k");
  in.params.p = column(b.p, "p");
  if (with_minp) in.params.min_p = column(b.min_p, "min_p");
  if (with_t) in.params.temperature = column(b.t, "t");
  in.seeds   = column(b.seeds, "seeds");
  in.offsets = column(b.offsets, "offsets");
  return in;
}

template <class T>
std::uint32_t stored_bits(T v) {
  if constexpr (std::is_same<T, float>::value)
    return bits_of(v);
  else
    return std::uint32_t(v.bits);
}

int world_rank() { return world().rank(); }
int world_size() { return world().size(); }

// --- the calls against the plain ones ---------------------------------------

template <class T>
void check_mask(Batch const& b, bool with_t, bool with_minp, std::uint64_t seed) {
  const auto shard = my_shard(b.V, world_size(), world_rank(), seed);
  const Inputs in  = inputs(b, with_t, with_minp);
  auto whole       = to_view<T>(b, 0, b.V);
  auto mine        = to_view<T>(b, shard.first_column, shard.columns);
  Space space;
  qrita::sample_mask(space, whole, in.params);
  qrita::sharded::sample_mask(space, world(), mine, shard, in.params);
  space.fence();
  auto hw = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), whole);
  auto hm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), mine);
  int wrong = 0;
  for (int r = 0; r < b.B; ++r)
    for (std::int64_t c = 0; c < shard.columns; ++c) {
      const auto want = stored_bits(hw(std::size_t(r), std::size_t(shard.first_column + c)));
      const auto got  = stored_bits(hm(std::size_t(r), std::size_t(c)));
      if (want != got && wrong++ < 5)
        ADD_FAILURE() << "rank " << world_rank() << " row " << r << " column "
                      << shard.first_column + c << ": " << got << " where the plain mask has "
                      << want << " (k " << b.k[std::size_t(r)] << ", p " << b.p[std::size_t(r)]
                      << ", min_p " << (with_minp ? b.min_p[std::size_t(r)] : 0.0f) << ", T "
                      << (with_t ? b.t[std::size_t(r)] : 1.0f) << ")";
    }
  EXPECT_EQ(wrong, 0);
}

template <class T>
void check_tokens(Batch const& b, bool with_t, bool with_minp, std::uint64_t seed) {
  const auto shard = my_shard(b.V, world_size(), world_rank(), seed);
  const Inputs in  = inputs(b, with_t, with_minp);
  auto whole       = to_view<T>(b, 0, b.V);
  auto mine        = to_view<T>(b, shard.first_column, shard.columns);
  Kokkos::View<int*, Memory> want("want", std::size_t(b.B)), got("got", std::size_t(b.B));
  Space space;
  qrita::sample_tokens(space, whole, in.params, in.seeds, in.offsets, want);
  qrita::sharded::sample_tokens(space, world(), mine, shard, in.params, in.seeds, in.offsets,
                                got);
  space.fence();
  auto hw = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), want);
  auto hg = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), got);
  for (int r = 0; r < b.B; ++r)
    EXPECT_EQ(hg(std::size_t(r)), hw(std::size_t(r)))
        << "rank " << world_rank() << " row " << r << " (k " << b.k[std::size_t(r)] << ", p "
        << b.p[std::size_t(r)] << ", T " << (with_t ? b.t[std::size_t(r)] : 1.0f) << ")";
}

void check_list(Batch const& b, int C, bool with_t, bool with_minp, std::uint64_t seed) {
  const auto shard = my_shard(b.V, world_size(), world_rank(), seed);
  const Inputs in  = inputs(b, with_t, with_minp);
  auto whole       = to_view<float>(b, 0, b.V);
  auto mine        = to_view<float>(b, shard.first_column, shard.columns);
  const std::size_t B = std::size_t(b.B);
  Kokkos::View<int**, Memory> ids0("ids", B, std::size_t(C)), ids1("ids", B, std::size_t(C));
  Kokkos::View<float**, Memory> pr0("p", B, std::size_t(C)), pr1("p", B, std::size_t(C));
  Kokkos::View<float**, Memory> lp0("lp", B, std::size_t(C)), lp1("lp", B, std::size_t(C));
  Kokkos::View<int*, Memory> n0("n", B), n1("n", B);
  Space space;
  qrita::candidate_list(space, whole, in.params, ids0, pr0, lp0, n0);
  qrita::sharded::candidate_list(space, world(), mine, shard, in.params, ids1, pr1, lp1, n1);
  space.fence();
  auto h = [](auto const& v) {
    return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  };
  auto i0 = h(ids0), i1 = h(ids1);
  auto p0 = h(pr0), p1 = h(pr1);
  auto l0 = h(lp0), l1 = h(lp1);
  auto c0 = h(n0), c1 = h(n1);
  int wrong = 0;
  for (std::size_t r = 0; r < B; ++r) {
    EXPECT_EQ(c1(r), c0(r)) << "rank " << world_rank() << " row " << r;
    for (std::size_t j = 0; j < std::size_t(C); ++j) {
      const bool same = i1(r, j) == i0(r, j) && bits_of(p1(r, j)) == bits_of(p0(r, j)) &&
                        bits_of(l1(r, j)) == bits_of(l0(r, j));
      if (!same && wrong++ < 5)
        ADD_FAILURE() << "rank " << world_rank() << " row " << r << " slot " << j << ": ("
                      << i1(r, j) << ", " << p1(r, j) << ", " << l1(r, j)
                      << ") where the plain list has (" << i0(r, j) << ", " << p0(r, j) << ", "
                      << l0(r, j) << ")";
    }
  }
  EXPECT_EQ(wrong, 0);
}

// --- the tests ----------------------------------------------------------------

TEST(ShardedMpi, MaskEqualsThePlainMask) {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const Batch b = make_batch(46, 1000 + int(seed) * 517, seed);
    check_mask<float>(b, false, false, seed);
    check_mask<float>(b, true, true, seed);
  }
}

TEST(ShardedMpi, Bfloat16MaskEqualsThePlainMask) {
  for (std::uint64_t seed : {4u, 5u}) {
    Batch b = make_batch(46, 3001, seed);
    for (float& v : b.x) v = round_to<qrita::bfloat16>(v);
    check_mask<qrita::bfloat16>(b, true, true, seed);
  }
}

TEST(ShardedMpi, TokensEqualThePlainTokens) {
  for (std::uint64_t seed : {6u, 7u, 8u}) {
    const Batch b = make_batch(46, 2048 + int(seed), seed);
    check_tokens<float>(b, true, true, seed);
    check_tokens<float>(b, false, false, seed);
  }
  Batch b = make_batch(46, 4000, 9);
  for (float& v : b.x) v = round_to<qrita::bfloat16>(v);
  check_tokens<qrita::bfloat16>(b, true, true, 9);
}

TEST(ShardedMpi, ListsEqualThePlainLists) {
  for (std::uint64_t seed : {10u, 11u}) {
    const Batch b = make_batch(46, 1500 + int(seed) * 100, seed);
    check_list(b, 20, true, true, seed);
    check_list(b, 1, false, false, seed);
  }
}

TEST(ShardedMpi, AWorkspaceGivesTheSameAnswer) {
  const Batch b   = make_batch(27, 3333, 12);
  const auto shard = my_shard(b.V, world_size(), world_rank(), 12);
  const Inputs in = inputs(b, true, true);
  Space space;
  qrita::sharded::Workspace<Space> ws(space, world(), shard, b.B, 8);
  Kokkos::View<int*, Memory> t0("t0", std::size_t(b.B)), t1("t1", std::size_t(b.B));
  auto mine = to_view<float>(b, shard.first_column, shard.columns);
  qrita::sharded::Options unchecked;
  unchecked.check_agreement = false;
  qrita::sharded::sample_tokens(space, world(), mine, shard, in.params, in.seeds, in.offsets, t0);
  qrita::sharded::sample_tokens(space, world(), mine, shard, in.params, in.seeds, in.offsets, t1,
                                unchecked, &ws);
  space.fence();
  auto h0 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), t0);
  auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), t1);
  for (int r = 0; r < b.B; ++r) EXPECT_EQ(h1(std::size_t(r)), h0(std::size_t(r)));
}

// A rank's wrong or different arguments: every rank throws, naming them.
template <class F>
void expect_every_rank_throws(F const& f, std::string const& says) {
  bool threw = false;
  std::string what;
  try {
    f();
  } catch (std::invalid_argument const& e) {
    threw = true;
    what  = e.what();
  }
  EXPECT_TRUE(threw) << "rank " << world_rank() << " did not throw";
  if (world_rank() == 0 || world_size() == 1) {
    EXPECT_NE(what.find(says), std::string::npos) << what;
  }
  // Every rank is still in step: a collective after the error completes.
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(ShardedMpi, DisagreementThrowsOnEveryRank) {
  const Batch b    = make_batch(9, 500, 13);
  const auto shard = my_shard(b.V, world_size(), world_rank(), 13);
  Space space;
  auto mine = to_view<float>(b, shard.first_column, shard.columns);
  // Rank 0's k differs on one row (with one rank: a k View of the wrong
  // length, its own error).
  {
    Inputs in = inputs(b, true, false);
    if (world_rank() == 0) {
      std::vector<int> k = b.k;
      k[3] += 1;
      if (world_size() == 1) k.pop_back();
      in.params.k = column(k, "k");
    }
    expect_every_rank_throws(
        [&] { qrita::sharded::sample_mask(space, world(), mine, shard, in.params); },
        world_size() == 1 ? "params.k" : "differs across the ranks");
  }
  // The last rank's shard claims columns it does not have.
  {
    const Inputs in = inputs(b, true, false);
    auto bad        = shard;
    if (world_rank() == world_size() - 1) bad.first_column += 1;
    expect_every_rank_throws(
        [&] {
          Kokkos::View<int*, Memory> t("t", std::size_t(b.B));
          auto wide = to_view<float>(b, 0, bad.columns);
          qrita::sharded::sample_tokens(space, world(), wide, bad, in.params, in.seeds,
                                        in.offsets, t);
        },
        "qrita::sharded");
  }
  // One rank's batch is shorter: every rank throws, none hangs.
  if (world_size() > 1) {
    const Batch small = make_batch(world_rank() == 0 && world_size() > 1 ? 8 : 9, 500, 13);
    const Inputs in   = inputs(small, false, false);
    auto view         = to_view<float>(small, shard.first_column, shard.columns);
    expect_every_rank_throws(
        [&] { qrita::sharded::sample_mask(space, world(), view, shard, in.params); },
        "differs across the ranks");
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = 0;
  {
    ::testing::InitGoogleTest(&argc, argv);
    Kokkos::ScopeGuard kokkos(argc, argv);
    // Only rank 0 prints (every rank runs every test).
    if (world_rank() != 0) {
      auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
      delete listeners.Release(listeners.default_result_printer());
    }
    rc = RUN_ALL_TESTS();
    // A failure on any rank fails the run.
    MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return rc;
}
