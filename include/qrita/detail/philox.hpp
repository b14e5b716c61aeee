// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_DETAIL_PHILOX_HPP
#define QRITA_DETAIL_PHILOX_HPP

// The sampler's randomness: Philox-4x32-10 (Salmon et al., "Parallel random
// numbers: as easy as 1, 2, 3", SC 2011), a counter-based generator. A
// draw is a pure function of (seed, offset): no state, nothing shared
// between rows or calls, so a row's token does not depend on where or with
// whom it is sampled. Kokkos' generators keep per-thread state and are not
// keyed by a caller's seed per row, hence this one (the same family as
// cuRAND's and PyTorch's Philox).
//
// Also splitmix64's finaliser (mix64), a cheap 64-bit hash, and the
// 64 x 64 -> high 64 bits product that maps a uniform 64-bit u to
// floor(u * W / 2^64), uniform on [0, W) up to 2^-64 per value range.

#include <qrita/detail/compat.hpp>

#include <cstdint>

namespace qrita {
namespace detail {

// splitmix64's finaliser: a bijection of 64-bit words with good avalanche.
KOKKOS_INLINE_FUNCTION std::uint64_t mix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

KOKKOS_INLINE_FUNCTION std::uint64_t mul_high_64(std::uint64_t a, std::uint64_t b) {
  const std::uint64_t a_lo = a & 0xFFFFFFFFu, a_hi = a >> 32;
  const std::uint64_t b_lo = b & 0xFFFFFFFFu, b_hi = b >> 32;
  const std::uint64_t lo_lo = a_lo * b_lo, hi_lo = a_hi * b_lo;
  const std::uint64_t lo_hi = a_lo * b_hi, hi_hi = a_hi * b_hi;
  const std::uint64_t cross = (lo_lo >> 32) + (hi_lo & 0xFFFFFFFFu) + lo_hi;
  return hi_hi + (hi_lo >> 32) + (cross >> 32);
}

// 64 uniform bits for (seed, offset): Philox-4x32-10 with key = seed and
// counter = (offset, stream), first two output words.
KOKKOS_INLINE_FUNCTION std::uint64_t philox_u64(std::uint64_t seed,
                                                std::uint64_t offset,
                                                std::uint32_t stream = 0) {
  std::uint32_t c0 = std::uint32_t(offset), c1 = std::uint32_t(offset >> 32);
  std::uint32_t c2 = stream, c3 = 0;
  std::uint32_t k0 = std::uint32_t(seed), k1 = std::uint32_t(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    const std::uint64_t p0 = std::uint64_t(0xD2511F53u) * c0;
    const std::uint64_t p1 = std::uint64_t(0xCD9E8D57u) * c2;
    const std::uint32_t n0 = std::uint32_t(p1 >> 32) ^ c1 ^ k0;
    const std::uint32_t n1 = std::uint32_t(p1);
    const std::uint32_t n2 = std::uint32_t(p0 >> 32) ^ c3 ^ k1;
    const std::uint32_t n3 = std::uint32_t(p0);
    c0 = n0;
    c1 = n1;
    c2 = n2;
    c3 = n3;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return (std::uint64_t(c0) << 32) | std::uint64_t(c1);
}

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_PHILOX_HPP
