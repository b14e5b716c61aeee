// SPDX-License-Identifier: Apache-2.0
// Pass 1 on its own: detail::scan_row on crafted rows, against a count on
// the host of what the pass promises (sigma_truncate.hpp): the candidates
// (entries neither -inf nor NaN), the largest and smallest candidate keys,
// the entries above t offered to the set with their columns, the histogram
// of the others by BucketMap::index with bucket 0 as RowScan::below, and,
// when asked, the tail's fixed-point weights.
//
// The whole-call tests cannot see every slip here: the kernels' exact
// searches repair a wrong count (a row whose candidates are overcounted
// still gets the right mask, through a slower path). This test holds pass 1
// itself to its contract, on every backend, at several team sizes and both
// unrolls, on rows whose 16-byte groups lie wholly below the histogram's
// range, straddle it, or hold NaN, -inf, +inf and signed zeros, starting at
// every alignment. (A planted slip in a group-at-once variant of pass 1,
// NaN counted as a candidate, fails this test and no other.)

// nvcc also compiles a host copy of each KOKKOS_LAMBDA. The one that calls
// pivot_search directly (search_below_holds) instantiates the search with a
// CUDA team member, whose team_reduce writes nothing on the host, and g++
// flags the reduction's result as maybe-uninitialized, an error under the
// presets' -Werror. That host copy never runs; the library's own kernels are
// functors and do not meet this.
#if defined(__CUDACC__) && !defined(__CUDA_ARCH__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "support.hpp"
#include "support_sampling.hpp"

#include <qrita/detail/kernels/row_kernel.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

namespace {

using namespace qrita::detail;
using qtest::inf;

template <class Space>
class Scan : public ::testing::Test {};
TYPED_TEST_SUITE(Scan, qtest::Backends, qtest::BackendName);

struct Expected {
  RowScan scan;
  std::vector<std::uint32_t> hist;          // buckets 1 .. nb - 1
  std::multimap<int, std::uint32_t> pushed;  // column -> value bits
};

struct Got {
  RowScan scan;
  std::vector<std::uint32_t> hist;
  std::multimap<int, std::uint32_t> pushed;
  int offered = 0;
};

struct Case {
  BucketMap map;
  bool hist;
  bool tail;
  const char* name;
};

template <class T>
Expected expect(std::vector<T> const& row, int offset, int vocab, Case const& c,
                float scale) {
  Expected e;
  RowScan::init(e.scan);
  e.hist.assign(std::size_t(c.map.nb + 1), 0u);
  for (int i = 0; i < vocab; ++i) {
    const float z     = qrita::to_float(row[std::size_t(offset + i)]);
    const key_type key = order_key(z);
    if (!is_candidate(key)) continue;
    e.scan.candidates += 1;
    e.scan.max_key = std::max(e.scan.max_key, key);
    e.scan.min_key = std::min(e.scan.min_key, key);
    if (z > c.map.t) {
      e.pushed.emplace(i, qtest::bits(z));
      continue;
    }
    if (c.hist) {
      const int b = c.map.index(z);
      if (b == 0)
        e.scan.below += 1;
      else
        e.hist[std::size_t(b)] += 1;
    }
    if (c.tail) e.scan.tail += fixed_weight(z, c.map.t, scale);
  }
  return e;
}

template <class Space, class T, int Unroll>
Got run(std::vector<T> const& host, int offset, int vocab, Case const& c, float scale,
        int team_size) {
  using mem = typename Space::memory_space;
  Kokkos::View<T*, mem> row("qrita_tests::scan_row", host.size());
  {
    auto h = Kokkos::create_mirror_view(row);
    for (std::size_t i = 0; i < host.size(); ++i) h(i) = host[i];
    Kokkos::deep_copy(row, h);
  }
  Kokkos::View<float*, mem> vals("qrita_tests::scan_vals", std::size_t(vocab));
  Kokkos::View<int*, mem> cols("qrita_tests::scan_cols", std::size_t(vocab));
  Kokkos::View<int, mem> counter("qrita_tests::scan_counter");
  Kokkos::View<std::uint32_t*, mem> hist_out("qrita_tests::scan_hist",
                                             std::size_t(c.map.nb + 1));
  Kokkos::View<RowScan, mem> result("qrita_tests::scan_result");
  const BucketMap map  = c.map;
  const bool with_hist = c.hist;
  const bool tail      = c.tail;
  const int nb         = map.nb;
  // The histogram in team scratch, as the kernels hold it: a scratch View,
  // whose shmem_size includes the alignment the allocation rounds up to (a
  // request of exactly (nb + 1) * 4 bytes got a null pointer on CUDA).
  using scratch_view = Kokkos::View<std::uint32_t*, typename Space::scratch_memory_space,
                                    Kokkos::MemoryUnmanaged>;
  const int scratch = int(scratch_view::shmem_size(std::size_t(nb + 1)));
  using policy_type = Kokkos::TeamPolicy<Space>;
  using member      = typename policy_type::member_type;
  policy_type policy(1, team_size);
  policy.set_scratch_size(0, Kokkos::PerTeam(scratch));
  Kokkos::parallel_for(
      "qrita_tests::scan", policy, KOKKOS_LAMBDA(member const& team) {
        const scratch_view counts(team.team_scratch(0), std::size_t(nb + 1));
        std::uint32_t* hist = counts.data();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nb + 1),
                             [&](int b) { hist[b] = 0; });
        Kokkos::single(Kokkos::PerTeam(team), [&]() { counter() = 0; });
        team.team_barrier();
        const Candidates set{vals.data(), cols.data(), vocab, nullptr, nullptr, 0,
                             counter.data()};
        const RowScan s = scan_row<Unroll>(team, row.data() + offset, vocab, map, set,
                                           with_hist ? hist : nullptr, tail, scale, 1.0f);
        team.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nb + 1),
                             [&](int b) { hist_out(b) = hist[b]; });
        Kokkos::single(Kokkos::PerTeam(team), [&]() { result() = s; });
      });
  Got g;
  auto r = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), result);
  g.scan = r();
  auto n  = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), counter);
  g.offered = n();
  auto hh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), hist_out);
  g.hist.assign(hh.data(), hh.data() + (nb + 1));
  auto v  = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), vals);
  auto cc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), cols);
  for (int i = 0; i < std::min(g.offered, vocab); ++i) g.pushed.emplace(cc(i), qtest::bits(v(i)));
  return g;
}

// A row of `n` values: a Gaussian bulk with a few large outliers, and
// stretches of one special value each (whole 16-byte groups of NaN, -inf,
// -0.0 and +0.0, and groups where they sit beside ordinary values).
std::vector<float> crafted_row(int n, std::mt19937& rng, int flavour) {
  std::normal_distribution<float> bulk(0.0f, 1.0f);
  std::uniform_int_distribution<int> pos(0, n - 1);
  std::vector<float> x(static_cast<std::size_t>(n));
  for (auto& v : x) v = bulk(rng);
  for (int i = 0; i < n / 200 + 1; ++i) x[std::size_t(pos(rng))] = 4.0f + bulk(rng);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float specials[] = {nan, -inf, -0.0f, 0.0f, inf};
  const int runs = flavour == 0 ? 6 : 40;
  for (int r = 0; r < runs; ++r) {
    const float s   = specials[r % (flavour == 2 ? 4 : 5)];
    const int start = pos(rng);
    const int len   = 1 + int(rng() % 24u);
    for (int i = start; i < std::min(n, start + len); ++i) x[std::size_t(i)] = s;
  }
  if (flavour == 2) {  // mostly -inf and NaN, as a masked or padded row
    for (int i = 0; i < n; ++i)
      if (i % 7 != 0) x[std::size_t(i)] = (i / 64) % 2 ? -inf : nan;
  }
  return x;
}

float quantile(std::vector<float> v, double q) {
  v.erase(std::remove_if(v.begin(), v.end(), [](float z) { return !std::isfinite(z); }),
          v.end());
  if (v.empty()) return 0.0f;
  std::sort(v.begin(), v.end());
  return v[std::size_t(q * double(v.size() - 1))];
}

template <class Space, class T>
void check_type() {
  std::mt19937 rng(20261125);
  const float scale = std::ldexp(1.0f, 40);
  const float nan   = std::numeric_limits<float>::quiet_NaN();
  int checked       = 0;
  // Under compute-sanitizer (a kernel a few hundred times slower): one
  // team size above one, both unrolls, two alignments.
  const bool tool = qtest::under_tool();
  for (int vocab : {1, 7, 200, 1000, 4099}) {
    if (tool && vocab == 200) continue;
    for (int flavour = 0; flavour < 3; ++flavour) {
      const std::vector<float> x = crafted_row(vocab + 8, rng, flavour);
      std::vector<T> row(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) row[i] = qrita::from_float<T>(x[i]);
      std::vector<float> stored(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) stored[i] = qrita::to_float(row[i]);
      const float q50 = quantile(stored, 0.5), q90 = quantile(stored, 0.9);
      const float q97 = quantile(stored, 0.97), qmin = quantile(stored, 0.0);
      const Case cases[] = {
          {BucketMap::make(q90, q97, 64), true, false, "top-k histogram [q90, q97]"},
          {BucketMap::make(qmin, q97, 64), true, false, "histogram from the minimum"},
          {BucketMap::make(qmin, q97, 64), true, true, "histogram and tail (top-p)"},
          {BucketMap::make(q97, q90, 64), true, false, "lo above t"},
          {BucketMap::make(q50, q90, 1), false, false, "no histogram"},
          {BucketMap::make(q50, q90, 1), false, true, "tail, no histogram"},
          {BucketMap::make(nan, nan, 1), false, false, "t NaN"},
      };
      for (int offset = 0; offset < 8; offset += (tool ? 5 : vocab > 200 ? 3 : 1)) {
        for (Case const& c : cases) {
          const Expected e = expect(row, offset, vocab, c, scale);
          for (int team_size : {1, 2, 32, 256}) {
            const bool host = Kokkos::SpaceAccessibility<
                Kokkos::HostSpace, typename Space::memory_space>::accessible;
            if (host && team_size > Space().concurrency()) continue;
            if (tool && team_size != (host ? 1 : 32)) continue;
            for (int unroll = 1; unroll <= 2; ++unroll) {
              const Got g = unroll == 1
                                ? run<Space, T, 1>(row, offset, vocab, c, scale, team_size)
                                : run<Space, T, 2>(row, offset, vocab, c, scale, team_size);
              const std::string where = std::string(c.name) + ", vocab " +
                                        std::to_string(vocab) + ", flavour " +
                                        std::to_string(flavour) + ", offset " +
                                        std::to_string(offset) + ", team " +
                                        std::to_string(team_size) + ", unroll " +
                                        std::to_string(unroll);
              SCOPED_TRACE(where);
              EXPECT_EQ(g.scan.candidates, e.scan.candidates);
              EXPECT_EQ(g.scan.max_key, e.scan.max_key);
              EXPECT_EQ(g.scan.min_key, e.scan.min_key);
              EXPECT_EQ(g.scan.below, e.scan.below);
              EXPECT_EQ(g.offered, int(e.pushed.size()));
              EXPECT_EQ(g.pushed, e.pushed);
              for (int b = 1; b < c.map.nb; ++b)
                ASSERT_EQ(g.hist[std::size_t(b)], e.hist[std::size_t(b)]) << "bucket " << b;
              if (c.tail) {
                // exp may differ in its last bit between a device and the host.
                const double rel = std::abs(double(g.scan.tail) - double(e.scan.tail)) /
                                   (double(e.scan.tail) + 1.0);
                EXPECT_LT(rel, 1e-6) << g.scan.tail << " vs " << e.scan.tail;
              } else {
                EXPECT_EQ(g.scan.tail, 0u);
              }
              ++checked;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 0);
}

TYPED_TEST(Scan, GatheringReadKeepsItsContract) {
  check_type<TypeParam, float>();
  check_type<TypeParam, qrita::bfloat16>();
  check_type<TypeParam, qrita::float16>();
}

// The pivot search's boundary carries M(> K), the weight of the search set
// above its key (Boundary::below), which the search knows at its last
// pass: equal to the host's sum over the set, for counts and fixed-point
// weights, the quaternary and the binary search, sets with many ties, and
// boundary copies of a floor below the set (top-p after top-k).
template <class Space>
void search_below_holds() {
  using mem = typename Space::memory_space;
  std::mt19937 rng(20261129u);
  int checked = 0;
  for (int trial = 0; trial < 24; ++trial) {
    const int n = 1 + int(rng() % 3000u);
    std::vector<float> x(static_cast<std::size_t>(n));
    std::normal_distribution<float> bulk(0.0f, 1.5f);
    for (auto& v : x) v = trial % 3 == 0 ? float(int(bulk(rng) * 4.0f)) / 4.0f : bulk(rng);
    const float mx         = *std::max_element(x.begin(), x.end());
    const bool by_mass     = trial % 2 == 0;
    const bool binary      = trial % 4 >= 2;
    const std::uint32_t copies = trial % 5 == 4 ? std::uint32_t(1u + rng() % 7u) : 0u;
    const float lowest   = *std::min_element(x.begin(), x.end());
    const key_type floor = copies > 0 ? order_key(lowest - 1.0f) : neg_inf_key;
    const MassMeasure mass{mx, 0x1p40f, 1.0f};
    const auto weigh = [&](float z) { return by_mass ? mass(z) : weight_type(1); };
    const auto unit  = [&](key_type k) { return by_mass ? mass.unit(k) : weight_type(1); };
    weight_type total = unit(floor) * copies;
    for (float z : x) total += weigh(z);
    const weight_type target = 1 + weight_type(rng()) % total;

    Kokkos::View<float*, mem> vals("qrita_tests::search_vals", std::size_t(n));
    auto hv = Kokkos::create_mirror_view(vals);
    for (int i = 0; i < n; ++i) hv(i) = x[std::size_t(i)];
    Kokkos::deep_copy(vals, hv);
    Kokkos::View<Boundary, mem> out("qrita_tests::search_out");
    Kokkos::View<weight_type, mem> out_below("qrita_tests::search_below");
    using policy_type = Kokkos::TeamPolicy<Space>;
    using member      = typename policy_type::member_type;
    const key_type lo = copies > 0 ? key_type(floor - 1) : key_type(order_key(lowest) - 1);
    const key_type hi = order_key(mx);
    Kokkos::parallel_for(
        "qrita_tests::search_below", policy_type(1, Kokkos::AUTO),
        KOKKOS_LAMBDA(member const& team) {
          const Source src{vals.data(), n, nullptr, 0};
          weight_type below = 0;
          const Boundary b =
              by_mass ? pivot_search_by_kind(binary, team, src, mass, floor, copies, target, lo, hi,
                                            &below)
                      : pivot_search_by_kind(binary, team, src, CountMeasure{}, floor, copies,
                                            target, lo, hi, &below);
          Kokkos::single(Kokkos::PerTeam(team), [&]() {
            out()       = b;
            out_below() = below;
          });
        });
    auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
    const Boundary b = got();
    const weight_type b_below =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out_below)();
    weight_type above = floor > b.key ? unit(floor) * copies : 0;
    for (float z : x)
      if (order_key(z) > b.key) above += weigh(z);
    const std::string at = "trial " + std::to_string(trial) + (by_mass ? ", mass" : ", count") +
                           (binary ? ", binary" : ", quaternary") + ", n " + std::to_string(n) +
                           ", copies " + std::to_string(copies);
    ASSERT_GT(b.passes, 0) << at;
    EXPECT_EQ(b_below, above) << at;
    EXPECT_LT(b_below, target) << at;
    EXPECT_GE(b_below + unit(b.key) * b.group, target) << at;
    ++checked;
  }
  EXPECT_EQ(checked, 24);
}

TYPED_TEST(Scan, SearchReturnsTheWeightAboveItsKey) { search_below_holds<TypeParam>(); }

// The bounds a top-p plan sums over the buckets (topp_range): every entry
// the map puts in bucket b lies within BucketEdges' value bounds of b, and
// its fixed-point weight within WeightBounds' integer bounds of b. Too
// narrow a bound can make a plan miss the boundary's bucket; the whole-call
// tests would see that only as a slower path. Maps narrow and wide, around
// zero and far from it, flat (no width), 2 to 2048 buckets; entries drawn
// at random and on every bucket's float edges with their neighbours;
// temperatures from 0.05 to 20, scales 2^20 to 2^50. (A planted slip, the
// bucket width 0.1% short, fails it.)
TEST(BucketBounds, HoldEveryEntryOfTheirBucket) {
  struct MapCase {
    float lo, t;
    int nb;
  };
  const MapCase maps[] = {{-3.0f, 2.5f, 2048}, {0.1f, 0.12f, 2048}, {-50.0f, 30.0f, 2048},
                          {-1e-3f, 1e-3f, 2048}, {1000.0f, 1001.0f, 2048}, {-3.0f, 2.5f, 64},
                          {-3.0f, 2.5f, 3},      {-3.0f, 2.5f, 2},      {1.5f, 1.5f, 2048}};
  const float inv_ts[] = {1.0f, 1.0f / 0.7f, 1.0f / 1.5f, 20.0f, 0.05f};
  const float scales[] = {0x1p20f, 0x1p40f, 0x1p50f};
  std::mt19937_64 rng(20261129);
  long checked = 0, weighed = 0;
  for (MapCase const& mc : maps) {
    const BucketMap map     = BucketMap::make(mc.lo, mc.t, mc.nb);
    const BucketEdges edges = BucketEdges::of(map);
    std::vector<float> zs;
    const float span = mc.t - mc.lo > 0 ? mc.t - mc.lo : 1.0f;
    std::uniform_real_distribution<float> any(mc.lo - 0.1f * span, mc.t);
    for (int i = 0; i < 4000; ++i) zs.push_back(any(rng));
    for (int b = 0; b < mc.nb && map.inv_w > 0; ++b) {
      const float e = mc.lo + float(b) / map.inv_w;
      zs.push_back(e);
      zs.push_back(std::nextafter(e, -inf));
      zs.push_back(std::nextafter(e, inf));
    }
    zs.push_back(mc.lo);
    zs.push_back(mc.t);
    for (float const max : {mc.t, mc.t + 0.5f, mc.t + 10.0f}) {
      for (float const inv_t : inv_ts) {
        for (float const scale : scales) {
          const WeightBounds wb = WeightBounds::of(map, max, scale, inv_t);
          for (float const z : zs) {
            const int b = map.index(z);
            if (b >= map.nb) continue;  // above t: the outliers, weighed exactly
            ASSERT_LE(z, edges.upper(b)) << "z " << z << " bucket " << b << " of " << map.nb;
            if (b >= 1) {
              ASSERT_GE(z, edges.lower(b)) << "z " << z << " bucket " << b << " of " << map.nb;
            }
            const weight_type w = fixed_weight(z, max, scale, inv_t);
            ASSERT_LE(wb.lower(b, 1), w) << "z " << z << " bucket " << b << " 1/T " << inv_t;
            ASSERT_GE(wb.upper(b, 1), w) << "z " << z << " bucket " << b << " 1/T " << inv_t;
            ASSERT_LE(wb.lower(b, 3), 3 * w);
            ASSERT_GE(wb.upper(b, 3), 3 * w);
            ++checked;
            weighed += w > 0;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 100000);
  EXPECT_GT(weighed, checked / 4);  // not only zero weights
}

}  // namespace
