#ifndef QRITA_DETAIL_COMPAT_HPP
#define QRITA_DETAIL_COMPAT_HPP

// Everything that differs between the Kokkos versions qrita supports lives
// here, so that no kernel carries a version test of its own.
//
// Supported: Kokkos 3.4.01 (Debian's trilinos source) up to 5.x. Only the
// stable core API is used: View, TeamPolicy, TeamThreadRange, team scratch,
// reducers, team scan and atomics.

#include <Kokkos_Core.hpp>

#include <cstdint>

#if !defined(KOKKOS_VERSION) || KOKKOS_VERSION < 30400
#error "qrita needs Kokkos 3.4 or newer"
#endif

namespace qrita {
namespace detail {

// Math functions moved from Kokkos::Experimental to Kokkos in 3.7 and the old
// spelling was removed in 4.x.
KOKKOS_INLINE_FUNCTION float exp_f(float x) {
#if KOKKOS_VERSION >= 30700
  return Kokkos::exp(x);
#else
  return Kokkos::Experimental::exp(x);
#endif
}

KOKKOS_INLINE_FUNCTION double exp_d(double x) {
#if KOKKOS_VERSION >= 30700
  return Kokkos::exp(x);
#else
  return Kokkos::Experimental::exp(x);
#endif
}

KOKKOS_INLINE_FUNCTION double sqrt_d(double x) {
#if KOKKOS_VERSION >= 30700
  return Kokkos::sqrt(x);
#else
  return Kokkos::Experimental::sqrt(x);
#endif
}

// Bit casts between float and its IEEE-754 pattern. A union is what Kokkos
// itself uses for this on every backend it supports (std::bit_cast is C++20
// and memcpy is not available in all device compilers Kokkos 3.4 targets).
union FloatBits {
  float f;
  std::uint32_t u;
};

KOKKOS_INLINE_FUNCTION std::uint32_t float_as_bits(float x) {
  FloatBits b;
  b.f = x;
  return b.u;
}

KOKKOS_INLINE_FUNCTION float bits_as_float(std::uint32_t u) {
  FloatBits b;
  b.u = u;
  return b.f;
}

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_COMPAT_HPP
