// SPDX-License-Identifier: Apache-2.0
// The cases of docs/SEMANTICS.md for temperature, min-p, 16-bit logits,
// sample_tokens and candidate_list (cases 21-31), by number and name, on
// every enabled backend. Each expected answer below was worked out by hand
// (SEMANTICS.md shows the arithmetic); every result is also checked against
// the oracle (verify for masks, kept_distribution for lists, the kept set
// for tokens).

#include "support_sampling.hpp"
#include "synthetic.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <numeric>
#include <random>
#include <set>
#include <tuple>

namespace {

using qtest::Candidates;
using qtest::inf;
using qtest::RowFilters;
using qtest::SampleBatch;
using Idx = std::vector<std::int64_t>;

template <class Exec>
class SemanticsSampling : public ::testing::Test {};
TYPED_TEST_SUITE(SemanticsSampling, qtest::Backends, qtest::BackendName);

RowFilters filters(int k, float p, float min_p = 0.0f, float t = 1.0f) {
  RowFilters f;
  f.k           = k;
  f.p           = p;
  f.min_p       = min_p;
  f.temperature = t;
  return f;
}

RowFilters temperature(float t) { return filters(0, 1.0f, 0.0f, t); }

// The values must be exactly representable in T (a hand-written case that
// is not would test the rounding, not the case).
template <class T>
::testing::AssertionResult exact_in(std::vector<float> const& row) {
  for (std::size_t i = 0; i < row.size(); ++i)
    if (!std::isnan(row[i]) && qtest::bits(qtest::round_to<T>(row[i])) != qtest::bits(row[i]))
      return ::testing::AssertionFailure()
             << "entry " << i << " (" << row[i] << ") is not a " << qtest::type_name<T>();
  return ::testing::AssertionSuccess();
}

// sample_mask(space, logits, params) on one row of logits stored as T;
// checks the row against the oracle and returns its kept indices, sorted.
template <class Exec, class T = float>
Idx kept_of(std::vector<float> const& row, RowFilters const& f) {
  EXPECT_TRUE(exact_in<T>(row));
  const SampleBatch b = SampleBatch::one(row, f);
  const std::vector<float> out = qtest::run_mask<Exec, T>(b);
  EXPECT_TRUE(qtest::check_mask(b, out)) << qtest::type_name<T>();
  return qtest::kept_indices(row.data(), out.data(), std::int64_t(row.size()));
}

// candidate_list on one row with capacity C, checked against the oracle.
template <class Exec, class T = float>
Candidates list_of(std::vector<float> const& row, RowFilters const& f, std::int64_t C) {
  EXPECT_TRUE(exact_in<T>(row));
  const SampleBatch b = SampleBatch::one(row, f);
  const Candidates c  = qtest::run_candidates<Exec, T>(b, C);
  EXPECT_TRUE(qtest::check_candidates(b, c)) << qtest::type_name<T>();
  return c;
}

// sample_tokens on n copies of one row with seeds seed0, seed0 + 1, ...;
// every token is checked to be in the oracle's kept set.
template <class Exec, class T = float>
std::vector<int> tokens_of(std::vector<float> const& row, RowFilters const& f, std::int64_t n,
                           std::uint64_t seed0 = 77) {
  EXPECT_TRUE(exact_in<T>(row));
  SampleBatch b(n, std::int64_t(row.size()));
  for (std::int64_t r = 0; r < n; ++r) {
    std::copy(row.begin(), row.end(), b.row(r));
    b.filters[std::size_t(r)] = f;
    b.seeds[std::size_t(r)]   = seed0 + std::uint64_t(r);
  }
  const std::vector<int> tokens = qtest::run_tokens<Exec, T>(b);
  for (std::int64_t r = 0; r < n; ++r)
    EXPECT_TRUE(qtest::check_token(b, r, tokens[std::size_t(r)])) << qtest::type_name<T>();
  return tokens;
}

std::set<int> distinct(std::vector<int> const& v) { return std::set<int>(v.begin(), v.end()); }

// Expects row r of a list: these ids, then padding; probabilities and
// log-probabilities as given (within the tests' tolerances).
void expect_list(Candidates const& c, std::vector<int> const& ids, int count,
                 std::vector<double> const& probs, std::vector<double> const& logprobs,
                 std::int64_t r = 0) {
  EXPECT_EQ(c.counts[std::size_t(r)], count) << "row " << r;
  for (std::int64_t j = 0; j < c.capacity; ++j) {
    const std::size_t uj = std::size_t(j), at = std::size_t(r * c.capacity + j);
    if (uj < ids.size()) {
      EXPECT_EQ(c.ids[at], ids[uj]) << "row " << r << " slot " << j;
      if (uj < probs.size()) {
        EXPECT_NEAR(double(c.probs[at]), probs[uj], 1e-6) << "row " << r << " slot " << j;
      }
      if (uj < logprobs.size()) {
        EXPECT_NEAR(double(c.logprobs[at]), logprobs[uj], 1e-5) << "row " << r << " slot " << j;
      }
    } else {
      EXPECT_EQ(c.ids[at], -1) << "row " << r << " slot " << j;
      EXPECT_EQ(qtest::bits(c.probs[at]), qtest::bits(0.0f)) << "row " << r << " slot " << j;
      EXPECT_EQ(c.logprobs[at], -inf) << "row " << r << " slot " << j;
    }
  }
}

// -----------------------------------------------------------------------------
// 21. Temperature changes top-p's set (and the probabilities), never a value.
template <class Exec, class T>
void case21() {
  // {1, 0, 0, 0}, p = 0.6. Top probability e^(1/T) / (e^(1/T) + 3):
  // T = 0.5: 0.711 >= 0.6 -> 1 entry; T = 1: 0.475, + 0.175 = 0.650 -> 2;
  // T = 2: 0.355, 0.570, 0.785 -> 3; T = +inf: 0.25 each -> 3.
  const std::vector<float> row = {1.0f, 0.0f, 0.0f, 0.0f};
  const std::pair<float, Idx> cases[] = {
      {0.5f, {0}}, {1.0f, {0, 1}}, {2.0f, {0, 1, 2}}, {inf, {0, 1, 2}}};
  for (auto const& [t, expect] : cases)
    EXPECT_EQ((kept_of<Exec, T>(row, filters(0, 0.6f, 0.0f, t))), expect)
        << qtest::type_name<T>() << " T " << t;
  // T = +inf, p = 0.5: 1/4 + 1/4 is exactly 0.5: two entries, no third.
  EXPECT_EQ((kept_of<Exec, T>(row, filters(0, 0.5f, 0.0f, inf))), (Idx{0, 1}));
  // The probabilities are those of T over the kept set: T = 2 keeps
  // {0, 1, 2} with weights 1, e^-0.5, e^-0.5: 1 / (1 + 2 e^-0.5) = 0.45186,
  // e^-0.5 / (1 + 2 e^-0.5) = 0.27407; log-probabilities -0.79438 and -1.29438.
  const double total = 1.0 + 2.0 * std::exp(-0.5);
  expect_list(list_of<Exec, T>(row, filters(0, 0.6f, 0.0f, 2.0f), 4), {0, 1, 2}, 3,
              {1.0 / total, std::exp(-0.5) / total, std::exp(-0.5) / total},
              {-std::log(total), -0.5 - std::log(total), -0.5 - std::log(total)});
  // The same four values inside a row of 6000 (the rest at -200, whose
  // weight e^(-200/T) is below 1e-40 for T <= 2).
  std::vector<float> wide(6000, -200.0f);
  const Idx at = {4321, 17, 2500, 5999};  // 1 at 4321; the zeros by index: 17, 2500, 5999
  wide[4321] = 1.0f;
  wide[17] = wide[2500] = wide[5999] = 0.0f;
  const std::pair<float, Idx> wide_cases[] = {
      {0.5f, {4321}}, {1.0f, {17, 4321}}, {2.0f, {17, 2500, 4321}}};
  for (auto const& [t, expect] : wide_cases)
    EXPECT_EQ((kept_of<Exec, T>(wide, filters(0, 0.6f, 0.0f, t))), expect)
        << qtest::type_name<T>() << " T " << t;
}

TYPED_TEST(SemanticsSampling, Case21_TemperatureChangesTopPSet) {
  case21<TypeParam, float>();
  case21<TypeParam, qrita::bfloat16>();
  case21<TypeParam, qrita::float16>();
}

// 22. Greedy: T = 0, -0, < 0, -inf or NaN keeps the first entry of the order
//     (lowest index of a tied maximum), whatever k, p and min-p say. A tiny
//     positive T is not greedy: a tied maximum shares the mass.
template <class Exec, class T>
void case22() {
  std::vector<float> row(5000);
  std::mt19937_64 rng(22);
  std::uniform_real_distribution<float> d(-5.0f, 5.0f);
  for (float& x : row) x = qtest::round_to<T>(d(rng));
  row[4321] = row[77] = 9.5f;
  row[10]             = qtest::nan_value();
  // Every greedy temperature with three sets of other filters, as the rows
  // of one batch (one call each).
  std::vector<RowFilters> greedy;
  for (float t : {0.0f, -0.0f, -1.0f, -inf, qtest::nan_value()})
    for (RowFilters f : {filters(0, 1.0f, 0.0f, t), filters(50, 0.9f, 0.3f, t),
                         filters(3000, 0.0f, 2.0f, t)})
      greedy.push_back(f);
  SampleBatch b(std::int64_t(greedy.size()), std::int64_t(row.size()));
  for (std::int64_t r = 0; r < b.batch; ++r) {
    std::copy(row.begin(), row.end(), b.row(r));
    b.filters[std::size_t(r)] = greedy[std::size_t(r)];
  }
  const std::vector<float> out = qtest::run_mask<Exec, T>(b);
  EXPECT_TRUE(qtest::check_mask(b, out)) << qtest::type_name<T>();
  const std::vector<int> tokens77 = qtest::run_tokens<Exec, T>(b);
  const Candidates list77         = qtest::run_candidates<Exec, T>(b, 3);
  EXPECT_TRUE(qtest::check_candidates(b, list77)) << qtest::type_name<T>();
  for (std::int64_t r = 0; r < b.batch; ++r) {
    const std::string what = std::string(qtest::type_name<T>()) + ", " +
                             qtest::describe(b.filters[std::size_t(r)]);
    EXPECT_EQ(qtest::kept_indices(b.row(r), out.data() + r * b.vocab, b.vocab), Idx{77}) << what;
    EXPECT_EQ(tokens77[std::size_t(r)], 77) << what;
    expect_list(list77, {77}, 1, {1.0}, {0.0}, r);
  }
  // T = 1e-30 > 0: not greedy. No filter: the row is left as it is; entries
  // below the maximum weigh exp(-x / 1e-30) = 0, so the two tied maxima
  // hold 1/2 each, both are drawn, and the list holds them first.
  const RowFilters tiny = temperature(1e-30f);
  EXPECT_EQ((kept_of<Exec, T>(row, tiny)).size(), 4999u);  // all but the NaN: untouched
  const std::vector<int> tokens = tokens_of<Exec, T>(row, tiny, 64);
  EXPECT_EQ(distinct(tokens), (std::set<int>{77, 4321}));
  const Candidates c = list_of<Exec, T>(row, tiny, 3);
  EXPECT_EQ(c.counts[0], 4999);
  EXPECT_EQ(c.ids[0], 77);
  EXPECT_EQ(c.ids[1], 4321);
  EXPECT_NEAR(double(c.probs[0]), 0.5, 1e-6);
  EXPECT_NEAR(double(c.probs[1]), 0.5, 1e-6);
  EXPECT_EQ(c.probs[2], 0.0f);
  EXPECT_TRUE(std::isfinite(c.logprobs[2]));  // (x - M) / T - ln 2: about -1e30
}

TYPED_TEST(SemanticsSampling, Case22_GreedyTemperature) {
  case22<TypeParam, float>();
  case22<TypeParam, qrita::bfloat16>();
  case22<TypeParam, qrita::float16>();
}

// 23. T = +inf: uniform over the finite candidates; with +inf entries those
//     share the mass (as for every T > 0).
template <class Exec, class T>
void case23() {
  const float nan = qtest::nan_value();
  // Candidates 0 (5), 1 (1), 5 (0), 2 (-3), in that order.
  const std::vector<float> row = {5.0f, 1.0f, -3.0f, -inf, nan, 0.0f};
  const RowFilters uniform = temperature(inf);
  // No filter: left as it is; the list is the whole row at 1/4 each.
  const SampleBatch b = SampleBatch::one(row, uniform);
  const std::vector<float> out = qtest::run_mask<Exec, T>(b);
  for (std::size_t i = 0; i < row.size(); ++i)
    EXPECT_EQ(qtest::bits(out[i]), qtest::bits(row[i])) << "entry " << i;
  const double l4 = -std::log(4.0);
  expect_list(list_of<Exec, T>(row, uniform, 6), {0, 1, 5, 2}, 4, {0.25, 0.25, 0.25, 0.25},
              {l4, l4, l4, l4});
  // p = 0.5: exactly two (1/4 + 1/4 = 0.5). min-p 0.5: c = 5 + inf * ln 0.5
  // = -inf keeps every candidate (NaN and -inf are written as -inf).
  // min-p 1: c = M keeps the maximum.
  EXPECT_EQ((kept_of<Exec, T>(row, filters(0, 0.5f, 0.0f, inf))), (Idx{0, 1}));
  EXPECT_EQ((kept_of<Exec, T>(row, filters(0, 1.0f, 0.5f, inf))), (Idx{0, 1, 2, 5}));
  EXPECT_EQ((kept_of<Exec, T>(row, filters(0, 1.0f, 1.0f, inf))), (Idx{0}));
  const std::vector<int> tokens = tokens_of<Exec, T>(row, filters(0, 0.5f, 0.0f, inf), 64);
  EXPECT_EQ(distinct(tokens), (std::set<int>{0, 1}));
  const std::vector<int> all = tokens_of<Exec, T>(row, uniform, 128);
  EXPECT_EQ(distinct(all), (std::set<int>{0, 1, 2, 5}));
  // +inf entries: they share the mass, finite ones get 0 (and are listed
  // after them with probability 0), whatever T.
  const std::vector<float> with_inf = {inf, 3.0f, inf, 1.0f};
  const double l2 = -std::log(2.0);
  for (float t : {inf, 1.0f, 0.05f}) {
    const Candidates c = list_of<Exec, T>(with_inf, temperature(t), 4);
    expect_list(c, {0, 2, 1, 3}, 4, {0.5, 0.5, 0.0, 0.0}, {l2, l2});
    EXPECT_EQ((kept_of<Exec, T>(with_inf, filters(3, 1.0f, 0.0f, t))), (Idx{0, 1, 2}));
    EXPECT_EQ(distinct(tokens_of<Exec, T>(with_inf, filters(3, 1.0f, 0.0f, t), 64)),
              (std::set<int>{0, 2}));
  }
}

TYPED_TEST(SemanticsSampling, Case23_InfiniteTemperatureIsUniform) {
  case23<TypeParam, float>();
  case23<TypeParam, qrita::bfloat16>();
  case23<TypeParam, qrita::float16>();
}

// 24. Min-p: c = M + T ln(min(m, 1)), kept x >= c.
template <class Exec, class T>
void case24() {
  // (a) {3, 2, 1, 0, -1}: m = 0.3: c = 3 - 1.204 = 1.796 -> {3, 2};
  // m = 0.1: c = 0.697 -> {3, 2, 1}; m = 0.05: c = 0.0043 -> 0 is out;
  // m = 0.04: c = -0.219 -> 0 is in; T = 2, m = 0.3: c = 0.592 -> {3, 2, 1}.
  const std::vector<float> row = {3.0f, 2.0f, 1.0f, 0.0f, -1.0f};
  const std::tuple<float, float, Idx> cases[] = {{0.3f, 1.0f, {0, 1}},
                                                 {0.1f, 1.0f, {0, 1, 2}},
                                                 {0.05f, 1.0f, {0, 1, 2}},
                                                 {0.04f, 1.0f, {0, 1, 2, 3}},
                                                 {0.3f, 2.0f, {0, 1, 2}}};
  for (auto const& [m, t, expect] : cases)
    EXPECT_EQ((kept_of<Exec, T>(row, filters(0, 1.0f, m, t))), expect)
        << qtest::type_name<T>() << " min_p " << m << " T " << t;
  // The survivors' renormalised probabilities (m = 0.1): weights 1, e^-1,
  // e^-2 -> 0.66524, 0.24473, 0.09003.
  const double total = 1.0 + std::exp(-1.0) + std::exp(-2.0);
  expect_list(list_of<Exec, T>(row, filters(0, 1.0f, 0.1f), 5), {0, 1, 2}, 3,
              {1.0 / total, std::exp(-1.0) / total, std::exp(-2.0) / total},
              {-std::log(total), -1.0 - std::log(total), -2.0 - std::log(total)});
  // (b) m >= 1 acts as 1: the maximum's tie group. Then k = 1 keeps one.
  const std::vector<float> tied = {1.0f, 3.0f, 3.0f, 2.0f};
  for (float m : {1.0f, 1.5f, inf}) {
    EXPECT_EQ((kept_of<Exec, T>(tied, filters(0, 1.0f, m))), (Idx{1, 2})) << "min_p " << m;
    EXPECT_EQ((kept_of<Exec, T>(tied, filters(1, 1.0f, m))), (Idx{1})) << "min_p " << m;
    EXPECT_EQ(distinct(tokens_of<Exec, T>(tied, filters(0, 1.0f, m), 64)),
              (std::set<int>{1, 2}));
  }
  // (c) A +inf maximum: c = +inf keeps the +inf entries, also at T = +inf.
  const std::vector<float> with_inf = {inf, 5.0f, inf, 0.0f};
  EXPECT_EQ((kept_of<Exec, T>(with_inf, filters(0, 1.0f, 0.01f))), (Idx{0, 2}));
  EXPECT_EQ((kept_of<Exec, T>(with_inf, filters(0, 1.0f, 0.01f, inf))), (Idx{0, 2}));
  // (d) m <= 0, -0, NaN, -inf: off, so the row (with a NaN) is not written.
  const std::vector<float> with_nan = {3.0f, qtest::nan_value(), 2.0f, -inf};
  for (float m : {0.0f, -0.0f, -0.5f, qtest::nan_value(), -inf}) {
    const SampleBatch b = SampleBatch::one(with_nan, filters(0, 1.0f, m));
    const std::vector<float> out = qtest::run_mask<Exec, T>(b);
    for (std::size_t i = 0; i < with_nan.size(); ++i)
      EXPECT_EQ(qtest::bits(out[i]), qtest::bits(with_nan[i])) << "min_p " << m << " entry " << i;
  }
  // And a tiny m keeps every candidate but the row is written: NaN -> -inf.
  EXPECT_EQ((kept_of<Exec, T>(with_nan, filters(0, 1.0f, 1e-30f))), (Idx{0, 2}));
}

TYPED_TEST(SemanticsSampling, Case24_MinP) {
  case24<TypeParam, float>();
  case24<TypeParam, qrita::bfloat16>();
  case24<TypeParam, qrita::float16>();
  // (e) A cut between adjacent floats: m = float(1/e) = 0.36787945, so
  // c = ln m = -0.999999975: -1 is below (dropped), the next float above
  // -1 (-0.99999994) is above (kept). Both 2.5e-8 from c: far outside the
  // 1e-12 band, so the answer is exact.
  const float m = float(std::exp(-1.0));
  EXPECT_EQ((kept_of<TypeParam>({0.0f, -1.0f}, filters(0, 1.0f, m))), (Idx{0}));
  EXPECT_EQ((kept_of<TypeParam>({0.0f, std::nextafter(-1.0f, 0.0f)}, filters(0, 1.0f, m))),
            (Idx{0, 1}));
}

// 25. The order of the filters: temperature, min-p, top-k, top-p.
template <class Exec, class T>
void case25() {
  const std::vector<float> row = {4.0f, 3.0f, 3.0f, 2.0f, 1.0f, 0.0f, -5.0f};
  // min-p 0.1: c = 4 - 2.303 = 1.697 -> {4, 3, 3, 2}; k = 3 -> {4, 3, 3};
  // top-p 0.78 on those: 0.576, 0.788 -> {4, 3}. (Top-p before top-k, on
  // the four min-p survivors, would reach only 0.731 with two and keep 3.)
  EXPECT_EQ((kept_of<Exec, T>(row, filters(3, 0.78f, 0.1f))), (Idx{0, 1}));
  // Top-p on the min-p survivors (0.534, 0.731, 0.928 -> 3 entries), not on
  // the whole row (0.516, 0.705, 0.895, 0.965 -> 4 entries).
  EXPECT_EQ((kept_of<Exec, T>(row, filters(0, 0.9f, 0.1f))), (Idx{0, 1, 2}));
  // k counts the min-p survivors: k = 5 > 4 survivors keeps all four.
  EXPECT_EQ((kept_of<Exec, T>(row, filters(5, 1.0f, 0.1f))), (Idx{0, 1, 2, 3}));
  // Temperature first: T = 2 gives c = 4 - 4.605 = -0.605 -> six survivors.
  EXPECT_EQ((kept_of<Exec, T>(row, filters(0, 1.0f, 0.1f, 2.0f))), (Idx{0, 1, 2, 3, 4, 5}));
  // The list of the first case: weights 1, e^-1: 0.73106, 0.26894.
  const double total = 1.0 + std::exp(-1.0);
  expect_list(list_of<Exec, T>(row, filters(3, 0.78f, 0.1f), 3), {0, 1}, 2,
              {1.0 / total, std::exp(-1.0) / total}, {-std::log(total), -1.0 - std::log(total)});
  EXPECT_EQ(distinct(tokens_of<Exec, T>(row, filters(3, 0.78f, 0.1f), 64)),
            (std::set<int>{0, 1}));
}

TYPED_TEST(SemanticsSampling, Case25_FilterOrder) {
  case25<TypeParam, float>();
  case25<TypeParam, qrita::bfloat16>();
  case25<TypeParam, qrita::float16>();
}

// 26. bf16 ties: rounding makes equal values; ties go by lower index in the
//     order, in top-k, in top-p and in the list; -0 and +0 are equal.
TYPED_TEST(SemanticsSampling, Case26_Bfloat16Ties) {
  using bf16 = qrita::bfloat16;
  std::vector<float> row = {0.5f, 1.001f, 0.9999f, 1.005f, 1.0f, -2.0f};
  qtest::round_all<bf16>(row);
  // bf16 has 8 significant bits: 1.001 and 0.9999 round to 1, 1.005 to
  // 1 + 2^-7.
  ASSERT_EQ(row, (std::vector<float>{0.5f, 1.0f, 1.0f, 1.0078125f, 1.0f, -2.0f}));
  // Order 3, 1, 2, 4, 0, 5.
  EXPECT_EQ((kept_of<TypeParam, bf16>(row, filters(2, 1.0f))), (Idx{1, 3}));
  EXPECT_EQ((kept_of<TypeParam, bf16>(row, filters(3, 1.0f))), (Idx{1, 2, 3}));
  // Top-p across the tie group: 0.2161, 0.4305, 0.6449, 0.8593: p = 0.5
  // keeps two of the three ties (indices 1, 2), p = 0.85 all three.
  EXPECT_EQ((kept_of<TypeParam, bf16>(row, filters(0, 0.5f))), (Idx{1, 2, 3}));
  EXPECT_EQ((kept_of<TypeParam, bf16>(row, filters(0, 0.85f))), (Idx{1, 2, 3, 4}));
  // k = 4: weights 1, e^-2^-7 x 3: 0.25147, 0.24951 x 3.
  const double tie = std::exp(-0.0078125), total = 1.0 + 3.0 * tie;
  expect_list(list_of<TypeParam, bf16>(row, filters(4, 1.0f), 6), {3, 1, 2, 4}, 4,
              {1.0 / total, tie / total, tie / total, tie / total},
              {-std::log(total), std::log(tie / total), std::log(tie / total),
               std::log(tie / total)});
  // -0 and +0 tie: k = 2 keeps indices 0 and 1, and -0 keeps its sign bit.
  const std::vector<float> zeros = {-0.0f, 0.0f, -0.0f, -1.0f};
  const SampleBatch b = SampleBatch::one(zeros, filters(2, 1.0f));
  const std::vector<float> out = qtest::run_mask<TypeParam, bf16>(b);
  EXPECT_EQ(qtest::bits(out[0]), qtest::bits(-0.0f));
  EXPECT_EQ(qtest::bits(out[1]), qtest::bits(0.0f));
  EXPECT_EQ(out[2], -inf);
  EXPECT_EQ(out[3], -inf);
  expect_list(list_of<TypeParam, bf16>(zeros, filters(3, 1.0f), 4), {0, 1, 2}, 3,
              {1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0}, {});
  // The same raw values in fp16 (11 significant bits): 1.001 -> 1.0009766,
  // 0.9999 -> 1, 1.005 -> 1.0048828: order 3, 1, 2, 4, 0, 5, ties 2 and 4.
  std::vector<float> half = {0.5f, 1.001f, 0.9999f, 1.005f, 1.0f, -2.0f};
  qtest::round_all<qrita::float16>(half);
  ASSERT_EQ(half, (std::vector<float>{0.5f, 1.0009765625f, 1.0f, 1.0048828125f, 1.0f, -2.0f}));
  EXPECT_EQ((kept_of<TypeParam, qrita::float16>(half, filters(3, 1.0f))), (Idx{1, 2, 3}));
  EXPECT_EQ((kept_of<TypeParam, qrita::float16>(half, filters(0, 0.5f))), (Idx{1, 2, 3}));
  // A long row of bf16 logits (lm rounded: long runs of equal values), k and
  // p cutting through tie groups, against the oracle.
  SampleBatch big(6, 8000);
  std::mt19937_64 rng(26);
  for (std::int64_t r = 0; r < big.batch; ++r) {
    qrita::synthetic::fill_row(big.row(r), big.vocab, qrita::synthetic::Shape::ties, rng);
    big.filters[std::size_t(r)] = filters(r % 2 ? 100 : 0, r % 3 ? 0.9f : 1.0f,
                                          r % 4 == 3 ? 0.01f : 0.0f, r % 3 == 2 ? 0.7f : 1.0f);
  }
  EXPECT_TRUE(qtest::check_mask(big, qtest::run_mask<TypeParam, bf16>(big)));
  EXPECT_TRUE(qtest::check_candidates(big, qtest::run_candidates<TypeParam, bf16>(big, 128)));
}

// 27. 16-bit special values, given by their bits: subnormals, -0, NaN
//     (quiet, signalling, negative), +-inf.
template <class Exec, class T>
std::vector<std::uint16_t> mask_bits(std::vector<std::uint16_t> const& in, RowFilters const& f) {
  using mem = typename Exec::memory_space;
  Kokkos::View<T**, Kokkos::LayoutRight, mem> logits("logits", 1, in.size());
  auto h = Kokkos::create_mirror_view(logits);
  for (std::size_t i = 0; i < in.size(); ++i) h(0, i) = T{in[i]};
  Kokkos::deep_copy(logits, h);
  Kokkos::View<int*, mem> k("k", 1);
  Kokkos::View<float*, mem> p("p", 1), m("min_p", 1), t("temperature", 1);
  Kokkos::deep_copy(k, f.k);
  Kokkos::deep_copy(p, f.p);
  Kokkos::deep_copy(m, f.min_p);
  Kokkos::deep_copy(t, f.temperature);
  qrita::SamplingParams<mem> params;
  params.k           = k;
  params.p           = p;
  params.min_p       = m;
  params.temperature = t;
  qrita::sample_mask(Exec(), logits, params);
  Exec().fence();
  Kokkos::deep_copy(h, logits);
  std::vector<std::uint16_t> out;
  for (std::size_t i = 0; i < in.size(); ++i) out.push_back(h(0, i).bits);
  return out;
}

template <class T>
std::vector<float> values_of(std::vector<std::uint16_t> const& bits) {
  std::vector<float> v;
  for (std::uint16_t b : bits) v.push_back(qrita::to_float(T{b}));
  return v;
}

TYPED_TEST(SemanticsSampling, Case27_SixteenBitSpecials) {
  using f16 = qrita::float16;
  // 2^-24, -0, +0, NaN, 2^-23, -2^-24, -inf, signalling NaN, -NaN.
  const std::vector<std::uint16_t> sub = {0x0001, 0x8000, 0x0000, 0x7E00, 0x0002,
                                          0x8001, 0xFC00, 0x7C01, 0xFE00};
  const std::uint16_t neg_inf = 0xFC00;
  // Candidates 4, 0, 1, 2, 5 in that order (-0 and +0 tie by index).
  // k = 3: 4, 0, 1 keep their bits (-0 keeps its sign); all else -inf.
  EXPECT_EQ((mask_bits<TypeParam, f16>(sub, filters(3, 1.0f))),
            (std::vector<std::uint16_t>{0x0001, 0x8000, neg_inf, neg_inf, 0x0002, neg_inf,
                                        neg_inf, neg_inf, neg_inf}));
  // k = 4 reaches +0; p = 0.5 on five near-equal weights (0.2 each) needs 3.
  const std::vector<float> v = values_of<f16>(sub);
  EXPECT_EQ((kept_of<TypeParam, f16>(v, filters(4, 1.0f))), (Idx{0, 1, 2, 4}));
  EXPECT_EQ((kept_of<TypeParam, f16>(v, filters(0, 0.5f))), (Idx{0, 1, 4}));
  // min-p 0.9 keeps all five, and the row is written: every NaN -> -inf.
  EXPECT_EQ((mask_bits<TypeParam, f16>(sub, filters(0, 1.0f, 0.9f))),
            (std::vector<std::uint16_t>{0x0001, 0x8000, 0x0000, neg_inf, 0x0002, 0x8001,
                                        neg_inf, neg_inf, neg_inf}));
  // T = 1e-30 magnifies the subnormal gaps: 2^-24 / 1e-30 = 6e22, so only
  // the maximum has weight and p = 0.5 keeps it alone.
  EXPECT_EQ((kept_of<TypeParam, f16>(v, filters(0, 0.5f, 0.0f, 1e-30f))), (Idx{4}));
  const Candidates c = list_of<TypeParam, f16>(v, filters(0, 1.0f, 0.9f), 8);
  EXPECT_EQ(c.counts[0], 5);
  EXPECT_EQ(std::vector<int>(c.ids.begin(), c.ids.end()),
            (std::vector<int>{4, 0, 1, 2, 5, -1, -1, -1}));
  // fp16 +inf and its largest finite value: +inf entries share the mass.
  const std::vector<std::uint16_t> infs = {0x7C00, 0x3C00, 0x7C00, 0x7BFF};
  const std::vector<float> vi = values_of<f16>(infs);
  ASSERT_EQ(vi[3], 65504.0f);
  EXPECT_EQ((kept_of<TypeParam, f16>(vi, filters(0, 0.6f))), (Idx{0, 2}));
  EXPECT_EQ((kept_of<TypeParam, f16>(vi, filters(3, 1.0f))), (Idx{0, 2, 3}));
  expect_list(list_of<TypeParam, f16>(vi, filters(3, 1.0f), 4), {0, 2, 3}, 3, {0.5, 0.5, 0.0},
              {-std::log(2.0), -std::log(2.0)});
  EXPECT_EQ(distinct(tokens_of<TypeParam, f16>(vi, filters(3, 1.0f), 64)),
            (std::set<int>{0, 2}));
  // bf16: subnormal 2^-133, -0, +0, NaN, -inf, -2^-133.
  const std::vector<std::uint16_t> bsub = {0x0001, 0x8000, 0x0000, 0x7FC1, 0xFF80, 0x8001};
  EXPECT_EQ((mask_bits<TypeParam, qrita::bfloat16>(bsub, filters(2, 1.0f))),
            (std::vector<std::uint16_t>{0x0001, 0x8000, 0xFF80, 0xFF80, 0xFF80, 0xFF80}));
  EXPECT_EQ((mask_bits<TypeParam, qrita::bfloat16>(bsub, filters(0, 1.0f, 0.5f))),
            (std::vector<std::uint16_t>{0x0001, 0x8000, 0x0000, 0xFF80, 0xFF80, 0x8001}));
}

// 28. Sampling: the token is in the kept set, drawn with probability
//     w_i / W; it depends only on (row, filters, seed, offset); greedy rows
//     give their top entry; rows without a candidate give -1.
TYPED_TEST(SemanticsSampling, Case28_SamplingDefinition) {
  using mem = typename TypeParam::memory_space;
  // Two equal candidates: each drawn about half the time (200 draws; the
  // bounds 60..140 fail for a fair coin with probability < 1e-8).
  const std::vector<float> pair = {0.0f, 0.0f, -inf, qtest::nan_value()};
  const std::vector<int> tokens = tokens_of<TypeParam>(pair, RowFilters{}, 200);
  const auto zeros = std::count(tokens.begin(), tokens.end(), 0);
  EXPECT_EQ(distinct(tokens), (std::set<int>{0, 1}));
  EXPECT_GT(zeros, 60);
  EXPECT_LT(zeros, 140);
  // Rows without a candidate: -1, whatever the filters; one candidate: it.
  SampleBatch b(6, 5);
  std::fill(b.row(0), b.row(0) + 5, -inf);
  std::fill(b.row(1), b.row(1) + 5, qtest::nan_value());
  b.filters[1] = filters(2, 0.5f, 0.3f, 0.0f);
  std::fill(b.row(2), b.row(2) + 5, -inf);
  b.row(2)[3] = -1e30f;
  b.filters[2] = filters(0, 0.9f, 0.9f, 0.5f);
  // A greedy row and two rows left as they are, with T = 1 and T = 3.
  for (std::int64_t r = 3; r < 6; ++r)
    for (int i = 0; i < 5; ++i) b.row(r)[i] = float(i % 3);
  b.filters[3] = filters(0, 1.0f, 0.0f, -2.0f);
  b.filters[5] = temperature(3.0f);
  const std::vector<int> t1 = qtest::run_tokens<TypeParam>(b);
  EXPECT_EQ(t1[0], -1);
  EXPECT_EQ(t1[1], -1);
  EXPECT_EQ(t1[2], 3);
  EXPECT_EQ(t1[3], 2);  // values 0 1 2 0 1: the maximum is at 2
  for (std::int64_t r = 0; r < b.batch; ++r) EXPECT_TRUE(qtest::check_token(b, r, t1[r]));
  // The same seeds and offsets: the same tokens.
  EXPECT_EQ(qtest::run_tokens<TypeParam>(b), t1);
  // Signed 64-bit seeds and offsets (const Views) with the same values give
  // the same tokens.
  {
    qtest::DeviceBatch<TypeParam> d(b);
    Kokkos::View<std::int64_t*, mem> s("s", 6), o("o", 6);
    auto s_h = Kokkos::create_mirror_view(s);
    auto o_h = Kokkos::create_mirror_view(o);
    for (std::size_t r = 0; r < 6; ++r) {
      s_h(r) = std::int64_t(b.seeds[r]);
      o_h(r) = std::int64_t(b.offsets[r]);
    }
    Kokkos::deep_copy(s, s_h);
    Kokkos::deep_copy(o, o_h);
    Kokkos::View<const std::int64_t*, mem> cs = s, co = o;
    Kokkos::View<int*, mem> tok("tokens", 6);
    qrita::sample_tokens(TypeParam(), d.logits, d.params, cs, co, tok);
    TypeParam().fence();
    auto tok_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tok);
    EXPECT_EQ(std::vector<int>(tok_h.data(), tok_h.data() + 6), t1);
  }
  // Offsets matter as much as seeds: one seed, 64 offsets on the pair row.
  SampleBatch offs(64, 4);
  for (std::int64_t r = 0; r < 64; ++r) {
    std::copy(pair.begin(), pair.end(), offs.row(r));
    offs.seeds[std::size_t(r)]   = 5;
    offs.offsets[std::size_t(r)] = std::uint64_t(r);
  }
  EXPECT_EQ(distinct(qtest::run_tokens<TypeParam>(offs)), (std::set<int>{0, 1}));
  // 16-bit rows: the tokens are in the kept set.
  for (std::uint64_t seed : {1u, 2u}) {
    const std::vector<float> row = {1.0f, 0.5f, 1.0f, -inf, 0.25f, 0.0f};
    tokens_of<TypeParam, qrita::bfloat16>(row, filters(3, 0.8f, 0.1f, 0.7f), 32, seed);
    tokens_of<TypeParam, qrita::float16>(row, filters(3, 0.8f, 0.1f, 0.7f), 32, seed);
  }
}

// 29. The candidate list: the first min(C, count) kept entries in the
//     order, their probabilities over the kept set, padding past the list.
TYPED_TEST(SemanticsSampling, Case29_CandidateListDefinition) {
  // k = 3 of {1, 3, 2, 3, -inf}: order 1, 3, 2, 0 -> kept 1, 3, 2 with
  // weights 1, 1, e^-1: W = 2.36788; probabilities 0.42232, 0.42232,
  // 0.15536; log-probabilities -0.86199, -0.86199, -1.86199.
  const std::vector<float> row = {1.0f, 3.0f, 2.0f, 3.0f, -inf};
  const double total = 2.0 + std::exp(-1.0), lt = std::log(total);
  const std::vector<double> probs = {1.0 / total, 1.0 / total, std::exp(-1.0) / total};
  const std::vector<double> logprobs = {-lt, -lt, -1.0 - lt};
  expect_list(list_of<TypeParam>(row, filters(3, 1.0f), 2), {1, 3}, 3, probs, logprobs);
  expect_list(list_of<TypeParam>(row, filters(3, 1.0f), 5), {1, 3, 2}, 3, probs, logprobs);
  expect_list(list_of<TypeParam>(row, filters(3, 1.0f), 1), {1}, 3, probs, logprobs);
  // No filter: the head of the whole softmax; count = every candidate.
  const double all = 2.0 + std::exp(-1.0) + std::exp(-2.0);
  expect_list(list_of<TypeParam>(row, RowFilters{}, 2), {1, 3}, 4, {1.0 / all, 1.0 / all},
              {-std::log(all), -std::log(all)});
  // Greedy: one entry, probability 1. No candidate: count 0, all padding.
  expect_list(list_of<TypeParam>(row, temperature(0.0f), 3), {1}, 1, {1.0}, {0.0});
  expect_list(list_of<TypeParam>({-inf, qtest::nan_value()}, filters(1, 0.5f), 2), {}, 0, {},
              {});
  // Empty probs and logprobs Views: skipped, the ids and counts unchanged.
  const SampleBatch b = SampleBatch::one(row, filters(3, 1.0f));
  // (A named vector: nvcc 11.8 cannot deduce a braced list's type here.)
  const std::vector<std::pair<bool, bool>> outputs = {{false, false}, {true, false},
                                                      {false, true}};
  for (auto const& [with_p, with_lp] : outputs) {
    const Candidates c = qtest::run_candidates<TypeParam>(b, 4, {}, qtest::Memory::workspace,
                                                          with_p, with_lp);
    EXPECT_EQ(c.ids, (std::vector<int>{1, 3, 2, -1}));
    EXPECT_EQ(c.counts, (std::vector<int>{3}));
    EXPECT_TRUE(qtest::check_candidates(b, c));
  }
}

// 30. SamplingParams: absent members are off; {k, p} alone is the (k, p)
//     call, bitwise; min-p 0 and T = 1 change nothing.
TYPED_TEST(SemanticsSampling, Case30_ParamsMatchKPOverloads) {
  qtest::Batch kp(64, 7000);
  std::mt19937_64 rng(30);
  for (std::int64_t r = 0; r < kp.batch; ++r) {
    qrita::synthetic::fill_row(kp.row(r), kp.vocab, qrita::synthetic::Shape::lm, rng);
    kp.k[std::size_t(r)] = r % 3 == 0 ? 0 : 1 + int(rng() % 200);
    kp.p[std::size_t(r)] = r % 3 == 1 ? 1.0f : 0.5f + float(rng() % 50) / 100.0f;
  }
  kp.row(5)[100] = qtest::nan_value();
  const qtest::Result old = qtest::run<TypeParam>(kp);
  SampleBatch b(kp.batch, kp.vocab);
  b.logits = kp.logits;
  for (std::int64_t r = 0; r < b.batch; ++r)
    b.filters[std::size_t(r)] = filters(kp.k[std::size_t(r)], kp.p[std::size_t(r)]);
  using qtest::same_bits;
  EXPECT_TRUE(same_bits(qtest::run_mask<TypeParam>(b), old.logits)) << "all four members";
  b.present.min_p = b.present.temperature = false;
  EXPECT_TRUE(same_bits(qtest::run_mask<TypeParam>(b), old.logits)) << "k and p only";
  // Nothing present (or only T): every row is left as it is (NaN included).
  b.present = qtest::Present{false, false, false, false};
  EXPECT_TRUE(same_bits(qtest::run_mask<TypeParam>(b), kp.logits));
  b.present.temperature = true;
  for (auto& f : b.filters) f.temperature = 0.7f;
  EXPECT_TRUE(same_bits(qtest::run_mask<TypeParam>(b), kp.logits));
  // Absent temperature is T = 1 even where the (unpassed) values say 0.
  for (auto& f : b.filters) f.temperature = 0.0f;
  b.present = qtest::Present{true, true, true, false};
  EXPECT_TRUE(same_bits(qtest::run_mask<TypeParam>(b), old.logits));
}

// 31. Parameter Views of any stride (LayoutStride columns of a table).
TYPED_TEST(SemanticsSampling, Case31_StridedParamViews) {
  using mem = typename TypeParam::memory_space;
  SampleBatch b(40, 3000);
  std::mt19937_64 rng(31);
  for (std::int64_t r = 0; r < b.batch; ++r) {
    qrita::synthetic::fill_row(b.row(r), b.vocab, qrita::synthetic::Shape::lm, rng);
    b.filters[std::size_t(r)] = filters(int(rng() % 100), 0.6f + float(rng() % 40) / 100.0f,
                                        float(rng() % 3) * 0.05f, 0.5f + float(rng() % 3) * 0.5f);
  }
  const std::vector<float> expect = qtest::run_mask<TypeParam>(b);
  EXPECT_TRUE(qtest::check_mask(b, expect));
  qtest::DeviceBatch<TypeParam> d(b);
  // Each filter a column of a [batch][3] table: stride 3.
  Kokkos::View<int**, Kokkos::LayoutRight, mem> ki("ki", 40, 3);
  Kokkos::View<float**, Kokkos::LayoutRight, mem> table("table", 40, 3), t2("t2", 40, 3);
  auto ki_h = Kokkos::create_mirror_view(ki);
  auto tb_h = Kokkos::create_mirror_view(table);
  auto t2_h = Kokkos::create_mirror_view(t2);
  for (std::size_t r = 0; r < 40; ++r) {
    ki_h(r, 1) = b.filters[r].k;
    tb_h(r, 0) = b.filters[r].p;
    tb_h(r, 2) = b.filters[r].min_p;
    t2_h(r, 1) = b.filters[r].temperature;
    ki_h(r, 0) = ki_h(r, 2) = -99;  // neighbours that must not be read
    tb_h(r, 1) = t2_h(r, 0) = t2_h(r, 2) = qtest::nan_value();
  }
  Kokkos::deep_copy(ki, ki_h);
  Kokkos::deep_copy(table, tb_h);
  Kokkos::deep_copy(t2, t2_h);
  qrita::SamplingParams<mem> params;
  params.k           = Kokkos::subview(ki, Kokkos::ALL, 1);
  params.p           = Kokkos::subview(table, Kokkos::ALL, 0);
  params.min_p       = Kokkos::subview(table, Kokkos::ALL, 2);
  params.temperature = Kokkos::subview(t2, Kokkos::ALL, 1);
  ASSERT_EQ(params.k.stride(0), 3u);
  qrita::sample_mask(TypeParam(), d.logits, params);
  TypeParam().fence();
  EXPECT_TRUE(qtest::same_bits(d.host_logits(), expect));
}

}  // namespace
