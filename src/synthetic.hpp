#ifndef QRITA_SRC_SYNTHETIC_HPP
#define QRITA_SRC_SYNTHETIC_HPP

// Seeded synthetic logits for the CLI, the tests and the benchmarks (not
// installed). Each shape stands for a kind of row real serving sees.

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

}  // namespace synthetic
}  // namespace qrita

#endif  // QRITA_SRC_SYNTHETIC_HPP
