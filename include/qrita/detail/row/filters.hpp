// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_DETAIL_ROW_FILTERS_HPP
#define QRITA_DETAIL_ROW_FILTERS_HPP

// A row's filters (docs/SEMANTICS.md's special cases), its weights, and
// min-p resolved into a top-k once the first read knows the maximum.

#include <qrita/detail/philox.hpp>
#include <qrita/detail/row/state.hpp>
#include <qrita/detail/row_access.hpp>

#include <climits>
#include <cstdint>

namespace qrita {
namespace detail {

// The row's filters as the call's mode needs them. A row without a
// filter is left alone by a mask; the sampler draws from all of it (the
// drawn entry is where the order's cumulative weight reaches the draw's
// target, which top-p's search finds), and the list is its first C
// entries (a top-k) with the whole row's probabilities.
template <class CallT>
KOKKOS_INLINE_FUNCTION Filters row_filters(CallT const& call, std::int64_t r) {
  Filters f = read_filters(call, r);
  if (f.any() || CallT::mode == Mode::mask) return f;
  if (CallT::mode == Mode::sample) {
    f.draw = true;
    f.topp = true;
  } else {
    f.list_all = true;
    f.k        = call.io.list_size;
    f.topk     = f.k > 0 && f.k < call.prm.vocab;
  }
  return f;
}

// The row's filters (RowIO) after the definition's special cases
// (docs/SEMANTICS.md): greedy rows are top-1, p <= 0 is top-1, and
// min-p is resolved into a k after the first read (apply_min_p).
template <class CallT>
KOKKOS_INLINE_FUNCTION Filters read_filters(CallT const& call, std::int64_t r) {
  Filters f;
  const float temp =
      call.io.temperature ? call.io.temperature[r * call.io.temperature_stride] : 1.0f;
  if (!(temp > 0.0f)) {
    // Greedy (T <= 0 or NaN): the top entry alone; no other filter.
    f.k    = 1;
    f.topk = 1 < call.prm.vocab;
    return f;
  }
  f.temperature = temp;
  f.inv_t       = 1.0f / temp;
  f.k           = call.io.k ? call.io.k[r * call.io.k_stride] : 0;
  f.p           = call.io.p ? call.io.p[r * call.io.p_stride] : 1.0f;
  f.topk        = f.k > 0 && f.k < call.prm.vocab;
  f.topp        = f.p < 1.0f;  // NaN: off
  if (f.topp && !(f.p > 0.0f)) {
    // p <= 0 keeps exactly one entry: the top one, i.e. top-1.
    f.topp = false;
    f.k    = 1;
    f.topk = 1 < call.prm.vocab;
  }
  const float m = call.io.min_p ? call.io.min_p[r * call.io.min_p_stride] : 0.0f;
  f.minp        = m > 0.0f;  // NaN: off
  f.min_p       = m < 1.0f ? m : 1.0f;
  if (call.io.seeds)
    f.u = philox_u64(call.io.seeds[r * call.io.seeds_stride],
                     call.io.offsets[r * call.io.offsets_stride]);
  return f;
}

// The row's fixed-point weights: relative to its maximum, at its
// temperature.
template <class CallT>
KOKKOS_INLINE_FUNCTION MassMeasure mass_of(CallT const& call, RowScan const& scan,
                                           Filters const& f) {
  return MassMeasure{key_value(scan.max_key), call.prm.weight_scale, f.inv_t};
}

// min-p's cut c = M + T ln(min_p) in double (docs/SEMANTICS.md, 7): M
// itself for min_p >= 1 (also at T = +inf, where the product would be
// inf * 0) and for an infinite M.
KOKKOS_INLINE_FUNCTION double min_p_cut(Filters const& f, float top) {
  if (f.min_p < 1.0f && is_finite_value(top))
    return double(top) + double(f.temperature) * log_d(double(f.min_p));
  return double(top);
}

// min-p, once the first read knows the row's maximum M: the entries with
// x >= c = M + T ln(min_p) are a prefix of the order, so min-p is top-k
// with k = their count (or top-k's own k, if smaller). The count is taken
// in the gathered set when c lies above t and every outlier was kept,
// else by one more read of the row.
template <class CallT>
KOKKOS_INLINE_FUNCTION void apply_min_p(CallT const& call, typename CallT::member_type const& team,
                                        const typename CallT::value_type* row, Filters& f,
                                        Threshold const& th, RowScan const& scan, int outliers,
                                        RowScratch const& s, RowStats& st) {
  f.minp = false;
  if (scan.candidates == 0) return;
  const double c      = min_p_cut(f, key_value(scan.max_key));
  std::uint32_t count = 0;
  const auto at_least = [&](float z) { return double(z) >= c; };
  if (th.valid() && c > double(th.t) && outliers <= s.set.capacity()) {
    team_reduce(
        team, outliers,
        [&](int i, std::uint32_t& acc) { acc += at_least(s.set.value(i)) ? 1u : 0u; },
        Kokkos::Sum<std::uint32_t>(count));
  } else {
    const RowSource<typename CallT::value_type> src{row, call.prm.vocab};
    team_reduce(
        team, call.prm.vocab, [&](int i, std::uint32_t& acc) { acc += at_least(src[i]) ? 1u : 0u; },
        Kokkos::Sum<std::uint32_t>(count));
    st.row_passes = std::int16_t(st.row_passes + 1);
  }
  const std::uint32_t k = f.topk ? std::uint32_t(f.k) : scan.candidates;
  if (count < k) {
    f.k    = int(count);
    f.topk = true;
  }
}

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_ROW_FILTERS_HPP
