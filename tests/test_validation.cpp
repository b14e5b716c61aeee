// SPDX-License-Identifier: Apache-2.0
// Case 19: malformed calls throw std::invalid_argument naming the argument and
// what was expected, before anything is written. Also the overload set: the
// single-filter and instance-free calls mean what they say.

#include "support.hpp"
#include "synthetic.hpp"

#include <gmock/gmock.h>

#include <random>

namespace {

using ::testing::HasSubstr;

// A call's whole plan: qrita::plan's public part and how its launches are
// arranged (detail::LaunchArrangement).
template <class Space>
qrita::detail::FullPlan full_plan(Space const& space, std::int64_t batch, std::int64_t vocab,
                                  qrita::Options const& opts = qrita::Options{}) {
  return qrita::detail::make_full_plan("qrita::plan", space, batch, vocab, opts);
}

template <class Exec>
class Validation : public ::testing::Test {
 protected:
  using mem = typename Exec::memory_space;
  static constexpr std::size_t batch = 6, vocab = 3000;

  Kokkos::View<float**, Kokkos::LayoutRight, mem> logits{"logits", batch, vocab};
  Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace> original{"original", batch, vocab};
  Kokkos::View<int*, mem> k{"k", batch};
  Kokkos::View<float*, mem> p{"p", batch};

  void SetUp() override {
    std::mt19937_64 rng(19);
    for (std::size_t r = 0; r < batch; ++r)
      qrita::synthetic::lm_row(&original(r, 0), vocab, rng);
    Kokkos::deep_copy(logits, original);
    Kokkos::deep_copy(k, 10);
    Kokkos::deep_copy(p, 0.9f);
  }

  // The logits are bitwise what they were before the call.
  ::testing::AssertionResult untouched() {
    auto now = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), logits);
    for (std::size_t r = 0; r < batch; ++r)
      for (std::size_t i = 0; i < vocab; ++i)
        if (qtest::bits(now(r, i)) != qtest::bits(original(r, i)))
          return ::testing::AssertionFailure() << "logits(" << r << ", " << i << ") changed";
    return ::testing::AssertionSuccess();
  }

  // The logits after masking the original rows with k = 10, p = 0.9 under
  // `opts` (with `ws`, if given), on the host; every row checked against
  // the oracle.
  std::vector<float> masked(Exec const& space, qrita::Options const& opts,
                            qrita::Workspace<Exec> const* ws = nullptr) {
    Kokkos::deep_copy(logits, original);
    if (ws != nullptr)
      qrita::sample_mask(space, logits, k, p, opts, *ws);
    else
      qrita::sample_mask(space, logits, k, p, opts);
    space.fence();
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), logits);
    std::vector<float> out(host.data(), host.data() + batch * vocab);
    for (std::size_t r = 0; r < batch; ++r)
      EXPECT_TRUE(qtest::check_row(&original(r, 0), &out[r * vocab], vocab, 10, 0.9f))
          << "row " << r;
    return out;
  }

  // Options that give every backend a tier (hosts have none by default),
  // so that a workspace holds one.
  static qrita::Options tiered() {
    qrita::Options o;
    o.candidate_capacity = 500;
    o.tier_capacity      = 1000;
    return o;
  }

  template <class Call>
  void expect_rejected(Call&& call, std::vector<std::string> const& words) {
    try {
      call();
      Exec().fence();
      ADD_FAILURE() << "the call was accepted";
    } catch (std::invalid_argument const& e) {
      for (auto const& w : words) EXPECT_THAT(e.what(), HasSubstr(w));
      EXPECT_THAT(e.what(), HasSubstr("qrita::sample_mask"));
    }
    EXPECT_TRUE(untouched());
  }
};
TYPED_TEST_SUITE(Validation, qtest::Backends, qtest::BackendName);

TYPED_TEST(Validation, Case19_WrongLengthK) {
  using M = typename TestFixture::mem;
  for (std::size_t n : {std::size_t(5), std::size_t(7), std::size_t(0)}) {
    Kokkos::View<int*, M> bad("k", n);
    this->expect_rejected([&] { qrita::sample_mask(TypeParam(), this->logits, bad, this->p); },
                          {"'k'", "has " + std::to_string(n) + " entries", "expected 6"});
    this->expect_rejected([&] { qrita::sample_mask(TypeParam(), this->logits, bad); },
                          {"'k'", "expected 6"});
  }
  Kokkos::View<int*, M> unallocated;  // a default View has no entries
  this->expect_rejected([&] { qrita::sample_mask(TypeParam(), this->logits, unallocated); },
                        {"'k'", "has 0 entries"});
}

TYPED_TEST(Validation, Case19_WrongLengthP) {
  using M = typename TestFixture::mem;
  Kokkos::View<float*, M> bad("p", 9);
  this->expect_rejected([&] { qrita::sample_mask(TypeParam(), this->logits, this->k, bad); },
                        {"'p'", "has 9 entries", "expected 6"});
  this->expect_rejected([&] { qrita::sample_mask(TypeParam(), this->logits, bad); },
                        {"'p'", "expected 6"});
}

TYPED_TEST(Validation, Case19_WrongLengthStats) {
  using M = typename TestFixture::mem;
  Kokkos::View<qrita::RowStats*, M> bad("stats", 2);
  this->expect_rejected(
      [&] { qrita::sample_mask(TypeParam(), this->logits, this->k, this->p, {}, bad); },
      {"'stats'", "has 2 entries"});
}

TYPED_TEST(Validation, Case19_BadOptions) {
  qrita::Options o;
  o.candidate_capacity = -1;
  this->expect_rejected([&] { qrita::sample_mask(TypeParam(), this->logits, this->k, this->p, o); },
                        {"candidate_capacity", "-1"});
  o = {};
  o.team_size = -2;
  this->expect_rejected([&] { qrita::sample_mask(TypeParam(), this->logits, this->k, this->p, o); },
                        {"team_size"});
  o = {};
  o.team_size = 1 << 20;
  this->expect_rejected([&] { qrita::sample_mask(TypeParam(), this->logits, this->k, this->p, o); },
                        {"team_size", "more than the backend allows"});
  o = {};
  o.max_teams = -1;
  this->expect_rejected([&] { qrita::sample_mask(TypeParam(), this->logits, this->k, this->p, o); },
                        {"max_teams"});
}

TYPED_TEST(Validation, Case19_StridedColumns) {
  // Every other column of a wider array: rows are not contiguous.
  using M = typename TestFixture::mem;
  Kokkos::View<float**, Kokkos::LayoutRight, M> wide("wide", this->batch, 2 * this->vocab);
  Kokkos::View<float**, Kokkos::LayoutStride, M> strided(
      wide.data(), Kokkos::LayoutStride(this->batch, 2 * this->vocab, this->vocab, 2));
  this->expect_rejected([&] { qrita::sample_mask(TypeParam(), strided, this->k, this->p); },
                        {"'logits'", "unit column stride", "got 2"});
}

TYPED_TEST(Validation, Case19_OneRowStridedColumns) {
  // A 1 x 8 view of column stride 2 over 16 floats: the check must not be
  // skipped for a single row, and the columns between (outside the view)
  // must never be written.
  using M = typename TestFixture::mem;
  Kokkos::View<float*, M> storage("storage", 16);
  auto host = Kokkos::create_mirror_view(storage);
  for (int i = 0; i < 16; ++i) host(i) = float(i) * 0.5f;
  Kokkos::deep_copy(storage, host);
  Kokkos::View<float**, Kokkos::LayoutStride, M> one_row(storage.data(),
                                                         Kokkos::LayoutStride(1, 16, 8, 2));
  Kokkos::View<int*, M> k1("k1", 1);
  Kokkos::deep_copy(k1, 2);
  try {
    qrita::sample_mask(TypeParam(), one_row, k1);
    TypeParam().fence();
    ADD_FAILURE() << "the call was accepted";
  } catch (std::invalid_argument const& e) {
    EXPECT_THAT(e.what(), HasSubstr("unit column stride"));
  }
  auto after = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), storage);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(after(i), float(i) * 0.5f) << "entry " << i;
}

TYPED_TEST(Validation, StridedStatsAreWrittenAtTheirStride) {
  // stats as every other element of an array: the entries between must stay
  // as they were, and the strided ones must equal a contiguous call's.
  using M = typename TestFixture::mem;
  const std::size_t B = this->batch;
  Kokkos::View<qrita::RowStats*, M> dense("dense", B);
  Kokkos::View<qrita::RowStats*, M> storage("storage", 2 * B);
  auto sentinel = Kokkos::create_mirror_view(storage);
  for (std::size_t i = 0; i < 2 * B; ++i) {
    sentinel(i)          = qrita::RowStats{};
    sentinel(i).outliers = -7;
  }
  Kokkos::deep_copy(storage, sentinel);
  Kokkos::View<qrita::RowStats*, Kokkos::LayoutStride, M> strided(
      storage.data(), Kokkos::LayoutStride(B, 2));
  const TypeParam space;
  qrita::sample_mask(space, this->logits, this->k, this->p, qrita::Options{}, dense);
  Kokkos::deep_copy(this->logits, this->original);
  qrita::sample_mask(space, this->logits, this->k, this->p, qrita::Options{}, strided);
  space.fence();
  auto d = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dense);
  auto s = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), storage);
  for (std::size_t r = 0; r < B; ++r) {
    EXPECT_EQ(s(2 * r).outliers, d(r).outliers) << "row " << r;
    EXPECT_EQ(s(2 * r).topk_path, d(r).topk_path) << "row " << r;
    EXPECT_EQ(s(2 * r + 1).outliers, -7) << "entry " << 2 * r + 1 << " was written";
  }
}

TYPED_TEST(Validation, WorkspaceOverCallerMemory) {
  // A workspace over memory the caller owns (a framework's allocator) gives
  // the same masks as one qrita allocates, call after call, and is refused
  // when too small, misaligned or null, naming the argument.
  const qrita::Options o = this->tiered();
  const TypeParam space;
  const std::size_t need = qrita::workspace_bytes(space, this->batch, this->vocab, o);
  ASSERT_GT(need, 0u);
  Kokkos::View<char*, typename TypeParam::memory_space> memory("memory", need + 32);
  const qrita::Workspace<TypeParam> own(space, this->batch, this->vocab, o);
  const qrita::Workspace<TypeParam> theirs(space, this->batch, this->vocab, o,
                                           memory.data() + 16, need);
  EXPECT_EQ(theirs.bytes(), need);
  EXPECT_EQ(this->masked(space, o, &theirs), this->masked(space, o, &own));
  // A second call over the same memory: what the first left is reusable.
  EXPECT_EQ(this->masked(space, o, &theirs), this->masked(space, o, nullptr));
  const auto reject = [&](auto&& make, const char* word) {
    try {
      make();
      ADD_FAILURE() << "accepted: " << word;
    } catch (std::invalid_argument const& e) {
      EXPECT_THAT(e.what(), HasSubstr("qrita::Workspace"));
      EXPECT_THAT(e.what(), HasSubstr(word));
    }
  };
  using Ws = qrita::Workspace<TypeParam>;
  reject([&] { Ws(space, this->batch, this->vocab, o, memory.data(), need - 1); },
         "memory_bytes");
  reject([&] { Ws(space, this->batch, this->vocab, o, memory.data() + 1, need); }, "aligned");
  reject([&] { Ws(space, this->batch, this->vocab, o, nullptr, need); }, "null");
}

TYPED_TEST(Validation, WorkspaceIsSizedByThePlanAndChecked) {
  // A tier on every backend (hosts have none by default): the workspace is
  // league x tier x 8 bytes plus a record per row, plan() says so, and a
  // workspace made for a smaller call is refused before anything is written.
  qrita::Options o = this->tiered();
  const TypeParam space;
  const qrita::LaunchPlan plan = qrita::plan(space, this->batch, this->vocab, o);
  EXPECT_EQ(plan.tier_capacity, 1000);
  // (and a record per row, in 16-byte units: a deferred row's first read,
  // its histogram and its flag)
  const std::size_t record = qrita::detail::deferred_record_bytes(plan.histogram_buckets);
  EXPECT_EQ(record % 16, 0u);
  EXPECT_GT(record, std::size_t(plan.histogram_buckets + 1) * sizeof(std::uint32_t));
  EXPECT_EQ(plan.workspace_bytes,
            std::size_t(plan.league_size) * 1000u * 8u + std::size_t(this->batch) * record);
  EXPECT_EQ(qrita::workspace_bytes(space, this->batch, this->vocab, o), plan.workspace_bytes);
  const qrita::Workspace<TypeParam> fits(space, this->batch, this->vocab, o);
  EXPECT_EQ(fits.bytes(), plan.workspace_bytes);
  EXPECT_GT(fits.bytes(), 0u);
  const qrita::Workspace<TypeParam> small(space, 1, this->vocab, o);
  if (small.bytes() < plan.workspace_bytes) {
    this->expect_rejected(
        [&] { qrita::sample_mask(space, this->logits, this->k, this->p, o, small); },
        {"workspace", "needs"});
  }
  EXPECT_NO_THROW(qrita::sample_mask(space, this->logits, this->k, this->p, o, fits));
  space.fence();
  // Without a tier, the workspace holds the deferral records alone; without
  // a histogram (no row is deferred), a flag per row.
  o.tier_capacity = 0;
  const qrita::LaunchPlan records_only = qrita::plan(space, this->batch, this->vocab, o);
  if (records_only.teams_per_row == 1) {
    EXPECT_EQ(qrita::workspace_bytes(space, this->batch, this->vocab, o),
              std::size_t(this->batch) * record);
  }
  o.histogram = false;
  const qrita::LaunchPlan flags_only = qrita::plan(space, this->batch, this->vocab, o);
  if (flags_only.teams_per_row == 1) {
    EXPECT_EQ(qrita::workspace_bytes(space, this->batch, this->vocab, o),
              std::size_t(this->batch));
  }
}

TYPED_TEST(Validation, SplitTeamsFitOneWave) {
  // The backend's own split (Options::teams_per_row = 0) keeps a batch's
  // teams within those that run at once (Policy::split_resident_teams), so no
  // deferred row needs the plan launch; fewer teams per row as the batch
  // grows; hosts never split. A caller's teams_per_row is taken as given,
  // and the plan launch follows the waves it makes.
  using P = qrita::detail::Policy<TypeParam>;
  const TypeParam space;
  const std::int64_t concurrency = std::int64_t(space.concurrency());
  const qrita::detail::MultiprocessorLimits mp = qrita::detail::multiprocessor_limits(space);
  const auto resident = [&](qrita::LaunchPlan const& plan) {
    return P::split_resident_teams(concurrency, plan.split_team_size,
                                   plan.team_scratch_bytes, mp);
  };
  for (std::int64_t V : {std::int64_t(32000), std::int64_t(128256), std::int64_t(262144)}) {
    int last = 1 << 30;
    bool split_any = false;
    for (std::int64_t B = 1; B <= 2048; B = B < 8 ? B + 1 : B * 2) {
      const qrita::detail::FullPlan full = full_plan(space, B, V);
      const qrita::LaunchPlan& plan = full.plan;
      const int S = plan.teams_per_row;
      EXPECT_LE(S, last) << "batch " << B << ", V " << V;
      last = S;
      if (S == 1) continue;
      split_any = true;
      EXPECT_TRUE(P::split_rows);
      EXPECT_GE(S, 2);
      EXPECT_LE(std::int64_t(S), V / P::split_segment) << "batch " << B;
      EXPECT_LE(B * S, resident(plan)) << "batch " << B << ", V " << V << ", S " << S;
      EXPECT_FALSE(full.launch.split_plans_apart) << "batch " << B << ", V " << V;
      // One wave: a deferred row's teams may wait for one another (CUDA).
      EXPECT_EQ(full.launch.split_finish_in_gather, P::split_fused_finish) << "batch " << B;
    }
    if (!P::split_rows) {
      EXPECT_FALSE(split_any);
    }
  }
  if (P::split_bounds_own) {
    // CUDA: the runtime's limits are known, and the teams that run at once
    // are whole multiprocessors' worth, at most split_launch_bounds' count.
    EXPECT_GT(mp.multiprocessors, 0);
    const qrita::LaunchPlan plan = qrita::plan(space, 1, 128256);
    const std::int64_t teams = resident(plan);
    EXPECT_EQ(teams % mp.multiprocessors, 0) << teams;
    EXPECT_GE(teams, mp.multiprocessors);
    EXPECT_LE(teams, mp.multiprocessors * P::split_teams_per_multiprocessor);
  }
  qrita::Options forced;
  forced.teams_per_row = 40;
  for (std::int64_t B : {1, 64, 1024}) {
    const qrita::detail::FullPlan full = full_plan(space, B, 128256, forced);
    EXPECT_EQ(full.plan.teams_per_row, 40);
    EXPECT_EQ(full.launch.split_plans_apart, B * 40 > resident(full.plan)) << "batch " << B;
    // Never a wait inside a launch whose teams take more than one wave.
    EXPECT_EQ(full.launch.split_finish_in_gather,
              P::split_fused_finish && !full.launch.split_plans_apart)
        << "batch " << B;
  }
  qrita::Options one;
  one.teams_per_row = 1;
  EXPECT_FALSE(full_plan(space, 1, 128256, one).launch.split_finish_in_gather);
}

TYPED_TEST(Validation, TeamsAloneOnlyWhereOnePerMultiprocessor) {
  // On CUDA an unsplit call with at most one team per multiprocessor is
  // launched under Policy::one_team_launch_bounds (more registers a thread),
  // and only with teams those bounds allow; elsewhere never. The bounds do
  // not change the answer: 1024-thread teams (under the kernels' bounds)
  // mask the same entries, and both agree with the oracle.
  using P = qrita::detail::Policy<TypeParam>;
  const TypeParam space;
  qrita::Options unsplit;
  unsplit.teams_per_row = 1;
  const qrita::detail::FullPlan small = full_plan(space, this->batch, this->vocab, unsplit);
  const qrita::detail::FullPlan wide  = full_plan(space, 1 << 20, this->vocab, unsplit);
  EXPECT_FALSE(wide.launch.one_team_per_multiprocessor);
  EXPECT_EQ(small.launch.one_team_per_multiprocessor, P::one_team_bounds_own)
      << small.plan.league_size;
  if (!P::one_team_bounds_own) return;
  qrita::Options big = unsplit;
  big.team_size      = 1024;
  EXPECT_FALSE(full_plan(space, this->batch, this->vocab, big).launch.one_team_per_multiprocessor);
  const std::vector<float> alone  = this->masked(space, unsplit);
  const std::vector<float> capped = this->masked(space, big);
  EXPECT_EQ(alone, capped);
}

TYPED_TEST(Validation, SplitTeamsAloneOnlyWhereOnePerMultiprocessor) {
  // On CUDA a split call whose teams are no more than the multiprocessors
  // (batch x teams_per_row) is launched under
  // Policy::split_one_team_launch_bounds (more registers a thread); with more
  // teams, or on other backends, under split_launch_bounds. The bounds do
  // not change the answer: both calls mask the oracle's entries, and the
  // same ones.
  using P = qrita::detail::Policy<TypeParam>;
  const TypeParam space;
  const std::int64_t multiprocessors = qrita::detail::multiprocessor_limits(space).multiprocessors;
  qrita::Options few, many;
  few.teams_per_row  = 4;    // 24 teams
  many.teams_per_row = 400;  // 2400 teams: more than any device's multiprocessors
  const qrita::detail::FullPlan few_plan  = full_plan(space, this->batch, this->vocab, few);
  const qrita::detail::FullPlan many_plan = full_plan(space, this->batch, this->vocab, many);
  EXPECT_FALSE(many_plan.launch.split_one_team_per_multiprocessor);
  const bool fits = few_plan.plan.teams_per_row > 1 &&
                    std::int64_t(this->batch) * few_plan.plan.teams_per_row <= multiprocessors;
  EXPECT_EQ(few_plan.launch.split_one_team_per_multiprocessor, P::split_bounds_own && fits)
      << few_plan.plan.teams_per_row << " teams per row, " << multiprocessors << " multiprocessors";
  if (!P::split_bounds_own) return;
  ASSERT_GT(many_plan.plan.teams_per_row, 1);
  const qrita::Workspace<TypeParam> few_ws(space, this->batch, this->vocab, few);
  const qrita::Workspace<TypeParam> many_ws(space, this->batch, this->vocab, many);
  const std::vector<float> alone  = this->masked(space, few, &few_ws);
  const std::vector<float> shared = this->masked(space, many, &many_ws);
  EXPECT_EQ(alone, shared);
}

TEST(Policy, ResidentTeamsFollowTheMultiprocessorsLimits) {
  // The split teams that run at once on devices we do not hold, from their
  // published limits (multiprocessors, threads and shared memory per
  // multiprocessor, the driver's reserve per block): a split team has 256
  // threads and the default scratch, about 41 KiB; the bounds allow 3.
  using qrita::detail::MultiprocessorLimits;
  using qrita::detail::resident_teams_per_multiprocessor;
  const std::size_t scratch =
      qrita::detail::RowKernel<Kokkos::DefaultHostExecutionSpace>::scratch_bytes(
          4096, 2048);
  EXPECT_GT(scratch, std::size_t(40) * 1024);
  EXPECT_LT(scratch, std::size_t(48) * 1024);
  const MultiprocessorLimits h100{132, 2048, 233472, 1024};
  const MultiprocessorLimits a100{108, 2048, 167936, 1024};
  const MultiprocessorLimits rtx4090{128, 1536, 102400, 1024};
  EXPECT_EQ(resident_teams_per_multiprocessor(h100, 256, scratch, 3), 3);
  EXPECT_EQ(resident_teams_per_multiprocessor(a100, 256, scratch, 3), 3);
  EXPECT_EQ(resident_teams_per_multiprocessor(rtx4090, 256, scratch, 3), 2);
  // Threads bound it: 1536 threads hold one 1024-thread team.
  EXPECT_EQ(resident_teams_per_multiprocessor(rtx4090, 1024, 0, 3), 1);
  // Shared memory below one team still runs one; unknown limits give 0.
  EXPECT_EQ(resident_teams_per_multiprocessor(rtx4090, 256, 200000, 3), 1);
  EXPECT_EQ(resident_teams_per_multiprocessor(MultiprocessorLimits{}, 256, scratch, 3), 0);
}

TYPED_TEST(Validation, EmptyBatchAndVocabAreNoOps) {
  using M = typename TestFixture::mem;
  Kokkos::View<float**, Kokkos::LayoutRight, M> none("none", 0, 100);
  Kokkos::View<int*, M> k0("k0", 0);
  Kokkos::View<float*, M> p0("p0", 0);
  EXPECT_NO_THROW(qrita::sample_mask(TypeParam(), none, k0, p0));
  Kokkos::View<float**, Kokkos::LayoutRight, M> narrow("narrow", this->batch, 0);
  EXPECT_NO_THROW(qrita::sample_mask(TypeParam(), narrow, this->k, this->p));
  TypeParam().fence();
}

TYPED_TEST(Validation, OverloadsMeanWhatTheySay) {
  using M = typename TestFixture::mem;
  auto result = [&](auto&& call) {
    Kokkos::deep_copy(this->logits, this->original);
    call();
    Kokkos::fence();
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), this->logits);
    return std::vector<float>(host.data(), host.data() + this->batch * this->vocab);
  };
  Kokkos::View<int*, M> k_off("k_off", this->batch);  // k = 0: top-k off
  Kokkos::View<float*, M> p_off("p_off", this->batch);
  Kokkos::deep_copy(p_off, 1.0f);
  Kokkos::View<const int*, M> k_const = this->k;
  Kokkos::View<const float*, M> p_const = this->p;
  const TypeParam space;

  const auto both = result([&] { qrita::sample_mask(space, this->logits, this->k, this->p); });
  EXPECT_EQ(both, result([&] { qrita::sample_mask(space, this->logits, k_const, p_const); }));
  EXPECT_EQ(both, result([&] { qrita::sample_mask(this->logits, this->k, this->p); }));
  const auto k_only = result([&] { qrita::sample_mask(space, this->logits, this->k); });
  EXPECT_EQ(k_only, result([&] { qrita::sample_mask(space, this->logits, this->k, p_off); }));
  EXPECT_EQ(k_only, result([&] { qrita::sample_mask(this->logits, k_const); }));
  const auto p_only = result([&] { qrita::sample_mask(space, this->logits, this->p); });
  EXPECT_EQ(p_only, result([&] { qrita::sample_mask(space, this->logits, k_off, this->p); }));
  EXPECT_EQ(p_only, result([&] { qrita::sample_mask(this->logits, p_const); }));
  EXPECT_NE(k_only, p_only);
  EXPECT_NE(both, k_only);
}

}  // namespace
