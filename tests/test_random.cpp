// SPDX-License-Identifier: Apache-2.0
// Randomised property test: thousands of rows against the oracle, mixing
// logit shapes, vocab sizes from 1 to 262208 and per-row k and p (disabled
// rows included). Top-k sets must match exactly; top-p by SEMANTICS.md's rule.
// QRITA_TEST_SEED=<n> replays another seed. QRITA_TEST_LARGE=1 adds serving
// sizes (batch 1024 at vocab 128256 and 262208), which take a minute of host
// time for the oracle: the GPU run script sets it.

#include "support.hpp"
#include "synthetic.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using qtest::Batch;
using qtest::Filters;

template <class Exec>
class Random : public ::testing::Test {};
TYPED_TEST_SUITE(Random, qtest::Backends, qtest::BackendName);

std::uint64_t base_seed() {
  const char* s = std::getenv("QRITA_TEST_SEED");
  return s ? std::strtoull(s, nullptr, 10) : 20261122u;
}

int random_k(std::mt19937_64& rng, std::int64_t vocab) {
  switch (rng() % 10) {
    case 0: return 0;
    case 1: return int(vocab);
    case 2: return -3;
    case 3: return 1;
    case 4: return 1 + int(rng() % 10);
    case 5: return 50;
    case 6: return 1 + int(rng() % 100);
    case 7: return int(vocab / 2);
    case 8: return int(vocab - 1);
    default: return INT_MAX;
  }
}

float random_p(std::mt19937_64& rng) {
  switch (rng() % 9) {
    case 0: return 1.0f;
    case 1: return 2.0f;
    case 2: return 0.0f;
    case 3: return 1e-6f;
    case 4: return 0.9f;
    case 5: return 0.99f;
    case 6: return 0.9999f;
    default: return 0.5f + 0.5f * std::uniform_real_distribution<float>(0.0f, 1.0f)(rng);
  }
}

// A row of the given shape, sometimes with NaN and +-inf sprinkled in.
void random_row(float* row, std::int64_t vocab, std::mt19937_64& rng) {
  using qrita::synthetic::Shape;
  const Shape shapes[] = {Shape::lm, Shape::lm, Shape::ties, Shape::flat,
                          Shape::spread, Shape::peaked, Shape::sparse};
  qrita::synthetic::fill_row(row, vocab, shapes[rng() % 7], rng);
  if (rng() % 8 == 0) {
    const float specials[] = {qtest::nan_value(), -qtest::inf, qtest::inf};
    const std::int64_t count = 1 + std::int64_t(rng() % 5);
    for (std::int64_t j = 0; j < count; ++j)
      row[rng() % std::uint64_t(vocab)] = specials[rng() % (rng() % 4 == 0 ? 3 : 2)];
  }
}

TYPED_TEST(Random, AgainstOracle) {
  const std::uint64_t seed = base_seed();
  SCOPED_TRACE("QRITA_TEST_SEED=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::int64_t rows = 0;
  for (std::int64_t vocab : {1, 2, 3, 7, 64, 111, 1000, 4095, 4097, 8193, 32000, 50257,
                             128256, 151936, 201088, 262208}) {
    const std::int64_t batch =
        std::min<std::int64_t>(512, std::max<std::int64_t>(2'000'000 / vocab, 7));
    Batch b(batch, vocab);
    for (std::int64_t r = 0; r < batch; ++r) {
      random_row(b.row(r), vocab, rng);
      b.k[r] = random_k(rng, vocab);
      b.p[r] = random_p(rng);
    }
    for (Filters f : {Filters::both, Filters::k_only, Filters::p_only}) {
      // The single-filter calls on fewer rows: they share the kernel.
      if (f != Filters::both && vocab > 50000) continue;
      EXPECT_TRUE(qtest::check_batch(b, qtest::run<TypeParam>(b, {}, f), f))
          << "vocab " << vocab << ", filters " << int(f);
    }
    rows += batch;
  }
  EXPECT_GT(rows, 4000);
}

// The shapes users feed it (src/synthetic.hpp's counter shapes: serving,
// its bf16 rounding, vocabulary-ordered rows, torch.randn and torch.rand
// logits, temperature 2, flat rows), with the modes of the perf grid and
// per-row random k and p, against the oracle; each call also with small
// on-chip buffers and tiers, and with rows split across teams, so that
// every path is taken: the hit, the boundary buckets after a miss, the
// device tier, the whole row, flat rows, split rows (bitwise the same as
// unsplit).
// Each path is asserted to have been taken somewhere, and every row within
// three whole-row passes unless it was searched whole.
TYPED_TEST(Random, UserShapesEveryPath) {
  using qrita::RowPath;
  using qrita::synthetic::CounterShape;
  const std::uint64_t seed = base_seed() + 2;
  SCOPED_TRACE("QRITA_TEST_SEED=" + std::to_string(base_seed()));
  std::mt19937_64 rng(seed);
  const CounterShape shapes[] = {CounterShape::serving, CounterShape::serving_bf16,
                                 CounterShape::ordered, CounterShape::randn,
                                 CounterShape::uniform, CounterShape::temp2,
                                 CounterShape::flat};
  const int nshapes = int(sizeof shapes / sizeof shapes[0]);
  std::map<std::string, int> taken;
  for (std::int64_t vocab : {6000, 49152}) {
    const std::int64_t batch = 4 * nshapes;
    Batch b(batch, vocab);
    for (std::int64_t r = 0; r < batch; ++r) {
      qrita::synthetic::counter_row(b.row(r), vocab, shapes[r % nshapes], seed, r);
      switch ((r / nshapes) % 4) {  // the perf grid's modes
        case 0: b.k[r] = 10, b.p[r] = 1.0f; break;
        case 1: b.k[r] = 0, b.p[r] = 0.7f; break;
        case 2: b.k[r] = 50, b.p[r] = 0.9f; break;
        default:
          b.k[r] = 1 + int(rng() % 99);
          b.p[r] = 0.5f + 0.5f * std::uniform_real_distribution<float>(0.0f, 1.0f)(rng);
      }
    }
    qrita::Options small_chip, no_tier, split, split_small;
    small_chip.candidate_capacity = 64;
    small_chip.tier_capacity      = 4096;
    no_tier.candidate_capacity    = 64;
    no_tier.tier_capacity         = 0;
    split.teams_per_row           = 3;
    split_small                   = small_chip;
    split_small.teams_per_row     = 5;
    const std::pair<const char*, qrita::Options> configs[] = {
        {"default", qrita::Options{}}, {"small on-chip buffer", small_chip},
        {"no tier", no_tier}, {"rows split across 3 teams", split},
        {"small buffer, rows split across 5 teams", split_small}};
    std::vector<float> unsplit;
    std::vector<qrita::RowStats> unsplit_stats;
    for (auto const& [what, opts] : configs) {
      const qtest::Result out = qtest::run<TypeParam>(b, opts);
      EXPECT_TRUE(qtest::check_batch(b, out)) << "vocab " << vocab << ", " << what;
      // A split row is bitwise the row the same buffers give unsplit, from
      // the same threshold (each of its teams samples the row): the same
      // outliers, and the same paths.
      if (opts.teams_per_row == 0 && opts.candidate_capacity == 0) {
        unsplit       = out.logits;
        unsplit_stats = out.stats;
      }
      if (opts.teams_per_row == 3) {
        EXPECT_EQ(out.logits, unsplit) << "vocab " << vocab;
        for (std::int64_t r = 0; r < batch; ++r) {
          auto const& a = unsplit_stats[std::size_t(r)];
          auto const& c = out.stats[std::size_t(r)];
          EXPECT_EQ(c.outliers, a.outliers) << "vocab " << vocab << ", row " << r;
          EXPECT_EQ(c.topk_path, a.topk_path) << "vocab " << vocab << ", row " << r;
          EXPECT_EQ(c.topp_path, a.topp_path) << "vocab " << vocab << ", row " << r;
        }
      }
      if (opts.teams_per_row > 1) {
        for (auto const& st : out.stats) {
          EXPECT_EQ(st.teams, opts.teams_per_row);
          taken["split"] += 1;
        }
      }
      for (std::int64_t r = 0; r < batch; ++r) {
        auto const& st = out.stats[std::size_t(r)];
        for (RowPath path : {st.topk_path, st.topp_path}) {
          if (path == RowPath::truncated) taken[st.tier ? "tier" : "hit"] += 1;
          if (path == RowPath::buckets) taken["buckets"] += 1;
          if (path == RowPath::flat) taken["flat"] += 1;
          if (path == RowPath::full) taken["full"] += 1;
        }
        EXPECT_NE(st.topp_passes, -1) << "row " << r << ": the bucket bounds failed";
        const bool whole = st.topk_path == RowPath::full || st.topp_path == RowPath::full;
        if (!whole) {
          EXPECT_LE(st.row_passes, 3) << "vocab " << vocab << ", " << what << ", row " << r
                                      << " (" << qrita::synthetic::name(shapes[r % nshapes]) << ")";
        }
      }
    }
  }
  for (const char* path : {"hit", "tier", "buckets", "flat", "full", "split"})
    EXPECT_GT(taken[path], 0) << "no row took the " << path << " path";
}

// Serving sizes: whole batches of 1024 rows, the mixed row shapes and
// per-row k and p of the test above. The oracle runs on every host core.
TYPED_TEST(Random, ServingSizes) {
  const char* large = std::getenv("QRITA_TEST_LARGE");
  if (large == nullptr || std::string(large) != "1")
    GTEST_SKIP() << "set QRITA_TEST_LARGE=1 to run batch 1024 at vocab 128256 and 262208";
  const std::uint64_t seed = base_seed() + 1;
  SCOPED_TRACE("QRITA_TEST_SEED=" + std::to_string(base_seed()));
  std::mt19937_64 rng(seed);
  for (std::int64_t vocab : {128256, 262208}) {
    Batch b(1024, vocab);
    for (std::int64_t r = 0; r < b.batch; ++r) {
      random_row(b.row(r), vocab, rng);
      b.k[r] = random_k(rng, vocab);
      b.p[r] = random_p(rng);
    }
    const qtest::Result out = qtest::run<TypeParam>(b);
    const unsigned workers = std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::string> problems(std::size_t(b.batch));
    std::vector<std::thread> pool;
    for (unsigned w = 0; w < workers; ++w)
      pool.emplace_back([&, w]() {
        for (std::int64_t r = w; r < b.batch; r += workers)
          problems[std::size_t(r)] = qrita::oracle::verify(
              b.row(r), out.logits.data() + r * b.stride, vocab, b.k[std::size_t(r)],
              b.p[std::size_t(r)]);
      });
    for (auto& t : pool) t.join();
    for (std::int64_t r = 0; r < b.batch; ++r)
      EXPECT_EQ(problems[std::size_t(r)], "") << "vocab " << vocab << ", row " << r;
  }
}

}  // namespace
