// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_SAMPLE_TOKENS_HPP
#define QRITA_SAMPLE_TOKENS_HPP

// qrita::sample_tokens: one token id per row, drawn exactly from the
// filtered, temperature-scaled distribution.
//
//   qrita::sample_tokens(space, logits, params, seeds, offsets, tokens);
//   qrita::sample_tokens(space, logits, params, seeds, offsets, tokens, opts, ws);
//
// logits: View of float, qrita::bfloat16 or qrita::float16 (const or not;
// never written), [batch][vocab], as for sample_mask. params: the row
// filters (qrita::SamplingParams). seeds, offsets: one 64-bit unsigned (or
// signed) integer per row. tokens: View<int*>, one per row; -1 for a row
// without a candidate.
//
// The draw: the kept set K (sample_mask's, with the same params), ordered by
// the definition (descending value, ties by lower index), weighs each entry
// w_i = floor(2^F exp((x_i - max) / T)), the fixed-point weights of the
// top-p search (F = min(50, 62 - ceil(log2 V))). A 64-bit uniform u from
// Philox-4x32-10 keyed by (seed, offset) picks the first entry whose
// cumulative weight exceeds floor(u W / 2^64), W = sum of w over K. So
// P(token i) = w_i / W up to 2^-64, and the token depends only on the row's
// values, its filters, its seed and its offset: bitwise the same at any
// batch size, position in the batch, team size, launch plan or run. Greedy
// rows (T <= 0) return their top entry without using the generator.
//
// Asynchronous on `space`; with a Workspace it allocates nothing and does
// not synchronise the host.

#include <qrita/detail/dispatch.hpp>

namespace qrita {

template <class ExecutionSpace, class LogitsView, class MemorySpace, class SeedView,
          class OffsetView, class TokenView,
          class = detail::if_space<ExecutionSpace>>
void sample_tokens(ExecutionSpace const& space, LogitsView const& logits,
                   SamplingParams<MemorySpace> const& params, SeedView const& seeds,
                   OffsetView const& offsets, TokenView const& tokens,
                   Options const& opts = Options{}) {
  detail::dispatch_sample(space, logits, params, seeds, offsets, tokens, opts,
                          detail::WorkspaceMemory{});
}

template <class ExecutionSpace, class LogitsView, class MemorySpace, class SeedView,
          class OffsetView, class TokenView,
          class = detail::if_space<ExecutionSpace>>
void sample_tokens(ExecutionSpace const& space, LogitsView const& logits,
                   SamplingParams<MemorySpace> const& params, SeedView const& seeds,
                   OffsetView const& offsets, TokenView const& tokens,
                   Options const& opts, Workspace<ExecutionSpace> const& workspace) {
  detail::dispatch_sample(space, logits, params, seeds, offsets, tokens, opts,
                          workspace.memory());
}

}  // namespace qrita

#endif  // QRITA_SAMPLE_TOKENS_HPP
