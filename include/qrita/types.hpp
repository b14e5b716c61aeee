// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_TYPES_HPP
#define QRITA_TYPES_HPP

// 16-bit logit storage types with a declared format, usable with every
// Kokkos version qrita supports (Kokkos 3.4 has no bfloat16 on the host, and
// its half_t is a float there). A View of these is read and masked in place
// without an fp32 copy; every decision is taken on the exact float value of
// each stored entry, so the definition (docs/SEMANTICS.md) is unchanged.
//
//   qrita::bfloat16  the upper 16 bits of an IEEE-754 binary32 (bf16)
//   qrita::float16   IEEE-754 binary16 (fp16)
//
// Both are standard-layout structs holding the raw bits, so a buffer from
// another framework (a torch.bfloat16 tensor's storage) can be wrapped in an
// unmanaged View of them. to_float converts exactly; from_float rounds to
// nearest, ties to even (NaN stays NaN).

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>

namespace qrita {

struct bfloat16 {
  std::uint16_t bits;
};

struct float16 {
  std::uint16_t bits;
};

namespace detail {
union TypesFloatBits {
  float f;
  std::uint32_t u;
};
KOKKOS_FORCEINLINE_FUNCTION float types_bits_to_float(std::uint32_t u) {
  TypesFloatBits b;
  b.u = u;
  return b.f;
}
KOKKOS_FORCEINLINE_FUNCTION std::uint32_t types_float_to_bits(float f) {
  TypesFloatBits b;
  b.f = f;
  return b.u;
}
}  // namespace detail

KOKKOS_FORCEINLINE_FUNCTION float to_float(float x) { return x; }

KOKKOS_FORCEINLINE_FUNCTION float to_float(bfloat16 x) {
  return detail::types_bits_to_float(std::uint32_t(x.bits) << 16);
}

KOKKOS_FORCEINLINE_FUNCTION float to_float(float16 x) {
#if defined(__CUDA_ARCH__)
  // One instruction on NVIDIA devices, exact (a NaN stays a NaN). The
  // branches below make nvcc keep the fp16 mask kernel's functions out of
  // line, with a copy of the whole functor into every thread's local
  // memory at the kernel's entry (docs/DESIGN.md, "Code shape on GPUs").
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(x.bits));
  return f;
#else
  const std::uint32_t h    = x.bits;
  const std::uint32_t sign = (h & 0x8000u) << 16;
  const std::uint32_t e    = (h >> 10) & 0x1Fu;
  const std::uint32_t m    = h & 0x3FFu;
  if (e == 0x1Fu)  // inf, NaN (payload kept)
    return detail::types_bits_to_float(sign | 0x7F800000u | (m << 13));
  if (e == 0) {  // zero, subnormal: m * 2^-24, exact in float
    const float v = float(m) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  return detail::types_bits_to_float(sign | ((e + 112u) << 23) | (m << 13));
#endif
}

template <class T>
KOKKOS_FORCEINLINE_FUNCTION T from_float(float x);

template <>
KOKKOS_FORCEINLINE_FUNCTION float from_float<float>(float x) {
  return x;
}

template <>
KOKKOS_FORCEINLINE_FUNCTION bfloat16 from_float<bfloat16>(float x) {
  const std::uint32_t u = detail::types_float_to_bits(x);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u)  // NaN: quiet, sign kept
    return bfloat16{std::uint16_t((u >> 16) | 0x0040u)};
  const std::uint32_t rounded = u + 0x7FFFu + ((u >> 16) & 1u);
  return bfloat16{std::uint16_t(rounded >> 16)};
}

template <>
KOKKOS_FORCEINLINE_FUNCTION float16 from_float<float16>(float x) {
  const std::uint32_t u    = detail::types_float_to_bits(x);
  const std::uint16_t sign = std::uint16_t((u >> 16) & 0x8000u);
  const std::uint32_t a    = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return float16{std::uint16_t(sign | 0x7E00u)};  // NaN
  if (a >= 0x477FF000u) return float16{std::uint16_t(sign | 0x7C00u)};  // inf
  if (a < 0x38800000u) {
    // Below the smallest normal (2^-14): a multiple of 2^-24, rounded to
    // nearest even by the float addition of 0.5 (exact in float here).
    const float v       = detail::types_bits_to_float(a) * 16777216.0f;  // * 2^24
    const float r       = v + 8388608.0f - 8388608.0f;  // round to integer, ties even
    return float16{std::uint16_t(sign | std::uint16_t(r))};
  }
  const std::uint32_t rounded = a + 0xFFFu + ((a >> 13) & 1u);
  return float16{std::uint16_t(sign | ((rounded - 0x38000000u) >> 13))};
}

// The storage types qrita's kernels read: float, bfloat16, float16.
template <class T>
struct is_storage_type
    : std::integral_constant<bool, std::is_same<T, float>::value ||
                                       std::is_same<T, bfloat16>::value ||
                                       std::is_same<T, float16>::value> {};

// A View's element type as the storage type the kernels read. Kokkos' own
// Kokkos::Experimental::half_t and bhalf_t are read as float16 and bfloat16
// where Kokkos makes them 16-bit types (Kokkos 4 and later; half_t on
// Kokkos 3.x GPU backends); where Kokkos defines them as float, they are
// float.
template <class V>
struct storage_of {
  using type = V;
};
#if defined(KOKKOS_HALF_T_IS_FLOAT)
#if !KOKKOS_HALF_T_IS_FLOAT
template <>
struct storage_of<Kokkos::Experimental::half_t> {
  using type = float16;
};
#endif
#endif
#if defined(KOKKOS_BHALF_T_IS_FLOAT)
#if !KOKKOS_BHALF_T_IS_FLOAT
template <>
struct storage_of<Kokkos::Experimental::bhalf_t> {
  using type = bfloat16;
};
#endif
#endif

// The logit element types qrita accepts: float, bfloat16, float16, and
// Kokkos' half_t / bhalf_t (see storage_of).
template <class T>
struct is_logit_type
    : std::integral_constant<bool,
                             is_storage_type<typename storage_of<T>::type>::value &&
                                 sizeof(T) == sizeof(typename storage_of<T>::type)> {};

}  // namespace qrita

#endif  // QRITA_TYPES_HPP
