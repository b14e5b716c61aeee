#ifndef QRITA_ORACLE_HPP
#define QRITA_ORACLE_HPP

// The reference: qrita's definition written the plain way, on the host, with
// a stable sort and fp64 probabilities. Tests compare every backend against
// it; the perf suite and the CLI use it for spot checks. No Kokkos needed.
//
// Definition, per row:
//  1. Order: descending value, ties by lower index; NaN counts as -inf.
//     Candidates are the entries above -inf (+inf is a value above every
//     finite one).
//  2. Top-k (0 < k < V): the first k candidates of the order.
//  3. Top-p (p < 1), after top-k, on the softmax of the survivors: the
//     shortest prefix with mass >= p, at least one entry. p <= 0 keeps one.
//     If the survivors' maximum is +inf, the +inf entries share the mass
//     equally and every finite one has probability 0 (the limit of softmax).
//  4. Kept entries stay bitwise unchanged, all others become -inf. A row
//     with no active filter, or with no candidate, is left as it is.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

namespace qrita {
namespace oracle {

struct RowResult {
  bool untouched = true;                // the row is left as it is
  std::vector<std::int64_t> order;      // candidates, in the definition's order
  std::int64_t topk_count = 0;          // survivors of top-k: order[0, topk_count)
  bool topp_active = false;
  std::vector<double> prob;             // softmax of the top-k survivors, by order
  std::int64_t kept = 0;                // the kept set is order[0, kept)
};

inline bool is_candidate(float x) {
  return !std::isnan(x) && x != -std::numeric_limits<float>::infinity();
}

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

// Softmax (fp64) of row[order[0..n)], in that order.
inline std::vector<double> softmax(const float* row,
                                   std::vector<std::int64_t> const& ord,
                                   std::int64_t n) {
  const std::size_t count = std::size_t(n);
  std::vector<double> w(count, 0.0);
  if (count == 0) return w;
  const double top = double(row[ord[0]]);
  for (std::size_t j = 0; j < count; ++j) {
    const double x = double(row[ord[j]]);
    // +inf maximum: the +inf entries share the mass.
    w[j] = std::isinf(top) ? (std::isinf(x) ? 1.0 : 0.0) : std::exp(x - top);
  }
  const double total = std::accumulate(w.begin(), w.end(), 0.0);
  for (double& x : w) x /= total;
  return w;
}

inline RowResult evaluate(const float* row, std::int64_t vocab, int k, float p) {
  RowResult r;
  bool topk = k > 0 && std::int64_t(k) < vocab;
  bool topp = p < 1.0f;  // NaN: off
  if (topp && !(p > 0.0f)) {  // p <= 0: exactly one entry
    topp = false;
    k    = 1;
    topk = 1 < vocab;
  }
  if (!topk && !topp) return r;
  r.order = order(row, vocab);
  const std::int64_t n = std::int64_t(r.order.size());
  if (n == 0) return r;
  r.untouched  = false;
  r.topk_count = topk ? std::min<std::int64_t>(k, n) : n;
  r.kept       = r.topk_count;
  if (topp) {
    r.topp_active = true;
    r.prob        = softmax(row, r.order, r.topk_count);
    double mass   = 0.0;
    for (std::int64_t j = 0; j < r.topk_count; ++j) {
      mass += r.prob[std::size_t(j)];
      if (mass >= double(p)) {
        r.kept = j + 1;
        break;
      }
    }
  }
  return r;
}

// Applies the definition to one row in place.
inline void mask(float* row, std::int64_t vocab, int k, float p) {
  const RowResult r = evaluate(row, vocab, k, p);
  if (r.untouched) return;
  std::vector<char> keep(std::size_t(vocab), 0);
  for (std::int64_t j = 0; j < r.kept; ++j) keep[std::size_t(r.order[std::size_t(j)])] = 1;
  for (std::int64_t i = 0; i < vocab; ++i)
    if (!keep[std::size_t(i)]) row[i] = -std::numeric_limits<float>::infinity();
}

// Checks a masked row `out` (from input `in`) against the definition.
// Returns an empty string if it conforms, else what is wrong. Conforming:
//  * a row the definition leaves alone is bitwise unchanged;
//  * otherwise every entry is either kept (candidate, bits unchanged) or
//    exactly -inf, so no NaN is written;
//  * without top-p the kept set equals the definition's exactly;
//  * with top-p the kept set is a prefix of the order whose fp64 mass is
//    >= p - 1e-6 and whose mass without its last entry is < p + 1e-6: the
//    one freedom rounded probability sums leave a device.
inline std::string verify(const float* in, const float* out, std::int64_t vocab, int k,
                          float p) {
  const auto same_bits = [](float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  const RowResult ref = evaluate(in, vocab, k, p);
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
  const std::string counts =
      " (kept " + std::to_string(kept) + ", the definition keeps " + std::to_string(ref.kept) + ")";
  if (!ref.topp_active) {
    // Equal sizes and every kept entry among the first ref.kept: equal sets.
    if (kept != ref.kept || last >= ref.kept) return "the kept set differs" + counts;
    return {};
  }
  if (kept < 1) return "top-p kept nothing";
  if (last != kept - 1) return "the kept set is not a prefix of the order" + counts;
  if (kept > ref.topk_count) return "top-p kept more than top-k's survivors" + counts;
  double without_last = 0.0;
  for (std::int64_t j = 0; j + 1 < kept; ++j) without_last += ref.prob[std::size_t(j)];
  const double mass = without_last + ref.prob[std::size_t(kept - 1)];
  if (!(mass >= double(p) - 1e-6))
    return "the kept mass " + std::to_string(mass) + " is below p" + counts;
  if (!(without_last < double(p) + 1e-6))
    return "the kept set is longer than needed: without its last entry its mass is " +
           std::to_string(without_last) + counts;
  return {};
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
