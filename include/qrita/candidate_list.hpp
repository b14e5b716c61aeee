// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_CANDIDATE_LIST_HPP
#define QRITA_CANDIDATE_LIST_HPP

// qrita::candidate_list: per row, the kept set as a compact list in the
// definition's order, with the probabilities of the filtered,
// temperature-scaled distribution.
//
//   qrita::candidate_list(space, logits, params, ids, probs, logprobs, counts);
//
// logits: as for sample_tokens (never written). ids: View<int**>
// [batch][C]; its second extent C is the list's capacity. probs, logprobs:
// View<float**> [batch][C], or empty Views to skip them. counts: View<int*>,
// one per row: the size of the kept set, which may exceed C.
//
// Row r lists the first min(C, counts(r)) kept entries in descending value,
// ties by lower index: ids(r, j) the column, probs(r, j) its probability
// w_j / W under the filtered distribution (the weights of sample_tokens, in
// double, rounded to float), logprobs(r, j) = (x_j - max) / T - ln(W / 2^F)
// in double (finite even where the probability rounds to 0). Slots past the
// list hold id -1, probability 0 and log-probability -inf. A row without a
// candidate has count 0. A row with no active filter lists the head of its
// whole softmax.
//
// C may be at most the candidates a team can hold (LaunchPlan's
// candidate_capacity plus, with a Workspace, tier_capacity); a larger C is
// rejected before anything runs.

#include <qrita/detail/dispatch.hpp>

namespace qrita {

template <class ExecutionSpace, class LogitsView, class MemorySpace, class IdView,
          class ProbView, class LogprobView, class CountView,
          class = detail::if_space<ExecutionSpace>>
void candidate_list(ExecutionSpace const& space, LogitsView const& logits,
                    SamplingParams<MemorySpace> const& params, IdView const& ids,
                    ProbView const& probs, LogprobView const& logprobs,
                    CountView const& counts, Options const& opts = Options{}) {
  detail::dispatch_candidates(space, logits, params, ids, probs, logprobs, counts,
                              opts, detail::WorkspaceMemory{});
}

template <class ExecutionSpace, class LogitsView, class MemorySpace, class IdView,
          class ProbView, class LogprobView, class CountView,
          class = detail::if_space<ExecutionSpace>>
void candidate_list(ExecutionSpace const& space, LogitsView const& logits,
                    SamplingParams<MemorySpace> const& params, IdView const& ids,
                    ProbView const& probs, LogprobView const& logprobs,
                    CountView const& counts, Options const& opts,
                    Workspace<ExecutionSpace> const& workspace) {
  detail::dispatch_candidates(space, logits, params, ids, probs, logprobs, counts,
                              opts, workspace.memory());
}

}  // namespace qrita

#endif  // QRITA_CANDIDATE_LIST_HPP
