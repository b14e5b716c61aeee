// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_DETAIL_KEYS_HPP
#define QRITA_DETAIL_KEYS_HPP

// Order keys and fixed-point probability weights: the two number systems in
// which every qrita decision is made.
//
// * A key is a 32-bit unsigned integer whose order is the order of the
//   definition (descending value; NaN counts as -inf; -0.0 equals +0.0).
//   Searching over keys instead of float values makes every pivot exact and
//   bounds the search: the key range halves twice per quaternary pass, so a
//   search ends after at most 17 passes on any input.
// * A weight is exp(z - ref) scaled by 2^F and truncated to a 64-bit integer.
//   Sums of weights are integer sums: exact and independent of the order in
//   which threads add them, so a row's top-p answer never depends on the
//   team size, the batch it sits in or the backend's reduction tree.

#include <qrita/detail/compat.hpp>

#include <cstdint>

namespace qrita {
namespace detail {

using key_type    = std::uint32_t;
using weight_type = std::uint64_t;

// Key of -inf; NaN maps here as well. Every key above it is a candidate.
constexpr key_type neg_inf_key     = 0x007FFFFFu;
constexpr std::uint32_t neg_inf_bits = 0xFF800000u;
constexpr key_type no_key          = 0xFFFFFFFFu;  // above every real key

// Written with selects only (no branches): it runs once per entry per pass.
KOKKOS_FORCEINLINE_FUNCTION key_type order_key(float x) {
  const std::uint32_t b = float_as_bits(x);
  // Negative values: all bits flipped; others: the sign bit set.
  const std::uint32_t flip =
      std::uint32_t(std::int32_t(b) >> 31) | 0x80000000u;
  key_type key = b ^ flip;
  key = key == 0x7FFFFFFFu ? 0x80000000u : key;  // -0.0 -> +0.0
  return (b & 0x7FFFFFFFu) > 0x7F800000u ? neg_inf_key : key;  // NaN
}

// Inverse of order_key on canonical keys (those order_key can return).
KOKKOS_FORCEINLINE_FUNCTION float key_value(key_type k) {
  return bits_as_float((k & 0x80000000u) ? (k & 0x7FFFFFFFu) : ~k);
}

// The largest value ordered below key k's (k above the key of -inf; -0.0
// is skipped, since it equals +0.0): entries above it are those at or above
// key_value(k).
KOKKOS_INLINE_FUNCTION float value_below(key_type k) {
  key_type b = k - 1u;
  if (b == 0x7FFFFFFFu) b -= 1u;
  return key_value(b);
}

KOKKOS_FORCEINLINE_FUNCTION bool is_candidate(key_type k) { return k > neg_inf_key; }

// Whether x is a candidate (above -inf; NaN is not one) without its key:
// the same answer as is_candidate(order_key(x)) in one comparison.
KOKKOS_FORCEINLINE_FUNCTION bool is_candidate_value(float x) {
  return x > bits_as_float(neg_inf_bits);
}

// The larger and the smaller of two candidates (neither NaN). Either zero
// may come back for -0.0 against +0.0; their keys are equal. On a device
// one instruction each (fmaxf / fminf); on a host a comparison, since the
// C library's fmax / fmin are calls there.
KOKKOS_FORCEINLINE_FUNCTION float larger_candidate(float a, float b) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return fmaxf(a, b);
#else
  return b > a ? b : a;
#endif
}
KOKKOS_FORCEINLINE_FUNCTION float smaller_candidate(float a, float b) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return fminf(a, b);
#else
  return b < a ? b : a;
#endif
}

// Finite in the arithmetic sense (neither inf nor NaN).
KOKKOS_FORCEINLINE_FUNCTION bool is_finite_value(float x) {
  return (float_as_bits(x) & 0x7F800000u) != 0x7F800000u;
}

// Number of fraction bits of a weight for rows of length V: the largest F
// with V * 2^F < 2^62, capped at 50 (a float's 24-bit mantissa needs no
// more). A sum of V weights then never overflows, and each weight is off by
// less than 2^-F of the row maximum's weight, so a row's mass is exact to
// V * 2^-F (3e-8 at V = 262208).
inline int weight_fraction_bits(std::int64_t V) {
  int log2_ceil = 0;
  while ((std::int64_t{1} << log2_ceil) < V) ++log2_ceil;
  int F = 62 - log2_ceil;
  return F > 50 ? 50 : F;
}

// 2^F as the float the weights are scaled by, for rows of length V.
inline float weight_scale_of(std::int64_t V) {
  return static_cast<float>(std::uint64_t{1} << weight_fraction_bits(V));
}

constexpr float weight_exponent_floor = -128.0f;

// A weight's exponent e raised to weight_exponent_floor, a NaN e too
// (fmaxf on a device returns the non-NaN operand): exp(-128) * 2^50 < 1,
// so a weight so floored is 0 at every scale a row gets.
KOKKOS_FORCEINLINE_FUNCTION float floored_exponent(float e) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return fmaxf(e, weight_exponent_floor);
#else
  return e > weight_exponent_floor ? e : weight_exponent_floor;
#endif
}

// Weight of value z relative to ref (ref >= z for every z it is used on)
// at inverse temperature inv_t (1: plain softmax): exp((z - ref) * inv_t)
// in fixed point. The scale is a power of two, so the product is exact in
// float, and with inv_t = 1 the exponent is exactly z - ref. z == ref gets
// the full scale, which also gives +inf entries of a row whose maximum is
// +inf their limit weight; every finite entry of such a row weighs 0, at
// any temperature. A NaN exponent (-inf * 0) is raised to -128, as is
// every exponent below it: exp(-128) * 2^50 < 1, so such a weight is 0
// either way. The clamp (fmaxf on a device) is one instruction where a NaN
// test would be a branch per entry. Entries equal to ref keep their early
// return: a flat row's entries take no exp.
KOKKOS_FORCEINLINE_FUNCTION weight_type fixed_weight(float z, float ref, float scale,
                                                float inv_t = 1.0f) {
  if (!(z < ref)) return static_cast<weight_type>(scale);
  const float x = floored_exponent((z - ref) * inv_t);
  return static_cast<weight_type>(exp_f(x) * scale);
}

// fixed_weight(z, ref, scale, inv_t) of a candidate z, and 0 for a
// non-candidate (NaN, -inf), without a branch: the exp is taken for every
// z (of -128 for a non-candidate: below 1 in weight units at every scale a
// row gets, 2^50 or less) and selects pick the answer. For the mask's
// second read, which weighs a group's entries side by side
// (boundary_buckets.hpp, PhasedVisitor). A flat row's entries then take
// the exp too.
KOKKOS_FORCEINLINE_FUNCTION weight_type candidate_weight(float z, float ref, float scale,
                                                    float inv_t = 1.0f) {
  const bool candidate = is_candidate_value(z);
  const float x = candidate ? floored_exponent((z - ref) * inv_t) : weight_exponent_floor;
  const weight_type w = static_cast<weight_type>(exp_f(x) * scale);
  return z < ref || !candidate ? w : static_cast<weight_type>(scale);
}

// A non-negative amount in weight units, rounded up to an integer: 0 for
// anything not above 0 (NaN included), 2^63 at and past it. Weights and
// their sums stay below 2^62, so every bound the kernels round is exact.
KOKKOS_INLINE_FUNCTION weight_type weight_ceil(double x) {
  if (!(x > 0.0)) return 0;
  if (x >= 0x1p63) return weight_type(1) << 63;
  const weight_type w = static_cast<weight_type>(x);
  return double(w) < x ? w + 1 : w;
}

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_KEYS_HPP
