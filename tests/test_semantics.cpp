// SPDX-License-Identifier: Apache-2.0
// Every case of docs/SEMANTICS.md ("Edge cases and where they are tested"), by
// number and name, on every enabled backend. Where a case has an answer that
// can be written down by hand, the test states it explicitly; every row is
// also checked against the oracle.

#include "support.hpp"
#include "synthetic.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <numeric>
#include <random>

namespace {

using qtest::Batch;
using qtest::check_batch;
using qtest::check_row;
using qtest::inf;
using qtest::kept_indices;
using Idx = std::vector<std::int64_t>;

template <class Exec>
class Semantics : public ::testing::Test {};
TYPED_TEST_SUITE(Semantics, qtest::Backends, qtest::BackendName);

// One row through the backend; returns the masked row (and its stats).
template <class Exec>
std::vector<float> mask_one(std::vector<float> const& row, int k, float p,
                            qrita::Options const& opts = {},
                            qrita::RowStats* stats = nullptr) {
  Batch b(1, std::int64_t(row.size()));
  std::copy(row.begin(), row.end(), b.logits.begin());
  b.k[0] = k;
  b.p[0] = p;
  qtest::Result r = qtest::run<Exec>(b, opts);
  if (stats) *stats = r.stats[0];
  return r.logits;
}

// Masks `row` and returns the kept indices; also checks the oracle's rule.
template <class Exec>
Idx kept_of(std::vector<float> const& row, int k, float p,
            qrita::Options const& opts = {}) {
  const std::vector<float> out = mask_one<Exec>(row, k, p, opts);
  EXPECT_TRUE(check_row(row.data(), out.data(), std::int64_t(row.size()), k, p));
  return kept_indices(row.data(), out.data(), std::int64_t(row.size()));
}

std::vector<float> noise(std::int64_t vocab, float lo, float hi, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(static_cast<std::size_t>(vocab));
  for (float& x : v) x = d(rng);
  return v;
}

Idx sorted(Idx v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Distinct random positions in [0, vocab).
Idx positions(std::int64_t vocab, std::int64_t count, std::uint64_t seed) {
  Idx all(static_cast<std::size_t>(vocab));
  std::iota(all.begin(), all.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(std::size_t(count));
  return all;
}

qrita::Options no_truncation() {
  qrita::Options o;
  o.sigma_truncation = false;
  return o;
}

// 1. k = 1 gives the argmax; on a tied maximum, the lowest index.
TYPED_TEST(Semantics, Case01_KOneIsArgmax) {
  for (std::uint64_t seed = 0; seed < 8; ++seed) {
    std::vector<float> row(4099);
    std::mt19937_64 rng(seed);
    qrita::synthetic::lm_row(row.data(), std::int64_t(row.size()), rng);
    const auto arg = std::max_element(row.begin(), row.end()) - row.begin();
    EXPECT_EQ(kept_of<TypeParam>(row, 1, 1.0f), Idx{arg});
  }
  std::vector<float> row = noise(5000, -5.0f, 5.0f, 1);
  for (std::int64_t i : {4321, 77, 3000, 78}) row[std::size_t(i)] = 9.5f;
  EXPECT_EQ(kept_of<TypeParam>(row, 1, 1.0f), Idx{77});
  EXPECT_EQ(kept_of<TypeParam>(row, 1, 1.0f, no_truncation()), Idx{77});
}

// 2. k >= V, k <= 0, huge k (INT_MAX): no top-k, no overflow.
TYPED_TEST(Semantics, Case02_TopKOffOutsideOneToV) {
  const std::vector<float> row = noise(3000, -4.0f, 4.0f, 2);
  for (int k : {3000, 3001, 0, -1, INT_MIN, INT_MAX}) {
    const std::vector<float> out = mask_one<TypeParam>(row, k, 1.0f);
    EXPECT_EQ(std::memcmp(out.data(), row.data(), row.size() * sizeof(float)), 0)
        << "k = " << k << " must leave the row as it is";
    // With top-p on, the row gets exactly what top-p alone gives it.
    const std::vector<float> with_p = mask_one<TypeParam>(row, k, 0.8f);
    const std::vector<float> p_only = mask_one<TypeParam>(row, 0, 0.8f);
    EXPECT_EQ(std::memcmp(with_p.data(), p_only.data(), row.size() * sizeof(float)), 0)
        << "k = " << k;
    EXPECT_TRUE(check_row(row.data(), with_p.data(), 3000, k, 0.8f));
  }
}

// 3. Ties straddling the k-th place: exactly k kept, lowest indices.
TYPED_TEST(Semantics, Case03_TiesStraddlingKth) {
  for (std::int64_t vocab : {1000, 32000}) {
    for (std::uint64_t seed = 0; seed < 4; ++seed) {
      std::vector<float> row = noise(vocab, -10.0f, -5.0f, seed);
      const Idx pos  = positions(vocab, 5 + 40, 100 + seed);
      const Idx top(pos.begin(), pos.begin() + 5);
      const Idx ties(pos.begin() + 5, pos.end());
      for (std::size_t j = 0; j < top.size(); ++j) row[std::size_t(top[j])] = 4.0f + float(j);
      for (std::int64_t i : ties) row[std::size_t(i)] = 3.0f;
      const Idx ties_sorted = sorted(ties);
      for (int k : {6, 8, 44}) {
        Idx expect = top;
        expect.insert(expect.end(), ties_sorted.begin(), ties_sorted.begin() + (k - 5));
        expect = sorted(expect);
        EXPECT_EQ(kept_of<TypeParam>(row, k, 1.0f), expect) << "k " << k;
        EXPECT_EQ(kept_of<TypeParam>(row, k, 1.0f, no_truncation()), expect) << "k " << k;
      }
    }
  }
}

// 4. All logits equal, k < V: indices 0..k-1 kept.
TYPED_TEST(Semantics, Case04_AllEqual) {
  for (std::int64_t vocab : {5, 1000, 32000}) {
    const std::vector<float> row(std::size_t(vocab), 1.25f);
    for (std::int64_t k : {std::int64_t(1), std::int64_t(3), vocab - 1}) {
      Idx expect(static_cast<std::size_t>(k));
      std::iota(expect.begin(), expect.end(), 0);
      EXPECT_EQ(kept_of<TypeParam>(row, int(k), 1.0f), expect) << "V " << vocab << " k " << k;
    }
  }
}

// 5. Tie group straddling the p boundary: the fewest copies, lowest indices.
TYPED_TEST(Semantics, Case05_TieGroupStraddlingP) {
  // One entry at logit 1 and six at logit 0, the rest far below: the top has
  // probability e / (e + 6) = 0.3118, each tie 1 / (e + 6) = 0.1147.
  const std::int64_t vocab = 2000;
  std::vector<float> row(std::size_t(vocab), -60.0f);
  const Idx pos = positions(vocab, 7, 5);
  row[std::size_t(pos[0])] = 1.0f;
  for (int j = 1; j < 7; ++j) row[std::size_t(pos[std::size_t(j)])] = 0.0f;
  const Idx ties = sorted(Idx(pos.begin() + 1, pos.end()));
  // p = 0.5 needs 2 ties (0.3118 + 2 * 0.1147 = 0.5412), p = 0.6 needs 3.
  const std::pair<float, int> cases[] = {{0.5f, 2}, {0.6f, 3}, {0.3f, 0}, {0.99f, 6}};
  for (auto [p, copies] : cases) {
    Idx expect{pos[0]};
    expect.insert(expect.end(), ties.begin(), ties.begin() + copies);
    EXPECT_EQ(kept_of<TypeParam>(row, 0, p), sorted(expect)) << "p " << p;
    EXPECT_EQ(kept_of<TypeParam>(row, 0, p, no_truncation()), sorted(expect)) << "p " << p;
  }
}

// 6. p = 1 and p > 1: no top-p. p tiny (1e-6) and p = 0: the single top entry.
TYPED_TEST(Semantics, Case06_PBoundaries) {
  std::vector<float> row = noise(4500, -3.0f, 3.0f, 6);
  row[900] = 7.0f;
  row[42]  = 7.0f;  // tied top: the lower index wins
  for (float p : {1.0f, 1.5f, inf, qtest::nan_value()}) {
    const std::vector<float> out = mask_one<TypeParam>(row, 0, p);
    EXPECT_EQ(std::memcmp(out.data(), row.data(), row.size() * sizeof(float)), 0) << "p " << p;
  }
  for (float p : {1e-6f, 0.0f, -0.0f, -0.5f, -inf}) {
    EXPECT_EQ(kept_of<TypeParam>(row, 0, p), Idx{42}) << "p " << p;
    EXPECT_EQ(kept_of<TypeParam>(row, 50, p), Idx{42}) << "p " << p << " with k 50";
  }
}

// 7. Cumulative mass exactly equal to p: no extra entry.
TYPED_TEST(Semantics, Case07_MassExactlyP) {
  // n equal logits (exp(0) = 1 exactly) and -inf elsewhere: each has mass
  // exactly 1/n, and p = m/n is reached by exactly m entries.
  const std::pair<int, int> cases[] = {{4, 2}, {8, 6}, {8, 2}, {1024, 512}, {1024, 1}};
  for (auto [n, m] : cases) {
    const std::int64_t vocab = 3 * std::int64_t(n);
    std::vector<float> row(std::size_t(vocab), -inf);
    const Idx pos = sorted(positions(vocab, n, std::uint64_t(n * 31 + m)));
    for (std::int64_t i : pos) row[std::size_t(i)] = 0.0f;
    const float p = float(m) / float(n);
    EXPECT_EQ(kept_of<TypeParam>(row, 0, p), Idx(pos.begin(), pos.begin() + m))
        << n << " equal entries, p " << p;
  }
}

// 8. k and p together: top-p runs on the renormalised top-k survivors.
TYPED_TEST(Semantics, Case08_TopPAfterTopK) {
  // Logits 3 and 2 above 1000 entries at 0: the top entry holds only 2% of
  // the whole row's mass but e / (e + 1) = 73% of the top-2 survivors'.
  std::vector<float> row(1002, 0.0f);
  row[500] = 3.0f;
  row[17]  = 2.0f;
  EXPECT_EQ(kept_of<TypeParam>(row, 2, 0.7f), Idx{500});
  EXPECT_EQ(kept_of<TypeParam>(row, 2, 0.75f), (Idx{17, 500}));
  EXPECT_GT(kept_of<TypeParam>(row, 0, 0.7f).size(), 600u);  // without top-k
  // Renormalising over a tie group cut by top-k: k = 4 keeps the two top
  // entries and the two lowest-index zeros; p = 0.9 of those needs all four.
  EXPECT_EQ(kept_of<TypeParam>(row, 4, 0.9999f), (Idx{0, 1, 17, 500}));
}

// 9. Mixed rows: k-only, p-only, both, neither in one batch; 25-50% off.
TYPED_TEST(Semantics, Case09_MixedRows) {
  for (double off_share : {0.25, 0.5}) {
    Batch b(96, 6000);
    std::mt19937_64 rng(9);
    for (std::int64_t r = 0; r < b.batch; ++r) {
      qrita::synthetic::fill_row(b.row(r), b.vocab, qrita::synthetic::Shape::lm, rng);
      const bool off = double(r % 100) / 100.0 < off_share;
      switch (off ? 3 : r % 3) {
        case 0: b.k[r] = 1 + int(rng() % 100); b.p[r] = 1.0f; break;
        case 1: b.k[r] = 0; b.p[r] = 0.5f + 0.49f * float(rng() % 100) / 100.0f; break;
        case 2: b.k[r] = 1 + int(rng() % 100); b.p[r] = 0.9f; break;
        default: b.k[r] = (r % 2) ? 0 : int(b.vocab); b.p[r] = (r % 4 < 2) ? 1.0f : 2.0f;
      }
    }
    EXPECT_TRUE(check_batch(b, qtest::run<TypeParam>(b)));
  }
}

// 10. Rows with 50/90/99% -inf, rows with fewer finite entries than k, rows
//     entirely -inf (unchanged, no hang).
TYPED_TEST(Semantics, Case10_MostlyNegInfRows) {
  Batch b(12, 20000);
  std::mt19937_64 rng(10);
  const double masked[] = {0.5, 0.9, 0.99};
  for (std::int64_t r = 0; r < b.batch; ++r) {
    qrita::synthetic::lm_row(b.row(r), b.vocab, rng);
    std::bernoulli_distribution hide(masked[r % 3]);
    for (std::int64_t i = 0; i < b.vocab; ++i)
      if (hide(rng)) b.row(r)[i] = -inf;
    b.k[r] = (r % 4 == 0) ? 0 : 50;
    b.p[r] = (r % 2) ? 0.9f : 1.0f;
  }
  // Fewer finite entries than k: 10 finite, k = 50 keeps all 10.
  std::fill(b.row(9), b.row(9) + b.vocab, -inf);
  for (int j = 0; j < 10; ++j) b.row(9)[j * 997] = float(j);
  b.k[9] = 50;
  b.p[9] = 1.0f;
  // Entirely -inf, with every filter combination.
  for (std::int64_t r : {10, 11}) std::fill(b.row(r), b.row(r) + b.vocab, -inf);
  b.k[10] = 5;
  b.p[11] = 0.5f;
  const qtest::Result out = qtest::run<TypeParam>(b);
  EXPECT_TRUE(check_batch(b, out));
  EXPECT_EQ(kept_indices(b.row(9), out.logits.data() + 9 * b.stride, b.vocab).size(), 10u);
  for (std::int64_t r : {10, 11})
    EXPECT_EQ(std::memcmp(out.logits.data() + r * b.stride, b.row(r),
                          std::size_t(b.vocab) * sizeof(float)),
              0);
}

// 11. NaN inside a row and NaN rows: never crash, never leak into other rows.
TYPED_TEST(Semantics, Case11_NaN) {
  Batch b(8, 9000);
  std::mt19937_64 rng(11);
  for (std::int64_t r = 0; r < b.batch; ++r) {
    qrita::synthetic::lm_row(b.row(r), b.vocab, rng);
    b.k[r] = int(r % 2 ? 40 : 0);
    b.p[r] = r % 3 ? 0.85f : 1.0f;
  }
  for (std::int64_t r : {1, 2, 5})
    for (int j = 0; j < 300; ++j) b.row(r)[(j * 7919) % b.vocab] = qtest::nan_value();
  b.row(2)[0] = qtest::nan_value();  // a NaN first entry (the sample's shift)
  std::fill(b.row(3), b.row(3) + b.vocab, qtest::nan_value());  // NaN row
  b.k[3] = 10;
  b.p[3] = 0.5f;
  for (std::int64_t i = 0; i < b.vocab; ++i) b.row(6)[i] = (i % 2) ? -inf : qtest::nan_value();
  b.k[6] = 3;
  const qtest::Result out = qtest::run<TypeParam>(b);
  EXPECT_TRUE(check_batch(b, out));  // includes: no NaN written where masked
  for (std::int64_t r : {1, 2, 5})
    for (std::int64_t i = 0; i < b.vocab; ++i)
      ASSERT_FALSE(std::isnan(out.logits[std::size_t(r * b.stride + i)]))
          << "row " << r << " entry " << i << ": a masked NaN must become -inf";
}

// 12. +inf entries: a value above every finite one; when the survivors'
//     maximum is +inf, the +inf entries share the probability mass equally.
TYPED_TEST(Semantics, Case12_PositiveInfinity) {
  std::vector<float> row = noise(6000, -2.0f, 2.0f, 12);
  for (std::int64_t i : {5, 2, 9}) row[std::size_t(i)] = inf;
  EXPECT_EQ(kept_of<TypeParam>(row, 2, 1.0f), (Idx{2, 5}));
  EXPECT_EQ(kept_of<TypeParam>(row, 0, 0.5f), (Idx{2, 5}));     // 2/3 >= 0.5
  EXPECT_EQ(kept_of<TypeParam>(row, 0, 0.34f), (Idx{2, 5}));    // 1/3 < 0.34
  EXPECT_EQ(kept_of<TypeParam>(row, 0, 0.9f), (Idx{2, 5, 9}));
  EXPECT_EQ(kept_of<TypeParam>(row, 5, 0.99f), (Idx{2, 5, 9}));
  EXPECT_EQ(kept_of<TypeParam>(row, 5, 1.0f).size(), 5u);
  // 128 entries of +inf: each holds 1/128 (exact in binary), so p = 1/4
  // is reached by exactly the first 32.
  const std::vector<float> all_inf(128, inf);
  EXPECT_EQ(kept_of<TypeParam>(all_inf, 1, 1.0f), Idx{0});
  Idx first32(32);
  std::iota(first32.begin(), first32.end(), 0);
  EXPECT_EQ(kept_of<TypeParam>(all_inf, 0, 0.25f), first32);
}

// 13. Peaked rows (one entry > 40% of the mass), near-flat rows, spreads of
//     1e-6 between neighbours, probabilities near 1e-9.
TYPED_TEST(Semantics, Case13_PeakedFlatAndTinyProbabilities) {
  using qrita::synthetic::Shape;
  Batch b(40, 30000);
  std::mt19937_64 rng(13);
  const Shape shapes[] = {Shape::peaked, Shape::flat, Shape::spread, Shape::ties};
  const float ps[]     = {0.3f, 0.6f, 0.9f, 0.999f, 1.0f};
  for (std::int64_t r = 0; r < 32; ++r) {
    qrita::synthetic::fill_row(b.row(r), b.vocab, shapes[r % 4], rng);
    b.k[r] = (r / 4) % 2 ? 0 : 100;
    b.p[r] = ps[r % 5];
  }
  // One token at 0 and the rest at about log(1e-9): each tail entry has
  // probability ~1e-9 (3e-5 together), and p = 1 - 1e-5 needs most of them.
  for (std::int64_t r = 32; r < 40; ++r) {
    std::uniform_real_distribution<float> tail(-21.0f, -20.5f);
    for (std::int64_t i = 0; i < b.vocab; ++i) b.row(r)[i] = tail(rng);
    b.row(r)[r * 17] = 0.0f;
    b.k[r] = r % 2 ? 0 : 20000;
    b.p[r] = 1.0f - 1e-5f * float(r - 31);
  }
  EXPECT_TRUE(check_batch(b, qtest::run<TypeParam>(b)));
}

// 14. Truncation misses and overflowing candidate sets: same answer on
//     every path; each path is checked to have been taken.
TYPED_TEST(Semantics, Case14_TruncationMissAndOverflow) {
  using qrita::RowPath;
  // (a) The entries the sample reads sit 2 sigma above the rest (a biased
  // sample, as a vocabulary-ordered row gives a head-only sample), so the
  // threshold leaves fewer than k outliers: a top-k miss, decided in the
  // histogram's boundary bucket by a second read. Three row passes.
  {
    const int V = 20000;
    std::vector<float> row(V);
    std::mt19937_64 rng(1);
    std::normal_distribution<float> bulk(0.0f, 1.0f);
    for (float& x : row) x = bulk(rng);
    for (int j = 0; j < qrita::detail::sample_size; ++j)
      row[std::size_t(qrita::detail::sample_column(j, V))] += 2.0f;
    qrita::RowStats st{};
    const std::vector<float> out = mask_one<TypeParam>(row, 200, 1.0f, {}, &st);
    EXPECT_LT(st.outliers, 200);
    EXPECT_EQ(st.topk_path, RowPath::buckets);
    EXPECT_EQ(st.row_passes, 3);
    EXPECT_GT(st.gathered, 0);
    EXPECT_TRUE(check_row(row.data(), out.data(), V, 200, 1.0f));
  }
  // (b) Outlier mass below p (N(0,1) logits, p = 0.9: a nucleus of a third
  // of the row): a top-p miss, decided in the boundary buckets.
  {
    const int V = 40000;
    std::vector<float> row(V);
    std::mt19937_64 rng(2);
    std::normal_distribution<float> bulk(0.0f, 1.0f);
    for (float& x : row) x = bulk(rng);
    qrita::RowStats st{};
    const std::vector<float> out = mask_one<TypeParam>(row, 0, 0.9f, {}, &st);
    EXPECT_EQ(st.topp_path, RowPath::buckets);
    EXPECT_EQ(st.row_passes, 3);
    EXPECT_GE(st.topp_passes, 1);  // -1: the bucket bounds failed
    EXPECT_TRUE(check_row(row.data(), out.data(), V, 0, 0.9f));
  }
  // (c) More outliers than the on-chip buffer holds: with a workspace the
  // rest spill into its tier (still a hit); without one the whole row is
  // searched. For k, p and both.
  {
    Batch b(6, 20000);
    std::mt19937_64 rng(3);
    for (std::int64_t r = 0; r < b.batch; ++r) {
      qrita::synthetic::lm_row(b.row(r), b.vocab, rng);
      b.k[r] = r % 3 == 1 ? 0 : 50;
      b.p[r] = r % 3 == 0 ? 1.0f : 0.9f;
    }
    // The path of the row's first search: top-p's on the rows without k.
    const auto path = [](qtest::Result const& res, std::int64_t r) {
      auto const& st = res.stats[std::size_t(r)];
      return r % 3 == 1 ? st.topp_path : st.topk_path;
    };
    qrita::Options small;
    small.candidate_capacity = 16;
    small.tier_capacity      = 8192;
    const qtest::Result tier = qtest::run<TypeParam>(b, small);
    EXPECT_TRUE(check_batch(b, tier));
    int tier_hits = 0;
    for (std::int64_t r = 0; r < b.batch; ++r) {
      auto const& st = tier.stats[std::size_t(r)];
      EXPECT_GT(st.outliers, 16);
      EXPECT_NE(path(tier, r), RowPath::full) << "row " << r;
      tier_hits += st.tier && path(tier, r) == RowPath::truncated ? 1 : 0;
    }
    EXPECT_GT(tier_hits, 0) << "no row searched outliers held in the tier";
    small.tier_capacity = 0;
    const qtest::Result out =
        qtest::run<TypeParam>(b, small, qtest::Filters::both, qtest::Memory::none);
    EXPECT_TRUE(check_batch(b, out));
    // On chip only: the rows whose boundary lies above t cannot be held
    // and are searched whole; the others are decided in their buckets.
    for (std::int64_t r = 0; r < b.batch; ++r) {
      EXPECT_NE(path(out, r), RowPath::truncated) << "row " << r;
      EXPECT_LE(out.stats[std::size_t(r)].row_passes, path(out, r) == RowPath::full ? 40 : 3);
    }
    // The default buffer: truncation hits, same answer.
    const qtest::Result hit = qtest::run<TypeParam>(b);
    EXPECT_EQ(out.logits, hit.logits);
    EXPECT_EQ(tier.logits, hit.logits);
    for (std::int64_t r = 0; r < b.batch; ++r)
      EXPECT_EQ(path(hit, r), RowPath::truncated) << "row " << r;
    // (d) Truncation off: the whole row is searched.
    const qtest::Result full = qtest::run<TypeParam>(b, no_truncation());
    EXPECT_EQ(full.logits, hit.logits);
    EXPECT_EQ(full.stats[0].topk_path, RowPath::full);
  }
  // (e) Every candidate equal: the flat path. Without -inf or NaN the kept
  // entries are the first columns: a read and a write-only pass. With them,
  // an ordered masked read + write: three passes.
  {
    std::vector<float> row(10000, 0.25f);
    qrita::RowStats st{};
    std::vector<float> out = mask_one<TypeParam>(row, 70, 0.5f, {}, &st);
    EXPECT_EQ(st.topk_path, RowPath::flat);
    EXPECT_EQ(st.row_passes, 2);
    EXPECT_TRUE(check_row(row.data(), out.data(), 10000, 70, 0.5f));
    row[5]   = -inf;
    row[900] = qtest::nan_value();
    out      = mask_one<TypeParam>(row, 70, 0.5f, {}, &st);
    EXPECT_EQ(st.topk_path, RowPath::flat);
    EXPECT_EQ(st.row_passes, 3);
    EXPECT_TRUE(check_row(row.data(), out.data(), 10000, 70, 0.5f));
  }
  // (f) A bounded range (U[0, 1), as torch.rand gives), rounded to bf16:
  // mu + delta * sigma lies above every entry, so t goes just under the
  // sample's maximum, and the entries equal to it (about V / 256 here) are
  // the outliers: a top-k hit in two passes. (With t on the maximum there
  // was no outlier and every such row missed.)
  {
    const int V = 20000;
    std::vector<float> row = noise(V, 0.0f, 1.0f, 6);
    qtest::round_all<qrita::bfloat16>(row);
    qrita::RowStats st{};
    const std::vector<float> out = mask_one<TypeParam>(row, 10, 1.0f, {}, &st);
    EXPECT_GE(st.outliers, 10);
    EXPECT_LE(st.outliers, 400);
    EXPECT_EQ(st.topk_path, RowPath::truncated);
    EXPECT_EQ(st.row_passes, 2);
    EXPECT_TRUE(check_row(row.data(), out.data(), V, 10, 1.0f));
    // The same with most of the row on its maximum: the row would hold
    // more entries at it than half the buffer, so t stays on it and
    // nothing is gathered (decided in the histogram, or searched whole).
    for (int i = 0; i < V; i += 10)
      for (int j = i; j < i + 7; ++j) row[std::size_t(j)] = 1.0f;
    const std::vector<float> out2 = mask_one<TypeParam>(row, 10, 1.0f, {}, &st);
    EXPECT_EQ(st.outliers, 0);
    EXPECT_TRUE(check_row(row.data(), out2.data(), V, 10, 1.0f));
  }
}

// 15. The pivot search always terminates, on any input: at most 17
//     quaternary or 33 binary passes, on rows built to be hard.
TYPED_TEST(Semantics, Case15_SearchTerminates) {
  const float extremes[] = {std::numeric_limits<float>::max(),
                            -std::numeric_limits<float>::max(),
                            std::numeric_limits<float>::denorm_min(),
                            -std::numeric_limits<float>::denorm_min(),
                            std::numeric_limits<float>::min(),
                            0.0f, -0.0f, 1e-30f, -1e-30f, 1.0f,
                            std::nextafter(1.0f, 2.0f), 1e30f, inf, -inf};
  Batch b(48, 3000);
  std::mt19937_64 rng(15);
  for (std::int64_t r = 0; r < b.batch; ++r) {
    float* row = b.row(r);
    switch (r % 4) {
      case 0:  // extremes only: huge key range, heavy ties
        for (std::int64_t i = 0; i < b.vocab; ++i) row[i] = extremes[rng() % 14];
        break;
      case 1: {  // a chain of consecutive floats: neighbours one ulp apart
        float x = float(rng() % 100) - 50.0f;
        for (std::int64_t i = 0; i < b.vocab; ++i) row[i] = x = std::nextafter(x, inf);
        std::shuffle(row, row + b.vocab, rng);
        break;
      }
      case 2:  // +-0.0 and denormals
        for (std::int64_t i = 0; i < b.vocab; ++i)
          row[i] = float(int(rng() % 5) - 2) * std::numeric_limits<float>::denorm_min() *
                   float(rng() % 2 ? 1 : -1);
        break;
      default:  // full float range, log-uniform magnitudes
        for (std::int64_t i = 0; i < b.vocab; ++i)
          row[i] = std::ldexp(float(rng() % 1000) / 1000.0f, int(rng() % 250) - 125) *
                   (rng() % 2 ? 1.0f : -1.0f);
    }
    b.k[r] = 1 + int(rng() % 2999);
    b.p[r] = (r / 4) % 2 ? 0.01f + 0.98f * float(rng() % 1000) / 1000.0f : 1.0f;
  }
  for (qrita::Search search : {qrita::Search::quaternary, qrita::Search::binary}) {
    qrita::Options o;
    o.search = search;
    const int bound = search == qrita::Search::quaternary ? 17 : 33;
    const qtest::Result out = qtest::run<TypeParam>(b, o);
    EXPECT_TRUE(check_batch(b, out));
    // A boundary found by the pivot search (the truncated, buckets and
    // full paths) took between 1 and `bound` passes; a row with nothing to
    // search (off, trivial, flat) took none.
    using qrita::RowPath;
    int searched = 0;
    const auto check_passes = [&](std::size_t r, const char* filter, RowPath path, int passes) {
      if (path == RowPath::truncated || path == RowPath::buckets || path == RowPath::full) {
        EXPECT_GE(passes, 1) << "row " << r << ", " << filter << ", path " << int(path);
        EXPECT_LE(passes, bound) << "row " << r << ", " << filter << ", path " << int(path);
        ++searched;
      } else {
        EXPECT_EQ(passes, 0) << "row " << r << ", " << filter << ", path " << int(path);
      }
    };
    for (std::size_t r = 0; r < out.stats.size(); ++r) {
      auto const& st = out.stats[r];
      EXPECT_NE(st.topk_path, RowPath::off) << "row " << r << ": 0 < k < V on every row";
      check_passes(r, "top-k", st.topk_path, st.topk_passes);
      check_passes(r, "top-p", st.topp_path, st.topp_passes);
    }
    EXPECT_GE(searched, b.batch / 2) << "most rows' boundaries must be searched";
  }
}

// 16. V in {1, 2, 3, 111, 32000, 128256, 151936, 201088, 262208} and block
//     sizes +-1; B in {0, 1, 19, 989, 4096}.
TYPED_TEST(Semantics, Case16_VocabAndBatchSizes) {
  // The sample (4096) and the default candidate buffer (8192) are the
  // block sizes of this implementation.
  for (std::int64_t vocab : {1, 2, 3, 111, 4095, 4096, 4097, 8191, 8192, 8193, 32000,
                             128256, 151936, 201088, 262208}) {
    Batch b(3, vocab);
    std::mt19937_64 rng(static_cast<std::uint64_t>(vocab));
    for (std::int64_t r = 0; r < 3; ++r) {
      qrita::synthetic::fill_row(b.row(r), vocab, qrita::synthetic::Shape::lm, rng);
      b.k[r] = int(std::min<std::int64_t>(50, vocab - 1) > 0 ? std::min<std::int64_t>(50, vocab - 1) : 1);
      b.p[r] = r == 0 ? 1.0f : (r == 1 ? 0.9f : 0.0f);
    }
    EXPECT_TRUE(check_batch(b, qtest::run<TypeParam>(b))) << "V " << vocab;
  }
  for (std::int64_t batch : {0, 1, 19, 989, 4096}) {
    Batch b(batch, 257);
    std::mt19937_64 rng(static_cast<std::uint64_t>(batch));
    for (std::int64_t r = 0; r < batch; ++r) {
      qrita::synthetic::fill_row(b.row(r), 257, qrita::synthetic::Shape::ties, rng);
      b.k[r] = int(rng() % 300);
      b.p[r] = float(rng() % 120) / 100.0f;
    }
    EXPECT_TRUE(check_batch(b, qtest::run<TypeParam>(b))) << "B " << batch;
  }
}

// 17. Row strides larger than V (padded rows): the padding is never touched.
TYPED_TEST(Semantics, Case17_PaddedRows) {
  Batch b(16, 5000, 5000 + 37);
  std::mt19937_64 rng(17);
  for (std::int64_t r = 0; r < b.batch; ++r) {
    qrita::synthetic::lm_row(b.row(r), b.vocab, rng);
    for (std::int64_t i = b.vocab; i < b.stride; ++i)
      b.row(r)[i] = (i % 2) ? qtest::nan_value() : 1e30f;  // would win if read
    b.k[r] = r % 2 ? 10 : 0;
    b.p[r] = r % 3 ? 0.8f : 1.0f;
  }
  EXPECT_TRUE(check_batch(b, qtest::run<TypeParam>(b)));
}

// 18. Element offsets beyond 2^31: rows 2^30 + 16 elements apart, so the
//     last row starts past 2^31. Only the rows' first V entries are touched,
//     the rest of the 12 GiB stays virtual.
TYPED_TEST(Semantics, Case18_OffsetsBeyond32Bits) {
  using mem = typename TypeParam::memory_space;
  const std::size_t batch = 3, vocab = 4000, stride = (std::size_t(1) << 30) + 16;
  Kokkos::View<float**, Kokkos::LayoutRight, mem> full(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "big"), batch, stride);
  auto logits = Kokkos::subview(full, Kokkos::ALL, std::make_pair(std::size_t(0), vocab));
  ASSERT_GT(std::size_t(logits.stride(0)) * (batch - 1), std::size_t(INT_MAX));
  Batch host(static_cast<std::int64_t>(batch), static_cast<std::int64_t>(vocab));
  std::mt19937_64 rng(18);
  Kokkos::View<int*, mem> k("k", batch);
  Kokkos::View<float*, mem> p("p", batch);
  auto k_h = Kokkos::create_mirror_view(k);
  auto p_h = Kokkos::create_mirror_view(p);
  for (std::size_t r = 0; r < batch; ++r) {
    qrita::synthetic::lm_row(host.row(std::int64_t(r)), std::int64_t(vocab), rng);
    host.k[r] = k_h(r) = 7;
    host.p[r] = p_h(r) = r == 1 ? 0.9f : 1.0f;
    Kokkos::View<float*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> src(
        host.row(std::int64_t(r)), vocab);
    Kokkos::deep_copy(Kokkos::subview(logits, r, Kokkos::ALL), src);
  }
  Kokkos::deep_copy(k, k_h);
  Kokkos::deep_copy(p, p_h);
  qrita::sample_mask(TypeParam(), logits, k, p);
  TypeParam().fence();
  std::vector<float> out(batch * vocab);
  for (std::size_t r = 0; r < batch; ++r) {
    Kokkos::View<float*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> dst(out.data() + r * vocab,
                                                                         vocab);
    Kokkos::deep_copy(dst, Kokkos::subview(logits, r, Kokkos::ALL));
  }
  EXPECT_TRUE(check_batch(host, qtest::Result{out, {}}));
}

}  // namespace
