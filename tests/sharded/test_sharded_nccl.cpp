// SPDX-License-Identifier: Apache-2.0
// The sharded calls through NCCL on one GPU: a one-rank NCCL communicator
// (the whole vocabulary as the only shard) must give the plain calls'
// answers bit for bit, with and without a workspace and an agreement
// check, and the calls must capture in a CUDA graph.

#include <qrita/comm/nccl.hpp>
#include <qrita/qrita.hpp>
#include <qrita/sharded.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using Space  = Kokkos::Cuda;
using Memory = Space::memory_space;

struct Nccl {
  ncclComm_t comm{};
  Nccl() {
    ncclUniqueId id;
    if (ncclGetUniqueId(&id) != ncclSuccess || ncclCommInitRank(&comm, 1, id, 0) != ncclSuccess)
      throw std::runtime_error("NCCL: no one-rank communicator");
  }
  ~Nccl() { ncclCommDestroy(comm); }
};

template <class E>
Kokkos::View<E*, Memory> column(std::vector<E> const& v, std::string const& label) {
  Kokkos::View<E*, Memory> d(label, v.size());
  auto h = Kokkos::create_mirror_view(d);
  for (std::size_t i = 0; i < v.size(); ++i) h(i) = v[i];
  Kokkos::deep_copy(d, h);
  return d;
}

struct Case {
  int B, V;
  Kokkos::View<float**, Kokkos::LayoutRight, Memory> logits;
  qrita::SamplingParams<Memory> params;
  Kokkos::View<std::uint64_t*, Memory> seeds, offsets;
};

Case make_case(int B, int V, std::uint64_t seed) {
  Case c{B, V, {}, {}, {}, {}};
  c.logits = Kokkos::View<float**, Kokkos::LayoutRight, Memory>("logits", B, V);
  auto h   = Kokkos::create_mirror_view(c.logits);
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<int> k;
  std::vector<float> p, m, t;
  std::vector<std::uint64_t> s, o;
  const float inf = std::numeric_limits<float>::infinity();
  for (int r = 0; r < B; ++r) {
    for (int i = 0; i < V; ++i) {
      float v = normal(rng);
      if (r % 4 == 1) v = float(int(v * 2.0f)) / 2.0f;  // ties
      if (r % 4 == 2) v = 0.001f * v;                   // a nucleus of most of the row
      h(r, i) = v;
    }
    const int ks[]   = {0, 1, 20, 1000, V};
    const float ps[] = {1.0f, 0.9f, 0.5f, 0.99f};
    const float ms[] = {0.0f, 0.1f};
    const float ts[] = {1.0f, 0.7f, 2.0f, 0.0f, inf};
    k.push_back(ks[rng() % 5]);
    p.push_back(ps[rng() % 4]);
    m.push_back(ms[rng() % 2]);
    t.push_back(ts[rng() % 5]);
    s.push_back(rng());
    o.push_back(rng() % 100);
  }
  Kokkos::deep_copy(c.logits, h);
  c.params.k           = column(k, "k");
  c.params.p           = column(p, "p");
  c.params.min_p       = column(m, "min_p");
  c.params.temperature = column(t, "t");
  c.seeds              = column(s, "seeds");
  c.offsets            = column(o, "offsets");
  return c;
}

template <class V>
auto host(V const& v) {
  return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
}

TEST(ShardedNccl, OneRankEqualsThePlainCalls) {
  Nccl nccl;
  const qrita::NcclCommunicator comm(nccl.comm);
  Space space;
  for (int V : {32000, 128256}) {
    const Case c = make_case(24, V, std::uint64_t(V));
    const qrita::sharded::Shard shard{0, V, V};
    // Mask.
    auto plain = Kokkos::View<float**, Kokkos::LayoutRight, Memory>("plain", c.B, V);
    auto mine  = Kokkos::View<float**, Kokkos::LayoutRight, Memory>("mine", c.B, V);
    Kokkos::deep_copy(plain, c.logits);
    Kokkos::deep_copy(mine, c.logits);
    qrita::sample_mask(space, plain, c.params);
    qrita::sharded::sample_mask(space, comm, mine, shard, c.params);
    space.fence();
    auto hp = host(plain), hm = host(mine);
    int wrong = 0;
    for (int r = 0; r < c.B; ++r)
      for (int i = 0; i < V; ++i) {
        std::uint32_t a, b;
        std::memcpy(&a, &hp(r, i), 4);
        std::memcpy(&b, &hm(r, i), 4);
        wrong += a != b;
      }
    EXPECT_EQ(wrong, 0) << "V = " << V;
    // Tokens, with a workspace and no agreement check.
    qrita::sharded::Workspace<Space> ws(space, comm, shard, c.B, 16);
    qrita::sharded::Options unchecked;
    unchecked.check_agreement = false;
    Kokkos::View<int*, Memory> t0("t0", c.B), t1("t1", c.B);
    qrita::sample_tokens(space, c.logits, c.params, c.seeds, c.offsets, t0);
    qrita::sharded::sample_tokens(space, comm, c.logits, shard, c.params, c.seeds, c.offsets,
                                  t1, unchecked, &ws);
    space.fence();
    auto h0 = host(t0), h1 = host(t1);
    for (int r = 0; r < c.B; ++r) EXPECT_EQ(h1(r), h0(r)) << "V = " << V << " row " << r;
    // Lists.
    Kokkos::View<int**, Memory> i0("i0", c.B, 16), i1("i1", c.B, 16);
    Kokkos::View<float**, Memory> p0("p0", c.B, 16), p1("p1", c.B, 16);
    Kokkos::View<float**, Memory> l0("l0", c.B, 16), l1("l1", c.B, 16);
    Kokkos::View<int*, Memory> n0("n0", c.B), n1("n1", c.B);
    qrita::candidate_list(space, c.logits, c.params, i0, p0, l0, n0);
    qrita::sharded::candidate_list(space, comm, c.logits, shard, c.params, i1, p1, l1, n1,
                                   unchecked, &ws);
    space.fence();
    auto a0 = host(i0), a1 = host(i1);
    auto b0 = host(p0), b1 = host(p1);
    auto d0 = host(l0), d1 = host(l1);
    auto e0 = host(n0), e1 = host(n1);
    for (int r = 0; r < c.B; ++r) {
      EXPECT_EQ(e1(r), e0(r)) << "V = " << V << " row " << r;
      for (int j = 0; j < 16; ++j) {
        EXPECT_EQ(a1(r, j), a0(r, j)) << "V = " << V << " row " << r << " slot " << j;
        EXPECT_EQ(std::memcmp(&b1(r, j), &b0(r, j), 4), 0) << "row " << r << " slot " << j;
        EXPECT_EQ(std::memcmp(&d1(r, j), &d0(r, j), 4), 0) << "row " << r << " slot " << j;
      }
    }
  }
}

// A call with a workspace and no agreement check allocates nothing and
// waits for nothing: it captures in a CUDA graph, and the graph's replay
// gives the same tokens.
TEST(ShardedNccl, TokensCaptureInACudaGraph) {
  Nccl nccl;
  const qrita::NcclCommunicator comm(nccl.comm);
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  {
    Space space(stream);
    const Case c = make_case(16, 50000, 99);
    const qrita::sharded::Shard shard{0, 50000, 50000};
    qrita::sharded::Workspace<Space> ws(space, comm, shard, c.B);
    qrita::sharded::Options unchecked;
    unchecked.check_agreement = false;
    Kokkos::View<int*, Memory> want("want", c.B), got("got", c.B);
    qrita::sample_tokens(space, c.logits, c.params, c.seeds, c.offsets, want);
    space.fence();
    cudaGraph_t graph;
    ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    qrita::sharded::sample_tokens(space, comm, c.logits, shard, c.params, c.seeds, c.offsets, got,
                                  unchecked, &ws);
    ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
    cudaGraphExec_t exec;
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, nullptr, nullptr, 0), cudaSuccess);
    ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    auto hw = host(want), hg = host(got);
    for (int r = 0; r < c.B; ++r) EXPECT_EQ(hg(r), hw(r)) << "row " << r;
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
  cudaStreamDestroy(stream);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  Kokkos::ScopeGuard kokkos(argc, argv);
  return RUN_ALL_TESTS();
}
