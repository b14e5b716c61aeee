// SPDX-License-Identifier: Apache-2.0
// The oracle against a second, deliberately naive reading of the definition
// (repeated argmax for top-k, long double sums for top-p) on small rows full
// of ties, NaN and infinities: the reference must itself be right.

#include "support.hpp"

#include <algorithm>
#include <random>
#include <tuple>
#include <utility>

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

// --- temperature, min-p, candidate lists -------------------------------------

namespace {

using qrita::oracle::RowFilters;

// The definition with temperature and min-p, read literally and computed
// another way: order by repeated argmax; min-p as a ratio of probabilities
// (exp((x - M) / T) >= m, in long double) rather than a log cut; top-p by
// long double sums. Returns the kept set in the definition's order (all
// candidates for a row the definition leaves alone).
struct NaiveResult {
  std::vector<std::int64_t> kept;
  std::vector<long double> prob;     // over the kept set, by order
  std::vector<long double> logprob;  // (x - M) / T - ln W; -inf for weight 0 beside +inf
  bool near_boundary = false;     // a min-p or top-p decision within 1e-9
};

NaiveResult naive_sample(std::vector<float> const& row, RowFilters const& f) {
  NaiveResult res;
  const std::int64_t vocab = std::int64_t(row.size());
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
  if (order.empty()) return res;
  const long double top = static_cast<long double>(row[std::size_t(order[0])]);
  // Greedy: T <= 0 or NaN.
  if (!(f.temperature > 0.0f)) {
    res.kept = {order[0]};
    res.prob    = {1.0L};
    res.logprob = {0.0L};
    return res;
  }
  const long double t = static_cast<long double>(f.temperature);
  // Weight relative to the maximum; +inf maximum: shared by the +inf entries.
  const auto w = [&](std::int64_t i) -> long double {
    const long double x = static_cast<long double>(row[std::size_t(i)]);
    if (std::isinf(top)) return std::isinf(x) ? 1.0L : 0.0L;
    if (std::isinf(t)) return 1.0L;
    return std::exp((x - top) / t);
  };
  std::vector<std::int64_t> kept = order;
  // Min-p: the probability ratio to the maximum at least m; m >= 1 keeps the
  // maximum's tie group (the definition; at T = +inf the ratio is 1 for all).
  if (f.min_p > 0.0f) {
    std::vector<std::int64_t> survivors;
    for (std::int64_t i : kept) {
      const long double x = static_cast<long double>(row[std::size_t(i)]);
      bool keep;
      if (f.min_p >= 1.0f) {
        keep = x == top;
      } else {
        const long double ratio = w(i);
        keep = ratio >= static_cast<long double>(f.min_p);
        if (!std::isinf(top) && !std::isinf(t) &&
            std::abs((x - top) - t * std::log(static_cast<long double>(f.min_p))) < 1e-9L)
          res.near_boundary = true;
      }
      if (keep) survivors.push_back(i);
    }
    kept = survivors;
  }
  if (f.k > 0 && f.k < vocab && std::int64_t(kept.size()) > f.k) kept.resize(std::size_t(f.k));
  if (f.p < 1.0f && !(f.p > 0.0f) && vocab > 1) kept.resize(1);
  if (f.p < 1.0f && f.p > 0.0f) {
    long double total = 0, mass = 0;
    for (auto i : kept) total += w(i);
    std::size_t n = 0;
    while (n < kept.size()) {
      mass += w(kept[n++]) / total;
      if (std::abs(mass - static_cast<long double>(f.p)) < 1e-9L) res.near_boundary = true;
      if (mass >= static_cast<long double>(f.p)) break;
    }
    kept.resize(n);
  }
  long double total = 0;
  for (auto i : kept) total += w(i);
  for (auto i : kept) {
    res.prob.push_back(w(i) / total);
    const long double x = static_cast<long double>(row[std::size_t(i)]);
    if (std::isinf(top))
      res.logprob.push_back(std::isinf(x) ? -std::log(total) : -static_cast<long double>(inf));
    else
      res.logprob.push_back((std::isinf(t) ? 0.0L : (x - top) / t) - std::log(total));
  }
  res.kept = kept;
  return res;
}

RowFilters random_filters(std::mt19937_64& rng) {
  RowFilters f;
  const float ps[]   = {1.0f, 0.0f, 0.25f, 0.5f, 0.75f, 0.9f, 0.999f, 1.5f, -1.0f};
  const float ms[]   = {0.0f, 0.0f, 0.0f, -0.5f, qtest::nan_value(), 0.05f, 0.2f, 0.5f,
                        0.9f, 1.0f, 2.0f, inf};
  const float ts[]   = {1.0f, 1.0f, 1.0f, 0.5f, 2.0f, 0.05f, 5.0f, inf, 0.0f, -0.0f,
                        -1.0f, qtest::nan_value(), 1e-30f};
  f.k           = int(rng() % 12) - 2;
  f.p           = ps[rng() % 9];
  f.min_p       = ms[rng() % 12];
  f.temperature = ts[rng() % 13];
  return f;
}

TEST(Oracle, TemperatureAndMinPAgreeWithANaiveReading) {
  std::mt19937_64 rng(10);
  const float values[] = {-2.0f, -1.0f, 0.0f, -0.0f, 0.5f, 1.0f, 3.0f, 3.0f, 0.3f, -0.7f,
                          inf, -inf, qtest::nan_value()};
  int compared = 0, greedy = 0, minp_cut = 0, uniform = 0;
  for (int t = 0; t < 40000; ++t) {
    const std::size_t vocab = 1 + rng() % 9;
    std::vector<float> row(vocab);
    for (float& x : row) x = values[rng() % (rng() % 5 == 0 ? 13 : 10)];
    const RowFilters f = random_filters(rng);
    const NaiveResult naive = naive_sample(row, f);
    if (naive.near_boundary) continue;
    const auto ref  = qrita::oracle::evaluate(row.data(), std::int64_t(vocab), f);
    const auto dist = qrita::oracle::kept_distribution(row.data(), std::int64_t(vocab), f);
    ++compared;
    greedy += ref.greedy ? 1 : 0;
    minp_cut += ref.minp_active && ref.minp_count < std::int64_t(ref.order.size()) ? 1 : 0;
    uniform += std::isinf(f.temperature) && f.temperature > 0 && !ref.untouched ? 1 : 0;
    const std::string what = "trial " + std::to_string(t) + " k " + std::to_string(f.k) +
                             " p " + std::to_string(f.p) + " min_p " +
                             std::to_string(f.min_p) + " T " + std::to_string(f.temperature);
    ASSERT_EQ(dist.ids, naive.kept) << what;
    // The kept set of evaluate is the list's set (or all candidates).
    if (!ref.untouched) {
      ASSERT_EQ(std::vector<std::int64_t>(ref.order.begin(), ref.order.begin() + ref.kept),
                naive.kept)
          << what;
    }
    ASSERT_EQ(dist.prob.size(), naive.prob.size());
    double sum = 0.0;
    for (std::size_t j = 0; j < dist.prob.size(); ++j) {
      ASSERT_NEAR(dist.prob[j], static_cast<double>(naive.prob[j]), 1e-12) << what;
      sum += dist.prob[j];
      // Finite even where the probability underflows (T = 1e-30).
      const double expect = static_cast<double>(naive.logprob[j]);
      if (std::isinf(expect)) {
        ASSERT_EQ(dist.logprob[j], expect) << what;
      } else {
        ASSERT_NEAR(dist.logprob[j], expect, 1e-9 * std::max(1.0, std::abs(expect))) << what;
      }
    }
    if (!dist.prob.empty()) {
      ASSERT_NEAR(sum, 1.0, 1e-12) << what;
    }
    // mask and verify agree with evaluate.
    std::vector<float> masked = row;
    qrita::oracle::mask(masked.data(), std::int64_t(vocab), f);
    ASSERT_EQ(qrita::oracle::verify(row.data(), masked.data(), std::int64_t(vocab), f), "")
        << what;
  }
  EXPECT_GT(compared, 35000);
  EXPECT_GT(greedy, 5000);
  EXPECT_GT(minp_cut, 2000);
  EXPECT_GT(uniform, 1000);
}

// The (k, p) signatures are the filters with min-p off and T = 1.
TEST(Oracle, KPSignaturesAreThinWrappers) {
  std::mt19937_64 rng(11);
  for (int t = 0; t < 2000; ++t) {
    std::vector<float> row(1 + rng() % 40);
    for (float& x : row) x = float(int(rng() % 7)) - 3.0f;
    RowFilters f;
    f.k = int(rng() % 12) - 2;
    f.p = float(int(rng() % 12)) / 10.0f - 0.05f;
    const auto a = qrita::oracle::evaluate(row.data(), std::int64_t(row.size()), f.k, f.p);
    const auto b = qrita::oracle::evaluate(row.data(), std::int64_t(row.size()), f);
    ASSERT_EQ(a.untouched, b.untouched);
    ASSERT_EQ(a.kept, b.kept);
    ASSERT_EQ(a.order, b.order);
    ASSERT_EQ(a.topp_active, b.topp_active);
  }
}

// Hand-computed examples of each new rule (the same as docs/SEMANTICS.md's).
TEST(Oracle, HandComputedTemperatureAndMinP) {
  using Ids = std::vector<std::int64_t>;
  const auto kept = [](std::vector<float> const& row, RowFilters const& f) {
    return qrita::oracle::kept_distribution(row.data(), std::int64_t(row.size()), f).ids;
  };
  RowFilters f;
  // Case 21: {1, 0, 0, 0}, p = 0.6: T = 0.5 keeps 1, T = 1 keeps 2, T = 2
  // and T = +inf keep 3.
  const std::vector<float> r21 = {1.0f, 0.0f, 0.0f, 0.0f};
  f.p = 0.6f;
  // (Named vectors, not braced lists in the loop: nvcc 11.8 cannot deduce
  // those.)
  const std::vector<std::pair<float, Ids>> case21 = {
      {0.5f, {0}}, {1.0f, {0, 1}}, {2.0f, {0, 1, 2}}, {inf, {0, 1, 2}}};
  for (auto const& c : case21) {
    f.temperature = c.first;
    EXPECT_EQ(kept(r21, f), c.second) << "T " << c.first;
  }
  f.temperature = inf;
  f.p           = 0.5f;  // 1/4 + 1/4 is exactly 0.5
  EXPECT_EQ(kept(r21, f), (Ids{0, 1}));
  // Case 24: {3, 2, 1, 0, -1}.
  const std::vector<float> r24 = {3.0f, 2.0f, 1.0f, 0.0f, -1.0f};
  f = RowFilters{};
  const std::vector<std::tuple<float, float, Ids>> case24 = {
      {0.3f, 1.0f, {0, 1}},        {0.1f, 1.0f, {0, 1, 2}},
      {0.05f, 1.0f, {0, 1, 2}},    {0.04f, 1.0f, {0, 1, 2, 3}},
      {0.3f, 2.0f, {0, 1, 2}},     {1.0f, 1.0f, {0}},
      {1.0f, inf, {0}},            {0.5f, inf, {0, 1, 2, 3, 4}}};
  for (auto const& c : case24) {
    f.min_p       = std::get<0>(c);
    f.temperature = std::get<1>(c);
    EXPECT_EQ(kept(r24, f), std::get<2>(c))
        << "min_p " << f.min_p << " T " << f.temperature;
  }
  // ln(float(1/e)) = -0.99999997...: -1 lies below the cut, the next float
  // above it (-0.99999994) above.
  f             = RowFilters{};
  f.min_p       = float(std::exp(-1.0));
  EXPECT_EQ(kept({0.0f, -1.0f}, f), (Ids{0}));
  EXPECT_EQ(kept({0.0f, std::nextafter(-1.0f, 0.0f)}, f), (Ids{0, 1}));
  // +inf maximum: c = +inf keeps the +inf entries.
  f.min_p = 0.01f;
  EXPECT_EQ(kept({inf, 5.0f, inf, 0.0f}, f), (Ids{0, 2}));
  // Case 25: min-p, then top-k, then top-p.
  f             = RowFilters{};
  f.min_p       = 0.1f;
  f.k           = 3;
  f.p           = 0.78f;
  EXPECT_EQ(kept({4.0f, 3.0f, 3.0f, 2.0f, 1.0f, 0.0f, -5.0f}, f), (Ids{0, 1}));
  f.k = 0;
  f.p = 0.9f;
  EXPECT_EQ(kept({4.0f, 3.0f, 3.0f, 2.0f, 1.0f, 0.0f, -5.0f}, f), (Ids{0, 1, 2}));
  // Greedy ignores the other filters.
  f.temperature = 0.0f;
  EXPECT_EQ(kept({1.0f, 3.0f, 3.0f}, f), (Ids{1}));
  // Case 29's probabilities: k = 3 of {1, 3, 2, 3}: weights 1, 1, e^-1.
  f   = RowFilters{};
  f.k = 3;
  const std::vector<float> r29 = {1.0f, 3.0f, 2.0f, 3.0f, -inf};
  const auto d = qrita::oracle::kept_distribution(r29.data(), 5, f);
  EXPECT_EQ(d.ids, (Ids{1, 3, 2}));
  const double total = 2.0 + std::exp(-1.0);
  EXPECT_NEAR(d.prob[0], 1.0 / total, 1e-15);
  EXPECT_NEAR(d.prob[2], std::exp(-1.0) / total, 1e-15);
  EXPECT_NEAR(d.logprob[1], -std::log(total), 1e-15);
  EXPECT_NEAR(d.logprob[2], -1.0 - std::log(total), 1e-15);
}

// verify lets a min-p decision within the tolerance band go either way, and
// only there.
TEST(Oracle, VerifyMinPToleranceBand) {
  // T = 1e-11, m = 0.5: c = 1e-11 - 6.93e-12 = 3.07e-12, band 1e-12. x = 3e-12
  // lies 7e-14 below c (inside the band): kept or not. 5e-12 lies 1.9e-12
  // above c (always kept), 1e-12 2.1e-12 below (always dropped).
  RowFilters f;
  f.temperature = 1e-11f;
  f.min_p       = 0.5f;
  const float top = 1e-11f;
  const std::vector<float> in = {top, 3e-12f, 1e-12f, 5e-12f};
  const auto ref = qrita::oracle::evaluate(in.data(), 4, f);
  ASSERT_TRUE(ref.minp_active);
  EXPECT_EQ(ref.kept, 2);  // top and 5e-12
  const std::vector<float> nominal = {top, -inf, -inf, 5e-12f};
  const std::vector<float> other   = {top, 3e-12f, -inf, 5e-12f};
  const std::vector<float> too_far = {top, 3e-12f, 1e-12f, 5e-12f};
  const std::vector<float> too_few = {top, -inf, -inf, -inf};
  EXPECT_EQ(qrita::oracle::verify(in.data(), nominal.data(), 4, f), "");
  EXPECT_EQ(qrita::oracle::verify(in.data(), other.data(), 4, f), "");
  EXPECT_NE(qrita::oracle::verify(in.data(), too_far.data(), 4, f), "");
  EXPECT_NE(qrita::oracle::verify(in.data(), too_few.data(), 4, f), "");
  // The band never releases the maximum's tie group (m = 1: c = M).
  f.min_p = 1.0f;
  f.temperature = 1.0f;
  const std::vector<float> tie = {2.0f, 2.0f, 1.0f};
  const std::vector<float> half = {2.0f, -inf, -inf};
  EXPECT_NE(qrita::oracle::verify(tie.data(), half.data(), 3, f), "");
  EXPECT_EQ(qrita::oracle::verify(tie.data(), std::vector<float>{2.0f, 2.0f, -inf}.data(), 3, f),
            "");
}

TEST(Oracle, GreedyAndRowsWithoutCandidates) {
  RowFilters f;
  for (float t : {0.0f, -0.0f, -1.0f, -inf, qtest::nan_value()}) {
    f.temperature = t;
    f.k           = 5;
    f.p           = 0.9f;
    f.min_p       = 0.5f;
    const std::vector<float> row = {qtest::nan_value(), 2.0f, inf, 7.0f, inf};
    const auto d = qrita::oracle::kept_distribution(row.data(), 5, f);
    EXPECT_EQ(d.ids, (std::vector<std::int64_t>{2})) << "T " << t;
    EXPECT_EQ(d.prob, (std::vector<double>{1.0}));
    EXPECT_EQ(d.logprob, (std::vector<double>{0.0}));
    std::vector<float> masked = row;
    qrita::oracle::mask(masked.data(), 5, f);
    EXPECT_EQ(masked[2], inf);
    for (int i : {0, 1, 3, 4}) EXPECT_EQ(masked[std::size_t(i)], -inf);
  }
  // No candidate: untouched, empty list, whatever the filters.
  const std::vector<float> none = {-inf, qtest::nan_value()};
  f.temperature = 0.0f;
  EXPECT_TRUE(qrita::oracle::evaluate(none.data(), 2, f).untouched);
  EXPECT_TRUE(qrita::oracle::kept_distribution(none.data(), 2, f).ids.empty());
  // No active filter, T > 0: untouched, but the list holds every candidate
  // with the temperature's probabilities.
  f             = RowFilters{};
  f.temperature = 2.0f;
  const std::vector<float> row = {0.0f, 2.0f, qtest::nan_value(), 2.0f};
  EXPECT_TRUE(qrita::oracle::evaluate(row.data(), 4, f).untouched);
  const auto d = qrita::oracle::kept_distribution(row.data(), 4, f);
  EXPECT_EQ(d.ids, (std::vector<std::int64_t>{1, 3, 0}));
  const double total = 2.0 + std::exp(-1.0);
  EXPECT_NEAR(d.prob[2], std::exp(-1.0) / total, 1e-15);
}

}  // namespace
