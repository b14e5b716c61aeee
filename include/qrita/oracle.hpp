// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_ORACLE_HPP
#define QRITA_ORACLE_HPP

// The reference: qrita's definition written the plain way, on the host, with
// a stable sort and fp64 probabilities. Tests compare every backend against
// it; the perf suite and the CLI use it for spot checks. No Kokkos needed.
// 16-bit logits are checked through their exact float values
// (qrita::to_float), so the oracle only ever reads float rows.
//
// Definition, per row (docs/SEMANTICS.md has it in full):
//  1. Order: descending value, ties by lower index; NaN counts as -inf;
//     -0.0 == +0.0. Candidates are the entries above -inf (+inf is a value
//     above every finite one). M is the largest candidate value.
//  2. Temperature T (1 when absent). T <= 0 or NaN: greedy, the kept set is
//     the first candidate of the order and every other filter is ignored.
//     Otherwise the weights are w_i = exp((x_i - M) / T) (T = +inf: 1 for
//     every finite candidate); if M = +inf the +inf entries weigh 1 and the
//     finite ones 0 (the limit of softmax), whatever T.
//  3. Min-p m (0 < m, not NaN): c = M + T ln(min(m, 1)) in double (c = +inf
//     if M = +inf; c = M if m >= 1, also for T = +inf); the candidates with
//     double(x) >= c survive: a prefix of the order that holds M's tie group.
//  4. Top-k (0 < k < V) on the min-p survivors: the first k of them.
//  5. Top-p (p < 1), on the weights of the top-k survivors normalised over
//     them: the shortest prefix with mass >= p, at least one entry. p <= 0
//     keeps one entry (as k = 1 would).
//  6. Kept entries stay bitwise unchanged, all others become -inf. A row
//     with no active filter (T > 0 and no min-p, top-k or top-p), or with no
//     candidate, is left as it is.
//  7. Sampling and candidate lists: P(i) = w_i / W over the kept set (all
//     candidates for a row left as it is), W = sum of the kept weights;
//     log P(i) = (x_i - M) / T - ln W.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

namespace qrita {
namespace oracle {

// The filters of one row. The defaults switch every filter off (T = 1).
struct RowFilters {
  int k             = 0;     // top-k: on for 0 < k < vocab
  float p           = 1.0f;  // top-p: on for p < 1 (p <= 0 keeps one entry)
  float min_p       = 0.0f;  // min-p: on for m > 0
  float temperature = 1.0f;  // T > 0 scales; T <= 0 or NaN is greedy
};

// A min-p cut c and the freedom verify allows around it: a device's log may
// differ from the host's by an ulp, so entries with |double(x) - c| <=
// minp_tolerance * max(1, |c|) may be kept or dropped.
constexpr double minp_tolerance = 1e-12;

struct RowResult {
  bool untouched = true;            // the row is left as it is
  std::vector<std::int64_t> order;  // candidates, in the definition's order
  bool greedy = false;              // T <= 0 or NaN: only order[0] is kept
  double temperature = 1.0;         // T as the weights use it (1 when greedy)
  bool minp_active = false;
  double minp_cut = 0.0;            // c, when min-p is active
  std::int64_t minp_count = 0;      // survivors of min-p: order[0, minp_count)
  std::int64_t topk_count = 0;      // survivors of top-k: order[0, topk_count)
  bool topp_active = false;
  std::vector<double> prob;         // softmax (with T) of the top-k survivors, by order
  std::int64_t kept = 0;            // the kept set is order[0, kept)
};

inline bool is_candidate(float x) {
  return !std::isnan(x) && x != -std::numeric_limits<float>::infinity();
}

inline bool is_greedy(float temperature) { return !(temperature > 0.0f); }

// Candidate indices sorted by descending value, ties by lower index.
inline std::vector<std::int64_t> order(const float* row, std::int64_t vocab) {
  std::vector<std::int64_t> idx;
  idx.reserve(std::size_t(vocab));
  for (std::int64_t i = 0; i < vocab; ++i)
    if (is_candidate(row[i])) idx.push_back(i);
  std::stable_sort(idx.begin(), idx.end(), [row](std::int64_t a, std::int64_t b) {
    return row[a] > row[b];
  });
  return idx;
}

// The unnormalised weight of x relative to the maximum `top` at temperature
// t > 0: exp((x - top) / t); if top is +inf, 1 for +inf entries and 0 for
// finite ones.
inline double weight(double x, double top, double t) {
  if (std::isinf(top)) return std::isinf(x) ? 1.0 : 0.0;
  return std::exp((x - top) / t);
}

// Softmax (fp64, temperature t) of row[order[0..n)], in that order.
inline std::vector<double> softmax(const float* row, std::vector<std::int64_t> const& ord,
                                   std::int64_t n, double t = 1.0) {
  const std::size_t count = std::size_t(n);
  std::vector<double> w(count, 0.0);
  if (count == 0) return w;
  const double top = double(row[ord[0]]);
  for (std::size_t j = 0; j < count; ++j) w[j] = weight(double(row[ord[j]]), top, t);
  const double total = std::accumulate(w.begin(), w.end(), 0.0);
  for (double& x : w) x /= total;
  return w;
}

// The min-p cut c for maximum `top`, temperature t > 0 and m > 0.
inline double minp_cut(float top, double t, float m) {
  if (std::isinf(top)) return std::numeric_limits<double>::infinity();  // top is +inf
  const double mm = std::min(double(m), 1.0);
  // ln 1 = 0: the cut is the maximum for every t, also t = +inf (where the
  // product would be NaN).
  if (mm >= 1.0) return double(top);
  return double(top) + t * std::log(mm);
}

namespace detail {

// Steps 4 and 5 on the first `survivors` entries of r.order (min-p's
// survivors); r.order and r.temperature are set.
inline void cut_after_minp(RowResult& r, const float* row, std::int64_t vocab, int k,
                           float p, std::int64_t survivors) {
  bool topk = k > 0 && std::int64_t(k) < vocab;
  bool topp = p < 1.0f;  // NaN: off
  if (topp && !(p > 0.0f)) {  // p <= 0: exactly one entry
    topp = false;
    k    = 1;
    topk = true;
  }
  r.minp_count  = survivors;
  r.topk_count  = topk ? std::min<std::int64_t>(k, survivors) : survivors;
  r.kept        = r.topk_count;
  r.topp_active = false;
  r.prob.clear();
  if (!topp) return;
  r.topp_active = true;
  r.prob        = softmax(row, r.order, r.topk_count, r.temperature);
  double mass   = 0.0;
  for (std::int64_t j = 0; j < r.topk_count; ++j) {
    mass += r.prob[std::size_t(j)];
    if (mass >= double(p)) {
      r.kept = j + 1;
      break;
    }
  }
}

}  // namespace detail

inline RowResult evaluate(const float* row, std::int64_t vocab, RowFilters const& f) {
  RowResult r;
  const bool greedy = is_greedy(f.temperature);
  const bool topk   = f.k > 0 && std::int64_t(f.k) < vocab;
  bool topp         = f.p < 1.0f;  // NaN: off
  // p <= 0 acts as k = 1, which is off on a one-entry row (the row is the
  // same either way).
  if (topp && !(f.p > 0.0f) && vocab <= 1) topp = false;
  const bool minp = f.min_p > 0.0f;  // NaN: off
  if (!greedy && !topk && !topp && !minp) return r;
  r.order              = order(row, vocab);
  const std::int64_t n = std::int64_t(r.order.size());
  if (n == 0) return r;
  r.untouched = false;
  if (greedy) {
    r.greedy     = true;
    r.minp_count = r.topk_count = r.kept = 1;
    return r;
  }
  r.temperature          = double(f.temperature);
  std::int64_t survivors = n;
  if (minp) {
    r.minp_active = true;
    r.minp_cut    = minp_cut(row[r.order[0]], r.temperature, f.min_p);
    survivors     = 0;
    while (survivors < n && double(row[r.order[std::size_t(survivors)]]) >= r.minp_cut)
      ++survivors;
  }
  detail::cut_after_minp(r, row, vocab, topk ? f.k : 0, topp ? f.p : 1.0f, survivors);
  return r;
}

inline RowResult evaluate(const float* row, std::int64_t vocab, int k, float p) {
  RowFilters f;
  f.k = k;
  f.p = p;
  return evaluate(row, vocab, f);
}

// Applies the definition to one row in place.
inline void mask(float* row, std::int64_t vocab, RowFilters const& f) {
  const RowResult r = evaluate(row, vocab, f);
  if (r.untouched) return;
  std::vector<char> keep(std::size_t(vocab), 0);
  for (std::int64_t j = 0; j < r.kept; ++j) keep[std::size_t(r.order[std::size_t(j)])] = 1;
  for (std::int64_t i = 0; i < vocab; ++i)
    if (!keep[std::size_t(i)]) row[i] = -std::numeric_limits<float>::infinity();
}

inline void mask(float* row, std::int64_t vocab, int k, float p) {
  RowFilters f;
  f.k = k;
  f.p = p;
  mask(row, vocab, f);
}

// The distribution a row samples from: the kept set in the definition's
// order with fp64 probabilities w_i / W and log-probabilities
// (x_i - M) / T - ln W. A row left as it is uses all its candidates; a row
// without a candidate gives an empty list. A greedy row: one entry, 1 and 0.
// Entries of weight 0 beside a +inf maximum get log-probability -inf; finite
// maxima give finite log-probabilities even where the probability underflows.
struct Distribution {
  std::vector<std::int64_t> ids;
  std::vector<double> prob;
  std::vector<double> logprob;
};

// The distribution over the given entries (a prefix of the order, so ids[0]
// holds the maximum) at temperature t > 0.
inline Distribution distribution_over(const float* row, std::vector<std::int64_t> ids,
                                      double t) {
  Distribution d;
  d.ids = std::move(ids);
  if (d.ids.empty()) return d;
  const double top = double(row[d.ids[0]]);
  std::vector<double> w(d.ids.size());
  for (std::size_t j = 0; j < w.size(); ++j) w[j] = weight(double(row[d.ids[j]]), top, t);
  const double total     = std::accumulate(w.begin(), w.end(), 0.0);
  const double log_total = std::log(total);
  for (std::size_t j = 0; j < w.size(); ++j) {
    const double x = double(row[d.ids[j]]);
    d.prob.push_back(w[j] / total);
    if (std::isinf(top))  // the +inf entries share the mass; finite ones have none
      d.logprob.push_back(w[j] > 0.0 ? -log_total : -std::numeric_limits<double>::infinity());
    else
      d.logprob.push_back((x - top) / t - log_total);
  }
  return d;
}

inline Distribution kept_distribution(const float* row, std::int64_t vocab,
                                      RowFilters const& f) {
  const RowResult r = evaluate(row, vocab, f);
  if (r.untouched) return distribution_over(row, order(row, vocab), double(f.temperature));
  if (r.greedy) return distribution_over(row, {r.order[0]}, 1.0);
  return distribution_over(
      row, std::vector<std::int64_t>(r.order.begin(), r.order.begin() + r.kept), r.temperature);
}

namespace detail {

// Whether `kept` entries whose deepest position in the order is `last`
// form a kept set r allows (see verify). Empty string: yes.
inline std::string check_kept_set(RowResult const& r, std::int64_t kept, std::int64_t last,
                                  float p) {
  const std::string counts =
      " (kept " + std::to_string(kept) + ", the definition keeps " + std::to_string(r.kept) + ")";
  if (!r.topp_active) {
    // Equal sizes and every kept entry among the first r.kept: equal sets.
    if (kept != r.kept || last >= r.kept) return "the kept set differs" + counts;
    return {};
  }
  if (kept < 1) return "top-p kept nothing";
  if (last != kept - 1) return "the kept set is not a prefix of the order" + counts;
  if (kept > r.topk_count) return "top-p kept more than top-k's survivors" + counts;
  double without_last = 0.0;
  for (std::int64_t j = 0; j + 1 < kept; ++j) without_last += r.prob[std::size_t(j)];
  const double mass = without_last + r.prob[std::size_t(kept - 1)];
  if (!(mass >= double(p) - 1e-6))
    return "the kept mass " + std::to_string(mass) + " is below p" + counts;
  if (!(without_last < double(p) + 1e-6))
    return "the kept set is longer than needed: without its last entry its mass is " +
           std::to_string(without_last) + counts;
  return {};
}

}  // namespace detail

// The numbers of min-p survivors a device may legitimately produce for r:
// the nominal count first, then every other cut between tie groups whose
// entries all lie within the tolerance band of c (never inside M's tie group).
inline std::vector<std::int64_t> minp_counts_allowed(const float* row, RowResult const& r) {
  std::vector<std::int64_t> counts{r.minp_count};
  if (!r.minp_active || std::isinf(r.minp_cut)) return counts;
  const double band    = minp_tolerance * std::max(1.0, std::abs(r.minp_cut));
  const std::int64_t n = std::int64_t(r.order.size());
  const auto value = [&](std::int64_t j) { return double(row[r.order[std::size_t(j)]]); };
  std::int64_t lo = 0;  // entries certainly kept
  while (lo < n && value(lo) - r.minp_cut > band) ++lo;
  std::int64_t hi = lo;  // entries kept or in the band
  while (hi < n && value(hi) - r.minp_cut >= -band) ++hi;
  const double top = value(0);
  for (std::int64_t b = lo; b <= hi; ++b) {
    if (b == r.minp_count || b == 0) continue;
    if (b < n && value(b) == value(b - 1)) continue;  // equal values decide alike
    if (b < n && value(b) == top) continue;           // M's tie group is kept
    counts.push_back(b);
  }
  return counts;
}

// Checks a masked row `out` (from input `in`) against the definition.
// Returns an empty string if it conforms, else what is wrong. Conforming:
//  * a row the definition leaves alone is bitwise unchanged;
//  * otherwise every entry is either kept (candidate, bits unchanged) or
//    exactly -inf, so no NaN is written;
//  * without top-p the kept set equals the definition's exactly;
//  * with top-p the kept set is a prefix of the order whose fp64 mass is
//    >= p - 1e-6 and whose mass without its last entry is < p + 1e-6: the
//    one freedom rounded probability sums leave a device;
//  * with min-p, entries within minp_tolerance of the cut may fall on
//    either side of it (the rest of the definition then follows from that).
inline std::string verify(const float* in, const float* out, std::int64_t vocab,
                          RowFilters const& f) {
  const auto same_bits = [](float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  const RowResult ref = evaluate(in, vocab, f);
  if (ref.untouched) {
    for (std::int64_t i = 0; i < vocab; ++i)
      if (!same_bits(in[i], out[i]))
        return "the row must be left as it is, but entry " + std::to_string(i) +
               " changed from " + std::to_string(in[i]) + " to " + std::to_string(out[i]);
    return {};
  }
  std::vector<std::int64_t> position(std::size_t(vocab), -1);
  for (std::size_t j = 0; j < ref.order.size(); ++j)
    position[std::size_t(ref.order[j])] = std::int64_t(j);
  const float neg_inf = -std::numeric_limits<float>::infinity();
  std::int64_t kept = 0, last = -1;
  for (std::int64_t i = 0; i < vocab; ++i) {
    if (is_candidate(in[i]) && same_bits(in[i], out[i])) {
      ++kept;
      last = std::max(last, position[std::size_t(i)]);
    } else if (!same_bits(out[i], neg_inf)) {
      return "entry " + std::to_string(i) + " was " + std::to_string(in[i]) + " and became " +
             std::to_string(out[i]) + ": neither kept nor -inf";
    }
  }
  const std::string problem = detail::check_kept_set(ref, kept, last, f.p);
  if (problem.empty() || ref.greedy) return problem;
  // Another min-p decision within the tolerance band may explain the set.
  const std::vector<std::int64_t> allowed = minp_counts_allowed(in, ref);
  const bool topk = f.k > 0 && std::int64_t(f.k) < vocab;
  const bool topp = f.p < 1.0f;
  for (std::size_t a = 1; a < allowed.size(); ++a) {
    RowResult alt = ref;
    detail::cut_after_minp(alt, in, vocab, topk ? f.k : 0, topp ? f.p : 1.0f, allowed[a]);
    if (detail::check_kept_set(alt, kept, last, f.p).empty()) return {};
  }
  return problem;
}

inline std::string verify(const float* in, const float* out, std::int64_t vocab, int k,
                          float p) {
  RowFilters f;
  f.k = k;
  f.p = p;
  return verify(in, out, vocab, f);
}

// A batch, row-major with the given row stride (elements).
inline void mask(float* logits, std::int64_t batch, std::int64_t vocab,
                 std::int64_t row_stride, const int* k, const float* p) {
  for (std::int64_t b = 0; b < batch; ++b)
    mask(logits + b * row_stride, vocab, k ? k[b] : 0, p ? p[b] : 1.0f);
}

}  // namespace oracle
}  // namespace qrita

#endif  // QRITA_ORACLE_HPP
