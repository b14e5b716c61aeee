// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_DETAIL_SIGMA_TRUNCATE_HPP
#define QRITA_DETAIL_SIGMA_TRUNCATE_HPP

// Stage 1, Gaussian sigma-truncation (paper section 3.1).
//
// LM logits are a Gaussian bulk plus a few informative outliers, so the
// entries above t = mu + delta * sigma are few and hold the answer. One pass
// over the row gathers them and, in the same read, finds the row's maximum,
// its smallest candidate, its number of candidates and a histogram of the
// entries it did not gather. Whether the gathered set is enough (a "hit")
// is decided by the caller; on a miss the histogram says where to look.

#include <qrita/detail/candidates.hpp>
#include <qrita/detail/histogram.hpp>
#include <qrita/detail/keys.hpp>
#include <qrita/detail/policy.hpp>
#include <qrita/detail/reducers.hpp>
#include <qrita/detail/row_access.hpp>

namespace qrita {
namespace detail {

// mu and sigma come from sample_size entries of the row. The paper takes
// the first 4096; real vocabularies are ordered (low token ids are bytes,
// whitespace and short pieces, and run hot), so a row's head is a biased
// sample of it: on a 262144-entry Gemma-3 vocabulary its mean sat about 0.9
// row standard deviations above the row's and its spread was 1.35x the
// row's, which put t so deep in the tail that a quarter of rows had nothing
// above it. qrita samples sample_segments runs of segment_length entries
// spread evenly over the row instead: the runs keep the reads coalesced, the
// spread removes the bias (the numbers: Tuning, policy.hpp).
constexpr int sample_segments = Tuning::sample_segments;
constexpr int segment_length  = Tuning::segment_length;
constexpr int sample_size     = sample_segments * segment_length;
constexpr int sample_loads    = Tuning::sample_loads;

// Row of a 200-entry table for x in [0, 1] (k / V or p).
KOKKOS_INLINE_FUNCTION int table_index(double x) {
  const double i = x * 200.0;
  return !(i > 0.0) ? 0 : (i >= 199.0 ? 199 : static_cast<int>(i));  // NaN: 0
}

KOKKOS_INLINE_FUNCTION float with_margin(float delta) {
  return delta - Tuning::sigma_margin * (delta < 0.0f ? -delta : delta);
}

// Column of sample entry j (0 <= j < sample_size) of a row of `vocab`
// entries, vocab > sample_size: segment s starts at s * (vocab - L) / (S - 1),
// so the first segment opens the row and the last one closes it.
KOKKOS_INLINE_FUNCTION int sample_column(int j, int vocab) {
  const int s = j / segment_length;
  const std::int64_t start =
      std::int64_t(s) * std::int64_t(vocab - segment_length) / (sample_segments - 1);
  return int(start) + j % segment_length;
}

// Moments of the sample in fixed point. Every sample entry is taken as
// d = z - shift, clamped to +-2^15 and truncated to a multiple of 2^-16;
// sums of d and d^2 are then integer sums, exact and independent of the
// order in which the team adds them. The threshold is thus bitwise the same
// whatever the team size or backend, which keeps every later decision
// deterministic, and every thread of the team takes part in one coalesced
// read. (The clamp and the rounding only move t, never the answer.)
struct SampleSums {
  std::int64_t s;          // sum of d * 2^16
  std::int64_t s2;         // sum of d^2 * 2^16
  std::int64_t cnt;        // finite entries
  key_type min_key;        // smallest finite entry's key
  key_type max_key;        // largest finite entry's key
  std::int64_t max_count;  // entries whose key is max_key

  KOKKOS_INLINE_FUNCTION static void init(SampleSums& v) {
    v.s = 0;
    v.s2 = 0;
    v.cnt = 0;
    v.min_key = no_key;
    v.max_key = 0;
    v.max_count = 0;
  }
  KOKKOS_INLINE_FUNCTION static void join(SampleSums& a, const SampleSums& b) {
    a.s += b.s;
    a.s2 += b.s2;
    a.cnt += b.cnt;
    if (b.min_key < a.min_key) a.min_key = b.min_key;
    if (b.max_key > a.max_key) {
      a.max_key = b.max_key;
      a.max_count = b.max_count;
    } else if (b.max_key == a.max_key) {
      a.max_count += b.max_count;
    }
  }
};

constexpr double sample_unit  = 65536.0;  // 2^16
constexpr double sample_limit = 32767.0;  // |d| clamp: q * q < 2^62

// The truncation threshold and the low end of the histogram, both from the
// sample.
struct Threshold {
  float t;   // mu + delta * sigma; NaN when the sample has no finite entry
  float lo;  // the sample's smallest finite entry
  double mean;
  double sigma;
  KOKKOS_INLINE_FUNCTION bool valid() const { return t == t; }
};

// Returns t = mu + delta * sigma of the sample (finite entries only), or
// just under the sample's maximum where that lies lower (see top_limit
// below), and the sample's minimum; t is NaN when the sample has no finite
// entry.
template <class Member, class T>
KOKKOS_INLINE_FUNCTION Threshold sample_threshold(Member const& team,
                                                  const T* row, int vocab,
                                                  float delta, double top_limit) {
  const float nan    = bits_as_float(0x7FC00000u);
  const bool whole   = vocab <= sample_size;
  const int n        = whole ? vocab : sample_size;
  // Shifting by the first entry keeps the sums small when logits carry a
  // large common offset.
  const float first  = to_float(row[0]);
  const double shift = is_finite_value(first) ? double(first) : 0.0;
  SampleSums sums;
  // Each thread loads sample_loads entries before it adds any: as many
  // reads in flight per thread, instead of one latency each (the sample is
  // a large share of a split row's first launch, where each team reads
  // only a segment).
  // Entry j = c + u * chunks: consecutive threads read consecutive entries.
  const int chunks = (n + sample_loads - 1) / sample_loads;
  team_reduce(
      team, chunks,
      [&](int c, SampleSums& acc) {
        float zs[sample_loads];
        for (int u = 0; u < sample_loads; ++u) {
          const int j = c + u * chunks;
          zs[u] = j < n ? to_float(row[whole ? j : sample_column(j, vocab)]) : nan;
        }
        for (int u = 0; u < sample_loads; ++u) {
          const float z = zs[u];
          if (!is_finite_value(z)) continue;
          double d = double(z) - shift;
          d = d > sample_limit ? sample_limit : (d < -sample_limit ? -sample_limit : d);
          const std::int64_t q = static_cast<std::int64_t>(d * sample_unit);
          acc.s += q;
          acc.s2 += (q * q) >> 16;
          acc.cnt += 1;
          const key_type key = order_key(z);
          if (key < acc.min_key) acc.min_key = key;
          if (key > acc.max_key) {
            acc.max_key = key;
            acc.max_count = 1;
          } else if (key == acc.max_key) {
            acc.max_count += 1;
          }
        }
      },
      StructReducer<SampleSums>(sums));
  if (sums.cnt == 0) return Threshold{nan, nan, 0.0, 0.0};
  const double cnt  = double(sums.cnt);
  const double mean = double(sums.s) / (cnt * sample_unit);
  double var        = double(sums.s2) / (cnt * sample_unit) - mean * mean;
  if (!(var > 0.0)) var = 0.0;
  const double sigma = sqrt_d(var);
  float tf = static_cast<float>(shift + mean + double(delta) * sigma);
  // Never above the sample's largest entry: logits with a bounded range
  // (torch.rand's U[0, 1)) put mu + delta * sigma above every entry, while
  // about V / sample_size entries lie above the sample's maximum. t goes
  // just under it, so that the entries equal to it are outliers too:
  // 16-bit logits of a bounded range share each value among hundreds of
  // entries (bf16 U[0, 1): about V / 256 each), and t on the maximum left
  // them no outlier at all, so every top-k row missed. A maximum the
  // sample shares so often that the row would hold more than top_limit
  // entries at it keeps t on it (they would overflow the candidates).
  const float top = key_value(sums.max_key);
  if (tf > top) {
    const double at_top = double(sums.max_count) * double(vocab) / cnt;
    tf = at_top <= top_limit ? value_below(sums.max_key) : top;
  }
  return Threshold{is_finite_value(tf) ? tf : nan, key_value(sums.min_key),
                   shift + mean, sigma};
}

// What one read of the row learns besides the gathered outliers.
struct RowScan {
  key_type max_key;         // largest key (neg_inf_key if no candidate)
  key_type min_key;         // smallest candidate key
  std::uint32_t candidates;  // entries above -inf (NaN is not one)
  weight_type tail;         // sum of weights relative to t of candidates <= t
  std::uint32_t below;      // candidates in histogram bucket 0 (below lo)

  KOKKOS_INLINE_FUNCTION static void init(RowScan& v) {
    v.max_key    = neg_inf_key;
    v.min_key    = no_key;
    v.candidates = 0;
    v.tail       = 0;
    v.below      = 0;
  }
  KOKKOS_INLINE_FUNCTION static void join(RowScan& a, const RowScan& b) {
    if (b.max_key > a.max_key) a.max_key = b.max_key;
    if (b.min_key < a.min_key) a.min_key = b.min_key;
    a.candidates += b.candidates;
    a.tail += b.tail;
    a.below += b.below;
  }
};

// The gathering read (pass 1) of `vocab` entries from `row` (a whole row,
// or a segment of one whose first column is column_base). Entries above t
// (none if t is NaN) are offered to `set` (by value, as is the map: see
// gather_range);
// the others are counted into the histogram `hist` (team scratch, zeroed
// by the caller; nullptr: none) by map.index, except bucket
// 0, which is returned as RowScan::below for the caller to store. With
// want_tail, the weights exp((z - t) * inv_t) of the candidates at or below
// t are summed in the scale's fixed point: together with the gathered head
// this gives the row's softmax normaliser without a second read.
template <int Unroll, class Member, class T>
KOKKOS_FORCEINLINE_FUNCTION RowScan scan_row(Member const& team, const T* row,
                                        int vocab, const BucketMap map,
                                        const Candidates set,
                                        std::uint32_t* hist, bool want_tail,
                                        float scale, float inv_t,
                                        int column_base = 0) {
  RowScan result;
  const float t        = map.t;
  const RowSplit split = split_row(row, vocab);
  const int workers    = team.team_size();
  team_reduce(
      team, workers,
      [&](int j, RowScan& acc) {
        HistogramRun run{hist, workers > 1};
        // The candidate test, the count and the extremes take no branch:
        // the extremes are kept as values and keyed once at the thread's
        // end, since a key costs about ten instructions per entry and a
        // skipped non-candidate a branch of its own. The pass is bound
        // by its per-entry instruction chains, most of all for 16-bit
        // logits (docs/DESIGN.md, "Whole-row passes").
        const float inf    = bits_as_float(0x7F800000u);
        float top          = -inf;
        float bottom       = inf;
        std::uint32_t seen = 0, below = 0;
        visit_row<Unroll>(row, split, j, workers, [&](float z, int column) {
          const bool candidate = is_candidate_value(z);
          seen += candidate ? 1u : 0u;
          top    = larger_candidate(top, z);  // NaN and -inf never win
          bottom = smaller_candidate(bottom, candidate ? z : inf);
          if (z > t) {
            set.push(z, column_base + column);
            return;
          }
          if (hist != nullptr) {
            // Bucket 0 (below the histogram's range) holds most of a top-k
            // row: counted in a register, not with atomics.
            if (candidate && z >= map.lo)
              run.add(map.index_in_range(z));
            else
              below += candidate ? 1u : 0u;
          }
          if (want_tail) {  // the same for the whole call: no divergence
            const weight_type w = fixed_weight(z, t, scale, inv_t);
            acc.tail += candidate ? w : weight_type(0);
          }
        });
        if (hist != nullptr) run.flush();
        acc.candidates += seen;
        acc.below += below;
        if (seen > 0) {
          const key_type hi = order_key(top), lo = order_key(bottom);
          if (hi > acc.max_key) acc.max_key = hi;
          if (lo < acc.min_key) acc.min_key = lo;
        }
      },
      StructReducer<RowScan>(result));
  return result;
}

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_SIGMA_TRUNCATE_HPP
