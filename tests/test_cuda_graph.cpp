// SPDX-License-Identifier: Apache-2.0
// qrita's calls inside a CUDA graph (CUDA builds only). The profiling test
// checks what Kokkos Tools see of a call (no allocation, no fence); this one
// does what a serving engine does: it captures a decoding step (restore the
// logits, sample_mask, sample_tokens, candidate_list) on a stream with
// cudaStreamCaptureModeGlobal, under which any synchronising or allocating
// CUDA call from any thread fails the capture, instantiates the graph and
// replays it. Each replay must give, bit for bit, what direct calls give on
// the values the views hold at replay time: new seeds and offsets, and new
// logits, are read from memory, not frozen into the graph. Batches of 2
// (each row split across teams: the test asserts it, from the launch plan
// and from every row's RowStats::teams) and 96 (one team per row); rows of
// an LM shape with k = 50, p = 0.9, T = 0.8 and of randn with
// p = 0.7 alone (kept sets wider than the candidate tiers, which take the
// sampler's and the list's deferred launches).

#include <Kokkos_Core.hpp>

#if defined(KOKKOS_ENABLE_CUDA)

#include "support_sampling.hpp"
#include "synthetic.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <random>
#include <vector>

namespace {

#define QRITA_CUDA_OK(expr)                                                  \
  do {                                                                       \
    const cudaError_t qrita_err = (expr);                                    \
    ASSERT_EQ(qrita_err, cudaSuccess) << #expr << ": " << cudaGetErrorString(qrita_err); \
  } while (0)

using Space = Kokkos::Cuda;
using Mem   = Space::memory_space;
template <class T>
using Matrix = Kokkos::View<T**, Kokkos::LayoutRight, Mem>;

// Everything one decoding step reads and writes.
struct Step {
  Matrix<float> source, logits;  // the step restores logits from source
  Kokkos::View<int*, Mem> k;
  Kokkos::View<float*, Mem> p, temperature;
  Kokkos::View<std::uint64_t*, Mem> seeds, offsets;
  Kokkos::View<int*, Mem> tokens, counts;
  Matrix<int> ids;
  Matrix<float> probs, logprobs;
  qrita::SamplingParams<Mem> params;

  Step(std::size_t batch, std::size_t vocab, std::size_t C)
      : source("source", batch, vocab), logits("logits", batch, vocab), k("k", batch),
        p("p", batch), temperature("temperature", batch), seeds("seeds", batch),
        offsets("offsets", batch), tokens("tokens", batch), counts("counts", batch),
        ids("ids", batch, C), probs("probs", batch, C), logprobs("logprobs", batch, C) {
    params.k           = k;
    params.p           = p;
    params.temperature = temperature;
  }

  // The step, enqueued on `space` (its stream): a raw copy for the
  // restore, so that only qrita's calls are under test.
  void enqueue(Space const& space, qrita::Options const& opts,
               qrita::Workspace<Space> const& ws) const {
    ASSERT_EQ(cudaMemcpyAsync(logits.data(), source.data(), source.span() * sizeof(float),
                              cudaMemcpyDeviceToDevice, space.cuda_stream()),
              cudaSuccess);
    qrita::sample_mask(space, logits, params, opts, ws);
    qrita::sample_tokens(space, source, params, seeds, offsets, tokens, opts, ws);
    qrita::candidate_list(space, source, params, ids, probs, logprobs, counts, opts, ws);
  }

  // Outputs overwritten with a pattern no call writes, between runs.
  void poison() const {
    Kokkos::deep_copy(logits, 12345.0f);
    Kokkos::deep_copy(tokens, -7);
    Kokkos::deep_copy(counts, -7);
    Kokkos::deep_copy(ids, -7);
    Kokkos::deep_copy(probs, -7.0f);
    Kokkos::deep_copy(logprobs, -7.0f);
  }
};

// What a step produced, on the host, compared bit for bit.
struct Result {
  std::vector<float> mask, probs, logprobs;
  std::vector<int> tokens, counts, ids;
};

template <class V>
std::vector<typename V::non_const_value_type> host_values(V const& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  return std::vector<typename V::non_const_value_type>(h.data(), h.data() + h.span());
}

Result read(Step const& s) {
  return Result{host_values(s.logits), host_values(s.probs), host_values(s.logprobs),
                host_values(s.tokens), host_values(s.counts), host_values(s.ids)};
}

void expect_same(Result const& graph, Result const& direct, const char* what) {
  EXPECT_TRUE(qtest::same_bits(graph.mask, direct.mask)) << what << ": the masked logits";
  EXPECT_EQ(graph.tokens, direct.tokens) << what << ": the tokens differ";
  EXPECT_EQ(graph.counts, direct.counts) << what << ": the kept counts differ";
  EXPECT_EQ(graph.ids, direct.ids) << what << ": the listed ids differ";
  EXPECT_TRUE(qtest::same_bits(graph.probs, direct.probs)) << what << ": the probabilities";
  EXPECT_TRUE(qtest::same_bits(graph.logprobs, direct.logprobs))
      << what << ": the log-probabilities";
}

// Row r: the LM shape (k = 50, p = 0.9) on even rows, randn (p = 0.7
// alone) on odd ones; `salt` changes every value.
void fill(Step const& s, std::size_t batch, std::size_t vocab, std::uint64_t salt) {
  auto h = Kokkos::create_mirror_view(s.source);
  std::mt19937_64 rng(salt);
  for (std::size_t r = 0; r < batch; ++r) {
    if (r % 2 == 0)
      qrita::synthetic::lm_row(&h(r, 0), std::int64_t(vocab), rng);
    else
      qrita::synthetic::counter_row(&h(r, 0), std::int64_t(vocab),
                                    qrita::synthetic::CounterShape::randn, salt,
                                    std::int64_t(r));
  }
  Kokkos::deep_copy(s.source, h);
}

void set_draws(Step const& s, std::uint64_t seed, std::uint64_t offset) {
  auto hs = Kokkos::create_mirror_view(s.seeds);
  auto ho = Kokkos::create_mirror_view(s.offsets);
  for (std::size_t r = 0; r < hs.extent(0); ++r) {
    hs(r) = seed + 1000003u * r;
    ho(r) = offset + r;
  }
  Kokkos::deep_copy(s.seeds, hs);
  Kokkos::deep_copy(s.offsets, ho);
}

constexpr std::size_t step_vocab = 80000;  // every row of both tests

// `split`: whether the batch's rows must be split across teams (or each
// row worked on by one team).
void check_batch(std::size_t batch, bool split) {
  const std::size_t vocab = step_vocab, C = 64;
  cudaStream_t stream = nullptr;
  QRITA_CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  {
    const Space space(stream);
    const qrita::Options opts{};
    const qrita::Workspace<Space> ws(space, batch, vocab, opts);
    Step step(batch, vocab, C);
    {
      auto hk = Kokkos::create_mirror_view(step.k);
      auto hp = Kokkos::create_mirror_view(step.p);
      auto ht = Kokkos::create_mirror_view(step.temperature);
      for (std::size_t r = 0; r < batch; ++r) {
        hk(r) = r % 2 == 0 ? 50 : 0;
        hp(r) = r % 2 == 0 ? 0.9f : 0.7f;
        ht(r) = r % 2 == 0 ? 0.8f : 1.0f;
      }
      Kokkos::deep_copy(step.k, hk);
      Kokkos::deep_copy(step.p, hp);
      Kokkos::deep_copy(step.temperature, ht);
    }
    fill(step, batch, vocab, 1);
    set_draws(step, 11, 0);

    // Direct calls first: the reference, and the first launch of each
    // kernel (which sizes Kokkos' team scratch and caches the kernels'
    // attributes) outside the capture.
    const auto direct = [&]() {
      step.poison();
      step.enqueue(space, opts, ws);
      space.fence();
      return read(step);
    };
    const Result first = direct();
    const qrita::LaunchPlan plan = qrita::plan(space, batch, vocab, opts);
    // The randn rows' kept sets are wider than the tiers: the step takes
    // the deferred launches it must be capturable with.
    if (batch > 1)
      EXPECT_GT(first.counts[1], plan.candidate_capacity + plan.tier_capacity)
          << "the randn row's kept set fits the tiers: no deferred launch is captured";
    // The layout under test: planned, and taken by every row (its stats
    // name the teams that worked on it).
    if (split)
      ASSERT_GT(plan.teams_per_row, 1) << "batch " << batch << ": the rows are not split";
    else
      ASSERT_EQ(plan.teams_per_row, 1) << "batch " << batch << ": the rows are split";
    {
      Kokkos::View<qrita::RowStats*, Mem> stats("stats", batch);
      Kokkos::deep_copy(space, step.logits, step.source);
      qrita::sample_mask(space, step.logits, step.params, opts, ws, stats);
      const auto rows = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), stats);
      for (std::size_t r = 0; r < batch; ++r)
        EXPECT_EQ(rows(r).teams, plan.teams_per_row) << "row " << r;
    }

    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    QRITA_CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    step.enqueue(space, opts, ws);
    const cudaError_t captured = cudaStreamEndCapture(stream, &graph);
    ASSERT_EQ(captured, cudaSuccess)
        << "a qrita call did something a CUDA graph cannot hold: "
        << cudaGetErrorString(captured);
    size_t nodes = 0;
    QRITA_CUDA_OK(cudaGraphGetNodes(graph, nullptr, &nodes));
    EXPECT_GE(nodes, 4u);  // the copy and at least one kernel per call
    QRITA_CUDA_OK(cudaGraphInstantiateWithFlags(&exec, graph, 0));
    const auto replay = [&]() {
      step.poison();
      EXPECT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
      EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
      return read(step);
    };
    expect_same(replay(), first, "replay, same inputs");
    expect_same(replay(), first, "second replay, same inputs");

    set_draws(step, 99, 5);  // new seeds and offsets
    const Result graph_draw = replay();
    const Result direct_draw = direct();
    expect_same(graph_draw, direct_draw, "replay, new seeds");
    if (batch > 1) EXPECT_NE(direct_draw.tokens, first.tokens) << "the seeds changed nothing";

    fill(step, batch, vocab, 2);  // new logits
    const Result graph_rows = replay();
    const Result direct_rows = direct();
    expect_same(graph_rows, direct_rows, "replay, new logits");
    EXPECT_FALSE(qtest::same_bits(direct_rows.mask, first.mask))
        << "the new logits changed nothing";

    QRITA_CUDA_OK(cudaGraphExecDestroy(exec));
    QRITA_CUDA_OK(cudaGraphDestroy(graph));
    space.fence();
  }
  QRITA_CUDA_OK(cudaStreamDestroy(stream));
}

TEST(CudaGraph, SplitRowsCapturedStepReplaysAsDirectCalls) { check_batch(2, true); }

TEST(CudaGraph, WholeRowsCapturedStepReplaysAsDirectCalls) { check_batch(96, false); }

}  // namespace

#endif  // KOKKOS_ENABLE_CUDA
