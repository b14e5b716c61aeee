// SPDX-License-Identifier: Apache-2.0
// qrita_sharded_perf: the sharded sampler over MPI against what engines do
// today, a gather of the vocabulary and the plain call, on the same rows.
//
//   mpiexec -n R qrita_sharded_perf [--benchmark_out=sharded.json ...]
//
// Every rank holds an even shard of [B][V] fp32 logits (randn rows,
// top-k 50 and top-p 0.9 at T = 0.7). Per cell:
//   sharded  qrita::sharded::sample_tokens with a workspace, no agreement
//            check;
//   gather   MPI_Allgather of the shards, their columns put back into
//            rows, then qrita::sample_tokens on the whole rows.
// Each iteration is timed from a barrier to the slowest rank's end
// (MPI_Wtime, the maximum over the ranks); every rank runs the same fixed
// number of iterations, so the collectives stay in step. The counters give
// the bytes one rank receives per call.

#include <qrita/comm/mpi.hpp>
#include <qrita/qrita.hpp>
#include <qrita/sharded.hpp>

#include <benchmark/benchmark.h>
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using Space  = Kokkos::DefaultExecutionSpace;
using Memory = Space::memory_space;

int rank_of() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int ranks_of() {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

struct Cell {
  int B, V;
};

// The rows every rank makes alike, and this rank's even shard of them.
struct Setup {
  int R, rank;
  qrita::sharded::Shard shard;
  std::vector<std::int64_t> firsts;
  Kokkos::View<float**, Kokkos::LayoutRight, Memory> whole, mine, gathered;
  qrita::SamplingParams<Memory> params;
  Kokkos::View<std::uint64_t*, Memory> seeds, offsets;
  Kokkos::View<int*, Memory> tokens;

  Setup(Cell c) : R(ranks_of()), rank(rank_of()) {
    for (int q = 0; q <= R; ++q) firsts.push_back(std::int64_t(c.V) * q / R);
    shard    = {firsts[std::size_t(rank)], firsts[std::size_t(rank) + 1] - firsts[std::size_t(rank)],
                c.V};
    whole    = decltype(whole)("whole", std::size_t(c.B), std::size_t(c.V));
    mine     = decltype(mine)("mine", std::size_t(c.B), std::size_t(shard.columns));
    gathered = decltype(gathered)("gathered", std::size_t(c.B) * std::size_t(R),
                                  std::size_t(firsts[1] + 1));
    std::mt19937_64 rng(7);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    auto hw = Kokkos::create_mirror_view(whole);
    for (std::size_t r = 0; r < std::size_t(c.B); ++r)
      for (std::size_t i = 0; i < std::size_t(c.V); ++i) hw(r, i) = normal(rng);
    Kokkos::deep_copy(whole, hw);
    auto hm = Kokkos::create_mirror_view(mine);
    for (std::size_t r = 0; r < std::size_t(c.B); ++r)
      for (std::size_t i = 0; i < std::size_t(shard.columns); ++i)
        hm(r, i) = hw(r, std::size_t(shard.first_column) + i);
    Kokkos::deep_copy(mine, hm);
    const auto fill = [&](auto view, auto value) {
      Kokkos::deep_copy(view, value);
      return view;
    };
    params.k           = fill(Kokkos::View<int*, Memory>("k", std::size_t(c.B)), 50);
    params.p           = fill(Kokkos::View<float*, Memory>("p", std::size_t(c.B)), 0.9f);
    params.temperature = fill(Kokkos::View<float*, Memory>("t", std::size_t(c.B)), 0.7f);
    seeds   = fill(Kokkos::View<std::uint64_t*, Memory>("seeds", std::size_t(c.B)), 11u);
    offsets = fill(Kokkos::View<std::uint64_t*, Memory>("offsets", std::size_t(c.B)), 3u);
    tokens  = Kokkos::View<int*, Memory>("tokens", std::size_t(c.B));
  }
};

// Times one collective step on every rank: from a barrier to the slowest
// rank's end.
template <class F>
double timed(F const& f) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  f();
  double dt = MPI_Wtime() - t0;
  MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return dt;
}

void sharded_cell(benchmark::State& state, Cell c) {
  Setup s(c);
  Space space;
  const qrita::MpiCommunicator comm(MPI_COMM_WORLD);
  qrita::sharded::Workspace<Space> ws(space, comm, s.shard, c.B);
  qrita::sharded::Options opts;
  opts.check_agreement = false;
  for (auto _ : state) {
    state.SetIterationTime(timed([&] {
      qrita::sharded::sample_tokens(space, comm, s.mine, s.shard, s.params, s.seeds, s.offsets,
                                    s.tokens, opts, &ws);
      space.fence();
    }));
  }
  state.counters["bytes_received"] =
      double(qrita::sharded::wire_bytes(qrita::sharded::Call::tokens, s.R)) * c.B;
}

void gather_cell(benchmark::State& state, Cell c) {
  Setup s(c);
  Space space;
  const std::size_t w = std::size_t(s.firsts[1] + 1);  // the widest shard, padded
  std::vector<float> send(std::size_t(c.B) * w);
  for (auto _ : state) {
    state.SetIterationTime(timed([&] {
      // Pack this shard's rows, gather every rank's, put the columns back.
      for (std::size_t r = 0; r < std::size_t(c.B); ++r)
        std::memcpy(&send[r * w], &s.mine(r, 0), std::size_t(s.shard.columns) * sizeof(float));
      MPI_Allgather(send.data(), int(send.size()), MPI_FLOAT, s.gathered.data(), int(send.size()),
                    MPI_FLOAT, MPI_COMM_WORLD);
      for (int q = 0; q < s.R; ++q) {
        const std::size_t first = std::size_t(s.firsts[std::size_t(q)]);
        const std::size_t cols  = std::size_t(s.firsts[std::size_t(q) + 1]) - first;
        for (std::size_t r = 0; r < std::size_t(c.B); ++r)
          std::memcpy(&s.whole(r, first), &s.gathered(std::size_t(q) * std::size_t(c.B) + r, 0),
                      cols * sizeof(float));
      }
      qrita::sample_tokens(space, s.whole, s.params, s.seeds, s.offsets, s.tokens);
      space.fence();
    }));
  }
  state.counters["bytes_received"] = double(c.B) * double(c.V - s.shard.columns) * 4.0;
}

// A reporter that reports nothing.
class Quiet : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(Context const&) override { return true; }
  void ReportRuns(std::vector<Run> const&) override {}
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    benchmark::Initialize(&argc, argv);
    const int R = ranks_of();
    for (int V : {128256, 262144})
      for (int B : {1, 16, 64}) {
        const Cell c{B, V};
        const std::string cell = "/V:" + std::to_string(V) + "/B:" + std::to_string(B) +
                                 "/ranks:" + std::to_string(R);
        const int iterations = B == 64 ? 5 : 20;
        benchmark::RegisterBenchmark(("sharded" + cell).c_str(), sharded_cell, c)
            ->UseManualTime()->Iterations(iterations)->Repetitions(3)
            ->ReportAggregatesOnly(true)->Unit(benchmark::kMicrosecond);
        benchmark::RegisterBenchmark(("gather" + cell).c_str(), gather_cell, c)
            ->UseManualTime()->Iterations(iterations)->Repetitions(3)
            ->ReportAggregatesOnly(true)->Unit(benchmark::kMicrosecond);
      }
    if (rank_of() == 0) {
      benchmark::RunSpecifiedBenchmarks();
    } else {
      // The other ranks run the same cells in step, reporting nothing.
      Quiet quiet;
      benchmark::RunSpecifiedBenchmarks(&quiet);
    }
    benchmark::Shutdown();
  }
  MPI_Finalize();
  return 0;
}
