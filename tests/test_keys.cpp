// SPDX-License-Identifier: Apache-2.0
// Unit tests of the number systems the kernels decide in: order keys,
// fixed-point weights, the top-p target, and the paper's tables.

#include "support.hpp"

#include <qrita/detail/kernels/row_kernel.hpp>

#include <algorithm>
#include <random>

namespace {

using namespace qrita::detail;
using qtest::inf;

TEST(Keys, OrderKeysFollowTheDefinitionsOrder) {
  std::vector<float> values = {-inf, -std::numeric_limits<float>::max(), -1e30f, -1.0f,
                               -std::numeric_limits<float>::denorm_min(), 0.0f,
                               std::numeric_limits<float>::denorm_min(),
                               std::numeric_limits<float>::min(), 1.0f,
                               std::nextafter(1.0f, 2.0f), 1e30f,
                               std::numeric_limits<float>::max(), inf};
  std::mt19937 rng(1);
  for (int i = 0; i < 20000; ++i) {
    const std::uint32_t u = std::uint32_t(rng());
    float x;
    std::memcpy(&x, &u, sizeof x);
    if (!std::isnan(x)) values.push_back(x);
  }
  std::sort(values.begin(), values.end());
  for (std::size_t i = 1; i < values.size(); ++i) {
    const float a = values[i - 1], b = values[i];
    if (a < b)
      EXPECT_LT(order_key(a), order_key(b)) << a << " < " << b;
    else
      EXPECT_EQ(order_key(a), order_key(b)) << a << " == " << b;
  }
  for (float x : values) {
    if (x == 0.0f) continue;
    EXPECT_EQ(qtest::bits(key_value(order_key(x))), qtest::bits(x)) << x;
  }
}

TEST(Keys, SpecialValues) {
  EXPECT_EQ(order_key(-0.0f), order_key(0.0f));
  EXPECT_EQ(qtest::bits(key_value(order_key(-0.0f))), qtest::bits(0.0f));
  EXPECT_EQ(order_key(qtest::nan_value()), neg_inf_key);
  EXPECT_EQ(order_key(-qtest::nan_value()), neg_inf_key);
  EXPECT_EQ(order_key(-inf), neg_inf_key);
  EXPECT_FALSE(is_candidate(order_key(-inf)));
  EXPECT_FALSE(is_candidate(order_key(qtest::nan_value())));
  EXPECT_TRUE(is_candidate(order_key(-std::numeric_limits<float>::max())));
  EXPECT_TRUE(is_candidate(order_key(inf)));
  EXPECT_LT(order_key(inf), no_key);
}

TEST(Keys, WeightFractionBitsNeverOverflowASum) {
  for (std::int64_t v : {1, 2, 3, 1000, 128256, 262208, 1 << 20, 1 << 30}) {
    const int f = weight_fraction_bits(v);
    EXPECT_LE(f, 50);
    // v weights of at most 2^f each fit in 62 bits.
    EXPECT_LE(double(v) * std::ldexp(1.0, f), std::ldexp(1.0, 62)) << v;
  }
  EXPECT_EQ(weight_fraction_bits(262208), 43);
}

TEST(Keys, FixedWeights) {
  const float scale = std::ldexp(1.0f, 40);
  EXPECT_EQ(fixed_weight(3.0f, 3.0f, scale), weight_type(1) << 40);
  EXPECT_EQ(fixed_weight(inf, inf, scale), weight_type(1) << 40);
  EXPECT_EQ(fixed_weight(1e30f, inf, scale), 0u);
  EXPECT_EQ(fixed_weight(-100.0f, 0.0f, scale), 0u);  // exp(-100) * 2^40 < 1
  const weight_type half = fixed_weight(-std::log(2.0f), 0.0f, scale);
  EXPECT_NEAR(double(half) / std::ldexp(1.0, 40), 0.5, 1e-7);
  // Temperature limits: an infinite inverse temperature keeps only the
  // maximum's weight; a NaN one weighs nothing below it.
  EXPECT_EQ(fixed_weight(1.0f, 2.0f, scale, inf), 0u);
  EXPECT_EQ(fixed_weight(2.0f, 2.0f, scale, inf), weight_type(1) << 40);
  EXPECT_EQ(fixed_weight(1.0f, 2.0f, scale, qtest::nan_value()), 0u);
  EXPECT_EQ(fixed_weight(1.0f, 2.0f, scale, 0.0f), weight_type(1) << 40);
  // A NaN exponent weighs 0 (-inf * 0 at an infinite temperature).
  EXPECT_EQ(fixed_weight(-inf, 2.0f, scale, 0.0f), 0u);
  // The exponent's floor (-128) changes no weight at the largest scale a
  // row gets (2^50): every weight from an exponent at or below it rounds
  // to 0, and those above it are the plain exp.
  const float top = std::ldexp(1.0f, 50);
  for (float e : {-128.0f, -200.0f, -1e30f, -inf})
    EXPECT_EQ(fixed_weight(e, 0.0f, top), 0u) << e;
  for (float e : {-20.0f, -10.0f, -1.5f}) {
    const double exact = std::exp(double(e)) * std::ldexp(1.0, 50);
    EXPECT_NEAR(double(fixed_weight(e, 0.0f, top)), exact, 1e-6 * exact + 1.0) << e;
  }
}

// The mask's second read weighs with candidate_weight and buckets with
// BucketMap::index_flat (no branch, boundary_buckets.hpp's PhasedVisitor);
// both must give what the definitions give: the weight fixed_weight's for a
// candidate and 0 for a non-candidate, and the bucket index's: nb above t,
// 0 below lo or NaN, else index_in_range(z).
TEST(Keys, BranchFreeWeightAndBucketKeepTheirDefinitions) {
  std::mt19937 gen(2026);
  std::normal_distribution<float> normal(0.0f, 4.0f);
  std::vector<float> zs = {0.0f, -0.0f, 1.0f, -1.0f, 3.0f, 1e30f, -1e30f, inf, -inf,
                           qtest::nan_value(), std::ldexp(1.0f, -140)};
  for (int i = 0; i < 20000; ++i) zs.push_back(normal(gen));
  const float scale = std::ldexp(1.0f, 50);
  for (float ref : {0.0f, 3.0f, 7.5f, inf}) {
    for (float inv_t : {1.0f, 0.5f, 3.0f, 0.0f, inf}) {
      for (float z : zs) {
        const weight_type want = is_candidate_value(z) ? fixed_weight(z, ref, scale, inv_t) : 0;
        EXPECT_EQ(candidate_weight(z, ref, scale, inv_t), want) << z << " " << ref << " " << inv_t;
      }
    }
  }
  const float nan = qtest::nan_value();
  const BucketMap maps[] = {BucketMap::make(-2.0f, 3.0f, 2048), BucketMap::make(-2.0f, 3.0f, 2),
                            BucketMap::make(0.5f, 0.5f, 64), BucketMap::make(4.0f, 1.0f, 64),
                            BucketMap::make(-1.0f, 1.0f, 1), BucketMap::make(nan, nan, 1)};
  for (BucketMap const& m : maps) {
    for (float z : zs) {
      const int want = z > m.t ? m.nb : !(z >= m.lo) ? 0 : m.index_in_range(z);
      EXPECT_EQ(m.index_flat(z), want) << z << " " << m.lo << " " << m.t << " " << m.nb;
      EXPECT_EQ(m.index(z), want) << z;
    }
  }
}

TEST(Keys, ValueBelowIsTheNextSmallerValue) {
  EXPECT_EQ(value_below(order_key(1.0f)), std::nextafter(1.0f, 0.0f));
  EXPECT_EQ(value_below(order_key(-1.0f)), std::nextafter(-1.0f, -2.0f));
  // Below +0.0 (and -0.0, the same key) is the negative denormal, not -0.0.
  EXPECT_EQ(value_below(order_key(0.0f)), -std::numeric_limits<float>::denorm_min());
  EXPECT_EQ(value_below(order_key(-0.0f)), -std::numeric_limits<float>::denorm_min());
  EXPECT_EQ(value_below(order_key(std::numeric_limits<float>::denorm_min())), 0.0f);
  EXPECT_EQ(value_below(order_key(inf)), std::numeric_limits<float>::max());
}

TEST(Keys, MassTargetIsTheCeiling) {
  EXPECT_EQ(mass_target(0.5f, 8.0), 4u);
  EXPECT_EQ(mass_target(0.5f, 9.0), 5u);
  EXPECT_EQ(mass_target(1e-9f, 1000.0), 1u);  // at least one
  EXPECT_EQ(mass_target(0.25f, std::ldexp(1.0, 52)), std::uint64_t(1) << 50);
}

TEST(Keys, PaperTablesAreMonotoneAndIndexedByFraction) {
  for (int i = 1; i < 200; ++i) {
    EXPECT_LE(sigma_topk(i), sigma_topk(i - 1)) << i;
    EXPECT_LE(sigma_topp(i), sigma_topp(i - 1)) << i;
  }
  EXPECT_FLOAT_EQ(sigma_topk(0), 2.576f);  // Phi^-1(0.995)
  EXPECT_NEAR(sigma_topk(99), 0.0f, 0.01f);
  EXPECT_FLOAT_EQ(sigma_topp(0), 3.656f);
  EXPECT_EQ(table_index(0.0), 0);
  EXPECT_EQ(table_index(50.0 / 128256.0), 0);
  EXPECT_EQ(table_index(0.9), 180);
  EXPECT_EQ(table_index(1.0), 199);
  EXPECT_EQ(table_index(-1.0), 0);
  EXPECT_FLOAT_EQ(with_margin(2.0f), 1.6f);
  EXPECT_FLOAT_EQ(with_margin(-1.0f), -1.2f);
}

}  // namespace

namespace {

TEST(Keys, FloorPowerOfTwo) {
  EXPECT_EQ(qrita::detail::floor_power_of_two(1), 1);
  EXPECT_EQ(qrita::detail::floor_power_of_two(2), 2);
  EXPECT_EQ(qrita::detail::floor_power_of_two(3), 2);
  EXPECT_EQ(qrita::detail::floor_power_of_two(672), 512);
  EXPECT_EQ(qrita::detail::floor_power_of_two(1024), 1024);
  EXPECT_EQ(qrita::detail::floor_power_of_two(1 << 30), 1 << 30);
}

}  // namespace
