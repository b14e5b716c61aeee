// SPDX-License-Identifier: Apache-2.0
// What Kokkos Tools see of a call: one kernel labelled qrita::sample_mask
// (qrita::sample_tokens, qrita::candidate_list for the sampling calls; the
// two qrita::split_* launches for a split row, scan and gather; a sampling
// call with p values and a workspace adds its second kernel,
// qrita::*_deferred, or
// when split, launches qrita::split_deferred_finish after qrita::split_gather
// (and qrita::split_deferred_plan before it where
// LaunchArrangement::split_plans_apart; none after it where
// LaunchArrangement::split_finish_in_gather)) inside
// one balanced region named after the call (also when the call throws);
// with a qrita::Workspace, no allocation or deallocation at all, qrita's or
// Kokkos' own, and no fence inside a call (so it can be captured in a CUDA
// graph). Kokkos sizes its own buffers (team scratch, reduction space) on a
// kernel's first launch and keeps them, so every call is made once before
// the calls that are watched.

#include "support.hpp"
#include "synthetic.hpp"

#include <random>
#include <string>
#include <vector>

namespace {

struct ToolLog {
  std::vector<std::string> kernels, regions, fences_seen;
  std::vector<std::string> allocations;  // "label (bytes)", and deallocations
  int depth = 0, fences = 0;
};
ToolLog log_;

void on_kernel(const char* name, std::uint32_t, std::uint64_t*) { log_.kernels.emplace_back(name); }
void on_push(const char* name) {
  log_.regions.emplace_back(name);
  ++log_.depth;
}
void on_pop() { --log_.depth; }
void on_alloc(Kokkos::Profiling::SpaceHandle, const char* label, const void*,
              std::uint64_t bytes) {
  log_.allocations.push_back("'" + std::string(label) + "' (" + std::to_string(bytes) + " B)");
}
void on_dealloc(Kokkos::Profiling::SpaceHandle, const char* label, const void*,
                std::uint64_t bytes) {
  log_.allocations.push_back("freed '" + std::string(label) + "' (" + std::to_string(bytes) +
                             " B)");
}

std::string listed(std::vector<std::string> const& items) {
  std::string out;
  for (auto const& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}
#if KOKKOS_VERSION >= 30500
// Kokkos 4+ fences around every kernel while a tool is loaded ("Kokkos
// Profile Tool Fence"): the tool's, not the call's, and absent without one.
void on_fence(const char* name, std::uint32_t, std::uint64_t* id) {
  *id = 0;
  if (std::string(name).find("Kokkos Profile Tool Fence") != std::string::npos) return;
  ++log_.fences;
  log_.fences_seen.emplace_back(name);
}
#endif

// Registers the callbacks for the lifetime of the object.
struct Listening {
  Listening() {
    log_ = ToolLog{};
    namespace tools = Kokkos::Tools::Experimental;
    tools::set_begin_parallel_for_callback(on_kernel);
    tools::set_push_region_callback(on_push);
    tools::set_pop_region_callback(on_pop);
    tools::set_allocate_data_callback(on_alloc);
    tools::set_deallocate_data_callback(on_dealloc);
#if KOKKOS_VERSION >= 30500
    tools::set_begin_fence_callback(on_fence);
#endif
  }
  ~Listening() {
    namespace tools = Kokkos::Tools::Experimental;
    tools::set_begin_parallel_for_callback(nullptr);
    tools::set_push_region_callback(nullptr);
    tools::set_pop_region_callback(nullptr);
    tools::set_allocate_data_callback(nullptr);
    tools::set_deallocate_data_callback(nullptr);
#if KOKKOS_VERSION >= 30500
    tools::set_begin_fence_callback(nullptr);
#endif
  }
};

template <class Exec>
class Profiling : public ::testing::Test {};
TYPED_TEST_SUITE(Profiling, qtest::Backends, qtest::BackendName);

TYPED_TEST(Profiling, OneLabelledKernelNoAllocationBalancedRegions) {
  using mem = typename TypeParam::memory_space;
  const std::size_t batch = 16, vocab = 20000;
  Kokkos::View<float**, Kokkos::LayoutRight, mem> logits("logits", batch, vocab);
  Kokkos::View<int*, mem> k("k", batch);
  Kokkos::View<float*, mem> p("p", batch);
  Kokkos::View<qrita::RowStats*, mem> stats("stats", batch);
  auto h = Kokkos::create_mirror_view(logits);
  std::mt19937_64 rng(1);
  for (std::size_t r = 0; r < batch; ++r) qrita::synthetic::lm_row(&h(r, 0), vocab, rng);
  Kokkos::deep_copy(logits, h);
  Kokkos::deep_copy(k, 50);
  Kokkos::deep_copy(p, 0.9f);
  const TypeParam space;
  // A tier on every backend, so that the workspace holds device memory.
  qrita::Options opts;
  opts.candidate_capacity = 4096;
  opts.tier_capacity      = 2000;
  const qrita::Workspace<TypeParam> ws(space, batch, vocab, opts);
  ASSERT_GT(ws.bytes(), 0u);
  const auto calls = [&] {
    qrita::sample_mask(space, logits, k, p, opts, ws);
    qrita::sample_mask(space, logits, p, opts, ws);
    qrita::sample_mask(space, logits, k, p, opts, ws, stats);
    qrita::sample_mask(space, logits, k, p);  // no workspace: on chip only
  };
  calls();  // each kernel's first launch, where Kokkos sizes its buffers
  space.fence();

  {
    Listening listening;
    for (int call = 0; call < 3; ++call) calls();
    const int fences_in_calls = log_.fences;
    const std::vector<std::string> allocations = log_.allocations;
    space.fence();
    EXPECT_TRUE(allocations.empty())
        << allocations.size() << " allocations or releases inside sample_mask calls: "
        << listed(allocations);
    // One kernel per call, or the two launches of a split call (small
    // batches on a device), each labelled qrita::<stage>.
    const std::vector<std::string> split = {"qrita::split_scan", "qrita::split_gather"};
    const bool splits = qrita::plan(space, batch, vocab, opts).teams_per_row > 1;
    std::vector<std::string> expected;
    for (int call = 0; call < 3; ++call) {
      for (int with_ws = 0; with_ws < 3; ++with_ws) {
        if (splits)
          expected.insert(expected.end(), split.begin(), split.end());
        else
          expected.emplace_back("qrita::sample_mask");
      }
      expected.emplace_back("qrita::sample_mask");
    }
    EXPECT_EQ(log_.kernels, expected);
    EXPECT_EQ(log_.regions, std::vector<std::string>(12, "qrita::sample_mask"));
    EXPECT_EQ(log_.depth, 0);
#if KOKKOS_VERSION >= 30500
    std::string seen;
    for (auto const& f : log_.fences_seen) seen += "'" + f + "' ";
    EXPECT_EQ(fences_in_calls, 0) << "a call with an instance fenced: " << seen;
#else
    (void)fences_in_calls;  // Kokkos 3.4 has no fence callbacks
#endif
  }

  Listening listening;
  {  // control: the listener does see an allocation and its release
    Kokkos::View<float*, mem> control("control", 8);
    ASSERT_EQ(log_.allocations.size(), 1u) << listed(log_.allocations);
    EXPECT_EQ(log_.allocations[0].rfind("'control'", 0), 0u) << log_.allocations[0];
  }
  EXPECT_EQ(log_.allocations.size(), 2u) << listed(log_.allocations);
#if KOKKOS_VERSION >= 30500
  {  // control: the listener does see a fence
    const int before = log_.fences;
    space.fence();
    EXPECT_GT(log_.fences, before);
  }
#endif

  // A rejected call leaves no region open and launches nothing.
  log_ = ToolLog{};
  qrita::Options bad;
  bad.team_size = 1 << 20;
  EXPECT_THROW(qrita::sample_mask(space, logits, k, p, bad), std::invalid_argument);
  EXPECT_EQ(log_.depth, 0);
  EXPECT_TRUE(log_.kernels.empty()) << log_.kernels.size() << " kernels, the first "
                                    << (log_.kernels.empty() ? "" : log_.kernels[0]);
}

// The SamplingParams calls: sample_mask (float and bf16 logits, with stats),
// sample_tokens and candidate_list, with and without min-p (a min-p row is
// never split across teams). With a workspace: one labelled kernel (or the
// split launches), and for the sampler and the list given p values
// their second kernel (or, split, the deferred rows' two or three launches; also
// on rows they work on: top-p sets wider than the tiers; split without p
// values, only split_scan and split_gather), per call inside one region
// named after the call, no allocation
// of qrita's own and no fence inside a call.
TYPED_TEST(Profiling, SamplingCallsLabelledNoAllocationNoFence) {
  using mem = typename TypeParam::memory_space;
  const std::size_t batch = 16, vocab = 20000, C = 32;
  Kokkos::View<float**, Kokkos::LayoutRight, mem> logits("logits", batch, vocab);
  Kokkos::View<qrita::bfloat16**, Kokkos::LayoutRight, mem> half("half", batch, vocab);
  auto h  = Kokkos::create_mirror_view(logits);
  auto hh = Kokkos::create_mirror_view(half);
  std::mt19937_64 rng(2);
  for (std::size_t r = 0; r < batch; ++r) {
    qrita::synthetic::lm_row(&h(r, 0), vocab, rng);
    for (std::size_t i = 0; i < vocab; ++i) hh(r, i) = qrita::from_float<qrita::bfloat16>(h(r, i));
  }
  Kokkos::deep_copy(logits, h);
  Kokkos::deep_copy(half, hh);
  Kokkos::View<int*, mem> k("k", batch);
  Kokkos::View<float*, mem> p("p", batch), min_p("min_p", batch), t("temperature", batch);
  Kokkos::deep_copy(k, 50);
  Kokkos::deep_copy(p, 0.9f);
  Kokkos::deep_copy(min_p, 0.05f);
  Kokkos::deep_copy(t, 0.8f);
  qrita::SamplingParams<mem> params, with_min_p;
  params.k = with_min_p.k = k;
  params.p = with_min_p.p = p;
  params.temperature = with_min_p.temperature = t;
  with_min_p.min_p = min_p;
  qrita::SamplingParams<mem> top_k;  // no p: no second kernel
  top_k.k = k;
  // Top-p alone on randn rows: kept sets wider than the tiers (checked
  // below), rows the first kernel defers to the second.
  Kokkos::View<float**, Kokkos::LayoutRight, mem> randn("randn", batch, vocab);
  auto hr = Kokkos::create_mirror_view(randn);
  for (std::size_t r = 0; r < batch; ++r)
    qrita::synthetic::counter_row(&hr(r, 0), std::int64_t(vocab),
                                  qrita::synthetic::CounterShape::randn, 3, std::int64_t(r));
  Kokkos::deep_copy(randn, hr);
  qrita::SamplingParams<mem> wide;
  wide.p = p;
  Kokkos::View<std::uint64_t*, mem> seeds("seeds", batch), offsets("offsets", batch);
  Kokkos::View<int*, mem> tokens("tokens", batch), counts("counts", batch);
  Kokkos::View<int**, Kokkos::LayoutRight, mem> ids("ids", batch, C);
  Kokkos::View<float**, Kokkos::LayoutRight, mem> probs("probs", batch, C),
      logprobs("logprobs", batch, C), no_probs;
  Kokkos::View<qrita::RowStats*, mem> stats("stats", batch);
  const TypeParam space;
  qrita::Options opts;
  opts.candidate_capacity = 4096;
  opts.tier_capacity      = 2000;
  const qrita::Workspace<TypeParam> ws(space, batch, vocab, opts);
  ASSERT_GT(ws.bytes(), 0u);
  // Each call once and its expected launches; `split`: may it be split.
  const qrita::detail::FullPlan layout =
      qrita::detail::make_full_plan("qrita::plan", space, batch, vocab, opts);
  const bool splits = layout.plan.teams_per_row > 1;
  std::vector<std::string> regions, kernels;
  // `second`: the sampler's and the list's second kernel (top-p rows too
  // wide for the tiers), launched by every such call with a workspace and
  // p values, and by no other.
  const auto call = [&](const char* name, bool split, auto const& f, bool second = true) {
    f();
    regions.emplace_back(name);
    const bool deferring = second && std::string(name) != "qrita::sample_mask";
    if (splits && split) {
      kernels.emplace_back("qrita::split_scan");
      if (deferring && layout.launch.split_plans_apart)
        kernels.emplace_back("qrita::split_deferred_plan");
      kernels.emplace_back("qrita::split_gather");
      if (deferring && !layout.launch.split_finish_in_gather)
        kernels.emplace_back("qrita::split_deferred_finish");
    } else {
      kernels.emplace_back(name);
      if (deferring) kernels.emplace_back(std::string(name) + "_deferred");
    }
  };
  const auto all_calls = [&]() {
    call("qrita::sample_mask", true,
         [&] { qrita::sample_mask(space, logits, params, opts, ws); });
    call("qrita::sample_mask", false,
         [&] { qrita::sample_mask(space, half, with_min_p, opts, ws, stats); });
    call("qrita::sample_tokens", true, [&] {
      qrita::sample_tokens(space, logits, params, seeds, offsets, tokens, opts, ws);
    });
    call("qrita::sample_tokens", false, [&] {
      qrita::sample_tokens(space, half, with_min_p, seeds, offsets, tokens, opts, ws);
    });
    call("qrita::candidate_list", true, [&] {
      qrita::candidate_list(space, logits, params, ids, probs, logprobs, counts, opts, ws);
    });
    call("qrita::candidate_list", false, [&] {
      qrita::candidate_list(space, half, with_min_p, ids, no_probs, no_probs, counts, opts, ws);
    });
    call(
        "qrita::sample_tokens", true,
        [&] { qrita::sample_tokens(space, logits, top_k, seeds, offsets, tokens, opts, ws); },
        false);
    call("qrita::sample_tokens", true, [&] {
      qrita::sample_tokens(space, randn, wide, seeds, offsets, tokens, opts, ws);
    });
    call("qrita::candidate_list", true, [&] {
      qrita::candidate_list(space, randn, wide, ids, probs, logprobs, counts, opts, ws);
    });
  };
  all_calls();  // sizes the team scratch once
  space.fence();
  regions.clear();
  kernels.clear();

  {
    Listening listening;
    for (int rep = 0; rep < 3; ++rep) all_calls();
    const int fences_in_calls = log_.fences;
    const std::vector<std::string> allocations = log_.allocations;
    space.fence();
    EXPECT_TRUE(allocations.empty())
        << allocations.size() << " allocations or releases inside sampling calls: "
        << listed(allocations);
    EXPECT_EQ(log_.kernels, kernels);
    EXPECT_EQ(log_.regions, regions);
    EXPECT_EQ(log_.depth, 0);
#if KOKKOS_VERSION >= 30500
    std::string seen;
    for (auto const& f : log_.fences_seen) seen += "'" + f + "' ";
    EXPECT_EQ(fences_in_calls, 0) << "a sampling call fenced: " << seen;
#else
    (void)fences_in_calls;
#endif
  }
  // The last call's kept counts: rows past the on-chip buffer and the tier.
  const auto kept = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), counts);
  int widest = 0;
  for (std::size_t r = 0; r < batch; ++r) widest = kept(r) > widest ? kept(r) : widest;
  EXPECT_GT(widest, ws.plan().candidate_capacity + ws.plan().tier_capacity);

  // Rejected calls leave no region open and launch nothing (the Views are
  // made first: their initialisation is a kernel).
  Kokkos::View<std::uint64_t*, mem> short_seeds("seeds", batch - 1);
  Kokkos::View<int**, Kokkos::LayoutRight, mem> too_many(
      "ids", batch, std::size_t(ws.plan().candidate_capacity + ws.plan().tier_capacity) + 1);
  space.fence();
  Listening listening;
  EXPECT_THROW(qrita::sample_tokens(space, logits, params, short_seeds, offsets, tokens, opts, ws),
               std::invalid_argument);
  EXPECT_THROW(qrita::candidate_list(space, logits, params, too_many, no_probs, no_probs, counts,
                                     opts, ws),
               std::invalid_argument);
  EXPECT_EQ(log_.depth, 0);
  EXPECT_TRUE(log_.kernels.empty()) << log_.kernels.size() << " kernels, the first "
                                    << (log_.kernels.empty() ? "" : log_.kernels[0]);
}

}  // namespace
