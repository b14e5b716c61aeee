// SPDX-License-Identifier: Apache-2.0
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

#include <qrita/detail/philox.hpp>

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
  flat,          // every entry of a row equal
  ordered,       // serving with a vocabulary order: low ids hotter and more
                 // spread (see ordered_row_params)
  randn,         // N(0, 1) i.i.d. (vLLM's tests: torch.randn)
  uniform,       // U[0, 1) i.i.d. (torch.rand)
  temp2          // serving at temperature 2 (every entry halved)
};

inline const char* name(CounterShape s) {
  switch (s) {
    case CounterShape::serving: return "serving";
    case CounterShape::serving_bf16: return "serving-bf16";
    case CounterShape::flat: return "flat";
    case CounterShape::ordered: return "ordered";
    case CounterShape::randn: return "randn";
    case CounterShape::uniform: return "uniform";
    case CounterShape::temp2: return "temp2";
  }
  return "?";
}

// Every counter shape, in the order the perf suite lists them.
constexpr CounterShape all_counter_shapes[] = {
    CounterShape::serving, CounterShape::ordered,      CounterShape::randn, CounterShape::uniform,
    CounterShape::temp2,   CounterShape::serving_bf16, CounterShape::flat};

// The shape called `text`; false if none is.
inline bool parse_counter_shape(const char* text, CounterShape& out) {
  for (CounterShape s : all_counter_shapes)
    if (std::strcmp(text, name(s)) == 0) {
      out = s;
      return true;
    }
  return false;
}

using qrita::detail::mix64;  // splitmix64's finaliser

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
  // ordered only (zero for the other shapes): see ordered_row_params.
  double drift;              // D: the bulk's lift at column 0, in sigma
  double spread;             // S: the bulk's extra scale at column 0
  double head_log;           // 1 / ln(1 + head / head_knee)
  std::int64_t head;         // W: columns c < W drift (weight f(c) > 0)
  std::int64_t low_span;     // L: the low-id region informative tokens prefer
  std::int64_t low_count;    // m_low of the m informative tokens sit in [0, L)
  std::int64_t low_offset;   // slot t of [0, L) is column (low_offset + low_stride t) mod L
  std::int64_t low_inverse;  // its inverse stride mod L
  std::int64_t rotate;       // slot t holds informative rank (rotate + t) mod m
};

// The ordered shape's bulk drift: weight f(c) = 1 - ln(1 + c / knee) /
// ln(1 + W / knee) for c < W, 0 beyond.
constexpr double ordered_head_knee = 256.0;
constexpr std::int64_t ordered_head = 16384;

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
// A permutation of [0, n) drawn from 64 random bits h: j -> (offset +
// stride * j) mod n with gcd(stride, n) = 1, kept as the offset and the
// stride's inverse (what counter_value needs to go from a column to j).
struct Scatter {
  std::int64_t offset;
  std::int64_t inverse;
};
inline Scatter scatter(std::uint64_t h, std::int64_t n) {
  std::int64_t stride = 1 + std::int64_t(h % std::uint64_t(n - 1));
  while (gcd(stride, n) != 1) stride = stride % (n - 1) + 1;
  return Scatter{std::int64_t((h >> 32) % std::uint64_t(n)), inverse_mod(stride, n)};
}
// sum_{j<m} (1 + j)^-zipf: the Zipf weights' normaliser.
inline double zipf_norm(std::int64_t m, double zipf) {
  double S = 0.0;
  for (std::int64_t j = 0; j < m; ++j) S += std::pow(double(1 + j), -zipf);
  return S;
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
  const impl::Scatter at = impl::scatter(counter_hash(seed, 1, std::uint64_t(row), 7), vocab);
  p.offset         = at.offset;
  p.stride_inverse = at.inverse;
  const double S   = impl::zipf_norm(m, p.zipf);
  const double rs   = p.right * p.sigma;
  const double bulk = double(vocab - m) *
                      (std::exp(0.5 * p.sigma * p.sigma) * impl::phi(-p.sigma) +
                       std::exp(0.5 * rs * rs) * impl::phi(rs));
  p.top = p.mu + std::log(bulk) + std::log((1.0 - q) / q) - std::log(S);
  return p;
}

// The "ordered" shape: a serving row (above) with a vocabulary order. Real
// vocabularies are ordered: low token ids (bytes, whitespace, short pieces)
// run hot, so the first 4096 entries, the sample sigma-truncation takes its
// mean and sd from, are biased. Matched to what a real 262144-entry
// vocabulary (Gemma-3) shows: the first 4096 entries' mean about +0.9 row sd
// above the row's mean and their sd about 1.35x the row's; a sample spread
// evenly over the row (every V/4096-th entry) nearly unbiased (+0.05 sd,
// sd ratio 1.006); and mu + 3 sigma from the first 4096 entries with
// nothing above it on about a quarter of rows. (A 49152-entry vocabulary,
// SmolLM2, shows the same bias, less strongly.)
//
// Row r: the serving row's draws, and (stream 1, draws 8-15):
//   D in [0.75, 2.05], S in [0.1, 0.5]   the bulk's lift and extra scale at
//                                         column 0
//   Bulk entry at column c:
//     mu + sigma * (D f(c) + (1 + S f(c)) * (z < 0 ? z : right * z)),
//     f(c) = 1 - ln(1 + c / 256) / ln(1 + 16384 / 256) for c < 16384, else 0
//     (f: 1 at column 0, 0.32 at 4096, 0 from 16384; z as in serving).
//   Informative tokens: the serving row's ranks and values (top - zipf
//     ln(1 + j) + 0.25 z_j), but m_low = floor(m * [0.2, 0.6]) of them
//     (at most L / 8) sit in the low region [0, L), L = min(4096, V / 4):
//     slot t of it (column (o_L + s_L t) mod L) holds rank (rot + t) mod m,
//     rot uniform in [0, m); the other m - m_low ranks
//     (rot + m_low + t) mod m sit at columns L + (o + s t) mod (V - L).
//   Diffuse rows: with probability 0.4 the informative tokens hold an
//     expected 1 - q in [1e-5, 1e-2] (log-uniform) of the mass instead of
//     serving's [0.95, 0.999]: their top then sits a few sigma above the
//     bulk (high-entropy rows; most of the "nothing above" rows).
//   top: as serving's, with the bulk's expectation summed column by column
//     over the drifting head.
// Measured (order_bias, seed 1234, 1000 rows, V = 262144): first-4096 mean
// +0.91 row sd, sd ratio 1.35; strided sample +0.00 sd, ratio 1.00; nothing
// above the first-4096 mu + 3 sigma on 25.5% of rows (about 100 entries
// above it on average). At V = 128256: +0.87 sd, ratio 1.30, 28% empty.
// qrita_perf --calibrate prints these.
inline ServingRow ordered_row_params(std::uint64_t seed, std::int64_t row, std::int64_t vocab) {
  ServingRow p = serving_row_params(seed, row, vocab);
  const auto u = [&](std::uint64_t i) {
    return unit_open(std::uint32_t(counter_hash(seed, 1, std::uint64_t(row), i) >> 32));
  };
  p.drift    = 0.75 + 1.3 * u(8);
  p.spread   = 0.1 + 0.4 * u(9);
  double q = double(p.bulk_share);
  if (u(10) < 0.4) q = 1.0 - std::pow(10.0, -2.0 - 3.0 * u(15));  // a diffuse row
  p.bulk_share = float(q);
  p.head     = std::min<std::int64_t>(ordered_head, vocab);
  p.head_log = 1.0 / std::log(1.0 + double(ordered_head) / ordered_head_knee);
  const std::int64_t m = p.informative;
  p.low_span = std::min<std::int64_t>(4096, vocab / 4);
  if (m <= 0 || p.low_span < 2) {
    p.low_span = 0;
    return p;
  }
  p.low_count = std::min<std::int64_t>(std::int64_t(double(m) * (0.2 + 0.4 * u(11))),
                                       p.low_span / 8);
  p.rotate    = std::int64_t(double(m) * u(12)) % m;
  // Strides coprime with L (the low region) and with V - L (the rest).
  const std::int64_t L = p.low_span, R = vocab - L;
  const impl::Scatter low  = impl::scatter(counter_hash(seed, 1, std::uint64_t(row), 13), L);
  const impl::Scatter rest = impl::scatter(counter_hash(seed, 1, std::uint64_t(row), 14), R);
  p.low_offset     = low.offset;
  p.low_inverse    = low.inverse;
  p.offset         = rest.offset;
  p.stride_inverse = rest.inverse;
  // top as in serving_row_params, with the bulk's expectation summed over
  // the drifting head column by column.
  const double S = impl::zipf_norm(m, p.zipf);
  const auto expect = [&](double lift, double scale) {  // E[exp(bulk - mu)]
    const double sl = p.sigma * scale, sr = p.right * p.sigma * scale;
    return std::exp(lift) * (std::exp(0.5 * sl * sl) * impl::phi(-sl) +
                             std::exp(0.5 * sr * sr) * impl::phi(sr));
  };
  double bulk = double(vocab - p.head - m) * expect(0.0, 1.0);
  for (std::int64_t c = 0; c < p.head; ++c) {
    const double f = 1.0 - std::log(1.0 + double(c) / ordered_head_knee) * p.head_log;
    bulk += expect(p.sigma * p.drift * f, 1.0 + p.spread * f);
  }
  p.top = p.mu + std::log(bulk) + std::log((1.0 - q) / q) - std::log(S);
  return p;
}

// The row parameters of any counter shape.
inline ServingRow row_params(CounterShape shape, std::uint64_t seed, std::int64_t row,
                             std::int64_t vocab) {
  return shape == CounterShape::ordered ? ordered_row_params(seed, row, vocab)
                                        : serving_row_params(seed, row, vocab);
}

// Entry `col` of row `row` of a counter shape with these row parameters
// (row_params(shape, seed, row, vocab)).
KOKKOS_INLINE_FUNCTION float counter_value(CounterShape shape, ServingRow const& p,
                                           std::uint64_t seed, std::int64_t row,
                                           std::int64_t col, std::int64_t vocab) {
  if (shape == CounterShape::flat) return p.flat;
  if (shape == CounterShape::randn)
    return float(normal_from(counter_hash(seed, 5, std::uint64_t(row), std::uint64_t(col))));
  if (shape == CounterShape::uniform)  // 24 bits: exactly representable, in [0, 1)
    return float(std::uint32_t(counter_hash(seed, 6, std::uint64_t(row), std::uint64_t(col)) >> 40)) *
           (1.0f / 16777216.0f);
  if (shape == CounterShape::ordered) {
    const std::int64_t m = p.informative;
    std::int64_t j = m;  // informative rank, m: bulk
    if (p.low_span > 0) {
      const std::int64_t L = p.low_span;
      if (col < L) {
        const std::int64_t t = std::int64_t(
            (std::uint64_t((col - p.low_offset + L) % L) * std::uint64_t(p.low_inverse)) %
            std::uint64_t(L));
        if (t < p.low_count) j = (p.rotate + t) % m;
      } else {
        const std::int64_t R = vocab - L;
        const std::int64_t t = std::int64_t(
            (std::uint64_t((col - L - p.offset + R) % R) * std::uint64_t(p.stride_inverse)) %
            std::uint64_t(R));
        if (t < m - p.low_count) j = (p.rotate + p.low_count + t) % m;
      }
    }
    if (j < m) {
      const double z = normal_from(counter_hash(seed, 3, std::uint64_t(row), std::uint64_t(j)));
      return float(p.top - p.zipf * math::log(double(1 + j)) + p.jitter * z);
    }
    const double z = normal_from(counter_hash(seed, 2, std::uint64_t(row), std::uint64_t(col)));
    const double f =
        col < p.head ? 1.0 - math::log(1.0 + double(col) * (1.0 / ordered_head_knee)) * p.head_log
                     : 0.0;
    return float(p.mu + p.sigma * (p.drift * f + (1.0 + p.spread * f) * (z < 0.0 ? z : p.right * z)));
  }
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
  if (shape == CounterShape::temp2) return x * 0.5f;  // exact: halving a float
  return shape == CounterShape::serving_bf16 ? round_bf16(x) : x;
}

// Row `row` of a counter shape, on the host: the reference the device
// generator is checked against.
inline void counter_row(float* out, std::int64_t vocab, CounterShape shape, std::uint64_t seed,
                        std::int64_t row) {
  const ServingRow p = row_params(shape, seed, row, vocab);
  for (std::int64_t c = 0; c < vocab; ++c) out[c] = counter_value(shape, p, seed, row, c, vocab);
}

// How a counter shape's vocabulary order biases sigma-truncation's sample,
// measured on the host (qrita_perf --calibrate prints it; a test can check
// it). Per row: the mean and sd of the first `head` entries and of an evenly
// strided sample of `head` entries (column floor(i V / head)), against the
// whole row's, and whether any entry of the row lies above the head's
// mean + delta * sd. Averages over rows 0..rows-1.
struct OrderBias {
  double head_offset    = 0;  // (head mean - row mean) / row sd
  double head_ratio     = 0;  // head sd / row sd
  double strided_offset = 0;  // (strided mean - row mean) / row sd
  double strided_ratio  = 0;  // strided sd / row sd
  double empty_fraction = 0;  // rows with nothing above head mean + delta * head sd
  double above_mean     = 0;  // mean count of entries above it
};

inline OrderBias order_bias(CounterShape shape, std::uint64_t seed, std::int64_t vocab,
                            std::int64_t rows, std::int64_t head = 4096, double delta = 3.0) {
  OrderBias b;
  head = std::min(head, vocab);
  std::vector<float> x(static_cast<std::size_t>(vocab));
  const auto stats = [](double s, double s2, double n, double& mean, double& sd) {
    mean = s / n;
    sd   = std::sqrt(std::max(0.0, s2 / n - mean * mean));
  };
  for (std::int64_t r = 0; r < rows; ++r) {
    counter_row(x.data(), vocab, shape, seed, r);
    double s = 0, s2 = 0, hs = 0, hs2 = 0, ss = 0, ss2 = 0;
    for (std::int64_t c = 0; c < vocab; ++c) {
      const double v = double(x[std::size_t(c)]);
      s += v;
      s2 += v * v;
      if (c < head) {
        hs += v;
        hs2 += v * v;
      }
    }
    for (std::int64_t i = 0; i < head; ++i) {
      const double v = double(x[std::size_t(i * vocab / head)]);
      ss += v;
      ss2 += v * v;
    }
    double mean, sd, hmean, hsd, smean, ssd;
    stats(s, s2, double(vocab), mean, sd);
    stats(hs, hs2, double(head), hmean, hsd);
    stats(ss, ss2, double(head), smean, ssd);
    if (!(sd > 0)) sd = 1;  // flat rows: no bias to speak of
    b.head_offset += (hmean - mean) / sd;
    b.head_ratio += hsd / sd;
    b.strided_offset += (smean - mean) / sd;
    b.strided_ratio += ssd / sd;
    const double t = hmean + delta * hsd;
    std::int64_t above = 0;
    for (std::int64_t c = 0; c < vocab; ++c) above += double(x[std::size_t(c)]) > t ? 1 : 0;
    b.empty_fraction += above == 0 ? 1.0 : 0.0;
    b.above_mean += double(above);
  }
  const double n = double(std::max<std::int64_t>(rows, 1));
  b.head_offset /= n;
  b.head_ratio /= n;
  b.strided_offset /= n;
  b.strided_ratio /= n;
  b.empty_fraction /= n;
  b.above_mean /= n;
  return b;
}

}  // namespace synthetic
}  // namespace qrita

#endif  // QRITA_SRC_SYNTHETIC_HPP
