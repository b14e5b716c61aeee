// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_DETAIL_LAUNCH_HPP
#define QRITA_DETAIL_LAUNCH_HPP

// What the public calls do once their argument types have been checked:
// run-time validation (which throws before anything is written), the launch
// plan, and the launch. Views are reduced to pointers and strides here, so
// the kernel is instantiated once per execution space.

#include <qrita/detail/kernels/row_kernel.hpp>
#include <qrita/detail/kernels/split_kernel.hpp>
#include <qrita/detail/policy.hpp>
#include <qrita/options.hpp>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace qrita {
namespace detail {

// The public function a call entered through names every error it raises.
template <Mode M>
constexpr const char* call_name() {
  return M == Mode::mask     ? "qrita::sample_mask"
         : M == Mode::sample ? "qrita::sample_tokens"
                             : "qrita::candidate_list";
}

[[noreturn]] inline void invalid_argument(const char* call, std::string const& what) {
  throw std::invalid_argument(std::string(call) + ": " + what);
}

inline std::string str(std::size_t n) { return std::to_string(n); }

inline void check_options(const char* call, Options const& opts) {
  const auto at_least = [&](int value, int least, const char* name) {
    if (value < least)
      invalid_argument(call, std::string("Options::") + name + " must be >= " +
                                 std::to_string(least) + ", got " +
                                 std::to_string(value));
  };
  at_least(opts.candidate_capacity, 0, "candidate_capacity");
  at_least(opts.tier_capacity, -1, "tier_capacity");
  at_least(opts.team_size, 0, "team_size");
  at_least(opts.max_teams, 0, "max_teams");
  at_least(opts.teams_per_row, 0, "teams_per_row");
}

inline void check_vocab(const char* call, std::int64_t vocab) {
  if (vocab > std::int64_t(INT_MAX))
    invalid_argument(call, "vocab " + std::to_string(vocab) + " is above the supported " +
                               std::to_string(INT_MAX));
}

// Threads per split team, teams per row for this batch, and the rows and
// teams per row the workspace must hold state for.
struct SplitSizes {
  int team_size      = 0;
  int teams_per_row  = 1;
  std::int64_t rows  = 0;  // 0: no split state
  int max_teams_per_row = 1;
  std::int64_t resident_teams = 0;  // Policy::split_resident_teams
};

template <class ExecutionSpace>
SplitSizes split_sizes(ExecutionSpace const& space, std::int64_t batch,
                       std::int64_t vocab, Options const& opts, int team_max,
                       std::size_t scratch_bytes, MultiprocessorLimits const& mp) {
  using P = Policy<ExecutionSpace>;
  SplitSizes out;
  if (opts.teams_per_row == 1) return out;
  if (opts.teams_per_row == 0 && !P::split_rows) return out;
  out.team_size = floor_power_of_two(
      P::wide_batch_team_size < team_max ? P::wide_batch_team_size : team_max);
  // Teams that run at once.
  out.resident_teams = P::split_resident_teams(std::int64_t(space.concurrency()),
                                               out.team_size, scratch_bytes, mp);
  const std::int64_t resident = out.resident_teams;
  // Segments of at least split_segment entries (and 4-aligned starts).
  std::int64_t by_size = vocab / P::split_segment;
  if (by_size < 1) by_size = 1;
  const auto per_row = [&](std::int64_t b) -> int {
    if (opts.teams_per_row >= 2)
      return int(opts.teams_per_row < vocab / 4 ? opts.teams_per_row : vocab / 4);
    if (b * P::split_min_teams > resident) return 1;
    // One wave: the batch's teams all resident.
    const std::int64_t s = resident / b;
    return int(s < by_size ? s : by_size);
  };
  out.teams_per_row     = per_row(batch);
  out.max_teams_per_row = per_row(1);
  if (out.max_teams_per_row < 2) {
    out.teams_per_row = 1;
    return out;
  }
  // The largest batch that splits.
  const std::int64_t limit =
      opts.teams_per_row >= 2 ? batch : resident / P::split_min_teams;
  out.rows = batch < limit ? batch : limit;
  if (out.teams_per_row < 2) out.teams_per_row = 1;
  return out;
}

inline SplitLayout split_layout(LaunchPlan const& plan, SplitSizes const& split) {
  const std::size_t tier_bytes = std::size_t(plan.league_size) *
                                 std::size_t(plan.tier_capacity) *
                                 (sizeof(float) + sizeof(int));
  SplitLayout lay = SplitLayout::make(
      tier_bytes, split.max_teams_per_row, split.rows,
      plan.candidate_capacity + plan.tier_capacity, plan.histogram_buckets);
  lay.teams_per_row = split.teams_per_row;
  return lay;
}

// How a call's launches are arranged, beyond what LaunchPlan tells callers.
struct LaunchArrangement {
  // Unsplit: at most one team per multiprocessor (a batch no larger than
  // the device's multiprocessors), so the kernel is launched under bounds
  // that give a thread more registers (CUDA; Policy::one_team_launch_bounds).
  bool one_team_per_multiprocessor = false;
  // Split: the batch's split teams (batch x teams_per_row) no more than the
  // multiprocessors, so the split launches use bounds that give a thread
  // more registers (CUDA; Policy::split_one_team_launch_bounds).
  bool split_one_team_per_multiprocessor = false;
  // Split: the sampler's and the list's rows with top-p sets wider than
  // the candidate tiers get their boundary planned by a launch of its own
  // (qrita::split_deferred_plan), where the split teams take more than
  // one wave; otherwise every team of the row plans it.
  bool split_plans_apart = false;
  // Split, without split_plans_apart (every split team runs at once; CUDA):
  // those rows are finished inside qrita::split_gather, whose teams wait
  // for the row's cut there, instead of by a launch of their own
  // (qrita::split_deferred_finish).
  bool split_finish_in_gather = false;
};

// How a call is laid out: decided from the sizes and the options alone, so
// that callers can ask for it (qrita::plan) before calling.
struct FullPlan {
  LaunchPlan plan;
  SplitSizes split;
  LaunchArrangement launch;
};

// The options and the vocabulary have been checked (check_options,
// check_vocab or check_logits_shape) by the public call `call`; the plan
// itself can reject only a team size the backend cannot launch.
template <class ExecutionSpace>
FullPlan make_full_plan(const char* call, ExecutionSpace const& space, std::int64_t batch,
                        std::int64_t vocab, Options const& opts) {
  using Kernel = RowKernel<ExecutionSpace>;
  using P      = Policy<ExecutionSpace>;
  FullPlan full;
  LaunchPlan& plan = full.plan;
  if (batch <= 0 || vocab <= 0) return full;

  // Histogram and candidate buffer in team scratch: the buffer as asked (or
  // the default), never more than a row, clamped to what the backend
  // allows. A smaller buffer changes speed, not answers.
  typename Kernel::policy_type probe(space, 1, 1);
  const std::size_t max_scratch = std::size_t(probe.scratch_size_max(0));
  plan.histogram_buckets = opts.histogram ? P::histogram_buckets : 0;
  std::int64_t capacity =
      opts.candidate_capacity > 0 ? opts.candidate_capacity : P::candidate_capacity;
  if (capacity > vocab) capacity = vocab;
  const std::size_t fixed = Kernel::scratch_bytes(0, plan.histogram_buckets);
  const std::size_t room  = max_scratch > fixed + 64 ? max_scratch - fixed - 64 : 0;
  if (std::size_t(capacity) * Kernel::Call::bytes_per_candidate > room)
    capacity = std::int64_t(room / Kernel::Call::bytes_per_candidate);
  plan.candidate_capacity = int(capacity);
  plan.team_scratch_bytes =
      Kernel::scratch_bytes(plan.candidate_capacity, plan.histogram_buckets);

  Kernel probe_kernel{};
  const int team_max =
      probe.set_scratch_size(0, Kokkos::PerTeam(int(plan.team_scratch_bytes)))
          .team_size_max(probe_kernel, Kokkos::ParallelForTag());
  int team_size = opts.team_size > 0 ? opts.team_size : P::team_size;
  if (opts.team_size == 0 &&
      batch * std::int64_t(P::team_size) * 2 > std::int64_t(space.concurrency()))
    team_size = P::wide_batch_team_size;
  if (opts.team_size > team_max)
    invalid_argument(call, "Options::team_size is " + std::to_string(opts.team_size) +
                     ", more than the backend allows here (" +
                     std::to_string(team_max) + ")");
  if (team_size > team_max) team_size = team_max;
  plan.team_size = floor_power_of_two(team_size);

  // Persistent league: as many teams as run at once, at most one per row.
  std::int64_t league = space.concurrency() / plan.team_size;
  if (league < 1) league = 1;
  if (opts.max_teams > 0 && league > opts.max_teams) league = opts.max_teams;
  if (league > batch) league = batch;
  plan.league_size = league < 1 ? 1 : league;
  // At most one team per multiprocessor (known on CUDA only), within the
  // threads Policy::one_team_launch_bounds allows.
  const MultiprocessorLimits mp = multiprocessor_limits(space);
  full.launch.one_team_per_multiprocessor = mp.multiprocessors > 0 &&
                                            plan.league_size <= mp.multiprocessors &&
                                            plan.team_size <= P::team_size;

  // The device tier: a slice of the workspace per team, never more than
  // the rest of a row.
  std::int64_t tier = opts.tier_capacity >= 0 ? opts.tier_capacity : P::tier_capacity;
  if (tier > vocab - plan.candidate_capacity) tier = vocab - plan.candidate_capacity;
  if (tier < 0) tier = 0;
  plan.tier_capacity = int(tier);
  plan.workspace_bytes = std::size_t(plan.league_size) * std::size_t(tier) *
                         Kernel::Call::bytes_per_candidate;

  // Small batches: rows split across teams (split_kernel.hpp). The
  // workspace holds the split state of every batch up to this one, so its
  // size only grows with the batch.
  full.split = split_sizes(space, batch, vocab, opts, team_max, plan.team_scratch_bytes, mp);
  plan.teams_per_row   = full.split.teams_per_row;
  plan.split_team_size = full.split.team_size;
  // At most one split team per multiprocessor (known on CUDA only), within
  // the threads Policy::split_one_team_launch_bounds allows.
  full.launch.split_one_team_per_multiprocessor =
      mp.multiprocessors > 0 && plan.teams_per_row > 1 &&
      batch * plan.teams_per_row <= mp.multiprocessors &&
      plan.split_team_size <= P::wide_batch_team_size;
  // A deferred row's boundary buckets are planned by a launch of their own
  // (one team per row) where the split teams take more than one wave
  // (more than SplitSizes::resident_teams): every team's
  // own copy of the plan would delay the next wave. In one wave the copies
  // run side by side and the extra launch would cost more than it saves
  // (docs/DESIGN.md, "Small batches"). The backend's own choice of teams
  // per row keeps to one wave; a caller's Options::teams_per_row may not.
  full.launch.split_plans_apart =
      plan.teams_per_row > 1 && batch * plan.teams_per_row > full.split.resident_teams;
  // In one wave, a deferred row's teams can wait for one another inside a
  // launch (Policy::split_fused_finish): split_deferred_finish's work is
  // done in split_gather (SplitKernel::deferred_end).
  full.launch.split_finish_in_gather =
      P::split_fused_finish && plan.teams_per_row > 1 && !full.launch.split_plans_apart;
  if (full.split.rows > 0)
    plan.workspace_bytes = split_layout(plan, full.split).bytes;
  // A record per row at the end, 16-byte aligned: the sampler's and the
  // list's deferred rows (defer, row/deferred.hpp; a byte, the flag, without a
  // histogram).
  const std::size_t record = deferred_record_bytes(plan.histogram_buckets);
  if (record > 1) plan.workspace_bytes = (plan.workspace_bytes + 15) / 16 * 16;
  plan.workspace_bytes += std::size_t(batch) * record;
  return full;
}

// The plan for a caller that has checked nothing yet (qrita::plan,
// qrita::Workspace).
template <class ExecutionSpace>
LaunchPlan checked_plan(const char* call, ExecutionSpace const& space, std::int64_t batch,
                        std::int64_t vocab, Options const& opts) {
  check_options(call, opts);
  check_vocab(call, vocab);
  return make_full_plan(call, space, batch, vocab, opts).plan;
}

// Device memory a call may use: the workspace's, or none.
struct WorkspaceMemory {
  void* data        = nullptr;
  std::size_t bytes = 0;
  bool given        = false;  // the caller passed a qrita::Workspace
};

// The arguments of a call, reduced to pointers and strides.
template <class T>
struct Call {
  T* logits               = nullptr;
  std::int64_t batch      = 0;
  int vocab               = 0;
  std::int64_t row_stride = 0;
  RowIO io;
};

// Calls run(Alone{}) where `alone` holds, else run(Usual{}): the two
// launch bounds of a kernel, for teams alone on their multiprocessors and
// for the others. Where the two are one type (every backend but CUDA) only
// run(Usual{}) is instantiated, so the kernel is compiled once.
template <class Alone, class Usual, class Run>
void with_bounds(bool alone, Run const& run) {
  if constexpr (!std::is_same<Alone, Usual>::value) {
    if (alone) {
      run(Alone{});
      return;
    }
  } else {
    (void)alone;
  }
  run(Usual{});
}

// An unsplit launch of `kernel` (a RowKernel): one team per row, its
// teams persistent, under Policy::one_team_launch_bounds where the plan's
// teams are alone on their multiprocessors (CUDA), else the kernels'
// bounds. The two policies differ in their bounds only (the same team
// member type), so the kernel is the same code compiled twice.
template <class ExecutionSpace, class Kernel>
void launch_unsplit(const char* label, ExecutionSpace const& space, Kernel const& kernel,
                    LaunchPlan const& plan, LaunchArrangement const& arrangement) {
  using P = Policy<ExecutionSpace>;
  with_bounds<typename P::one_team_launch_bounds, typename P::launch_bounds>(
      arrangement.one_team_per_multiprocessor, [&](auto bounds) {
        auto policy = light_weight(Kokkos::TeamPolicy<ExecutionSpace, decltype(bounds)>(
            space, int(plan.league_size), plan.team_size));
        policy.set_scratch_size(0, Kokkos::PerTeam(int(plan.team_scratch_bytes)));
        Kokkos::parallel_for(label, policy, kernel);
      });
}

// The sampler's and the list's second kernel (RowKernel's Deferred): the
// rows the first deferred, one team each (unsplit calls; a split call has
// its own launches, launch_split). A call that can defer rows (see
// launch) always launches it, since whether a row was deferred is
// known on the device only; teams without a flagged row return after
// reading their rows' flags.
template <class ExecutionSpace, class T, Mode M>
void launch_deferred(ExecutionSpace const& space,
                     RowKernel<ExecutionSpace, T, M> const& kernel,
                     LaunchPlan const& plan, LaunchArrangement const& arrangement) {
  if constexpr (M != Mode::mask) {
    using Second = RowKernel<ExecutionSpace, T, M, false, true>;
    if (kernel.call.prm.deferred_end == nullptr) return;
    const Second second{Second::Call::from(kernel.call)};
    launch_unsplit(M == Mode::sample ? "qrita::sample_tokens_deferred"
                                     : "qrita::candidate_list_deferred",
                   space, second, plan, arrangement);
  } else {
    (void)space, (void)kernel, (void)plan, (void)arrangement;
  }
}

// The launches of a split call (split_kernel.hpp), in order on `space`:
// scan and gather (which writes the mask). A sampler or list call that can
// defer rows (see launch): scan, the deferred rows' plan where
// LaunchArrangement::split_plans_apart, gather (the Deferred variant, which also
// gathers the deferred rows' boundary) and finish.
template <class ExecutionSpace, class T, Mode M>
void launch_split(ExecutionSpace const& space, RowKernel<ExecutionSpace, T, M> const& kernel,
                  FullPlan const& full, char* ws) {
  using Split = SplitKernel<ExecutionSpace, T, M>;
  LaunchPlan const& plan = full.plan;
  SplitLayout layout = split_layout(plan, full.split);
  const int S       = plan.teams_per_row;
  const int wide    = int(kernel.call.prm.batch) * S;
  const int team    = plan.split_team_size;
  layout.plan_apart = full.launch.split_plans_apart;
  // split_deferred_finish's work in split_gather where every split team is
  // resident at once (LaunchArrangement::split_finish_in_gather).
  layout.fused_finish =
      full.launch.split_finish_in_gather && kernel.call.prm.deferred_end != nullptr;
  const Split sk{kernel.call, ws, layout};
  static_assert(sizeof(Split) < 4096,
                "qrita: the split kernel must fit in a kernel argument (4 KiB)");
  // Every launch of the call under the same bounds: split_one_team_launch_bounds
  // where the plan's split teams are alone on their multiprocessors (CUDA;
  // on other backends the two are the same type, one instantiation).
  using P = Policy<ExecutionSpace>;
  const auto run = [&](const char* label, auto const& functor, auto tag, int scratch,
                       int league = 0) {
    using Tag       = decltype(tag);
    const int teams = league > 0 ? league : wide;
    with_bounds<typename P::split_one_team_launch_bounds, typename P::split_launch_bounds>(
        full.launch.split_one_team_per_multiprocessor, [&](auto bounds) {
          auto policy = light_weight(
              Kokkos::TeamPolicy<ExecutionSpace, decltype(bounds), Tag>(space, teams, team));
          policy.set_scratch_size(0, Kokkos::PerTeam(scratch));
          Kokkos::parallel_for(label, policy, functor);
        });
  };
  // split_scan's scratch holds the same views as RowKernel's (histogram,
  // two ints, the on-chip candidates): the same size, within the limit.
  run("qrita::split_scan", sk, SplitScan{}, int(plan.team_scratch_bytes));
  if constexpr (M != Mode::mask) {
    if (kernel.call.prm.deferred_end != nullptr) {
      // Rows may defer: split_gather's Deferred variant gathers both the
      // missed rows' buckets and the deferred rows' boundary buckets.
      using Deferred = SplitKernel<ExecutionSpace, T, M, true>;
      static_assert(sizeof(Deferred) < 4096,
                    "qrita: the split kernel must fit in a kernel argument (4 KiB)");
      const Deferred dk{Deferred::Call::from(kernel.call), ws, layout};
      if (layout.plan_apart)
        run("qrita::split_deferred_plan", dk, SplitDeferredPlan{}, 64, int(kernel.call.prm.batch));
      run("qrita::split_gather", dk, SplitGather{}, 64);
      if (!layout.fused_finish)
        run("qrita::split_deferred_finish", dk, SplitDeferredFinish{}, 64);
      return;
    }
  }
  // The mask's writes, and every row's clearing, in the same launch
  // (SplitKernel::clears_in_gather).
  run("qrita::split_gather", sk, SplitGather{}, 64);
}

// The launches of one public call (M: which one, fixed at compile time, so
// that a caller of sample_mask instantiates the mask's kernels alone), after
// its arguments and options have been checked and its plan made.
template <Mode M, class ExecutionSpace, class T>
void launch(ExecutionSpace const& space, Call<T> const& call, FullPlan full,
            Options const& opts, WorkspaceMemory const& ws) {
  using Kernel = RowKernel<ExecutionSpace, T, M>;
  if (call.batch == 0 || call.vocab == 0) return;
  LaunchPlan& plan = full.plan;
  if (!ws.given) {
    // No workspace: on-chip candidates only, one team per row.
    plan.tier_capacity   = 0;
    plan.workspace_bytes = 0;
    plan.teams_per_row   = 1;
  } else if (plan.workspace_bytes > ws.bytes) {
    invalid_argument(call_name<M>(), "the workspace holds " + str(ws.bytes) + " bytes; a call on " +
                     std::to_string(call.batch) + " x " + std::to_string(call.vocab) +
                     " logits with these options needs " + str(plan.workspace_bytes) +
                     " (make it with qrita::Workspace(space, batch, vocab, options) "
                     "for at least this batch and vocab)");
  }

  Kernel kernel{{call.logits, call.io, KernelParams{}}};
  KernelParams& prm = kernel.call.prm;
  prm.batch         = call.batch;
  prm.vocab         = call.vocab;
  prm.row_stride    = call.row_stride;
  prm.truncation    = opts.sigma_truncation;
  prm.exact_ties    = opts.ties == Ties::exact;
  prm.binary_search = opts.search == Search::binary;
  prm.weight_scale  = weight_scale_of(call.vocab);
  prm.capacity      = plan.candidate_capacity;
  prm.buckets       = plan.histogram_buckets;
  prm.tier_capacity = plan.tier_capacity;
  if (plan.tier_capacity > 0) {
    // Values first, then columns, each tier_capacity per team.
    const std::size_t n = std::size_t(plan.league_size) * std::size_t(plan.tier_capacity);
    prm.tier_values  = static_cast<float*>(ws.data);
    prm.tier_columns = reinterpret_cast<int*>(static_cast<char*>(ws.data) + n * sizeof(float));
  }
  // The sampler's and the list's deferred rows: only top-p rows whose
  // truncation missed can be deferred (plan_buckets, row/boundary.hpp), so a call
  // without p values, without truncation or without a histogram has no
  // second kernel to launch.
  if (M != Mode::mask && ws.given && ws.bytes > 0 && call.io.p != nullptr &&
      prm.truncation && prm.buckets > 1) {
    // The records end at the last 16-byte boundary (every plan's size is a
    // multiple of 16 with records: see make_full_plan).
    prm.deferred_end    = static_cast<std::uint8_t*>(ws.data) + ws.bytes / 16 * 16;
    prm.deferred_stride = std::int64_t(deferred_record_bytes(prm.buckets));
  }

  // Rows split across teams, except with min-p (whose count the deciding
  // team would have to take alone).
  if (plan.teams_per_row > 1 && call.io.min_p == nullptr) {
    launch_split(space, kernel, full, static_cast<char*>(ws.data));
    return;
  }
  // The sampler's unsplit kernel calls the search out of line where the
  // policy says so (Policy::sampler_search_out_of_line, which gives the
  // reason); the mask's, the list's and the split kernels inline it.
  using Unsplit =
      RowKernel<ExecutionSpace, T, M,
                 M == Mode::sample && Policy<ExecutionSpace>::sampler_search_out_of_line>;
  // Its first kernel leaves every top-p miss to the second (launch_deferred).
  kernel.call.prm.defer_misses = kernel.call.prm.deferred_end != nullptr;
  const Unsplit unsplit{Unsplit::Call::from(kernel.call)};
  static_assert(sizeof(Unsplit) < 4096,
                "qrita: the kernel must fit in a kernel argument (4 KiB)");
  launch_unsplit(call_name<M>(), space, unsplit, plan, full.launch);
  launch_deferred(space, kernel, plan, full.launch);
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

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_LAUNCH_HPP
