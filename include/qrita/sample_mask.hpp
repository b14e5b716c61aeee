#ifndef QRITA_SAMPLE_MASK_HPP
#define QRITA_SAMPLE_MASK_HPP

// qrita::sample_mask: exact top-k / top-p masking of a batch of logits, in
// place, on any Kokkos execution space.
//
//   qrita::sample_mask(space, logits, k, p);   // top-k, then top-p
//   qrita::sample_mask(space, logits, k);      // top-k only (int view)
//   qrita::sample_mask(space, logits, p);      // top-p only (float view)
//   qrita::sample_mask(logits, k, p);          // default instance, fenced
//
// logits: View<float**> (LayoutRight, or LayoutStride with unit column
// stride; padded rows are fine), shape [batch][vocab]. k: View<int*> or
// View<const int*>, one per row; k <= 0 or k >= vocab turns top-k off for
// the row. p: View<float*> or View<const float*>, one per row; p >= 1 (or
// NaN) turns top-p off, p <= 0 keeps exactly the top entry. Kept entries are
// left bitwise unchanged; every other entry becomes -inf.
//
// Calls with an execution-space instance are asynchronous on that instance;
// the overloads without one fence before and after. No memory is allocated:
// the only workspace is team scratch, sized per call.

#include <qrita/detail/backend.hpp>
#include <qrita/detail/mask_kernel.hpp>
#include <qrita/options.hpp>

#include <climits>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace qrita {
namespace detail {

[[noreturn]] inline void invalid_argument(std::string const& what) {
  throw std::invalid_argument("qrita::sample_mask: " + what);
}

inline std::string str(std::size_t n) { return std::to_string(n); }

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

// How a call is laid out on the device: decided from the sizes and the
// options alone, so that callers can ask for it before calling.
struct LaunchConfig {
  int team_size          = 1;
  std::int64_t league    = 1;
  int capacity           = 0;  // candidate buffer entries per team (level 0)
  std::size_t level0     = 0;  // team scratch bytes per team (on chip)
  std::size_t level1     = 0;  // device-memory scratch bytes per team
};

template <class ExecutionSpace>
LaunchConfig launch_config(ExecutionSpace const& space, std::int64_t batch,
                           Options const& opts) {
  using Kernel   = MaskKernel<ExecutionSpace>;
  using Defaults = BackendDefaults<ExecutionSpace>;
  LaunchConfig cfg;

  // Candidate buffer: as asked (or the default), clamped to the team
  // scratch the backend allows. A smaller buffer changes speed, not answers.
  typename Kernel::policy_type probe(space, 1, 1);
  const std::size_t max_scratch = std::size_t(probe.scratch_size_max(0));
  int capacity = opts.candidate_capacity > 0 ? opts.candidate_capacity
                                             : Defaults::candidate_capacity;
  const std::size_t fixed = Kernel::scratch_bytes(0);
  const std::size_t room  = max_scratch > fixed + 64 ? max_scratch - fixed - 64 : 0;
  if (std::size_t(capacity) * Kernel::bytes_per_candidate > room)
    capacity = int(room / Kernel::bytes_per_candidate);
  cfg.capacity = capacity;
  cfg.level0   = Kernel::scratch_bytes(capacity);

  Kernel probe_kernel{};
  const int team_max =
      probe.set_scratch_size(0, Kokkos::PerTeam(int(cfg.level0)))
          .team_size_max(probe_kernel, Kokkos::ParallelForTag());
  int team_size = opts.team_size > 0 ? opts.team_size : Defaults::team_size;
  if (opts.team_size == 0 &&
      batch * std::int64_t(Defaults::team_size) * 2 > std::int64_t(space.concurrency()))
    team_size = Defaults::wide_batch_team_size;
  if (opts.team_size > team_max)
    invalid_argument("Options::team_size is " + std::to_string(opts.team_size) +
                     ", more than the backend allows here (" +
                     std::to_string(team_max) + ")");
  if (team_size > team_max) team_size = team_max;
  cfg.team_size = floor_power_of_two(team_size);

  // Persistent league: as many teams as run at once, at most one per row.
  std::int64_t league = space.concurrency() / cfg.team_size;
  if (league < 1) league = 1;
  if (opts.max_teams > 0 && league > opts.max_teams) league = opts.max_teams;
  if (league > batch) league = batch;
  cfg.league = league < 1 ? 1 : league;
  return cfg;
}

// One instantiation per execution space: views are reduced to pointers and
// strides once validated.
template <class ExecutionSpace>
void launch(ExecutionSpace const& space, float* logits, std::int64_t batch,
            int vocab, std::int64_t row_stride, const int* k,
            std::int64_t k_stride, const float* p, std::int64_t p_stride,
            RowStats* stats, Options const& opts) {
  using Kernel = MaskKernel<ExecutionSpace>;
  if (batch == 0 || vocab == 0) return;
  const LaunchConfig cfg = launch_config(space, batch, opts);

  Kernel kernel{logits, k, p, stats, KernelParams{}, SigmaTables{}};
  KernelParams& prm = kernel.prm;
  prm.batch         = batch;
  prm.vocab         = vocab;
  prm.row_stride    = row_stride;
  prm.k_stride      = k_stride;
  prm.p_stride      = p_stride;
  prm.truncation    = opts.sigma_truncation;
  prm.exact_ties    = opts.ties == Ties::exact;
  prm.binary_search = opts.search == Search::binary;
  prm.weight_scale =
      static_cast<float>(std::uint64_t{1} << weight_fraction_bits(vocab));
  prm.capacity = cfg.capacity;

  typename Kernel::policy_type policy(space, int(cfg.league), cfg.team_size);
  policy.set_scratch_size(0, Kokkos::PerTeam(int(cfg.level0)));
  if (cfg.level1 > 0) policy.set_scratch_size(1, Kokkos::PerTeam(int(cfg.level1)));
  Kokkos::parallel_for("qrita::sample_mask", policy, kernel);
}

inline void check_options(Options const& opts) {
  if (opts.candidate_capacity < 0)
    invalid_argument("Options::candidate_capacity must be >= 0, got " +
                     std::to_string(opts.candidate_capacity));
  if (opts.team_size < 0)
    invalid_argument("Options::team_size must be >= 0, got " +
                     std::to_string(opts.team_size));
  if (opts.max_teams < 0)
    invalid_argument("Options::max_teams must be >= 0, got " +
                     std::to_string(opts.max_teams));
}

// A Kokkos Tools region that is closed on every way out, exceptions too.
struct ProfilingRegion {
  explicit ProfilingRegion(std::string const& name) {
    Kokkos::Profiling::pushRegion(name);
  }
  ~ProfilingRegion() { Kokkos::Profiling::popRegion(); }
  ProfilingRegion(ProfilingRegion const&)            = delete;
  ProfilingRegion& operator=(ProfilingRegion const&) = delete;
};

// Run-time checks of the logits; the public overloads have already checked
// their type.
template <class LogitsView>
void check_logits_shape(LogitsView const& logits) {
  if (logits.extent(1) > std::size_t(INT_MAX))
    invalid_argument("argument 'logits' has " + str(logits.extent(1)) +
                     " columns; at most " + std::to_string(INT_MAX) +
                     " are supported");
  if (logits.extent(0) > 1 && logits.extent(1) > 1 && logits.stride(1) != 1)
    invalid_argument("argument 'logits' must have unit column stride, got " +
                     str(logits.stride(1)));
}

// Views or nothing, resolved to pointers after every check has passed.
template <class ExecutionSpace, class LogitsView, class KView, class PView,
          class StatsView>
void dispatch(ExecutionSpace const& space, LogitsView const& logits,
              KView const* k, PView const* p, StatsView const* stats,
              Options const& opts) {
  check_logits_shape(logits);
  const std::size_t batch = logits.extent(0);
  if (k) check_column_extent(*k, "k", batch);
  if (p) check_column_extent(*p, "p", batch);
  if (stats) check_column_extent(*stats, "stats", batch);
  check_options(opts);

  ProfilingRegion region("qrita::sample_mask");
  launch(space, logits.data(), std::int64_t(batch), int(logits.extent(1)),
         std::int64_t(logits.extent(0) > 1 ? logits.stride(0) : logits.extent(1)),
         k ? k->data() : nullptr, k ? std::int64_t(k->stride(0)) : 0,
         p ? p->data() : nullptr, p ? std::int64_t(p->stride(0)) : 0,
         stats ? stats->data() : nullptr, opts);
}

// Placeholder types for arguments that were not given.
using NoK     = Kokkos::View<const int*, Kokkos::HostSpace>;
using NoP     = Kokkos::View<const float*, Kokkos::HostSpace>;
using NoStats = Kokkos::View<RowStats*, Kokkos::HostSpace>;

template <class T>
using if_space = typename std::enable_if<Kokkos::is_execution_space<T>::value>::type;
template <class T>
using if_view = typename std::enable_if<Kokkos::is_view<T>::value>::type;

}  // namespace detail

/// Top-k then top-p on every row, in place, on `space` (asynchronous).
template <class ExecutionSpace, class LogitsView, class KView, class PView,
          class = detail::if_space<ExecutionSpace>, class = detail::if_view<KView>,
          class = detail::if_view<PView>>
void sample_mask(ExecutionSpace const& space, LogitsView const& logits,
                 KView const& k, PView const& p, Options const& opts = Options{}) {
  detail::check_logits_type<ExecutionSpace, LogitsView>();
  detail::check_column_type<ExecutionSpace, KView, int>();
  detail::check_column_type<ExecutionSpace, PView, float>();
  detail::dispatch(space, logits, &k, &p,
                   static_cast<detail::NoStats const*>(nullptr), opts);
}

/// As above, and writes per-row diagnostics into `stats` (one per row).
template <class ExecutionSpace, class LogitsView, class KView, class PView,
          class StatsView, class = detail::if_space<ExecutionSpace>>
void sample_mask(ExecutionSpace const& space, LogitsView const& logits,
                 KView const& k, PView const& p, Options const& opts,
                 StatsView const& stats) {
  detail::check_logits_type<ExecutionSpace, LogitsView>();
  detail::check_column_type<ExecutionSpace, KView, int>();
  detail::check_column_type<ExecutionSpace, PView, float>();
  detail::check_column_type<ExecutionSpace, StatsView, RowStats>();
  static_assert(!std::is_const<typename StatsView::value_type>::value,
                "qrita::sample_mask: 'stats' must be writable");
  detail::dispatch(space, logits, &k, &p, &stats, opts);
}

/// One filter: top-k if `k_or_p` holds int, top-p if it holds float.
template <class ExecutionSpace, class LogitsView, class FilterView,
          class = detail::if_space<ExecutionSpace>,
          class = detail::if_view<FilterView>>
void sample_mask(ExecutionSpace const& space, LogitsView const& logits,
                 FilterView const& k_or_p, Options const& opts = Options{}) {
  using element = typename FilterView::non_const_value_type;
  static_assert(std::is_same<element, int>::value ||
                    std::is_same<element, float>::value,
                "qrita::sample_mask: the filter must be a View of int (k) or "
                "of float (p)");
  detail::check_logits_type<ExecutionSpace, LogitsView>();
  detail::check_column_type<ExecutionSpace, FilterView, element>();
  const auto* no_stats = static_cast<detail::NoStats const*>(nullptr);
  if constexpr (std::is_same<element, int>::value) {
    detail::dispatch(space, logits, &k_or_p,
                     static_cast<detail::NoP const*>(nullptr), no_stats, opts);
  } else {
    detail::dispatch(space, logits, static_cast<detail::NoK const*>(nullptr),
                     &k_or_p, no_stats, opts);
  }
}

/// Without an instance: runs on the logits' default execution space and
/// fences before and after.
template <class LogitsView, class KView, class PView,
          class = detail::if_view<LogitsView>, class = detail::if_view<KView>,
          class = detail::if_view<PView>>
void sample_mask(LogitsView const& logits, KView const& k, PView const& p,
                 Options const& opts = Options{}) {
  using space_type = typename LogitsView::execution_space;
  Kokkos::fence();
  sample_mask(space_type(), logits, k, p, opts);
  Kokkos::fence();
}

template <class LogitsView, class FilterView,
          class = detail::if_view<LogitsView>, class = detail::if_view<FilterView>>
void sample_mask(LogitsView const& logits, FilterView const& k_or_p,
                 Options const& opts = Options{}) {
  using space_type = typename LogitsView::execution_space;
  Kokkos::fence();
  sample_mask(space_type(), logits, k_or_p, opts);
  Kokkos::fence();
}

/// How sample_mask lays out a call on `batch` x `vocab` logits with these
/// options on `space`: the same computation the call makes, without
/// launching anything.
template <class ExecutionSpace, class = detail::if_space<ExecutionSpace>>
LaunchPlan plan(ExecutionSpace const& space, std::int64_t batch,
                std::int64_t vocab, Options const& opts = Options{}) {
  detail::check_options(opts);
  if (vocab > std::int64_t(INT_MAX))
    detail::invalid_argument("vocab " + std::to_string(vocab) +
                             " is above the supported " + std::to_string(INT_MAX));
  LaunchPlan out;
  if (batch <= 0 || vocab <= 0) return out;
  const detail::LaunchConfig cfg =
      detail::launch_config(space, batch, opts);
  out.team_size              = cfg.team_size;
  out.league_size            = cfg.league;
  out.candidate_capacity     = cfg.capacity;
  out.team_scratch_bytes     = cfg.level0;
  out.workspace_bytes        = cfg.level1 * std::size_t(cfg.league);
  return out;
}

/// Device memory a call uses besides its arguments, in bytes (see
/// LaunchPlan::workspace_bytes).
template <class ExecutionSpace, class = detail::if_space<ExecutionSpace>>
std::size_t workspace_bytes(ExecutionSpace const& space, std::int64_t batch,
                            std::int64_t vocab, Options const& opts = Options{}) {
  return plan(space, batch, vocab, opts).workspace_bytes;
}

}  // namespace qrita

#endif  // QRITA_SAMPLE_MASK_HPP
