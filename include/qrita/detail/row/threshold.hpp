// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_DETAIL_ROW_THRESHOLD_HPP
#define QRITA_DETAIL_ROW_THRESHOLD_HPP

// The truncation threshold t = mu + delta * sigma (the paper's Gaussian
// sigma-truncation, on a sample of the row) and the low end of the
// histogram's range.

#include <qrita/detail/row/state.hpp>
#include <qrita/detail/sigma_truncate.hpp>
#include <qrita/detail/tables.hpp>

#include <cstdint>

namespace qrita {
namespace detail {

// ------------------------------------------------------- stage 1: gather

// delta of the truncation threshold t = mu + delta * sigma.
//
// Top-k: the paper's quantile for k / V less its margin. Top-p alone: the
// paper's delta_p less its margin; on a Gaussian bulk that gathers about a
// fifth of the row, more than the buffer holds at LLM vocabularies. So t
// is raised, where needed, to the bulk quantile that leaves about
// Tuning::threshold_fill of the on-chip buffer above it: real logits hold nearly all their softmax mass
// in a few hundred outliers, which such a t keeps (the hit test decides; a
// miss costs one more read, never exactness). Top-k's t is raised the
// same way, but never above its margin-free quantile.
template <class CallT>
KOKKOS_INLINE_FUNCTION float truncation_delta(CallT const& call, Filters const& f) {
  const double vocab = double(call.prm.vocab);
  const float fit    = sigma_topk(table_index(Tuning::threshold_fill * call.prm.capacity / vocab));
  // A draw, min-p alone, or a list of a row without a filter: the
  // threshold that fits the buffer.
  if (f.draw || !(f.topk || f.topp)) return fit;
  if (f.topk) {
    const float dk = sigma_topk(table_index(double(f.k) / vocab));
    const float lo = with_margin(dk);
    const float up = fit < dk ? fit : dk;
    return lo > up ? lo : up;
  }
  const float dp = with_margin(sigma_topp(table_index(double(f.p))));
  return dp > fit ? dp : fit;
}

// Low end of the histogram's range. Top-p: the sample's minimum (a wide
// nucleus can end anywhere). Top-k (and top-k with top-p, whose boundary
// lies above top-k's): where the bulk quantile leaves about 8k + 2048
// entries above, and at least histogram_depth sigmas below t (Tuning), so that
// only the entries near t cost an atomic; a miss whose k-th entry lies
// lower than that is searched whole. (Without the second bound, small k
// put lo on t: the table's bins are half a percent wide, and t, which
// leaves about capacity / 2 entries above, came from the same bin as the
// 8k + 2048 share, so lo fell back to the sample's minimum and every
// entry of the row cost an atomic.)
template <class CallT>
KOKKOS_INLINE_FUNCTION float histogram_low(CallT const& call, Threshold const& th,
                                           Filters const& f) {
  if (!th.valid() || !f.topk) return th.lo;
  const double share = (double(Tuning::histogram_entries_per_k) * double(f.k) +
                        double(Tuning::histogram_entries_extra)) /
                       double(call.prm.vocab);
  if (share >= 0.5) return th.lo;
  double low           = th.mean + double(sigma_topk(table_index(share))) * th.sigma;
  const double deepest = double(th.t) - Tuning::histogram_depth * th.sigma;
  if (low > deepest) low = deepest;
  const float lo = static_cast<float>(low);
  return lo > th.lo && lo < th.t ? lo : th.lo;
}

template <class CallT>
KOKKOS_INLINE_FUNCTION Threshold threshold(CallT const& call,
                                           typename CallT::member_type const& team,
                                           const typename CallT::value_type* row,
                                           Filters const& f) {
  const float nan = bits_as_float(0x7FC00000u);
  if (!call.prm.truncation) return Threshold{nan, nan, 0.0, 0.0};
  // t just under a bounded row's maximum (sample_threshold) while the
  // row holds at most threshold_fill of the on-chip buffer's entries at it.
  return sample_threshold(team, row, call.prm.vocab, truncation_delta(call, f),
                          Tuning::threshold_fill * double(call.prm.capacity));
}

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_ROW_THRESHOLD_HPP
