// The oracle against a second, deliberately naive reading of the definition
// (repeated argmax for top-k, long double sums for top-p) on small rows full
// of ties, NaN and infinities: the reference must itself be right.

#include "support.hpp"

#include <random>

namespace {

using qtest::inf;

// The definition, read literally.
std::vector<std::int64_t> naive_kept(std::vector<float> const& row, int k, float p) {
  const std::int64_t vocab = std::int64_t(row.size());
  bool topk = k > 0 && k < vocab, topp = p < 1.0f;
  if (topp && !(p > 0.0f)) {
    topp = false;
    k    = 1;
    topk = 1 < vocab;
  }
  std::vector<std::int64_t> order;  // by repeated argmax, lowest index first
  std::vector<bool> used(row.size(), false);
  for (;;) {
    std::int64_t best = -1;
    for (std::int64_t i = 0; i < vocab; ++i) {
      const float x = row[std::size_t(i)];
      if (used[std::size_t(i)] || std::isnan(x) || x == -inf) continue;
      if (best < 0 || x > row[std::size_t(best)]) best = i;
    }
    if (best < 0) break;
    used[std::size_t(best)] = true;
    order.push_back(best);
  }
  std::vector<std::int64_t> kept = order;
  if (topk && std::int64_t(kept.size()) > k) kept.resize(std::size_t(k));
  if (topp && !kept.empty()) {
    const float top = row[std::size_t(kept[0])];
    std::vector<long double> w;
    for (auto i : kept) {
      const float x = row[std::size_t(i)];
      w.push_back(std::isinf(top) ? (std::isinf(x) ? 1.0L : 0.0L)
                                  : std::exp(static_cast<long double>(x) - static_cast<long double>(top)));
    }
    long double total = 0, mass = 0;
    for (auto x : w) total += x;
    std::size_t n = 0;
    while (n < kept.size()) {
      mass += w[n++] / total;
      if (mass >= static_cast<long double>(p)) break;
    }
    kept.resize(n);
  }
  std::sort(kept.begin(), kept.end());
  return kept;
}

TEST(Oracle, AgreesWithANaiveReadingOfTheDefinition) {
  std::mt19937_64 rng(3);
  const float values[] = {-2.0f, -1.0f, 0.0f, -0.0f, 0.5f, 1.0f, 3.0f, 3.0f,
                          inf, -inf, qtest::nan_value()};
  int compared = 0;
  for (int t = 0; t < 20000; ++t) {
    const std::size_t vocab = 1 + rng() % 9;
    std::vector<float> row(vocab);
    for (float& x : row) x = values[rng() % (rng() % 5 == 0 ? 11 : 8)];
    const int k = int(rng() % 12) - 2;
    const float ps[] = {1.0f, 0.0f, 0.25f, 0.5f, 0.75f, 0.9f, 0.999f, 1.5f, -1.0f};
    const float p = ps[rng() % 9];
    const auto ref = qrita::oracle::evaluate(row.data(), std::int64_t(vocab), k, p);
    std::vector<std::int64_t> kept;
    if (ref.untouched) {
      for (std::size_t i = 0; i < vocab; ++i)
        if (qrita::oracle::is_candidate(row[i])) kept.push_back(std::int64_t(i));
    } else {
      kept.assign(ref.order.begin(), ref.order.begin() + ref.kept);
      std::sort(kept.begin(), kept.end());
    }
    const auto naive = naive_kept(row, k, p);
    // Exactly-representable masses here (powers of two) can still round
    // differently in double and long double; those rows are excluded.
    if (ref.topp_active && ref.kept > 0) {
      double mass = 0;
      for (std::int64_t j = 0; j < ref.kept; ++j) mass += ref.prob[std::size_t(j)];
      if (std::abs(mass - double(p)) < 1e-12) continue;
    }
    ++compared;
    ASSERT_EQ(kept, naive) << "trial " << t << " k " << k << " p " << p;
  }
  EXPECT_GT(compared, 15000);
}

TEST(Oracle, MaskLeavesKeptEntriesAndWritesNegInf) {
  std::vector<float> row = {1.0f, qtest::nan_value(), 3.0f, -inf, 2.0f, 3.0f};
  qrita::oracle::mask(row.data(), 6, 2, 1.0f);
  EXPECT_EQ(row[0], -inf);
  EXPECT_EQ(row[1], -inf);  // NaN is not kept and becomes -inf
  EXPECT_EQ(row[2], 3.0f);
  EXPECT_EQ(row[3], -inf);
  EXPECT_EQ(row[4], -inf);
  EXPECT_EQ(row[5], 3.0f);
  std::vector<float> nan_row(4, qtest::nan_value());
  qrita::oracle::mask(nan_row.data(), 4, 2, 0.5f);  // no candidate: untouched
  for (float x : nan_row) EXPECT_TRUE(std::isnan(x));
}

}  // namespace
