#ifndef QRITA_SRC_SYNTHETIC_HPP
#define QRITA_SRC_SYNTHETIC_HPP

// Seeded synthetic logits for the CLI, the tests and the benchmarks (not
// installed). Each shape stands for a kind of row real serving sees.
//
// Two families:
//  * Shape (lm, ties, ...): drawn row after row from one std::mt19937_64, on
//    the host. The tests depend on these values: never change them.
//  * CounterShape (serving, serving_bf16, flat): every value is a function
//    of (seed, row, column) alone (a splitmix64 hash and Box-Muller), so a
//    batch is generated in parallel on any backend, the first B rows of a
//    large batch are the batch of B rows, and the host can recompute any
//    row. The perf suite fills 1024 x 262208 logits this way on the device.

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace qrita {
namespace synthetic {

enum class Shape {
  lm,      // Gaussian bulk plus a heavy tail of informative tokens
  ties,    // lm rounded to bfloat16: long runs of equal values
  flat,    // every entry equal
  spread,  // neighbours 1e-6 apart around one value (near-flat)
  peaked,  // lm plus one token holding most of the mass
  sparse   // lm with most entries -inf (grammar / vocabulary masks)
};

inline const char* name(Shape s) {
  switch (s) {
    case Shape::lm: return "lm";
    case Shape::ties: return "ties";
    case Shape::flat: return "flat";
    case Shape::spread: return "spread";
    case Shape::peaked: return "peaked";
    case Shape::sparse: return "sparse";
  }
  return "?";
}

// Rounds to the nearest bfloat16 (ties to even), as a model emitting bf16
// logits would.
inline float to_bf16(float x) {
  std::uint32_t u;
  static_assert(sizeof u == sizeof x, "float is 32 bits");
  std::memcpy(&u, &x, sizeof u);
  if ((u & 0x7F800000u) == 0x7F800000u) return x;  // inf / NaN
  u += 0x7FFFu + ((u >> 16) & 1u);
  u &= 0xFFFF0000u;
  std::memcpy(&x, &u, sizeof u);
  return x;
}

// Gaussian bulk N(mu, sigma) over the vocabulary, plus `informative` tokens
// lifted 3 to ~10 sigma above it with an exponential tail: the shape the
// paper's sigma-truncation is built on.
inline void lm_row(float* row, std::int64_t vocab, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> mu_d(-4.0f, 2.0f), sigma_d(1.0f, 3.0f);
  const float mu = mu_d(rng), sigma = sigma_d(rng);
  std::normal_distribution<float> bulk(mu, sigma);
  for (std::int64_t i = 0; i < vocab; ++i) row[i] = bulk(rng);
  if (vocab < 4) return;
  std::uniform_int_distribution<std::int64_t> pos(0, vocab - 1);
  std::exponential_distribution<float> tail(0.8f);
  const std::int64_t informative = std::min<std::int64_t>(vocab / 4, 8 + std::int64_t(rng() % 120));
  for (std::int64_t j = 0; j < informative; ++j)
    row[pos(rng)] = mu + sigma * (3.0f + tail(rng));
}

inline void fill_row(float* row, std::int64_t vocab, Shape shape, std::mt19937_64& rng) {
  switch (shape) {
    case Shape::lm: lm_row(row, vocab, rng); break;
    case Shape::ties:
      lm_row(row, vocab, rng);
      for (std::int64_t i = 0; i < vocab; ++i) row[i] = to_bf16(row[i]);
      break;
    case Shape::flat: {
      const float v = std::uniform_real_distribution<float>(-3.0f, 3.0f)(rng);
      for (std::int64_t i = 0; i < vocab; ++i) row[i] = v;
      break;
    }
    case Shape::spread: {
      const float v = std::uniform_real_distribution<float>(-3.0f, 3.0f)(rng);
      std::uniform_int_distribution<int> step(-50, 50);
      for (std::int64_t i = 0; i < vocab; ++i) row[i] = v + 1e-6f * float(step(rng));
      break;
    }
    case Shape::peaked: {
      lm_row(row, vocab, rng);
      float top = -std::numeric_limits<float>::infinity();
      for (std::int64_t i = 0; i < vocab; ++i) top = std::max(top, row[i]);
      row[std::int64_t(rng() % std::uint64_t(vocab))] = top + 12.0f;
      break;
    }
    case Shape::sparse: {
      lm_row(row, vocab, rng);
      const double keep = std::uniform_real_distribution<double>(0.001, 0.5)(rng);
      std::bernoulli_distribution masked(1.0 - keep);
      for (std::int64_t i = 0; i < vocab; ++i)
        if (masked(rng)) row[i] = -std::numeric_limits<float>::infinity();
      break;
    }
  }
}

// A batch of lm rows, row-major [batch][vocab].
inline std::vector<float> lm_batch(std::int64_t batch, std::int64_t vocab,
                                   std::uint64_t seed, Shape shape = Shape::lm) {
  std::vector<float> out(std::size_t(batch * vocab));
  std::mt19937_64 rng(seed);
  for (std::int64_t b = 0; b < batch; ++b) fill_row(out.data() + b * vocab, vocab, shape, rng);
  return out;
}

// ---------------------------------------------------------------------------
// Counter-based shapes.
//
// Host and device run the same code (KOKKOS_INLINE_FUNCTION), so a value is
// the same on every backend and thread count, up to the last bit of the
// platform's double log / cos / sqrt before the rounding to float (rare, and
// at most one float ulp).

enum class CounterShape {
  serving,       // calibrated to real models' logits: see serving_row_params
  serving_bf16,  // serving rounded to bfloat16: long runs of ties
  flat           // every entry of a row equal
};

inline const char* name(CounterShape s) {
  switch (s) {
    case CounterShape::serving: return "serving";
    case CounterShape::serving_bf16: return "serving-bf16";
    case CounterShape::flat: return "flat";
  }
  return "?";
}

// splitmix64's finaliser: a bijection of 64-bit words with good avalanche.
KOKKOS_INLINE_FUNCTION std::uint64_t mix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// 64 random bits for (seed, stream, a, b): one draw of a counter-based
// generator. Streams keep the different uses of (row, column) apart.
KOKKOS_INLINE_FUNCTION std::uint64_t counter_hash(std::uint64_t seed, std::uint64_t stream,
                                                  std::uint64_t a, std::uint64_t b) {
  return mix64(mix64(mix64(seed ^ (stream * 0xD6E8FEB86659FD93ull)) + a) + b);
}

// Uniform in (0, 1) from 32 bits, never 0 nor 1.
KOKKOS_INLINE_FUNCTION double unit_open(std::uint32_t u) {
  return (double(u) + 0.5) * (1.0 / 4294967296.0);
}

namespace math {
#if KOKKOS_VERSION >= 30700
KOKKOS_INLINE_FUNCTION double log(double x) { return Kokkos::log(x); }
KOKKOS_INLINE_FUNCTION double cos(double x) { return Kokkos::cos(x); }
KOKKOS_INLINE_FUNCTION double sqrt(double x) { return Kokkos::sqrt(x); }
#else
KOKKOS_INLINE_FUNCTION double log(double x) { return Kokkos::Experimental::log(x); }
KOKKOS_INLINE_FUNCTION double cos(double x) { return Kokkos::Experimental::cos(x); }
KOKKOS_INLINE_FUNCTION double sqrt(double x) { return Kokkos::Experimental::sqrt(x); }
#endif
}  // namespace math

// A standard normal from 64 random bits (Box-Muller, one of its two
// outputs). |z| < 6.7: the smallest u1 is 2^-33.
KOKKOS_INLINE_FUNCTION double normal_from(std::uint64_t h) {
  const double u1 = unit_open(std::uint32_t(h >> 32));
  const double u2 = unit_open(std::uint32_t(h & 0xFFFFFFFFull));
  return math::sqrt(-2.0 * math::log(u1)) * math::cos(6.283185307179586 * u2);
}

// Nearest bfloat16 (ties to even), device-callable (to_bf16 above is the
// host spelling used by the mt19937 shapes).
KOKKOS_INLINE_FUNCTION float round_bf16(float x) {
  union {
    float f;
    std::uint32_t u;
  } b{x};
  if ((b.u & 0x7F800000u) == 0x7F800000u) return x;  // inf / NaN
  b.u += 0x7FFFu + ((b.u >> 16) & 1u);
  b.u &= 0xFFFF0000u;
  return b.f;
}

// Everything about one row of a counter shape that is not per entry,
// computed once per row on the host (serving_row_params) and read by every
// entry. Trivially copyable: the perf suite copies an array of them to the
// device.
struct ServingRow {
  double mu;     // bulk: mu + sigma * z below the mode, mu + sigma * right * z above
  double sigma;
  double right;
  double top;    // informative token j: top - zipf * ln(1 + j) + jitter * z_j
  double zipf;
  double jitter;
  std::int64_t informative;  // m, the number of informative tokens
  std::int64_t offset;       // informative token j sits at column (offset + stride * j) mod V;
  std::int64_t stride_inverse;  // column c holds j = ((c - offset) * stride_inverse) mod V
  float flat;                // the value of every entry of a flat row
  float bulk_share;          // q, the bulk's expected share of the softmax mass
};

namespace impl {
inline std::int64_t gcd(std::int64_t a, std::int64_t b) {
  while (b != 0) {
    const std::int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}
// Inverse of a modulo n (gcd(a, n) == 1).
inline std::int64_t inverse_mod(std::int64_t a, std::int64_t n) {
  std::int64_t t = 0, new_t = 1, r = n, new_r = a;
  while (new_r != 0) {
    const std::int64_t q = r / new_r;
    std::int64_t tmp = t - q * new_t;
    t = new_t;
    new_t = tmp;
    tmp = r - q * new_r;
    r = new_r;
    new_r = tmp;
  }
  return t < 0 ? t + n : t;
}
// Standard normal CDF.
inline double phi(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }
}  // namespace impl

// The "serving" shape, calibrated to what the Qrita paper measures on real
// models (R1-Llama-8B, Qwen3-8B, GPT-OSS-20B, Gemma3-4B on WikiText-2): a
// noise bulk of nearly the whole vocabulary and a few hundred informative
// tokens far above it that hold 95-99.9% of the softmax mass; at k = 50 a
// few hundred entries lie above sigma-truncation's threshold.
//
// Row r (all draws from counter_hash(seed, 1, r, i), uniform unless said):
//   mu in [-3, 1], sigma in [1.5, 2.5]         bulk location and scale
//   right in [0.4, 0.6]                        the bulk's upper half is
//       narrower (sd right * sigma) than its lower half (sd sigma): real
//       logits are skewed to the left. A symmetric Gaussian bulk puts ~2% of
//       V above mu + 2.06 sd (qrita's k = 50 threshold), ten times the
//       paper's measured few hundred; right ~ 0.5 gives ~0.3%.
//   q log-uniform in [0.001, 0.05]             the bulk's share of the mass
//   zipf in [1.1, 2.2], m in [100, 299] (at most V / 8)
//   Bulk entry:  mu + sigma * z (z < 0) or mu + sigma * right * z (z >= 0),
//                z ~ N(0, 1) from counter_hash(seed, 2, r, column).
//   Informative token j = 0..m-1:  top - zipf * ln(1 + j) + 0.25 * z_j,
//                z_j from counter_hash(seed, 3, r, j), at column
//                (offset + stride * j) mod V with gcd(stride, V) = 1.
//   top = mu + ln((V - m) * E[exp(bulk - mu)]) + ln((1 - q) / q) - ln(S),
//   S = sum_{j<m} (1 + j)^-zipf,
//   E[exp(bulk - mu)] = exp(sigma^2 / 2) Phi(-sigma)
//                       + exp((right sigma)^2 / 2) Phi(right sigma),
//   so that the informative tokens hold an expected 1 - q of the mass,
//   Zipf-distributed among themselves (the top token holds 1 / S of it: 20%
//   to 65%). top lands 7 to 11 sigma above mu.
// A flat row is the constant flat in [-3, 3] (draw 6).
inline ServingRow serving_row_params(std::uint64_t seed, std::int64_t row, std::int64_t vocab) {
  const auto u = [&](std::uint64_t i) {
    return unit_open(std::uint32_t(counter_hash(seed, 1, std::uint64_t(row), i) >> 32));
  };
  ServingRow p{};
  p.mu     = -3.0 + 4.0 * u(0);
  p.sigma  = 1.5 + 1.0 * u(1);
  p.right  = 0.4 + 0.2 * u(2);
  const double q = 0.001 * std::pow(50.0, u(3));
  p.bulk_share   = float(q);
  p.zipf   = 1.1 + 1.1 * u(4);
  p.jitter = 0.25;
  p.flat   = float(-3.0 + 6.0 * u(6));
  std::int64_t m = 100 + std::int64_t(200.0 * u(5));
  p.informative  = std::min(m, vocab / 8);
  m = p.informative;
  if (m <= 0) {
    p.informative = 0;
    return p;
  }
  // A stride coprime with V: the m columns are distinct.
  const std::uint64_t h = counter_hash(seed, 1, std::uint64_t(row), 7);
  std::int64_t stride = 1 + std::int64_t(h % std::uint64_t(vocab - 1));
  while (impl::gcd(stride, vocab) != 1) stride = stride % (vocab - 1) + 1;
  p.offset         = std::int64_t((h >> 32) % std::uint64_t(vocab));
  p.stride_inverse = impl::inverse_mod(stride, vocab);
  double S = 0.0;
  for (std::int64_t j = 0; j < m; ++j) S += std::pow(double(1 + j), -p.zipf);
  const double rs   = p.right * p.sigma;
  const double bulk = double(vocab - m) *
                      (std::exp(0.5 * p.sigma * p.sigma) * impl::phi(-p.sigma) +
                       std::exp(0.5 * rs * rs) * impl::phi(rs));
  p.top = p.mu + std::log(bulk) + std::log((1.0 - q) / q) - std::log(S);
  return p;
}

// Entry `col` of row `row` of a counter shape with these row parameters.
KOKKOS_INLINE_FUNCTION float counter_value(CounterShape shape, ServingRow const& p,
                                           std::uint64_t seed, std::int64_t row,
                                           std::int64_t col, std::int64_t vocab) {
  if (shape == CounterShape::flat) return p.flat;
  float x;
  std::int64_t j = p.informative;
  if (p.informative > 0) {
    const std::int64_t c = ((col - p.offset) % vocab + vocab) % vocab;
    j = std::int64_t((std::uint64_t(c) * std::uint64_t(p.stride_inverse)) % std::uint64_t(vocab));
  }
  if (j < p.informative) {
    const double z = normal_from(counter_hash(seed, 3, std::uint64_t(row), std::uint64_t(j)));
    x = float(p.top - p.zipf * math::log(double(1 + j)) + p.jitter * z);
  } else {
    const double z = normal_from(counter_hash(seed, 2, std::uint64_t(row), std::uint64_t(col)));
    x = float(p.mu + p.sigma * (z < 0.0 ? z : p.right * z));
  }
  return shape == CounterShape::serving_bf16 ? round_bf16(x) : x;
}

// Row `row` of a counter shape, on the host: the reference the device
// generator is checked against.
inline void counter_row(float* out, std::int64_t vocab, CounterShape shape, std::uint64_t seed,
                        std::int64_t row) {
  const ServingRow p = serving_row_params(seed, row, vocab);
  for (std::int64_t c = 0; c < vocab; ++c) out[c] = counter_value(shape, p, seed, row, c, vocab);
}

}  // namespace synthetic
}  // namespace qrita

#endif  // QRITA_SRC_SYNTHETIC_HPP
