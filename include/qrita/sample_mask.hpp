// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_SAMPLE_MASK_HPP
#define QRITA_SAMPLE_MASK_HPP

// qrita::sample_mask: exact top-k / top-p masking of a batch of logits, in
// place, on any Kokkos execution space.
//
//   qrita::sample_mask(space, logits, k, p);           // top-k, then top-p
//   qrita::sample_mask(space, logits, k);              // top-k only (int view)
//   qrita::sample_mask(space, logits, p);              // top-p only (float view)
//   qrita::sample_mask(space, logits, k, p, opts, ws); // with a qrita::Workspace
//   qrita::sample_mask(logits, k, p);                  // default instance, fenced
//
// logits: View<float**> (LayoutRight, or LayoutStride with unit column
// stride; padded rows are fine), shape [batch][vocab]. k: View<int*> or
// View<const int*>, one per row; k <= 0 or k >= vocab turns top-k off for
// the row. p: View<float*> or View<const float*>, one per row; p >= 1 (or
// NaN) turns top-p off, p <= 0 keeps exactly the top entry. Kept entries are
// left bitwise unchanged; every other entry becomes -inf.
//
// Calls with an execution-space instance are asynchronous on that instance
// and never allocate; the overloads without one fence before and after.
// A qrita::Workspace (workspace.hpp) lets a call gather candidates into
// device memory when they do not fit on chip.

#include <qrita/detail/dispatch.hpp>

namespace qrita {

/// Top-k then top-p on every row, in place, on `space` (asynchronous).
template <class ExecutionSpace, class LogitsView, class KView, class PView,
          class = detail::if_space<ExecutionSpace>, class = detail::if_view<KView>,
          class = detail::if_view<PView>>
void sample_mask(ExecutionSpace const& space, LogitsView const& logits,
                 KView const& k, PView const& p, Options const& opts = Options{}) {
  static_assert(detail::check_types<ExecutionSpace, LogitsView, KView, PView>());
  detail::dispatch(space, logits, &k, &p,
                   static_cast<detail::NoStats const*>(nullptr), opts,
                   detail::WorkspaceMemory{});
}

/// As above, gathering into `workspace` where on-chip memory does not
/// suffice. Allocates nothing and does not synchronise the host.
template <class ExecutionSpace, class LogitsView, class KView, class PView,
          class = detail::if_space<ExecutionSpace>, class = detail::if_view<KView>,
          class = detail::if_view<PView>>
void sample_mask(ExecutionSpace const& space, LogitsView const& logits,
                 KView const& k, PView const& p, Options const& opts,
                 Workspace<ExecutionSpace> const& workspace) {
  static_assert(detail::check_types<ExecutionSpace, LogitsView, KView, PView>());
  detail::dispatch(space, logits, &k, &p,
                   static_cast<detail::NoStats const*>(nullptr), opts,
                   workspace.memory());
}

/// As above, and writes per-row diagnostics into `stats` (one per row).
template <class ExecutionSpace, class LogitsView, class KView, class PView,
          class StatsView, class = detail::if_space<ExecutionSpace>,
          class = detail::if_view<StatsView>>
void sample_mask(ExecutionSpace const& space, LogitsView const& logits,
                 KView const& k, PView const& p, Options const& opts,
                 Workspace<ExecutionSpace> const& workspace,
                 StatsView const& stats) {
  static_assert(detail::check_types<ExecutionSpace, LogitsView, KView, PView>());
  static_assert(detail::check_stats_type<ExecutionSpace, StatsView>());
  detail::dispatch(space, logits, &k, &p, &stats, opts, workspace.memory());
}

/// Diagnostics without a workspace.
template <class ExecutionSpace, class LogitsView, class KView, class PView,
          class StatsView, class = detail::if_space<ExecutionSpace>,
          class = detail::if_view<StatsView>>
void sample_mask(ExecutionSpace const& space, LogitsView const& logits,
                 KView const& k, PView const& p, Options const& opts,
                 StatsView const& stats) {
  static_assert(detail::check_types<ExecutionSpace, LogitsView, KView, PView>());
  static_assert(detail::check_stats_type<ExecutionSpace, StatsView>());
  detail::dispatch(space, logits, &k, &p, &stats, opts, detail::WorkspaceMemory{});
}

/// One filter: top-k if `k_or_p` holds int, top-p if it holds float.
template <class ExecutionSpace, class LogitsView, class FilterView,
          class = detail::if_space<ExecutionSpace>,
          class = detail::if_view<FilterView>>
void sample_mask(ExecutionSpace const& space, LogitsView const& logits,
                 FilterView const& k_or_p, Options const& opts = Options{}) {
  detail::dispatch_one(space, logits, k_or_p, opts, detail::WorkspaceMemory{});
}

template <class ExecutionSpace, class LogitsView, class FilterView,
          class = detail::if_space<ExecutionSpace>,
          class = detail::if_view<FilterView>>
void sample_mask(ExecutionSpace const& space, LogitsView const& logits,
                 FilterView const& k_or_p, Options const& opts,
                 Workspace<ExecutionSpace> const& workspace) {
  detail::dispatch_one(space, logits, k_or_p, opts, workspace.memory());
}

/// The filters of a qrita::SamplingParams (temperature, min-p, top-k,
/// top-p; see qrita/params.hpp), in place, on `space` (asynchronous).
/// Logits may hold float, qrita::bfloat16 or qrita::float16.
template <class ExecutionSpace, class LogitsView, class MemorySpace,
          class = detail::if_space<ExecutionSpace>>
void sample_mask(ExecutionSpace const& space, LogitsView const& logits,
                 SamplingParams<MemorySpace> const& params,
                 Options const& opts = Options{}) {
  detail::dispatch_params_mask(space, logits, params, nullptr, 0, 0, opts,
                               detail::WorkspaceMemory{});
}

template <class ExecutionSpace, class LogitsView, class MemorySpace,
          class = detail::if_space<ExecutionSpace>>
void sample_mask(ExecutionSpace const& space, LogitsView const& logits,
                 SamplingParams<MemorySpace> const& params, Options const& opts,
                 Workspace<ExecutionSpace> const& workspace) {
  detail::dispatch_params_mask(space, logits, params, nullptr, 0, 0, opts,
                               workspace.memory());
}

template <class ExecutionSpace, class LogitsView, class MemorySpace, class StatsView,
          class = detail::if_space<ExecutionSpace>, class = detail::if_view<StatsView>>
void sample_mask(ExecutionSpace const& space, LogitsView const& logits,
                 SamplingParams<MemorySpace> const& params, Options const& opts,
                 Workspace<ExecutionSpace> const& workspace, StatsView const& stats) {
  static_assert(detail::check_stats_type<ExecutionSpace, StatsView>());
  detail::dispatch_params_mask(space, logits, params, stats.data(),
                               std::int64_t(stats.stride(0)), stats.extent(0), opts,
                               workspace.memory());
}

/// Without an instance: runs on the logits' default execution space and
/// fences before and after.
template <class LogitsView, class KView, class PView,
          class = detail::if_view<LogitsView>, class = detail::if_view<KView>,
          class = detail::if_view<PView>>
void sample_mask(LogitsView const& logits, KView const& k, PView const& p,
                 Options const& opts = Options{}) {
  using space_type = typename LogitsView::execution_space;
  detail::labelled_fence("qrita::sample_mask: before");
  sample_mask(space_type(), logits, k, p, opts);
  detail::labelled_fence("qrita::sample_mask: after");
}

template <class LogitsView, class FilterView,
          class = detail::if_view<LogitsView>, class = detail::if_view<FilterView>>
void sample_mask(LogitsView const& logits, FilterView const& k_or_p,
                 Options const& opts = Options{}) {
  using space_type = typename LogitsView::execution_space;
  detail::labelled_fence("qrita::sample_mask: before");
  sample_mask(space_type(), logits, k_or_p, opts);
  detail::labelled_fence("qrita::sample_mask: after");
}

/// How sample_mask lays out a call on `batch` x `vocab` logits with these
/// options on `space`: the same computation the call makes, without
/// launching anything. workspace_bytes is the size of the Workspace such a
/// call may use.
template <class ExecutionSpace, class = detail::if_space<ExecutionSpace>>
LaunchPlan plan(ExecutionSpace const& space, std::int64_t batch,
                std::int64_t vocab, Options const& opts = Options{}) {
  return detail::checked_plan("qrita::plan", space, batch, vocab, opts);
}

/// Device memory a call may use besides its arguments, in bytes: the size
/// of its qrita::Workspace (see LaunchPlan::workspace_bytes).
template <class ExecutionSpace, class = detail::if_space<ExecutionSpace>>
std::size_t workspace_bytes(ExecutionSpace const& space, std::int64_t batch,
                            std::int64_t vocab, Options const& opts = Options{}) {
  return plan(space, batch, vocab, opts).workspace_bytes;
}

}  // namespace qrita

#endif  // QRITA_SAMPLE_MASK_HPP
