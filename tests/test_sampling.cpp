// SPDX-License-Identifier: Apache-2.0
// sample_tokens and candidate_list against the definition:
//  * candidate lists against the oracle's kept distribution (ids exactly,
//    probabilities within 1e-6, log-probabilities within 1e-5), capacities
//    below and above the kept count, padding, skipped outputs;
//  * the sampled frequencies against the definition's probabilities by a
//    chi-square goodness-of-fit test, which is itself shown to reject a
//    planted bias of 2% of the mass or a dropped entry;
//  * determinism: a row's token and list are bitwise the same alone, at any
//    position among any neighbours, with any team size and league, split or
//    not, with or without a workspace, on every run;
//  * a randomized test with per-row temperature, min-p, k and p on float,
//    bfloat16 and float16 logits against the oracle;
//  * malformed calls: rejected before anything is written.
// QRITA_TEST_SEED=<n> replays the randomized test with another seed.

#include "support_sampling.hpp"
#include "synthetic.hpp"

#include <gmock/gmock.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>
#include <random>
#include <set>

namespace {

using qtest::Candidates;
using qtest::inf;
using qtest::Memory;
using qtest::RowFilters;
using qtest::SampleBatch;

template <class Exec>
class Sampling : public ::testing::Test {};
TYPED_TEST_SUITE(Sampling, qtest::Backends, qtest::BackendName);

RowFilters filters(int k, float p, float min_p = 0.0f, float t = 1.0f) {
  RowFilters f;
  f.k           = k;
  f.p           = p;
  f.min_p       = min_p;
  f.temperature = t;
  return f;
}

using qrita::detail::mix64;  // splitmix64's finaliser

// =============================================================================
// Candidate lists against the oracle

TYPED_TEST(Sampling, CandidateListsMatchTheOracle) {
  SampleBatch b(24, 5000);
  std::mt19937_64 rng(40);
  using qrita::synthetic::Shape;
  const Shape shapes[] = {Shape::lm, Shape::ties, Shape::peaked, Shape::spread};
  for (std::int64_t r = 0; r < b.batch; ++r) {
    qrita::synthetic::fill_row(b.row(r), b.vocab, shapes[r % 4], rng);
    switch (r % 6) {
      case 0: b.filters[std::size_t(r)] = filters(20, 1.0f); break;          // 20 kept
      case 1: b.filters[std::size_t(r)] = filters(500, 1.0f, 0.0f, 0.8f); break;
      case 2: b.filters[std::size_t(r)] = filters(0, 0.9f, 0.0f, 1.3f); break;
      case 3: b.filters[std::size_t(r)] = filters(60, 0.95f, 0.02f, 0.7f); break;
      case 4: b.filters[std::size_t(r)] = filters(0, 1.0f, 0.0f, 0.0f); break;  // greedy
      default: b.filters[std::size_t(r)] = filters(0, 1.0f, 0.0f, 2.0f);       // untouched
    }
  }
  // Capacities below and above the kept counts (1, 20, 500, whole rows).
  for (std::int64_t C : {1, 7, 20, 64, 600}) {
    const Candidates c = qtest::run_candidates<TypeParam>(b, C);
    EXPECT_TRUE(qtest::check_candidates(b, c)) << "C " << C;
    // Counts are exact where the definition leaves no freedom (no top-p).
    for (std::int64_t r = 0; r < b.batch; ++r) {
      const std::int64_t expect = r % 6 == 0 ? 20 : r % 6 == 1 ? 500 : r % 6 == 4 ? 1 :
                                  r % 6 == 5 ? 5000 : -1;
      if (expect >= 0) {
        EXPECT_EQ(c.counts[std::size_t(r)], expect) << "row " << r;
      }
    }
    // Without a workspace and without the outputs it may skip: the same ids.
    const Candidates bare =
        qtest::run_candidates<TypeParam>(b, C, {}, Memory::none, false, false);
    EXPECT_EQ(bare.ids, c.ids) << "C " << C;
    EXPECT_EQ(bare.counts, c.counts) << "C " << C;
  }
}

// =============================================================================
// Chi-square goodness of fit

// Q(a, x), the regularized upper incomplete gamma function (series below
// a + 1, Lentz's continued fraction above).
double gamma_q(double a, double x) {
  if (!(x > 0.0)) return 1.0;
  const double log_prefix = -x + a * std::log(x) - std::lgamma(a);
  if (x < a + 1.0) {
    double term = 1.0 / a, sum = term, ap = a;
    for (int n = 0; n < 1000000; ++n) {
      ap += 1.0;
      term *= x / ap;
      sum += term;
      if (std::abs(term) < std::abs(sum) * 1e-16) break;
    }
    return std::max(0.0, 1.0 - sum * std::exp(log_prefix));
  }
  const double tiny = 1e-300;
  double b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b, h = d;
  for (int i = 1; i < 1000000; ++i) {
    const double an = -double(i) * (double(i) - a);
    b += 2.0;
    d = an * d + b;
    if (std::abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::abs(c) < tiny) c = tiny;
    d            = 1.0 / d;
    const double del = d * c;
    h *= del;
    if (std::abs(del - 1.0) < 1e-16) break;
  }
  return std::exp(log_prefix) * h;
}

// P(chi-square with dof degrees of freedom > statistic).
double chi_square_sf(double statistic, double dof) { return gamma_q(dof / 2.0, statistic / 2.0); }

struct Fit {
  double statistic = 0.0;
  int dof          = 0;
  double p_value   = 1.0;
  std::int64_t outside = 0;  // draws outside the kept set (or of probability 0)
};

// The chi-square test of draws (token ids) against the distribution d. Bins
// with an expected count below 5 are pooled, smallest first.
Fit chi_square(qrita::oracle::Distribution const& d, std::vector<int> const& draws) {
  Fit fit;
  std::map<std::int64_t, std::size_t> slot;
  for (std::size_t j = 0; j < d.ids.size(); ++j) slot[d.ids[j]] = j;
  std::vector<double> observed(d.ids.size(), 0.0);
  for (int t : draws) {
    auto it = slot.find(t);
    if (it == slot.end() || d.prob[it->second] == 0.0) {
      ++fit.outside;
      continue;
    }
    observed[it->second] += 1.0;
  }
  const double n = double(draws.size());
  std::vector<std::size_t> by_expected(d.ids.size());
  std::iota(by_expected.begin(), by_expected.end(), std::size_t(0));
  std::sort(by_expected.begin(), by_expected.end(),
            [&](std::size_t a, std::size_t b) { return d.prob[a] < d.prob[b]; });
  std::vector<std::pair<double, double>> bins;  // (expected, observed)
  double e = 0.0, o = 0.0;
  for (std::size_t j : by_expected) {
    if (d.prob[j] == 0.0) continue;
    e += n * d.prob[j];
    o += observed[j];
    if (e >= 5.0) {
      bins.emplace_back(e, o);
      e = o = 0.0;
    }
  }
  if (e > 0.0) {  // a remainder below 5 joins the last bin
    if (bins.empty()) {
      bins.emplace_back(e, o);
    } else {
      bins.back().first += e;
      bins.back().second += o;
    }
  }
  for (auto const& [exp_count, obs] : bins)
    fit.statistic += (obs - exp_count) * (obs - exp_count) / exp_count;
  fit.dof     = int(bins.size()) - 1;
  fit.p_value = fit.dof > 0 ? chi_square_sf(fit.statistic, double(fit.dof)) : 1.0;
  return fit;
}

// A correct implementation passes with probability 1 - 1e-6; the planted
// biases below give p-values below 1e-10.
constexpr double min_p_value = 1e-6;

::testing::AssertionResult fits(qrita::oracle::Distribution const& d,
                                std::vector<int> const& draws) {
  const Fit f = chi_square(d, draws);
  if (f.outside > 0)
    return ::testing::AssertionFailure() << f.outside << " of " << draws.size()
                                         << " draws are outside the kept set";
  if (!(f.p_value > min_p_value))
    return ::testing::AssertionFailure() << "chi-square " << f.statistic << " with " << f.dof
                                         << " degrees of freedom: p-value " << f.p_value;
  return ::testing::AssertionSuccess() << "chi-square " << f.statistic << ", dof " << f.dof
                                       << ", p-value " << f.p_value;
}

// Draws from probabilities `prob` over `ids` on the host (std::mt19937_64,
// inverse CDF in double): the control, and the planted biases.
std::vector<int> host_draws(std::vector<std::int64_t> const& ids, std::vector<double> const& prob,
                            std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> cdf(prob.size());
  std::partial_sum(prob.begin(), prob.end(), cdf.begin());
  std::vector<int> out;
  for (std::int64_t i = 0; i < n; ++i) {
    const double x = u(rng) * cdf.back();
    const std::size_t j =
        std::size_t(std::upper_bound(cdf.begin(), cdf.end(), x) - cdf.begin());
    out.push_back(int(ids[std::min(j, ids.size() - 1)]));
  }
  return out;
}

TEST(ChiSquare, SurvivalFunctionMatchesClosedForms) {
  // Even dof 2m: Q(m, x/2) = e^(-x/2) sum_{j<m} (x/2)^j / j! (Poisson), summed
  // in log space; dof 1: erfc(sqrt(x/2)).
  const auto even = [](double x, int dof) {
    const double h = x / 2.0;
    double sum = 0.0;
    for (int j = 0; j < dof / 2; ++j) sum += std::exp(-h + double(j) * std::log(h) - std::lgamma(j + 1.0));
    return sum;
  };
  for (int dof : {2, 4, 10, 50, 400, 2000})
    for (double ratio : {0.3, 0.8, 1.0, 1.2, 1.5, 2.5}) {
      const double x = ratio * double(dof), want = even(x, dof);
      EXPECT_NEAR(chi_square_sf(x, double(dof)), want, 1e-10 + 1e-8 * want)
          << "dof " << dof << " x " << x;
    }
  for (double x : {0.1, 1.0, 3.841458820694124, 10.0, 30.0, 60.0})
    EXPECT_NEAR(chi_square_sf(x, 1.0), std::erfc(std::sqrt(x / 2.0)),
                1e-12 + 1e-8 * std::erfc(std::sqrt(x / 2.0)))
        << "x " << x;
  EXPECT_NEAR(chi_square_sf(3.841458820694124, 1.0), 0.05, 1e-9);
  EXPECT_NEAR(chi_square_sf(18.307038053275146, 10.0), 0.05, 1e-9);
}

// The test can fail: a host sampler with the right probabilities passes, the
// same sampler with 2% of the mass moved between two tied entries, or with
// the last kept entry dropped, or with one draw outside the kept set, fails.
TEST(ChiSquare, RejectsAPlantedBias) {
  // Ties: {2, 2, 2, 1, 1, 1, 1, 0, 0, -1}: each 2 holds 0.2017.
  const std::vector<float> row = {2.0f, 2.0f, 2.0f, 1.0f, 1.0f, 1.0f, 1.0f, 0.0f, 0.0f, -1.0f};
  const auto d = qrita::oracle::kept_distribution(row.data(), 10, RowFilters{});
  const std::int64_t n = 20000;
  EXPECT_TRUE(fits(d, host_draws(d.ids, d.prob, n, 1)));
  EXPECT_TRUE(fits(d, host_draws(d.ids, d.prob, n, 2)));
  std::vector<double> moved = d.prob;
  moved[0] += 0.02;
  moved[1] -= 0.02;
  EXPECT_FALSE(fits(d, host_draws(d.ids, moved, n, 1)));
  EXPECT_LT(chi_square(d, host_draws(d.ids, moved, n, 1)).p_value, 1e-10);
  // Top-k 8 drops entries 7 and 8 of the order (the two zeros); a sampler
  // that also drops the last one it keeps (probability 0.0264) fails.
  const auto k8 = qrita::oracle::kept_distribution(row.data(), 10, filters(8, 1.0f));
  ASSERT_EQ(k8.ids.size(), 8u);
  std::vector<double> dropped = k8.prob;
  dropped.back() = 0.0;
  EXPECT_TRUE(fits(k8, host_draws(k8.ids, k8.prob, n, 3)));
  EXPECT_FALSE(fits(k8, host_draws(k8.ids, dropped, n, 3)));
  EXPECT_LT(chi_square(k8, host_draws(k8.ids, dropped, n, 3)).p_value, 1e-10);
  // One draw of an entry top-k removed.
  std::vector<int> draws = host_draws(k8.ids, k8.prob, n, 4);
  draws[100] = 8;
  EXPECT_FALSE(fits(k8, draws));
}

// The distributions sampled on the device: ties, a dominant token, a long
// flat tail, bf16 ties, fp16 with temperature and min-p, T = +inf with top-k,
// and every filter active at once.
struct Case {
  std::string name;
  std::vector<float> row;  // exact values of the storage type
  RowFilters f;
  int type = 0;  // 0 float, 1 bfloat16, 2 float16
};

std::vector<Case> chi_square_cases() {
  std::vector<Case> cases;
  const float nan = qtest::nan_value();
  cases.push_back({"ties",
                   {2, 2, 2, 1, 1, 1, 1, 0, 0, -inf, nan, -1, -1, -1, -1, -2},
                   RowFilters{}, 0});
  {
    std::vector<float> row(32);
    std::mt19937_64 rng(1);
    for (float& x : row) x = std::uniform_real_distribution<float>(-2.0f, 0.0f)(rng);
    row[13] = 6.0f;  // about 97% of the mass
    cases.push_back({"dominant", row, RowFilters{}, 0});
  }
  {
    std::vector<float> row(1000, 0.0f);
    row[500] = 3.0f;  // 2% of the mass; 999 tail entries at 0.1% each
    cases.push_back({"flat tail", row, RowFilters{}, 0});
  }
  {
    std::vector<float> row(256);
    std::mt19937_64 rng(2);
    std::normal_distribution<float> g(0.0f, 1.5f);
    for (float& x : row) x = qtest::round_to<qrita::bfloat16>(g(rng));
    cases.push_back({"bf16 ties, T 0.8", row, filters(0, 1.0f, 0.0f, 0.8f), 1});
  }
  {
    std::vector<float> row(100);
    std::mt19937_64 rng(3);
    std::normal_distribution<float> g(0.0f, 2.0f);
    for (float& x : row) x = qtest::round_to<qrita::float16>(g(rng));
    cases.push_back({"fp16, T 1.5, min-p 0.05", row, filters(0, 1.0f, 0.05f, 1.5f), 2});
  }
  {
    std::vector<float> row(50);
    std::mt19937_64 rng(4);
    for (float& x : row) x = std::uniform_real_distribution<float>(-3.0f, 3.0f)(rng);
    cases.push_back({"T +inf, k 30", row, filters(30, 1.0f, 0.0f, inf), 0});
  }
  {
    std::vector<float> row(512);
    std::mt19937_64 rng(5);
    std::normal_distribution<float> g(0.0f, 1.0f);
    for (float& x : row) x = g(rng);
    cases.push_back({"all filters", row, filters(30, 0.8f, 0.02f, 0.7f), 0});
  }
  return cases;
}

// copies x calls draws of one row: copies with distinct seeds (from a
// fixed master seed), calls with offsets 0, 1, ...
template <class Exec, class T>
std::vector<int> device_draws(Case const& c, std::uint64_t master, std::int64_t copies,
                              std::int64_t calls) {
  SampleBatch b(copies, std::int64_t(c.row.size()));
  for (std::int64_t r = 0; r < copies; ++r) {
    std::copy(c.row.begin(), c.row.end(), b.row(r));
    b.filters[std::size_t(r)] = c.f;
    b.seeds[std::size_t(r)]   = mix64(master + std::uint64_t(r));
  }
  std::vector<int> draws;
  for (std::int64_t call = 0; call < calls; ++call) {
    for (auto& o : b.offsets) o = std::uint64_t(call);
    const std::vector<int> t = qtest::run_tokens<Exec, T>(b);
    draws.insert(draws.end(), t.begin(), t.end());
  }
  return draws;
}

TYPED_TEST(Sampling, Case33_SampledFrequenciesFitTheDefinition) {
  const std::uint64_t master = 0x5eed2026u;
  int index = 0;
  for (Case const& c : chi_square_cases()) {
    const auto d = qrita::oracle::kept_distribution(c.row.data(), std::int64_t(c.row.size()), c.f);
    if (c.name == "all filters") {
      // Each filter must change the set here, and no decision may be near
      // its boundary (so the fp64 set is the device's).
      const auto r = qrita::oracle::evaluate(c.row.data(), std::int64_t(c.row.size()), c.f);
      EXPECT_LT(r.minp_count, std::int64_t(r.order.size()));
      EXPECT_LT(r.topk_count, r.minp_count);
      EXPECT_LT(r.kept, r.topk_count);
      double mass = 0.0;
      for (std::int64_t j = 0; j < r.kept; ++j) mass += r.prob[std::size_t(j)];
      EXPECT_GT(mass - double(c.f.p), 1e-4);
      EXPECT_GT(double(c.f.p) - (mass - r.prob[std::size_t(r.kept - 1)]), 1e-4);
      for (std::int64_t i : r.order)
        EXPECT_GT(std::abs(double(c.row[std::size_t(i)]) - r.minp_cut), 1e-6);
    }
    const std::uint64_t seed = master + 1000003u * std::uint64_t(index++);
    // Under compute-sanitizer: 200 draws, too few for the fit; each must
    // still be a kept entry of non-zero probability.
    const bool few = qtest::under_tool();
    const std::int64_t copies = few ? 200 : 2000, calls = few ? 1 : 10;
    const std::vector<int> draws =
        c.type == 1   ? device_draws<TypeParam, qrita::bfloat16>(c, seed, copies, calls)
        : c.type == 2 ? device_draws<TypeParam, qrita::float16>(c, seed, copies, calls)
                      : device_draws<TypeParam, float>(c, seed, copies, calls);
    if (few) {
      for (int t : draws) ASSERT_TRUE(qtest::check_token_in(d, t, c.name));
      continue;
    }
    const auto fit = fits(d, draws);
    EXPECT_TRUE(fit) << c.name << " (" << d.ids.size() << " kept)";
    std::printf("[ note ] %s (%zu kept): %s\n", c.name.c_str(), d.ids.size(), fit.message());
  }
}

// =============================================================================
// Determinism and batch invariance

constexpr std::int64_t probe_vocab = 20000;

// Probe rows for every kind of filter, with their filters.
SampleBatch probes() {
  using qrita::synthetic::Shape;
  const Shape shapes[] = {Shape::lm, Shape::ties, Shape::spread, Shape::peaked,
                          Shape::sparse, Shape::flat, Shape::lm};
  const RowFilters fs[] = {filters(50, 0.9f, 0.0f, 0.8f), filters(0, 0.95f, 0.05f, 1.2f),
                           filters(0, 1.0f, 0.0f, 1.0f),  filters(10, 1.0f, 0.1f, 2.0f),
                           filters(1000, 0.8f, 0.0f, inf), filters(5, 0.5f, 0.0f, 0.7f),
                           filters(7, 0.9f, 0.5f, 0.0f)};
  SampleBatch b(7, probe_vocab);
  std::mt19937_64 rng(5);
  for (std::int64_t r = 0; r < b.batch; ++r) {
    qrita::synthetic::fill_row(b.row(r), probe_vocab, shapes[r], rng);
    b.filters[std::size_t(r)] = fs[r];
    b.seeds[std::size_t(r)]   = 42u + std::uint64_t(r);
    b.offsets[std::size_t(r)] = 3u * std::uint64_t(r);
  }
  return b;
}

// `count` random neighbours with the probes at positions `at`.
SampleBatch embed(SampleBatch const& probe, std::int64_t count,
                  std::vector<std::int64_t> const& at, std::uint64_t seed) {
  SampleBatch b(count, probe_vocab);
  std::mt19937_64 rng(seed);
  for (std::int64_t r = 0; r < count; ++r) {
    qrita::synthetic::fill_row(b.row(r), probe_vocab, qrita::synthetic::Shape::lm, rng);
    b.filters[std::size_t(r)] = filters(int(rng() % 200), 0.5f + float(rng() % 60) / 100.0f,
                                        float(rng() % 3) * 0.1f, float(rng() % 4) * 0.5f);
    b.seeds[std::size_t(r)]   = rng();
    b.offsets[std::size_t(r)] = rng() % 100;
  }
  for (std::size_t j = 0; j < at.size(); ++j) {
    std::copy(probe.row(std::int64_t(j)), probe.row(std::int64_t(j)) + probe_vocab,
              b.row(at[j]));
    b.filters[std::size_t(at[j])] = probe.filters[j];
    b.seeds[std::size_t(at[j])]   = probe.seeds[j];
    b.offsets[std::size_t(at[j])] = probe.offsets[j];
  }
  return b;
}

SampleBatch single(SampleBatch const& b, std::int64_t r) {
  SampleBatch one(1, b.vocab);
  std::copy(b.row(r), b.row(r) + b.vocab, one.row(0));
  one.filters[0] = b.filters[std::size_t(r)];
  one.seeds[0]   = b.seeds[std::size_t(r)];
  one.offsets[0] = b.offsets[std::size_t(r)];
  return one;
}

// Row r's list (ids, probs, logprobs as bits) of a candidate result.
std::vector<std::uint32_t> list_bits(Candidates const& c, std::int64_t r) {
  std::vector<std::uint32_t> out;
  for (std::int64_t j = 0; j < c.capacity; ++j) {
    const std::size_t at = std::size_t(r * c.capacity + j);
    out.push_back(std::uint32_t(c.ids[at]));
    out.push_back(qtest::bits(c.probs[at]));
    out.push_back(qtest::bits(c.logprobs[at]));
  }
  out.push_back(std::uint32_t(c.counts[std::size_t(r)]));
  return out;
}

TYPED_TEST(Sampling, Case32_TokensAndListsAreBatchInvariant) {
  const SampleBatch probe = probes();
  const std::int64_t C    = 48;
  std::vector<int> alone_token;
  std::vector<std::vector<std::uint32_t>> alone_list;
  for (std::int64_t j = 0; j < probe.batch; ++j) {
    const SampleBatch one = single(probe, j);
    alone_token.push_back(qtest::run_tokens<TypeParam>(one)[0]);
    EXPECT_TRUE(qtest::check_token(one, 0, alone_token.back())) << "probe " << j;
    const Candidates c = qtest::run_candidates<TypeParam>(one, C);
    EXPECT_TRUE(qtest::check_candidates(one, c)) << "probe " << j;
    alone_list.push_back(list_bits(c, 0));
  }
  // Team sizes: 1 and the widest power of two the backend allows; leagues
  // of 1 and 3 teams; rows split across 3 teams; no workspace. Under
  // compute-sanitizer, the default launch and split rows only.
  const int widest = qrita::detail::floor_power_of_two(
      int(Kokkos::TeamPolicy<TypeParam>(TypeParam(), 1, 1)
              .team_size_max(qrita::detail::RowKernel<TypeParam>{}, Kokkos::ParallelForTag())));
  std::vector<std::pair<std::string, qrita::Options>> configs;
  configs.emplace_back("default", qrita::Options{});
  if (!qtest::under_tool()) {
    for (int ts : {1, widest}) {
      qrita::Options o;
      o.team_size = ts;
      configs.emplace_back("team size " + std::to_string(ts), o);
    }
    qrita::Options o;
    o.max_teams = 1;
    configs.emplace_back("league of 1", o);
    o.max_teams = 3;
    configs.emplace_back("league of 3", o);
  }
  {
    qrita::Options o;
    o.teams_per_row = 3;
    configs.emplace_back("rows split across 3 teams", o);
  }
  const std::vector<std::int64_t> at_a = {0, 1, 60, 61, 118, 17, 119};
  const std::vector<std::int64_t> at_b = {119, 3, 2, 80, 0, 40, 1};
  const SampleBatch big_a = embed(probe, 120, at_a, 1);
  const SampleBatch big_b = embed(probe, 120, at_b, 2);
  for (auto const& [what, opts] : configs) {
    for (Memory memory : {Memory::workspace, Memory::none}) {
      if (memory == Memory::none && opts.teams_per_row > 1) continue;  // splits need one
      const std::string how = what + (memory == Memory::none ? ", no workspace" : "");
      const std::vector<int> together = qtest::run_tokens<TypeParam>(probe, opts, memory);
      const std::vector<int> in_a     = qtest::run_tokens<TypeParam>(big_a, opts, memory);
      const std::vector<int> in_b     = qtest::run_tokens<TypeParam>(big_b, opts, memory);
      const Candidates list_a = qtest::run_candidates<TypeParam>(big_a, C, opts, memory);
      for (std::int64_t j = 0; j < probe.batch; ++j) {
        const std::size_t uj = std::size_t(j);
        EXPECT_EQ(together[uj], alone_token[uj]) << "probe " << j << ", " << how;
        EXPECT_EQ(in_a[std::size_t(at_a[uj])], alone_token[uj]) << "probe " << j << ", " << how;
        EXPECT_EQ(in_b[std::size_t(at_b[uj])], alone_token[uj]) << "probe " << j << ", " << how;
        EXPECT_EQ(list_bits(list_a, at_a[uj]), alone_list[uj]) << "probe " << j << ", " << how;
      }
      // Every neighbour's token is in its kept set too.
      for (std::int64_t r = 0; r < big_b.batch; r += 13)
        EXPECT_TRUE(qtest::check_token(big_b, r, in_b[std::size_t(r)])) << how;
    }
  }
  // Repeated runs: bitwise the same.
  const std::vector<int> first = qtest::run_tokens<TypeParam>(big_a);
  for (int rerun = 0; rerun < 2; ++rerun)
    EXPECT_EQ(qtest::run_tokens<TypeParam>(big_a), first);
}

// The ranked draw (draw.hpp: a kept set of up to 128 entries ranked pair by
// pair, its weight W summed by every thread) and the pivot search it
// stands in for give the same token, bit for bit, since they use the same
// integers. The search is what a call without the histogram takes (the
// ranked draw borrows the histogram's scratch: on chip for one team a row,
// the row's histogram in the workspace for rows split across teams). Kept
// sets of 1 to 129 entries, ties, near-flat rows, top-p and temperatures
// among them.
TYPED_TEST(Sampling, RankedDrawGivesTheSearchsToken) {
  using qrita::synthetic::Shape;
  const Shape shapes[] = {Shape::lm, Shape::ties, Shape::spread, Shape::peaked, Shape::flat};
  const int ks[]       = {1, 2, 5, 17, 64, 127, 128, 129};
  SampleBatch b(40, probe_vocab);
  std::mt19937_64 rng(11);
  for (std::int64_t r = 0; r < b.batch; ++r) {
    qrita::synthetic::fill_row(b.row(r), probe_vocab, shapes[r % 5], rng);
    b.filters[std::size_t(r)] =
        filters(ks[r % 8], r % 3 == 0 ? 0.9f : 1.0f, 0.0f, r % 4 == 1 ? 1.5f : 1.0f);
    b.seeds[std::size_t(r)] = rng();
  }
  b.present.min_p = false;  // (min-p rows are never split)
  // One team a row, named: without min-p values a device's default plan
  // may split this batch.
  qrita::Options whole;
  whole.teams_per_row = 1;
  qrita::Options searched = whole;
  searched.histogram      = false;
  // Rows split across teams: split_scan's deciding team draws, ranking in
  // the row's histogram in the workspace.
  qrita::Options split;
  split.teams_per_row = 3;
  const int offsets   = qtest::under_tool() ? 1 : 4;
  for (int offset = 0; offset < offsets; ++offset) {
    for (auto& o : b.offsets) o = std::uint64_t(offset);
    const std::vector<int> ranked = qtest::run_tokens<TypeParam>(b, whole);
    const std::vector<int> search = qtest::run_tokens<TypeParam>(b, searched);
    const std::vector<int> split_ranked = qtest::run_tokens<TypeParam>(b, split);
    for (std::int64_t r = 0; r < b.batch; ++r) {
      const std::size_t ur = std::size_t(r);
      EXPECT_EQ(ranked[ur], search[ur]) << "row " << r << " (" << qtest::describe(b.effective(r))
                                        << "), offset " << offset;
      EXPECT_EQ(split_ranked[ur], search[ur]) << "split, row " << r << ", offset " << offset;
      EXPECT_TRUE(qtest::check_token(b, r, ranked[ur])) << "offset " << offset;
    }
  }
}

TYPED_TEST(Sampling, SeedsAndOffsetsChangeTheDraw) {
  // A near-flat row of 20000 (1e-6 spreads): 64 seeds should give about 64
  // distinct tokens (a repeat among 64 draws has probability 0.1), not one.
  SampleBatch b(64, probe_vocab);
  std::mt19937_64 rng(6);
  qrita::synthetic::fill_row(b.row(0), probe_vocab, qrita::synthetic::Shape::spread, rng);
  for (std::int64_t r = 1; r < 64; ++r) std::copy(b.row(0), b.row(0) + probe_vocab, b.row(r));
  for (std::int64_t r = 0; r < 64; ++r) b.seeds[std::size_t(r)] = 9000u + std::uint64_t(r);
  const std::vector<int> by_seed = qtest::run_tokens<TypeParam>(b);
  EXPECT_GE(std::set<int>(by_seed.begin(), by_seed.end()).size(), 60u);
  // One seed, 64 offsets.
  for (std::int64_t r = 0; r < 64; ++r) {
    b.seeds[std::size_t(r)]   = 9000u;
    b.offsets[std::size_t(r)] = std::uint64_t(r);
  }
  const std::vector<int> by_offset = qtest::run_tokens<TypeParam>(b);
  EXPECT_GE(std::set<int>(by_offset.begin(), by_offset.end()).size(), 60u);
  // Seed s at offset o is not seed o at offset s (the key is not symmetric).
  for (std::int64_t r = 0; r < 64; ++r) {
    b.seeds[std::size_t(r)]   = std::uint64_t(r);
    b.offsets[std::size_t(r)] = 9000u;
  }
  const std::vector<int> swapped = qtest::run_tokens<TypeParam>(b);
  int same = 0;
  for (std::size_t r = 0; r < 64; ++r) same += swapped[r] == by_offset[r] ? 1 : 0;
  EXPECT_LT(same, 8);
}

// Kept sets larger than every candidate buffer (top-p on randn, uniform and
// temperature-2 rows: nuclei of thousands of entries). With a workspace the
// sampler and the list defer such rows to their second kernel, which cuts
// them on the top-p boundary's buckets and reads the buckets holding the
// draw's target or the list's first C entries (RowKernel's Deferred:
// draw_partial, list_partial; with room in the tier, the list gathers
// its buckets in the boundary's read: list_with_cut); without one,
// or when those checks fail, the
// row is searched whole (write_token, write_list). Tokens and lists must be
// bitwise the same on every path: default buffers, small buffers (the
// boundary's buckets in a different buffer on different rows), split rows,
// no workspace, and the whole-row search (no truncation).
template <class Exec, class T>
void large_kept_sets_agree() {
  using qrita::synthetic::CounterShape;
  const std::int64_t vocab = 32768;
  const std::vector<CounterShape> shapes = {CounterShape::randn, CounterShape::uniform,
                                            CounterShape::temp2, CounterShape::ordered,
                                            CounterShape::serving_bf16};
  const std::vector<RowFilters> fs = {filters(0, 0.5f), filters(0, 0.9f),
                                      filters(0, 0.99f, 0.0f, 0.7f), filters(0, 0.8f, 0.0f, 2.0f),
                                      filters(0, 0.95f, 0.001f), filters(20000, 0.9f)};
  SampleBatch b(std::int64_t(shapes.size() * fs.size()), vocab);
  for (std::size_t i = 0; i < shapes.size(); ++i)
    for (std::size_t j = 0; j < fs.size(); ++j) {
      const std::int64_t r = std::int64_t(i * fs.size() + j);
      qrita::synthetic::counter_row(b.row(r), vocab, shapes[i], 7, r);
      for (std::int64_t c = 0; c < vocab; ++c) b.row(r)[c] = qtest::round_to<T>(b.row(r)[c]);
      b.filters[std::size_t(r)] = fs[j];
    }
  const std::int64_t C = 64;
  // Kept sets far larger than the buffers; 512 and 128 entries put the
  // top-p boundary's buckets inside a buffer on different rows.
  qrita::Options small;
  small.candidate_capacity = 512;
  small.tier_capacity      = 0;
  qrita::Options smaller = small;
  smaller.candidate_capacity = 128;
  qrita::Options split = small;
  split.teams_per_row  = 3;
  // So many teams per row that they take more than one wave on a device:
  // the deferred rows' buckets are then planned by a launch of their own
  // (detail::LaunchArrangement::split_plans_apart); with 3 teams, on a device, by each
  // team (on a host with few threads, by the launch in both). So the
  // deferred rows are finished by split_deferred_finish at 40 teams, and
  // on CUDA inside split_gather at 3 (detail::LaunchArrangement::split_finish_in_gather).
  qrita::Options split_wide = small;
  split_wide.teams_per_row  = 40;
  // A tier beside the small buffer: the list's second kernel gathers its
  // buckets in the same read as the boundary's, into the tier.
  qrita::Options tiered = small;
  tiered.tier_capacity  = 2000;
  qrita::Options whole;
  whole.sigma_truncation = false;
  // A call given min-p values is never split: the split configurations run
  // on the same batch without them (`plain`), against its own reference.
  SampleBatch plain = b;
  plain.present.min_p = false;
  qrita::Options split_default;
  split_default.teams_per_row = 3;
  struct Config {
    std::string what;
    qrita::Options opts;
    Memory memory;
    bool plain;
  };
  const std::vector<Config> configs = {
      {"buffers of 512", small, Memory::workspace, false},
      {"buffers of 128", smaller, Memory::workspace, false},
      {"buffers of 512 and a tier of 2000", tiered, Memory::workspace, false},
      {"buffers of 512, split rows", split, Memory::workspace, true},
      {"buffers of 512, rows split across 40 teams", split_wide, Memory::workspace, true},
      {"split rows", split_default, Memory::workspace, true},
      {"no workspace", qrita::Options{}, Memory::none, false},
      {"no truncation", whole, Memory::workspace, false}};
  // Under compute-sanitizer, one offset of the three.
  const std::vector<std::uint64_t> offsets =
      qtest::under_tool() ? std::vector<std::uint64_t>{0u} : std::vector<std::uint64_t>{0u, 1u, 2u};
  for (std::uint64_t offset : offsets) {
    std::vector<int> ref_tokens[2];
    Candidates ref_list[2];
    for (int i = 0; i < 2; ++i) {
      SampleBatch& on = i == 0 ? b : plain;
      for (auto& o : on.offsets) o = offset;
      ref_tokens[i] = qtest::run_tokens<Exec, T>(on);
      ref_list[i]   = qtest::run_candidates<Exec, T>(on, C);
      ASSERT_TRUE(qtest::check_candidates(on, ref_list[i]));
      for (std::int64_t r = 0; r < on.batch; ++r)
        ASSERT_TRUE(qtest::check_token(on, r, ref_tokens[i][std::size_t(r)])) << "row " << r;
    }
    for (auto const& [what, opts, memory, on_plain] : configs) {
      const SampleBatch& on = on_plain ? plain : b;
      const int i           = on_plain ? 1 : 0;
      const std::vector<int> tokens = qtest::run_tokens<Exec, T>(on, opts, memory);
      const Candidates list         = qtest::run_candidates<Exec, T>(on, C, opts, memory);
      for (std::int64_t r = 0; r < on.batch; ++r) {
        const std::string at = std::string(qtest::type_name<T>()) + ", " + what + ", row " +
                               std::to_string(r) + " (" + qtest::describe(on.effective(r)) +
                               "), offset " + std::to_string(offset);
        EXPECT_EQ(tokens[std::size_t(r)], ref_tokens[i][std::size_t(r)]) << at;
        EXPECT_EQ(list_bits(list, r), list_bits(ref_list[i], r)) << at;
      }
    }
  }
}

TYPED_TEST(Sampling, LargeKeptSetsGiveTheSameTokensAndListsOnEveryPath) {
  large_kept_sets_agree<TypeParam, float>();
  large_kept_sets_agree<TypeParam, qrita::bfloat16>();
}

// One workspace for a sequence of calls: each call leaves the workspace's
// row state (histograms, counters, flags) clear for the next, whichever
// launches it ran (split_gather's clearing, or split_deferred_finish's
// after the deferred rows' launches, or, fused on CUDA, split_gather's for
// those rows too), so every call,
// in turn with the others on one workspace, gives what it gives on a fresh
// one. Rows split across teams and not; with p values (randn rows whose
// top-p sets pass the tier: deferred) and without.
TYPED_TEST(Sampling, OneWorkspaceForASequenceOfCalls) {
  const std::int64_t B = 6, V = 20000, C = 64;
  SampleBatch with_p(B, V);
  std::mt19937_64 rng(34);
  const std::vector<RowFilters> fs = {filters(10, 1.0f),          filters(0, 0.9f),
                                      filters(50, 0.9f, 0.0f, 0.8f), filters(0, 0.9f),
                                      filters(0, 0.95f, 0.0f, 1.5f), filters(1000, 1.0f, 0.0f, 1.2f)};
  for (std::int64_t r = 0; r < B; ++r) {
    if (r == 3 || r == 4)
      qrita::synthetic::counter_row(with_p.row(r), V, qrita::synthetic::CounterShape::randn, 3, r);
    else
      qrita::synthetic::lm_row(with_p.row(r), V, rng);
    with_p.filters[std::size_t(r)] = fs[std::size_t(r)];
  }
  with_p.present.min_p = false;  // (min-p rows are never split)
  SampleBatch k_only = with_p;
  k_only.present.p   = false;
  qrita::Options whole, split;
  whole.candidate_capacity = split.candidate_capacity = 4096;
  whole.tier_capacity = split.tier_capacity = 2000;
  split.teams_per_row = 3;
  const TypeParam space;
  // (Named arrays, not braced lists: nvcc 11.8 cannot deduce the range of
  // a braced list of pairs.)
  const std::pair<const char*, qrita::Options> layouts[] = {
      {"one team a row", whole}, {"rows split across 3 teams", split}};
  const std::pair<const char*, SampleBatch const*> batches[] = {{"with p", &with_p},
                                                                {"k only", &k_only}};
  for (auto const& [what, opts] : layouts) {
    for (auto const& [which, b] : batches) {
      SCOPED_TRACE(std::string(what) + ", " + which);
      const std::vector<int> tokens    = qtest::run_tokens<TypeParam>(*b, opts);
      const Candidates list            = qtest::run_candidates<TypeParam>(*b, C, opts);
      const std::vector<float> masked  = qtest::run_mask<TypeParam>(*b, opts);
      // The last call's workspace is made for a larger batch: its rows'
      // records (counted from its end) lie elsewhere than in the first's.
      const qrita::Workspace<TypeParam> ws(space, B, V, opts);
      const qrita::Workspace<TypeParam> wider(space, 3 * B + 1, V, opts);
      for (int call = 0; call < 4; ++call) {
        SCOPED_TRACE("call " + std::to_string(call) + (call < 3 ? " on the shared workspace"
                                                                : " on a wider workspace"));
        const qrita::Workspace<TypeParam>* on = call < 3 ? &ws : &wider;
        EXPECT_EQ(qtest::run_tokens<TypeParam>(*b, opts, Memory::workspace, on), tokens);
        const Candidates again = qtest::run_candidates<TypeParam>(
            *b, C, opts, Memory::workspace, true, true, on);
        for (std::int64_t r = 0; r < B; ++r)
          EXPECT_EQ(list_bits(again, r), list_bits(list, r)) << "row " << r;
        EXPECT_TRUE(qtest::same_bits(
            qtest::run_mask<TypeParam>(*b, opts, Memory::workspace, on), masked));
      }
    }
  }
}

// =============================================================================
// Randomized: per-row temperature, min-p, k and p; float, bf16 and fp16

std::uint64_t base_seed() {
  const char* s = std::getenv("QRITA_TEST_SEED");
  return s ? std::strtoull(s, nullptr, 10) : 20261123u;
}

RowFilters random_filters(std::mt19937_64& rng, std::int64_t vocab) {
  const float nan = qtest::nan_value();
  const float ts[] = {1.0f, 1.0f, 0.7f, 1.3f, 0.0f, -1.0f, nan, inf, 0.05f, 5.0f, -0.0f, 1e-30f};
  const float ms[] = {0.0f, 0.0f, 0.0f, nan, -0.1f, 0.01f, 0.05f, 0.1f, 0.3f, 0.9f, 1.0f, 1.5f};
  RowFilters f;
  f.temperature = ts[rng() % 12];
  f.min_p       = ms[rng() % 12];
  switch (rng() % 8) {
    case 0: f.k = 0; break;
    case 1: f.k = int(std::min<std::int64_t>(vocab, INT_MAX)); break;
    case 2: f.k = 1; break;
    case 3: f.k = 1 + int(rng() % 10); break;
    case 4: f.k = 1 + int(rng() % 100); break;
    case 5: f.k = int(vocab / 2); break;
    case 6: f.k = -3; break;
    default: f.k = INT_MAX;
  }
  switch (rng() % 8) {
    case 0: f.p = 1.0f; break;
    case 1: f.p = 0.0f; break;
    case 2: f.p = nan; break;
    case 3: f.p = 0.9f; break;
    case 4: f.p = 0.99f; break;
    default: f.p = 0.3f + 0.7f * std::uniform_real_distribution<float>(0.0f, 1.0f)(rng);
  }
  return f;
}

void random_row(float* row, std::int64_t vocab, std::mt19937_64& rng) {
  using qrita::synthetic::Shape;
  const Shape shapes[] = {Shape::lm, Shape::lm, Shape::ties, Shape::flat,
                          Shape::spread, Shape::peaked, Shape::sparse};
  qrita::synthetic::fill_row(row, vocab, shapes[rng() % 7], rng);
  if (rng() % 6 == 0) {
    const float specials[] = {qtest::nan_value(), -inf, inf};
    const std::int64_t count = 1 + std::int64_t(rng() % 5);
    for (std::int64_t j = 0; j < count; ++j)
      row[rng() % std::uint64_t(vocab)] = specials[rng() % (rng() % 4 == 0 ? 3 : 2)];
  }
}

// One batch through all three calls, checked against the oracle and against
// itself: the list's set is sample_mask's kept set, the token is in it.
template <class Exec, class T>
void random_batch(SampleBatch const& b, std::int64_t C, qrita::Options const& opts,
                  std::string const& what) {
  const std::vector<float> masked = qtest::run_mask<Exec, T>(b, opts);
  ASSERT_TRUE(qtest::check_mask(b, masked)) << what;
  const Candidates c         = qtest::run_candidates<Exec, T>(b, C, opts);
  ASSERT_TRUE(qtest::check_candidates(b, c)) << what;
  const std::vector<int> tok = qtest::run_tokens<Exec, T>(b, opts);
  for (std::int64_t r = 0; r < b.batch; ++r) {
    const RowFilters f = b.effective(r);
    const auto ref     = qrita::oracle::evaluate(b.row(r), b.vocab, f);
    // The device's kept set: sample_mask's, or every candidate.
    const std::vector<std::int64_t> kept =
        ref.untouched ? qrita::oracle::order(b.row(r), b.vocab)
                      : qtest::kept_in_order(b.row(r), masked.data() + r * b.vocab, b.vocab);
    const int count = c.counts[std::size_t(r)];
    ASSERT_EQ(count, std::int64_t(kept.size()))
        << what << ", row " << r << " (" << qtest::describe(f) << "): the list and the mask differ";
    for (std::int64_t j = 0; j < std::min<std::int64_t>(C, count); ++j)
      ASSERT_EQ(c.ids[std::size_t(r * C + j)], kept[std::size_t(j)]) << what << ", row " << r;
    const int t = tok[std::size_t(r)];
    if (kept.empty()) {
      ASSERT_EQ(t, -1) << what << ", row " << r;
      continue;
    }
    const auto pos = std::find(kept.begin(), kept.end(), std::int64_t(t));
    ASSERT_NE(pos, kept.end()) << what << ", row " << r << " (" << qtest::describe(f)
                               << "): token " << t << " is not kept";
    // Never a token of probability 0 (finite beside +inf, or underflowed).
    const double temp = ref.greedy ? 1.0 : double(f.temperature);
    const auto d      = qrita::oracle::distribution_over(b.row(r), kept, temp);
    ASSERT_GT(d.prob[std::size_t(pos - kept.begin())], 0.0) << what << ", row " << r;
  }
}

template <class Exec, class T>
void random_against_oracle(std::uint64_t seed, std::vector<std::int64_t> const& vocabs,
                           std::int64_t budget) {
  std::mt19937_64 rng(seed);
  for (std::int64_t vocab : vocabs) {
    const std::int64_t batch = std::min<std::int64_t>(200, std::max<std::int64_t>(budget / vocab, 5));
    SampleBatch b(batch, vocab);
    for (std::int64_t r = 0; r < batch; ++r) {
      random_row(b.row(r), vocab, rng);
      for (std::int64_t i = 0; i < vocab; ++i) b.row(r)[i] = qtest::round_to<T>(b.row(r)[i]);
      b.filters[std::size_t(r)] = random_filters(rng, vocab);
      b.seeds[std::size_t(r)]   = rng();
      b.offsets[std::size_t(r)] = rng() % 1000;
    }
    // Now and then a member is absent (off on every row).
    if (rng() % 3 == 0) {
      b.present.k           = rng() % 2;
      b.present.p           = rng() % 2;
      b.present.min_p       = rng() % 2;
      b.present.temperature = rng() % 2;
    }
    qrita::Options opts;
    if (rng() % 3 == 0) opts.candidate_capacity = 64;  // small on-chip buffer: tier / buckets
    if (rng() % 4 == 0) opts.teams_per_row = 3;        // rows split across teams
    // C is at most the plan's capacity (the vocab, on small rows).
    const std::int64_t C = std::min<std::int64_t>(
        200, qrita::plan(Exec(), batch, vocab, opts).candidate_capacity);
    random_batch<Exec, T>(b, C, opts,
                          std::string(qtest::type_name<T>()) + ", vocab " + std::to_string(vocab));
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TYPED_TEST(Sampling, RandomFiltersAgainstOracle) {
  const std::uint64_t seed = base_seed();
  SCOPED_TRACE("QRITA_TEST_SEED=" + std::to_string(seed));
  random_against_oracle<TypeParam, float>(
      seed, {2, 3, 7, 64, 111, 1000, 4097, 8193, 32000, 50257, 1}, 200000);
  random_against_oracle<TypeParam, qrita::bfloat16>(seed + 1, {5, 64, 1000, 4097, 32000, 1},
                                                    150000);
  random_against_oracle<TypeParam, qrita::float16>(seed + 2, {2, 64, 1000, 4097, 32000}, 150000);
}

// =============================================================================
// Malformed calls (case 19 for the new calls)

template <class Exec>
class SamplingValidation : public ::testing::Test {
 protected:
  using mem = typename Exec::memory_space;
  static constexpr std::size_t batch = 6, vocab = 3000, C = 16;

  SampleBatch host{std::int64_t(batch), std::int64_t(vocab)};
  qtest::DeviceBatch<Exec> d{fill()};
  Kokkos::View<int*, mem> tokens{"tokens", batch};
  Kokkos::View<int**, Kokkos::LayoutRight, mem> ids{"ids", batch, C};
  Kokkos::View<float**, Kokkos::LayoutRight, mem> probs{"probs", batch, C};
  Kokkos::View<float**, Kokkos::LayoutRight, mem> logprobs{"logprobs", batch, C};
  Kokkos::View<int*, mem> counts{"counts", batch};

  SampleBatch const& fill() {
    std::mt19937_64 rng(19);
    for (std::int64_t r = 0; r < host.batch; ++r) {
      qrita::synthetic::lm_row(host.row(r), host.vocab, rng);
      host.filters[std::size_t(r)] = filters(10, 0.9f, 0.05f, 0.8f);
    }
    return host;
  }

  void SetUp() override {
    Kokkos::deep_copy(tokens, -7);
    Kokkos::deep_copy(ids, -7);
    Kokkos::deep_copy(probs, 7.0f);
    Kokkos::deep_copy(logprobs, 7.0f);
    Kokkos::deep_copy(counts, -7);
  }

  // Nothing was written: logits and every output hold what they held.
  ::testing::AssertionResult untouched() {
    if (!qtest::same_bits(d.host_logits(), host.logits))
      return ::testing::AssertionFailure() << "the logits changed";
    const auto all = [](auto const& v, auto value) {
      auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
      for (std::size_t i = 0; i < h.size(); ++i)
        if (h.data()[i] != value) return false;
      return true;
    };
    if (!all(tokens, -7)) return ::testing::AssertionFailure() << "tokens were written";
    if (!all(ids, -7)) return ::testing::AssertionFailure() << "ids were written";
    if (!all(probs, 7.0f)) return ::testing::AssertionFailure() << "probs were written";
    if (!all(logprobs, 7.0f)) return ::testing::AssertionFailure() << "logprobs were written";
    if (!all(counts, -7)) return ::testing::AssertionFailure() << "counts were written";
    return ::testing::AssertionSuccess();
  }

  // Whether message names argument `arg` the way qrita does ('arg', or a
  // member 'params.arg').
  static bool names(std::string const& message, std::string const& arg) {
    return message.find("'" + arg + "'") != std::string::npos ||
           message.find("." + arg + "'") != std::string::npos;
  }

  // The call throws std::invalid_argument naming the call and the argument
  // (if any), with each word in its message.
  template <class Call>
  void expect_rejected(Call&& call, std::string const& name, std::string const& arg,
                       std::vector<std::string> const& words = {}) {
    try {
      call();
      Exec().fence();
      ADD_FAILURE() << "the call was accepted (" << name << ", " << arg << ")";
    } catch (std::invalid_argument const& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr(name + ": "));
      if (!arg.empty()) {
        EXPECT_TRUE(names(e.what(), arg)) << "'" << arg << "' is not named in: " << e.what();
      }
      for (auto const& w : words) EXPECT_THAT(e.what(), ::testing::HasSubstr(w));
    }
    EXPECT_TRUE(untouched()) << name << ", " << arg;
  }

  // The three calls with these params (and the fixture's other arguments).
  void expect_params_rejected(qrita::SamplingParams<mem> const& params, std::string const& word) {
    expect_rejected([&] { qrita::sample_mask(Exec(), d.logits, params); }, "qrita::sample_mask",
                    word);
    expect_rejected(
        [&] { qrita::sample_tokens(Exec(), d.logits, params, d.seeds, d.offsets, tokens); },
        "qrita::sample_tokens", word);
    expect_rejected(
        [&] { qrita::candidate_list(Exec(), d.logits, params, ids, probs, logprobs, counts); },
        "qrita::candidate_list", word);
  }
};
TYPED_TEST_SUITE(SamplingValidation, qtest::Backends, qtest::BackendName);

TYPED_TEST(SamplingValidation, Case19_WrongLengthParams) {
  using M = typename TestFixture::mem;
  Kokkos::View<int*, M> k5("k", 5);
  Kokkos::View<float*, M> f7("f", 7), f9("f", 9);
  for (int member = 0; member < 4; ++member) {
    qrita::SamplingParams<M> params = this->d.params;
    std::string word;
    switch (member) {
      case 0: params.k = k5, word = "k"; break;
      case 1: params.p = f7, word = "p"; break;
      case 2: params.min_p = f9, word = "min_p"; break;
      default: params.temperature = f7, word = "temperature";
    }
    this->expect_params_rejected(params, word);
  }
}

TYPED_TEST(SamplingValidation, Case19_WrongLengthSeedsOffsetsTokens) {
  using M       = typename TestFixture::mem;
  const auto& dev = this->d;
  Kokkos::View<std::uint64_t*, M> u5("u", 5), u7("u", 7);
  Kokkos::View<int*, M> t5("t", 5);
  this->expect_rejected(
      [&] { qrita::sample_tokens(TypeParam(), dev.logits, dev.params, u5, dev.offsets, this->tokens); },
      "qrita::sample_tokens", "seeds");
  this->expect_rejected(
      [&] { qrita::sample_tokens(TypeParam(), dev.logits, dev.params, dev.seeds, u7, this->tokens); },
      "qrita::sample_tokens", "offsets");
  this->expect_rejected(
      [&] { qrita::sample_tokens(TypeParam(), dev.logits, dev.params, dev.seeds, dev.offsets, t5); },
      "qrita::sample_tokens", "tokens");
  Kokkos::View<std::uint64_t*, M> none;
  this->expect_rejected(
      [&] { qrita::sample_tokens(TypeParam(), dev.logits, dev.params, none, dev.offsets, this->tokens); },
      "qrita::sample_tokens", "seeds");
  qrita::Options bad;
  bad.team_size = 1 << 20;
  this->expect_rejected(
      [&] {
        qrita::sample_tokens(TypeParam(), dev.logits, dev.params, dev.seeds, dev.offsets, this->tokens, bad);
      },
      "qrita::sample_tokens", "");
}

TYPED_TEST(SamplingValidation, Case19_CandidateShapes) {
  using M       = typename TestFixture::mem;
  using Matrix  = Kokkos::View<float**, Kokkos::LayoutRight, M>;
  const auto& dev = this->d;
  const std::size_t B = TestFixture::batch, cap = TestFixture::C;
  Kokkos::View<int**, Kokkos::LayoutRight, M> ids5("ids", B - 1, cap);
  Matrix p_wide("p", B, cap + 1), p_short("p", B - 1, cap), lp_narrow("lp", B, cap - 1);
  Kokkos::View<int*, M> counts7("counts", B + 1);
  auto& t = *this;
  t.expect_rejected(
      [&] { qrita::candidate_list(TypeParam(), dev.logits, dev.params, ids5, t.probs, t.logprobs, t.counts); },
      "qrita::candidate_list", "ids");
  t.expect_rejected(
      [&] { qrita::candidate_list(TypeParam(), dev.logits, dev.params, t.ids, p_wide, t.logprobs, t.counts); },
      "qrita::candidate_list", "probs");
  t.expect_rejected(
      [&] { qrita::candidate_list(TypeParam(), dev.logits, dev.params, t.ids, p_short, t.logprobs, t.counts); },
      "qrita::candidate_list", "probs");
  t.expect_rejected(
      [&] { qrita::candidate_list(TypeParam(), dev.logits, dev.params, t.ids, t.probs, lp_narrow, t.counts); },
      "qrita::candidate_list", "logprobs");
  t.expect_rejected(
      [&] { qrita::candidate_list(TypeParam(), dev.logits, dev.params, t.ids, t.probs, t.logprobs, counts7); },
      "qrita::candidate_list", "counts");
}

// C may be at most the plan's candidate_capacity, plus its tier_capacity
// with a workspace (a vocab of 20000: larger than the on-chip capacity).
TYPED_TEST(Sampling, Case19_CandidateCapacityTooLarge) {
  using M = typename TypeParam::memory_space;
  const std::int64_t B = 3, V = 20000;
  SampleBatch host(B, V);
  std::mt19937_64 rng(20);
  for (std::int64_t r = 0; r < B; ++r) {
    qrita::synthetic::lm_row(host.row(r), V, rng);
    host.filters[std::size_t(r)] = filters(r == 0 ? 5000 : 10, 1.0f, 0.0f, 0.8f);
  }
  const qtest::DeviceBatch<TypeParam> dev(host);
  qrita::Options opts;
  opts.tier_capacity = 2000;
  const TypeParam space;
  const qrita::LaunchPlan plan = qrita::plan(space, B, V, opts);
  ASSERT_GT(plan.tier_capacity, 0);
  ASSERT_LT(plan.candidate_capacity, 5000);
  const std::size_t on_chip   = std::size_t(plan.candidate_capacity);
  const std::size_t with_tier = on_chip + std::size_t(plan.tier_capacity);
  const qrita::Workspace<TypeParam> ws(space, B, V, opts);
  using Ids    = Kokkos::View<int**, Kokkos::LayoutRight, M>;
  using Matrix = Kokkos::View<float**, Kokkos::LayoutRight, M>;
  Kokkos::View<int*, M> counts("counts", std::size_t(B));
  for (bool with_ws : {false, true}) {
    const std::size_t limit = with_ws ? with_tier : on_chip;
    const auto call = [&](Ids const& i, Matrix const& p, Matrix const& lp) {
      if (with_ws)
        qrita::candidate_list(space, dev.logits, dev.params, i, p, lp, counts, opts, ws);
      else
        qrita::candidate_list(space, dev.logits, dev.params, i, p, lp, counts, opts);
    };
    Ids too_many("ids", std::size_t(B), limit + 1);
    Kokkos::deep_copy(too_many, -7);
    Kokkos::deep_copy(counts, -7);
    try {
      call(too_many, Matrix(), Matrix());
      space.fence();
      ADD_FAILURE() << "C = " << limit + 1 << " was accepted (with workspace: " << with_ws << ")";
    } catch (std::invalid_argument const& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr("qrita::candidate_list: "));
      EXPECT_THAT(e.what(), ::testing::HasSubstr(std::to_string(limit)));
    }
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), too_many);
    for (std::size_t i = 0; i < h.size(); ++i) ASSERT_EQ(h.data()[i], -7);
    auto ch = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), counts);
    for (std::size_t i = 0; i < ch.size(); ++i) ASSERT_EQ(ch.data()[i], -7);
    // Exactly the limit is accepted and right (row 0 keeps 5000 > limit).
    Ids fits_exactly("ids", std::size_t(B), limit);
    Matrix p("p", std::size_t(B), limit), lp("lp", std::size_t(B), limit);
    call(fits_exactly, p, lp);
    space.fence();
    Candidates c;
    c.capacity = std::int64_t(limit);
    auto ih = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fits_exactly);
    auto ph = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p);
    auto lh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), lp);
    ch      = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), counts);
    c.ids.assign(ih.data(), ih.data() + ih.size());
    c.probs.assign(ph.data(), ph.data() + ph.size());
    c.logprobs.assign(lh.data(), lh.data() + lh.size());
    c.counts.assign(ch.data(), ch.data() + ch.size());
    EXPECT_TRUE(qtest::check_candidates(host, c)) << "C = " << limit;
  }
}

}  // namespace
