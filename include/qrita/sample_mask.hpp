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

#include <qrita/detail/launch.hpp>
#include <qrita/options.hpp>
#include <qrita/workspace.hpp>

#include <climits>
#include <string>
#include <type_traits>

namespace qrita {
namespace detail {

template <class ExecutionSpace, class LogitsView>
void check_logits_type() {
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                "qrita::sample_mask: the first argument must be a Kokkos "
                "execution space instance");
  static_assert(Kokkos::is_view<LogitsView>::value,
                "qrita::sample_mask: 'logits' must be a Kokkos::View");
  static_assert(unsigned(LogitsView::rank) == 2u,
                "qrita::sample_mask: 'logits' must be a rank-2 View "
                "[batch][vocab]");
  static_assert(std::is_same<typename LogitsView::value_type, float>::value,
                "qrita::sample_mask: 'logits' must hold non-const float (it "
                "is masked in place)");
  static_assert(
      std::is_same<typename LogitsView::array_layout, Kokkos::LayoutRight>::value ||
          std::is_same<typename LogitsView::array_layout,
                       Kokkos::LayoutStride>::value,
      "qrita::sample_mask: 'logits' must be LayoutRight (rows contiguous) "
      "or LayoutStride with unit column stride");
  static_assert(Kokkos::SpaceAccessibility<
                    ExecutionSpace, typename LogitsView::memory_space>::accessible,
                "qrita::sample_mask: 'logits' is not accessible from the "
                "execution space");
}

// k, p and stats: rank 1, the right element type, accessible.
template <class ExecutionSpace, class View, class Element>
void check_column_type() {
  static_assert(Kokkos::is_view<View>::value,
                "qrita::sample_mask: 'k', 'p' and 'stats' must be Kokkos::Views");
  static_assert(unsigned(View::rank) == 1u,
                "qrita::sample_mask: 'k', 'p' and 'stats' must be rank-1 "
                "Views with one entry per row");
  static_assert(std::is_same<typename View::non_const_value_type, Element>::value,
                "qrita::sample_mask: 'k' must hold int, 'p' float, 'stats' "
                "qrita::RowStats");
  static_assert(Kokkos::SpaceAccessibility<
                    ExecutionSpace, typename View::memory_space>::accessible,
                "qrita::sample_mask: 'k', 'p' or 'stats' is not accessible "
                "from the execution space");
}

template <class View>
void check_column_extent(View const& v, const char* name, std::size_t batch) {
  if (v.extent(0) != batch)
    invalid_argument(std::string("argument '") + name + "' has " +
                     str(v.extent(0)) + " entries, expected " + str(batch) +
                     " (one per row of 'logits')");
}

// Run-time checks of the logits; the public overloads have already checked
// their type.
template <class LogitsView>
void check_logits_shape(LogitsView const& logits) {
  if (logits.extent(1) > std::size_t(INT_MAX))
    invalid_argument("argument 'logits' has " + str(logits.extent(1)) +
                     " columns; at most " + std::to_string(INT_MAX) +
                     " are supported");
  // A column stride other than 1 is rejected whatever the batch: a 1 x V
  // view of stride 2 is not a row of V contiguous floats.
  if (logits.extent(1) > 1 && logits.stride(1) != 1)
    invalid_argument("argument 'logits' must have unit column stride, got " +
                     str(logits.stride(1)));
  if (logits.extent(0) > 1 && logits.stride(0) < logits.extent(1))
    invalid_argument("argument 'logits' has rows that overlap: row stride " +
                     str(logits.stride(0)) + " is less than its " +
                     str(logits.extent(1)) + " columns");
}

// Views or nothing, resolved to pointers after every check has passed.
template <class ExecutionSpace, class LogitsView, class KView, class PView,
          class StatsView>
void dispatch(ExecutionSpace const& space, LogitsView const& logits,
              KView const* k, PView const* p, StatsView const* stats,
              Options const& opts, WorkspaceMemory const& ws) {
  check_logits_shape(logits);
  const std::size_t batch = logits.extent(0);
  if (k) check_column_extent(*k, "k", batch);
  if (p) check_column_extent(*p, "p", batch);
  if (stats) check_column_extent(*stats, "stats", batch);
  check_options(opts);

  ProfilingRegion region("qrita::sample_mask");
  Call call;
  call.logits     = logits.data();
  call.batch      = std::int64_t(batch);
  call.vocab      = int(logits.extent(1));
  call.row_stride = std::int64_t(batch > 1 ? logits.stride(0) : logits.extent(1));
  if (k) {
    call.k        = k->data();
    call.k_stride = std::int64_t(k->stride(0));
  }
  if (p) {
    call.p        = p->data();
    call.p_stride = std::int64_t(p->stride(0));
  }
  if (stats) {
    call.stats        = stats->data();
    call.stats_stride = std::int64_t(stats->stride(0));
  }
  launch(space, call, opts, ws);
}

// Placeholder types for arguments that were not given.
using NoK     = Kokkos::View<const int*, Kokkos::HostSpace>;
using NoP     = Kokkos::View<const float*, Kokkos::HostSpace>;
using NoStats = Kokkos::View<RowStats*, Kokkos::HostSpace>;

template <class T>
using if_space = typename std::enable_if<Kokkos::is_execution_space<T>::value>::type;
template <class T>
using if_view = typename std::enable_if<Kokkos::is_view<T>::value>::type;

template <class ExecutionSpace, class LogitsView, class KView, class PView>
void check_types() {
  check_logits_type<ExecutionSpace, LogitsView>();
  check_column_type<ExecutionSpace, KView, int>();
  check_column_type<ExecutionSpace, PView, float>();
}

template <class ExecutionSpace, class StatsView>
void check_stats_type() {
  check_column_type<ExecutionSpace, StatsView, RowStats>();
  static_assert(!std::is_const<typename StatsView::value_type>::value,
                "qrita::sample_mask: 'stats' must be writable");
}

// One filter view: top-k if it holds int, top-p if it holds float.
template <class ExecutionSpace, class LogitsView, class FilterView>
void dispatch_one(ExecutionSpace const& space, LogitsView const& logits,
                  FilterView const& k_or_p, Options const& opts,
                  WorkspaceMemory const& ws) {
  using element = typename FilterView::non_const_value_type;
  static_assert(std::is_same<element, int>::value ||
                    std::is_same<element, float>::value,
                "qrita::sample_mask: the filter must be a View of int (k) or "
                "of float (p)");
  check_logits_type<ExecutionSpace, LogitsView>();
  check_column_type<ExecutionSpace, FilterView, element>();
  const auto* no_stats = static_cast<NoStats const*>(nullptr);
  if constexpr (std::is_same<element, int>::value) {
    dispatch(space, logits, &k_or_p, static_cast<NoP const*>(nullptr), no_stats,
             opts, ws);
  } else {
    dispatch(space, logits, static_cast<NoK const*>(nullptr), &k_or_p, no_stats,
             opts, ws);
  }
}

}  // namespace detail

/// Top-k then top-p on every row, in place, on `space` (asynchronous).
template <class ExecutionSpace, class LogitsView, class KView, class PView,
          class = detail::if_space<ExecutionSpace>, class = detail::if_view<KView>,
          class = detail::if_view<PView>>
void sample_mask(ExecutionSpace const& space, LogitsView const& logits,
                 KView const& k, PView const& p, Options const& opts = Options{}) {
  detail::check_types<ExecutionSpace, LogitsView, KView, PView>();
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
  detail::check_types<ExecutionSpace, LogitsView, KView, PView>();
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
  detail::check_types<ExecutionSpace, LogitsView, KView, PView>();
  detail::check_stats_type<ExecutionSpace, StatsView>();
  detail::dispatch(space, logits, &k, &p, &stats, opts, workspace.memory());
}

/// Diagnostics without a workspace.
template <class ExecutionSpace, class LogitsView, class KView, class PView,
          class StatsView, class = detail::if_space<ExecutionSpace>,
          class = detail::if_view<StatsView>>
void sample_mask(ExecutionSpace const& space, LogitsView const& logits,
                 KView const& k, PView const& p, Options const& opts,
                 StatsView const& stats) {
  detail::check_types<ExecutionSpace, LogitsView, KView, PView>();
  detail::check_stats_type<ExecutionSpace, StatsView>();
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
  return detail::make_plan(space, batch, vocab, opts);
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
