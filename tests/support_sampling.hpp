// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_TESTS_SUPPORT_SAMPLING_HPP
#define QRITA_TESTS_SUPPORT_SAMPLING_HPP

// Test support for the SamplingParams calls (sample_mask with params,
// sample_tokens, candidate_list): a host batch with per-row filters, seeds
// and offsets; runners for float, qrita::bfloat16 and qrita::float16 logits
// on any backend; and checkers holding the results to the oracle
// (qrita::oracle::verify, kept_distribution).
//
// 16-bit batches hold the exact float values of their 16-bit entries (made
// with round_to<T>), so the oracle, which reads float rows, sees exactly
// what the device reads; the device's 16-bit output is converted back with
// qrita::to_float, which is exact and one-to-one, so bitwise float equality
// is bitwise 16-bit equality.

#include "support.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace qtest {

// QRITA_TEST_UNDER_TOOL=1 (scripts/gpu-run.sh sets it for compute-sanitizer,
// under which a kernel runs orders of magnitude slower): the slowest sampler
// tests run fewer configurations or draws. Every check that remains applies.
inline bool under_tool() {
  const char* s = std::getenv("QRITA_TEST_UNDER_TOOL");
  return s != nullptr && s[0] == '1';
}

using qrita::oracle::RowFilters;

template <class T>
const char* type_name() {
  if (std::is_same<T, qrita::bfloat16>::value) return "bfloat16";
  if (std::is_same<T, qrita::float16>::value) return "float16";
  return "float";
}

// Which members of SamplingParams a call passes; an absent member is off on
// every row (a default-constructed View).
struct Present {
  bool k = true, p = true, min_p = true, temperature = true;
};

struct SampleBatch {
  std::int64_t batch = 0;
  std::int64_t vocab = 0;
  std::vector<float> logits;  // row-major [batch][vocab], exact values of the storage type
  std::vector<RowFilters> filters;
  Present present;
  std::vector<std::uint64_t> seeds, offsets;

  SampleBatch() = default;
  SampleBatch(std::int64_t b, std::int64_t v)
      : batch(b), vocab(v), logits(std::size_t(b * v), 0.0f), filters(std::size_t(b)),
        seeds(std::size_t(b)), offsets(std::size_t(b), 0) {
    for (std::int64_t r = 0; r < b; ++r) seeds[std::size_t(r)] = 1000u + std::uint64_t(r);
  }

  float* row(std::int64_t r) { return logits.data() + r * vocab; }
  const float* row(std::int64_t r) const { return logits.data() + r * vocab; }

  // The filters row r gets, absent members switched off.
  RowFilters effective(std::int64_t r) const {
    RowFilters f = filters[std::size_t(r)];
    const RowFilters off{};
    if (!present.k) f.k = off.k;
    if (!present.p) f.p = off.p;
    if (!present.min_p) f.min_p = off.min_p;
    if (!present.temperature) f.temperature = off.temperature;
    return f;
  }

  // One row with the given values and filters.
  static SampleBatch one(std::vector<float> const& values, RowFilters const& f = {}) {
    SampleBatch b(1, std::int64_t(values.size()));
    std::copy(values.begin(), values.end(), b.logits.begin());
    b.filters[0] = f;
    return b;
  }
};

inline std::string describe(RowFilters const& f) {
  std::ostringstream s;
  s << "k " << f.k << ", p " << f.p << ", min_p " << f.min_p << ", T " << f.temperature;
  return s.str();
}

inline auto uninitialized(std::string const& label) {
  return Kokkos::view_alloc(Kokkos::WithoutInitializing, label);
}

// v(i...) = value everywhere, through the host mirror (no kernel on host
// backends).
template <class View, class Value>
void fill(View const& v, Value value) {
  auto h = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < h.span(); ++i) h.data()[i] = value;
  Kokkos::deep_copy(v, h);
}

// The batch's arguments on backend Exec, logits stored as T.
template <class Exec, class T = float>
struct DeviceBatch {
  using mem = typename Exec::memory_space;
  Kokkos::View<T**, Kokkos::LayoutRight, mem> logits;
  Kokkos::View<int*, mem> k;
  Kokkos::View<float*, mem> p, min_p, temperature;
  Kokkos::View<std::uint64_t*, mem> seeds, offsets;
  qrita::SamplingParams<mem> params;

  // Views are made without initialisation and filled through their host
  // mirrors: on host backends that is the View itself, so no kernel runs
  // (an idle OpenMP pool makes each small kernel slow on a loaded machine).
  explicit DeviceBatch(SampleBatch const& b)
      : logits(uninitialized("logits"), std::size_t(b.batch), std::size_t(b.vocab)),
        k(uninitialized("k"), std::size_t(b.batch)), p(uninitialized("p"), std::size_t(b.batch)),
        min_p(uninitialized("min_p"), std::size_t(b.batch)),
        temperature(uninitialized("temperature"), std::size_t(b.batch)),
        seeds(uninitialized("seeds"), std::size_t(b.batch)),
        offsets(uninitialized("offsets"), std::size_t(b.batch)) {
    auto logits_h = Kokkos::create_mirror_view(logits);
    auto k_h = Kokkos::create_mirror_view(k);
    auto p_h = Kokkos::create_mirror_view(p);
    auto m_h = Kokkos::create_mirror_view(min_p);
    auto t_h = Kokkos::create_mirror_view(temperature);
    auto s_h = Kokkos::create_mirror_view(seeds);
    auto o_h = Kokkos::create_mirror_view(offsets);
    for (std::int64_t r = 0; r < b.batch; ++r) {
      const std::size_t ur = std::size_t(r);
      for (std::int64_t i = 0; i < b.vocab; ++i)
        logits_h(ur, std::size_t(i)) = qrita::from_float<T>(b.row(r)[i]);
      k_h(ur) = b.filters[ur].k;
      p_h(ur) = b.filters[ur].p;
      m_h(ur) = b.filters[ur].min_p;
      t_h(ur) = b.filters[ur].temperature;
      s_h(ur) = b.seeds[ur];
      o_h(ur) = b.offsets[ur];
    }
    Kokkos::deep_copy(logits, logits_h);
    Kokkos::deep_copy(k, k_h);
    Kokkos::deep_copy(p, p_h);
    Kokkos::deep_copy(min_p, m_h);
    Kokkos::deep_copy(temperature, t_h);
    Kokkos::deep_copy(seeds, s_h);
    Kokkos::deep_copy(offsets, o_h);
    if (b.present.k) params.k = k;
    if (b.present.p) params.p = p;
    if (b.present.min_p) params.min_p = min_p;
    if (b.present.temperature) params.temperature = temperature;
  }

  // The logits as floats (exact).
  std::vector<float> host_logits() const {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), logits);
    std::vector<float> out;
    out.reserve(h.size());
    for (std::size_t r = 0; r < h.extent(0); ++r)
      for (std::size_t i = 0; i < h.extent(1); ++i) out.push_back(qrita::to_float(h(r, i)));
    return out;
  }
};

// The workspace of a call with Memory::workspace: the caller's (`given`),
// or one sized for the batch.
template <class Exec>
qrita::Workspace<Exec> workspace_for(SampleBatch const& b, qrita::Options const& opts,
                                     qrita::Workspace<Exec> const* given) {
  return given != nullptr ? *given : qrita::Workspace<Exec>(Exec(), b.batch, b.vocab, opts);
}

// The device logits still hold what DeviceBatch stored (the batch's values
// rounded to T: a NaN's payload may not survive from_float).
template <class Exec, class T>
::testing::AssertionResult unwritten(DeviceBatch<Exec, T> const& d, SampleBatch const& b) {
  const std::vector<float> after = d.host_logits();
  for (std::size_t i = 0; i < after.size(); ++i)
    if (bits(after[i]) != bits(round_to<T>(b.logits[i])))
      return ::testing::AssertionFailure() << "logit " << i << " was written";
  return ::testing::AssertionSuccess();
}

// sample_mask(space, logits, params) on a copy of the batch; the masked
// logits as floats. With Memory::workspace, on `given` if not null (a
// workspace shared by several calls), else on a fresh one; the same below.
template <class Exec, class T = float>
std::vector<float> run_mask(SampleBatch const& b, qrita::Options const& opts = {},
                            Memory memory = Memory::workspace,
                            qrita::Workspace<Exec> const* given = nullptr) {
  DeviceBatch<Exec, T> d(b);
  const Exec space;
  if (memory == Memory::workspace)
    qrita::sample_mask(space, d.logits, d.params, opts, workspace_for<Exec>(b, opts, given));
  else
    qrita::sample_mask(space, d.logits, d.params, opts);
  space.fence();
  return d.host_logits();
}

// sample_tokens: one token per row.
template <class Exec, class T = float>
std::vector<int> run_tokens(SampleBatch const& b, qrita::Options const& opts = {},
                            Memory memory = Memory::workspace,
                            qrita::Workspace<Exec> const* given = nullptr) {
  DeviceBatch<Exec, T> d(b);
  using mem = typename Exec::memory_space;
  Kokkos::View<int*, mem> tokens(uninitialized("tokens"), std::size_t(b.batch));
  fill(tokens, -7);  // neither a column nor -1
  const Exec space;
  if (memory == Memory::workspace)
    qrita::sample_tokens(space, d.logits, d.params, d.seeds, d.offsets, tokens, opts,
                         workspace_for<Exec>(b, opts, given));
  else
    qrita::sample_tokens(space, d.logits, d.params, d.seeds, d.offsets, tokens, opts);
  space.fence();
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tokens);
  // The logits are never written.
  EXPECT_TRUE(unwritten(d, b)) << "sample_tokens";
  return std::vector<int>(h.data(), h.data() + h.size());
}

struct Candidates {
  std::int64_t capacity = 0;
  std::vector<int> ids;           // [batch][capacity]
  std::vector<float> probs;       // [batch][capacity], empty if not asked for
  std::vector<float> logprobs;    // [batch][capacity], empty if not asked for
  std::vector<int> counts;        // [batch]
};

// candidate_list with capacity C; probs and logprobs only if asked for.
template <class Exec, class T = float>
Candidates run_candidates(SampleBatch const& b, std::int64_t capacity,
                          qrita::Options const& opts = {}, Memory memory = Memory::workspace,
                          bool with_probs = true, bool with_logprobs = true,
                          qrita::Workspace<Exec> const* given = nullptr) {
  DeviceBatch<Exec, T> d(b);
  using mem = typename Exec::memory_space;
  const std::size_t B = std::size_t(b.batch), C = std::size_t(capacity);
  using Matrix = Kokkos::View<float**, Kokkos::LayoutRight, mem>;
  Kokkos::View<int**, Kokkos::LayoutRight, mem> ids(uninitialized("ids"), B, C);
  Matrix probs, logprobs;
  if (with_probs) probs = Matrix(uninitialized("probs"), B, C);
  if (with_logprobs) logprobs = Matrix(uninitialized("logprobs"), B, C);
  Kokkos::View<int*, mem> counts(uninitialized("counts"), B);
  // Sentinels that no correct call leaves behind.
  fill(ids, -7);
  if (with_probs) fill(probs, 7.0f);
  if (with_logprobs) fill(logprobs, 7.0f);
  fill(counts, -7);
  const Exec space;
  if (memory == Memory::workspace)
    qrita::candidate_list(space, d.logits, d.params, ids, probs, logprobs, counts, opts,
                          workspace_for<Exec>(b, opts, given));
  else
    qrita::candidate_list(space, d.logits, d.params, ids, probs, logprobs, counts, opts);
  space.fence();
  Candidates out;
  out.capacity = capacity;
  auto ids_h    = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ids);
  auto counts_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), counts);
  out.ids.assign(ids_h.data(), ids_h.data() + ids_h.size());
  out.counts.assign(counts_h.data(), counts_h.data() + counts_h.size());
  if (with_probs) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), probs);
    out.probs.assign(h.data(), h.data() + h.size());
  }
  if (with_logprobs) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), logprobs);
    out.logprobs.assign(h.data(), h.data() + h.size());
  }
  EXPECT_TRUE(unwritten(d, b)) << "candidate_list";
  return out;
}

// --- checkers ---------------------------------------------------------------

// Bitwise equality of two float vectors (NaN included).
inline ::testing::AssertionResult same_bits(std::vector<float> const& a,
                                            std::vector<float> const& b) {
  if (a.size() != b.size())
    return ::testing::AssertionFailure() << "sizes " << a.size() << " and " << b.size();
  for (std::size_t i = 0; i < a.size(); ++i)
    if (bits(a[i]) != bits(b[i]))
      return ::testing::AssertionFailure() << "entry " << i << ": " << a[i] << " vs " << b[i];
  return ::testing::AssertionSuccess();
}

// A masked batch against oracle::verify, row by row.
inline ::testing::AssertionResult check_mask(SampleBatch const& b, std::vector<float> const& out) {
  for (std::int64_t r = 0; r < b.batch; ++r) {
    const RowFilters f = b.effective(r);
    const std::string problem =
        qrita::oracle::verify(b.row(r), out.data() + r * b.vocab, b.vocab, f);
    if (!problem.empty())
      return ::testing::AssertionFailure() << problem << " in row " << r << " of " << b.batch
                                           << " (vocab " << b.vocab << ", " << describe(f) << ")";
  }
  return ::testing::AssertionSuccess();
}

// The kept set of a masked row, in the definition's order.
inline std::vector<std::int64_t> kept_in_order(const float* in, const float* out,
                                               std::int64_t vocab) {
  std::vector<std::int64_t> kept;
  for (std::int64_t i : qrita::oracle::order(in, vocab))
    if (bits(in[i]) == bits(out[i])) kept.push_back(i);
  return kept;
}

// Row r of a candidate list against the definition. The listed entries must
// be the first min(C, count) of the order; count must be the oracle's kept
// count, or (top-p's rounding freedom, min-p's tolerance band) a count that
// oracle::verify accepts for the kept set order[0, count). Probabilities are
// then those of that set: within 1e-6 (absolute) of fp64, log-probabilities
// within 1e-5 where the probability exceeds 1e-30 (never NaN, never above
// 0). Past the list: -1, 0, -inf.
inline ::testing::AssertionResult check_candidate_row(SampleBatch const& b, Candidates const& c,
                                                      std::int64_t r) {
  const RowFilters f   = b.effective(r);
  const float* in      = b.row(r);
  const std::int64_t C = c.capacity;
  const auto fail      = [&]() {
    return ::testing::AssertionFailure() << "row " << r << " (vocab " << b.vocab << ", "
                                         << describe(f) << ", C " << C << "): ";
  };
  const qrita::oracle::RowResult ref = qrita::oracle::evaluate(in, b.vocab, f);
  const std::vector<std::int64_t> ord = qrita::oracle::order(in, b.vocab);
  const int count = c.counts[std::size_t(r)];
  const qrita::oracle::Distribution nominal = qrita::oracle::kept_distribution(in, b.vocab, f);
  if (count != std::int64_t(nominal.ids.size())) {
    // Only a kept set order[0, count) that verify accepts may differ.
    if (count < 0 || count > std::int64_t(ord.size()) || ref.untouched || ref.greedy)
      return fail() << "count " << count << ", the definition keeps " << nominal.ids.size();
    std::vector<float> masked(in, in + b.vocab);
    std::vector<char> keep(std::size_t(b.vocab), 0);
    for (std::int64_t j = 0; j < count; ++j) keep[std::size_t(ord[std::size_t(j)])] = 1;
    for (std::int64_t i = 0; i < b.vocab; ++i)
      if (!keep[std::size_t(i)]) masked[std::size_t(i)] = -inf;
    const std::string problem = qrita::oracle::verify(in, masked.data(), b.vocab, f);
    if (!problem.empty())
      return fail() << "count " << count << ", the definition keeps " << nominal.ids.size()
                    << ": " << problem;
  }
  const qrita::oracle::Distribution d =
      count == std::int64_t(nominal.ids.size())
          ? nominal
          : qrita::oracle::distribution_over(
                in, std::vector<std::int64_t>(ord.begin(), ord.begin() + count),
                ref.temperature);
  const std::int64_t listed = std::min<std::int64_t>(C, count);
  for (std::int64_t j = 0; j < C; ++j) {
    const std::size_t at = std::size_t(r * C + j);
    const int id         = c.ids[at];
    const bool has_p     = !c.probs.empty(), has_lp = !c.logprobs.empty();
    if (j >= listed) {
      if (id != -1) return fail() << "slot " << j << " past the list holds id " << id;
      if (has_p && bits(c.probs[at]) != bits(0.0f))
        return fail() << "slot " << j << " past the list holds prob " << c.probs[at];
      if (has_lp && !(c.logprobs[at] == -inf))
        return fail() << "slot " << j << " past the list holds logprob " << c.logprobs[at];
      continue;
    }
    if (id != d.ids[std::size_t(j)])
      return fail() << "slot " << j << " holds id " << id << ", the definition "
                    << d.ids[std::size_t(j)];
    const double p_ref = d.prob[std::size_t(j)], lp_ref = d.logprob[std::size_t(j)];
    if (has_p && !(std::abs(double(c.probs[at]) - p_ref) <= 1e-6))
      return fail() << "slot " << j << " (id " << id << ") prob " << c.probs[at]
                    << ", the definition " << p_ref;
    if (has_lp) {
      const float lp = c.logprobs[at];
      if (std::isnan(lp) || lp > 0.0f)
        return fail() << "slot " << j << " (id " << id << ") logprob " << lp;
      if (p_ref > 1e-30 && !(std::abs(double(lp) - lp_ref) <= 1e-5))
        return fail() << "slot " << j << " (id " << id << ") logprob " << lp
                      << ", the definition " << lp_ref;
    }
  }
  return ::testing::AssertionSuccess();
}

inline ::testing::AssertionResult check_candidates(SampleBatch const& b, Candidates const& c) {
  for (std::int64_t r = 0; r < b.batch; ++r) {
    auto ok = check_candidate_row(b, c, r);
    if (!ok) return ok;
  }
  return ::testing::AssertionSuccess();
}

// Whether `token` is an entry of the kept distribution d with a non-zero
// probability (-1 when d is empty: a row without a candidate). `what`
// names the row in a failure.
inline ::testing::AssertionResult check_token_in(qrita::oracle::Distribution const& d,
                                                 int token, std::string const& what) {
  if (d.ids.empty()) {
    if (token == -1) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << what << " has no candidate but got token " << token;
  }
  for (std::size_t j = 0; j < d.ids.size(); ++j)
    if (d.ids[j] == token) {
      if (d.prob[j] > 0.0) return ::testing::AssertionSuccess();
      return ::testing::AssertionFailure() << what << ": token " << token
                                           << " has probability 0";
    }
  return ::testing::AssertionFailure() << what << ": token " << token
                                       << " is not in the kept set of " << d.ids.size();
}

// Whether token t of row r is in the oracle's kept set (-1 for a row
// without a candidate).
inline ::testing::AssertionResult check_token(SampleBatch const& b, std::int64_t r, int token) {
  const auto d = qrita::oracle::kept_distribution(b.row(r), b.vocab, b.effective(r));
  std::string what = "row " + std::to_string(r);
  if (!d.ids.empty()) what += " (" + describe(b.effective(r)) + ")";
  return check_token_in(d, token, what);
}

}  // namespace qtest

#endif  // QRITA_TESTS_SUPPORT_SAMPLING_HPP
