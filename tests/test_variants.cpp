// SPDX-License-Identifier: Apache-2.0
// The paper's ablations and the tuning knobs are reachable through Options
// and change speed only: every variant gives bitwise the default's output,
// except Ties::keep_all, which keeps the whole boundary tie group.

#include "support.hpp"
#include "synthetic.hpp"

#include <algorithm>
#include <random>

namespace {

using qtest::Batch;

template <class Exec>
class Variants : public ::testing::Test {};
TYPED_TEST_SUITE(Variants, qtest::Backends, qtest::BackendName);

Batch mixed_batch() {
  using qrita::synthetic::Shape;
  const Shape shapes[] = {Shape::lm, Shape::ties, Shape::peaked, Shape::sparse, Shape::flat};
  Batch b(40, 12000);
  std::mt19937_64 rng(7);
  for (std::int64_t r = 0; r < b.batch; ++r) {
    qrita::synthetic::fill_row(b.row(r), b.vocab, shapes[r % 5], rng);
    b.k[r] = r % 4 == 3 ? 0 : 1 + int(rng() % 300);
    b.p[r] = r % 4 == 0 ? 1.0f : 0.5f + float(rng() % 50) / 100.0f;
  }
  return b;
}

TYPED_TEST(Variants, SpeedOnlyOptionsGiveTheSameAnswer) {
  const Batch b = mixed_batch();
  const qtest::Result reference = qtest::run<TypeParam>(b);
  ASSERT_TRUE(qtest::check_batch(b, reference));

  std::vector<std::pair<std::string, qrita::Options>> variants;
  qrita::Options o;
  o.sigma_truncation = false;
  variants.emplace_back("no truncation", o);
  o = {};
  o.search = qrita::Search::binary;
  variants.emplace_back("binary search", o);
  o.sigma_truncation = false;
  variants.emplace_back("binary search, no truncation", o);
  for (int capacity : {1, 100, 4096}) {
    o = {};
    o.candidate_capacity = capacity;
    variants.emplace_back("capacity " + std::to_string(capacity), o);
  }
  o = {};
  o.max_teams = 1;
  variants.emplace_back("one team", o);
  for (auto const& [name, opts] : variants)
    EXPECT_EQ(qtest::run<TypeParam>(b, opts).logits, reference.logits) << name;
}

TYPED_TEST(Variants, KeepAllTiesKeepsTheWholeBoundaryGroup) {
  // Top-k only: keep_all keeps exactly the entries >= the k-th value.
  Batch b(30, 5000);
  std::mt19937_64 rng(8);
  for (std::int64_t r = 0; r < b.batch; ++r) {
    qrita::synthetic::fill_row(b.row(r), b.vocab, qrita::synthetic::Shape::ties, rng);
    b.k[r] = 1 + int(rng() % 200);
  }
  qrita::Options o;
  o.ties = qrita::Ties::keep_all;
  const qtest::Result out = qtest::run<TypeParam>(b, o, qtest::Filters::k_only);
  std::int64_t rows_with_extra = 0;
  for (std::int64_t r = 0; r < b.batch; ++r) {
    const auto ref = qrita::oracle::evaluate(b.row(r), b.vocab, b.k[r], 1.0f);
    const float kth = b.row(r)[ref.order[std::size_t(ref.kept - 1)]];
    std::vector<std::int64_t> expect;
    for (std::int64_t i = 0; i < b.vocab; ++i)
      if (b.row(r)[i] >= kth) expect.push_back(i);
    EXPECT_EQ(qtest::kept_indices(b.row(r), out.logits.data() + r * b.vocab, b.vocab), expect)
        << "row " << r;
    rows_with_extra += std::int64_t(expect.size()) > b.k[r];
  }
  EXPECT_GT(rows_with_extra, 0) << "bf16 rows should put ties on the k-th place";
}

}  // namespace
