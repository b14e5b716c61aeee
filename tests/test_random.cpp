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
