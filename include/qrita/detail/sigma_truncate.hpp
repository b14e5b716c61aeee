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

namespace qrita {
namespace detail {

// mu and sigma come from the first sample_size entries, as in the paper.
constexpr int sample_size   = 4096;
// The sample is summed in this many fixed chunks, each by one thread, and
// the chunk sums are combined in chunk order: the threshold is then bitwise
// the same whatever the team size, which keeps every later decision
// deterministic.
constexpr int sample_chunks = 64;
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

// Returns t = mu + delta * sigma of the row's first entries (finite ones
// only), or NaN when no such threshold exists (no finite entry in the
// sample, or the moments overflow). `partial` is team scratch holding
// 3 * sample_chunks doubles.
template <class Member>
KOKKOS_INLINE_FUNCTION float sample_threshold(Member const& team,
                                              const float* row, int vocab,
                                              float delta, double* partial) {
  const int n = vocab < sample_size ? vocab : sample_size;
  // Shifting by the first entry keeps E[x^2] - E[x]^2 well conditioned when
  // logits carry a large common offset.
  const float first = row[0];
  const double shift = is_finite_value(first) ? double(first) : 0.0;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, sample_chunks),
                       [&](int c) {
                         const int b = int((std::int64_t(n) * c) / sample_chunks);
                         const int e =
                             int((std::int64_t(n) * (c + 1)) / sample_chunks);
                         double s = 0.0, s2 = 0.0, cnt = 0.0;
                         for (int i = b; i < e; ++i) {
                           const float z = row[i];
                           if (is_finite_value(z)) {
                             const double d = double(z) - shift;
                             s += d;
                             s2 += d * d;
                             cnt += 1.0;
                           }
                         }
                         partial[c]                     = s;
                         partial[sample_chunks + c]     = s2;
                         partial[2 * sample_chunks + c] = cnt;
                       });
  team.team_barrier();
  double s = 0.0, s2 = 0.0, cnt = 0.0;
  for (int c = 0; c < sample_chunks; ++c) {
    s += partial[c];
    s2 += partial[sample_chunks + c];
    cnt += partial[2 * sample_chunks + c];
  }
  // Every thread must have read the partials before the next row's sample
  // overwrites them.
  team.team_barrier();
  if (cnt == 0.0) return bits_as_float(0x7FC00000u);
  const double mean = s / cnt;
  double var        = s2 / cnt - mean * mean;
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
// `buffer` while it has room; `counter` (team scratch, zeroed by the caller)
// ends up holding how many there were, room or not. With want_tail, the
// weights exp(z - t) of the candidates at or below t are summed in the
// scale's fixed point: together with the gathered head this gives the row's
// softmax normaliser without a second read.
template <class Member>
KOKKOS_INLINE_FUNCTION RowScan scan_row(Member const& team, const float* row,
                                        int vocab, float t, float* buffer,
                                        int capacity, int* counter,
                                        bool want_tail, float scale) {
  RowScan result;
  team_reduce(
      team, vocab,
      [&](int i, RowScan& acc) {
        const float z      = row[i];
        const key_type key = order_key(z);
        if (!is_candidate(key)) return;
        acc.candidates += 1;
        if (key > acc.max_key) acc.max_key = key;
        if (key < acc.min_key) acc.min_key = key;
        if (z > t) {
          const int pos = Kokkos::atomic_fetch_add(counter, 1);
          if (pos < capacity) buffer[pos] = z;
        } else if (want_tail) {
          acc.tail += fixed_weight(z, t, scale);
        }
      },
      StructReducer<RowScan>(result));
  return result;
}

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_SIGMA_TRUNCATE_HPP
