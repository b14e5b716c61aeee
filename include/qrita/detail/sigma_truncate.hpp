#ifndef QRITA_DETAIL_SIGMA_TRUNCATE_HPP
#define QRITA_DETAIL_SIGMA_TRUNCATE_HPP

// Stage 1, Gaussian sigma-truncation (paper section 3.1).
//
// LM logits are a Gaussian bulk plus a few informative outliers, so the
// entries above t = mu + delta * sigma are few and hold the answer. One pass
// over the row gathers them into team scratch and, in the same read, finds
// the row's maximum, its smallest candidate and its number of candidates.
// Whether the gathered set is enough (a "hit") is decided by the caller.

#include <qrita/detail/keys.hpp>
#include <qrita/detail/reducers.hpp>
#include <qrita/detail/row_access.hpp>

namespace qrita {
namespace detail {

// mu and sigma come from the first sample_size entries, as in the paper.
constexpr int sample_size = 4096;
// The paper lowers the table's delta by 20% of its magnitude as a margin.
constexpr float sigma_margin = 0.2f;

// Row of a 200-entry table for x in [0, 1] (k / V or p).
KOKKOS_INLINE_FUNCTION int table_index(double x) {
  const double i = x * 200.0;
  return i <= 0.0 ? 0 : (i >= 199.0 ? 199 : static_cast<int>(i));
}

KOKKOS_INLINE_FUNCTION float with_margin(float delta) {
  return delta - sigma_margin * (delta < 0.0f ? -delta : delta);
}

// Moments of the sample in fixed point. Every sample entry is taken as
// d = z - shift, clamped to +-2^15 and truncated to a multiple of 2^-16;
// sums of d and d^2 are then integer sums, exact and independent of the
// order in which the team adds them. The threshold is thus bitwise the same
// whatever the team size or backend, which keeps every later decision
// deterministic, and every thread of the team takes part in one coalesced
// read. (The clamp and the rounding only move t, never the answer.)
struct SampleSums {
  std::int64_t s;    // sum of d * 2^16
  std::int64_t s2;   // sum of d^2 * 2^16
  std::int64_t cnt;  // finite entries

  KOKKOS_INLINE_FUNCTION static void init(SampleSums& v) {
    v.s = 0;
    v.s2 = 0;
    v.cnt = 0;
  }
  KOKKOS_INLINE_FUNCTION static void join(SampleSums& a, const SampleSums& b) {
    a.s += b.s;
    a.s2 += b.s2;
    a.cnt += b.cnt;
  }
};

constexpr double sample_unit  = 65536.0;  // 2^16
// 16-byte loads each thread has in flight in the gathering pass.
constexpr int row_unroll = 2;
constexpr double sample_limit = 32767.0;  // |d| clamp: q * q < 2^62

// Returns t = mu + delta * sigma of the row's first entries (finite ones
// only), or NaN when no such threshold exists (no finite entry in the
// sample).
template <class Member>
KOKKOS_INLINE_FUNCTION float sample_threshold(Member const& team,
                                              const float* row, int vocab,
                                              float delta) {
  const int n = vocab < sample_size ? vocab : sample_size;
  // Shifting by the first entry keeps the sums small when logits carry a
  // large common offset.
  const float first  = row[0];
  const double shift = is_finite_value(first) ? double(first) : 0.0;
  SampleSums sums;
  const RowSplit split = split_row(row, n);
  const int workers    = team.team_size();
  const auto add = [&](float z, SampleSums& acc) {
    if (!is_finite_value(z)) return;
    double d = double(z) - shift;
    d = d > sample_limit ? sample_limit : (d < -sample_limit ? -sample_limit : d);
    const std::int64_t q = static_cast<std::int64_t>(d * sample_unit);
    acc.s += q;
    acc.s2 += (q * q) >> 16;
    acc.cnt += 1;
  };
  team_reduce(
      team, workers,
      [&](int j, SampleSums& acc) {
        visit_row<1>(row, split, j, workers, [&](float z, int) { add(z, acc); });
      },
      StructReducer<SampleSums>(sums));
  if (sums.cnt == 0) return bits_as_float(0x7FC00000u);
  const double cnt  = double(sums.cnt);
  const double mean = double(sums.s) / (cnt * sample_unit);
  double var        = double(sums.s2) / (cnt * sample_unit) - mean * mean;
  if (!(var > 0.0)) var = 0.0;
  const double t = shift + mean + double(delta) * sqrt_d(var);
  const float tf = static_cast<float>(t);
  return is_finite_value(tf) ? tf : bits_as_float(0x7FC00000u);
}

// What one read of the row learns besides the gathered outliers.
struct RowScan {
  key_type max_key;         // largest key (neg_inf_key if no candidate)
  key_type min_key;         // smallest candidate key
  std::uint32_t candidates;  // entries above -inf (NaN is not one)
  weight_type tail;         // sum of weights relative to t of candidates <= t

  KOKKOS_INLINE_FUNCTION static void init(RowScan& v) {
    v.max_key    = neg_inf_key;
    v.min_key    = no_key;
    v.candidates = 0;
    v.tail       = 0;
  }
  KOKKOS_INLINE_FUNCTION static void join(RowScan& a, const RowScan& b) {
    if (b.max_key > a.max_key) a.max_key = b.max_key;
    if (b.min_key < a.min_key) a.min_key = b.min_key;
    a.candidates += b.candidates;
    a.tail += b.tail;
  }
};

// One pass over the row. Entries above t (none if t is NaN) are appended to
// `buffer`, their columns to `columns`, while there is room; `counter` (team scratch, zeroed by the caller)
// ends up holding how many there were, room or not. With want_tail, the
// weights exp(z - t) of the candidates at or below t are summed in the
// scale's fixed point: together with the gathered head this gives the row's
// softmax normaliser without a second read.
template <class Member>
KOKKOS_INLINE_FUNCTION RowScan scan_row(Member const& team, const float* row,
                                        int vocab, float t, float* buffer,
                                        int* columns, int capacity,
                                        int* counter, bool want_tail,
                                        float scale) {
  RowScan result;
  const auto visit = [&](float z, int column, RowScan& acc) {
    const key_type key = order_key(z);
    if (!is_candidate(key)) return;
    acc.candidates += 1;
    if (key > acc.max_key) acc.max_key = key;
    if (key < acc.min_key) acc.min_key = key;
    if (z > t) {
      const int pos = Kokkos::atomic_fetch_add(counter, 1);
      if (pos < capacity) {
        buffer[pos]  = z;
        columns[pos] = column;
      }
    } else if (want_tail) {
      acc.tail += fixed_weight(z, t, scale);
    }
  };
  const RowSplit split = split_row(row, vocab);
  const int workers    = team.team_size();
  team_reduce(
      team, workers,
      [&](int j, RowScan& acc) {
        visit_row<row_unroll>(row, split, j, workers,
                              [&](float z, int column) { visit(z, column, acc); });
      },
      StructReducer<RowScan>(result));
  return result;
}

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_SIGMA_TRUNCATE_HPP
