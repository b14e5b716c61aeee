// SPDX-License-Identifier: Apache-2.0
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
KOKKOS_FORCEINLINE_FUNCTION float exp_f(float x) {
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

KOKKOS_INLINE_FUNCTION double log_d(double x) {
#if KOKKOS_VERSION >= 30700
  return Kokkos::log(x);
#else
  return Kokkos::Experimental::log(x);
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

KOKKOS_FORCEINLINE_FUNCTION std::uint32_t float_as_bits(float x) {
  FloatBits b;
  b.f = x;
  return b.u;
}

KOKKOS_FORCEINLINE_FUNCTION float bits_as_float(std::uint32_t u) {
  FloatBits b;
  b.u = u;
  return b.f;
}

// Team-level parallel_reduce over [0, n). Every team reduction in qrita goes
// through here. Kokkos 3.x's CUDA (and HIP) team reduction stages per-warp
// partials in a static __shared__ buffer, one per value type, and returns
// without a barrier after reading it back: a second reduction of the same
// type right after (consecutive pivot-search passes) can overwrite partials
// that slower warps are still reading. The team barrier after each reduction
// closes that window. It is dropped only where a GPU run showed it is not
// needed: Kokkos 4.6 (4.6.01 with CUDA 13: racecheck clean without it). Every version not checked on a GPU keeps it: 3.x (3.4.01 races
// without it), 4.0 to 4.5, and 4.7 / 5.x (5.2.2 ran on OpenMP only). On host
// backends it costs next to nothing. The evidence, and how to extend the
// list: docs/DESIGN.md, "Portability notes".
template <class Member, class Closure, class Reducer>
KOKKOS_INLINE_FUNCTION void team_reduce(Member const& team, int n,
                                        Closure const& closure,
                                        Reducer const& reducer) {
  Kokkos::parallel_reduce(Kokkos::TeamThreadRange(team, n), closure, reducer);
#if KOKKOS_VERSION < 40601 || KOKKOS_VERSION >= 40700
  team.team_barrier();
#endif
}

// A fence with a label for Kokkos Tools (labels arrived in Kokkos 3.5).
inline void labelled_fence(const char* label) {
#if KOKKOS_VERSION >= 30500
  Kokkos::fence(label);
#else
  (void)label;
  Kokkos::fence();
#endif
}

// Keeps a function out of line (GCC, Clang, nvcc and hipcc).
#define QRITA_NOINLINE __attribute__((noinline))

// Adds v to a counter in team scratch. On CUDA devices, as a shared-memory
// reduction: Kokkos' atomic_add on a pointer the compiler cannot place
// becomes a generic ATOM, much slower than the shared-memory one, and the
// gathering read adds once per entry. Elsewhere, Kokkos' atomic.
KOKKOS_FORCEINLINE_FUNCTION void scratch_atomic_add(std::uint32_t* p, std::uint32_t v) {
#if defined(__CUDA_ARCH__)
  const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(p));
  asm volatile("red.shared.add.u32 [%0], %1;" ::"r"(address), "r"(v) : "memory");
#else
  Kokkos::atomic_add(p, v);
#endif
}

// Adds v to a 64-bit word. Kokkos 3.4's CUDA atomics add unsigned long
// long natively, but std::uint64_t is unsigned long on LP64 Linux, which
// they add by a compare-and-swap loop: slow where many threads add to one
// word (a shard histogram's first digit holds the sign and the exponent,
// so nearly every entry of a row falls in one or two buckets).
KOKKOS_FORCEINLINE_FUNCTION void atomic_add_u64(std::uint64_t* p, std::uint64_t v) {
  static_assert(sizeof(unsigned long long) == sizeof(std::uint64_t),
                "qrita: atomic_add_u64 adds through unsigned long long");
  Kokkos::atomic_add(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
}

// A launch policy with Kokkos' "light weight" hint. On CUDA (and HIP) the
// functor then travels as a kernel argument (it must stay under 4 KiB).
// Without the hint Kokkos copies a functor of more than 512 bytes to
// constant memory, and before the copy waits on the host for the previous
// kernel that used that buffer (cudaEventSynchronize): a host
// synchronisation inside every call, which a CUDA graph capture cannot
// contain, and tens of microseconds per launch at small batches.
template <class Policy>
auto light_weight(Policy const& policy) {
  return Kokkos::Experimental::require(
      policy, Kokkos::Experimental::WorkItemProperty::HintLightWeight);
}

// Largest power of two <= n (n >= 1). Kokkos 3.x's CUDA team scan asserts
// a power-of-two team size.
inline int floor_power_of_two(int n) {
  int p = 1;
  while (p <= n / 2) p *= 2;
  return p;
}

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_COMPAT_HPP
