// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_DETAIL_DISPATCH_HPP
#define QRITA_DETAIL_DISPATCH_HPP

// What every public call does before its kernel: compile-time checks of the
// argument types (static_asserts with messages), run-time checks of the
// shapes and options (each once; they throw std::invalid_argument, naming
// the public function, before anything is written), and the reduction of
// Views to pointers and strides (Call, RowIO), so that a call's kernels are
// instantiated once per execution space, logit type and call: each public
// function passes its Mode as a template argument to launch<M>, and so
// compiles only its own kernels.

#include <qrita/detail/launch.hpp>
#include <qrita/options.hpp>
#include <qrita/params.hpp>
#include <qrita/types.hpp>
#include <qrita/workspace.hpp>

#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace qrita {
namespace detail {

template <class T>
using if_space = typename std::enable_if<Kokkos::is_execution_space<T>::value>::type;
template <class T>
using if_view = typename std::enable_if<Kokkos::is_view<T>::value>::type;
template <class T>
using if_params = typename std::enable_if<is_sampling_params<T>::value>::type;

// The check_*_type functions are constexpr and called inside static_assert:
// that instantiates them where they are called, so their messages come
// before any error in the caller's body (g++ 16 skips deferred
// instantiations once an error has been reported).
//
// Logits: rank 2, a logit type, a supported layout, accessible. Writable
// for sample_mask (masked in place); const is fine for the others.
template <class ExecutionSpace, class LogitsView, bool Writable = true>
constexpr bool check_logits_type() {
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                "qrita: the first argument must be a Kokkos execution space "
                "instance");
  static_assert(Kokkos::is_view<LogitsView>::value,
                "qrita: 'logits' must be a Kokkos::View");
  static_assert(unsigned(LogitsView::rank) == 2u,
                "qrita: 'logits' must be a rank-2 View [batch][vocab]");
  using value = typename LogitsView::value_type;
  static_assert(!Writable || (!std::is_const<value>::value &&
                              is_logit_type<value>::value),
                "qrita::sample_mask: 'logits' must hold non-const float, "
                "qrita::bfloat16 or qrita::float16 (or Kokkos' 16-bit half_t, "
                "bhalf_t) (it is masked in place)");
  static_assert(is_logit_type<typename std::remove_const<value>::type>::value,
                "qrita: 'logits' must hold float, qrita::bfloat16 or "
                "qrita::float16");
  static_assert(
      std::is_same<typename LogitsView::array_layout, Kokkos::LayoutRight>::value ||
          std::is_same<typename LogitsView::array_layout,
                       Kokkos::LayoutStride>::value,
      "qrita: 'logits' must be LayoutRight (rows contiguous) or LayoutStride "
      "with unit column stride");
  static_assert(Kokkos::SpaceAccessibility<
                    ExecutionSpace, typename LogitsView::memory_space>::accessible,
                "qrita: 'logits' is not accessible from the execution space");
  return true;
}

// k, p and stats: rank 1, the right element type, accessible.
template <class ExecutionSpace, class View, class Element>
constexpr bool check_column_type() {
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
  return true;
}

template <class View>
void check_column_extent(const char* call, View const& v, const char* name,
                         std::size_t batch) {
  if (v.extent(0) != batch)
    invalid_argument(call, std::string("argument '") + name + "' has " +
                               str(v.extent(0)) + " entries, expected " + str(batch) +
                               " (one per row of 'logits')");
}

// Run-time checks of the logits; the public overloads have already checked
// their type.
template <class LogitsView>
void check_logits_shape(const char* call, LogitsView const& logits) {
  if (logits.extent(1) > std::size_t(INT_MAX))
    invalid_argument(call, "argument 'logits' has " + str(logits.extent(1)) +
                               " columns; at most " + std::to_string(INT_MAX) +
                               " are supported");
  // A column stride other than 1 is rejected whatever the batch: a 1 x V
  // view of stride 2 is not a row of V contiguous entries.
  if (logits.extent(1) > 1 && logits.stride(1) != 1)
    invalid_argument(call, "argument 'logits' must have unit column stride, got " +
                               str(logits.stride(1)));
  if (logits.extent(0) > 1 && logits.stride(0) < logits.extent(1))
    invalid_argument(call, "argument 'logits' has rows that overlap: row stride " +
                               str(logits.stride(0)) + " is less than its " +
                               str(logits.extent(1)) + " columns");
}

// The logits as a Call of their storage type (const removed: only
// sample_mask, which requires non-const logits, writes).
template <class LogitsView>
auto make_call(LogitsView const& logits) {
  using V = typename std::remove_const<typename LogitsView::value_type>::type;
  using T = typename storage_of<V>::type;  // the same bits (is_logit_type)
  Call<T> call;
  const std::size_t batch = logits.extent(0);
  call.logits     = reinterpret_cast<T*>(const_cast<V*>(logits.data()));
  call.batch      = std::int64_t(batch);
  call.vocab      = int(logits.extent(1));
  call.row_stride = std::int64_t(batch > 1 ? logits.stride(0) : logits.extent(1));
  return call;
}

// The checks every call makes first, once each: the logits' shape and the
// options. Returns the call's arguments so far and its plan.
template <Mode M, class ExecutionSpace, class LogitsView>
auto begin_call(ExecutionSpace const& space, LogitsView const& logits,
                Options const& opts) {
  constexpr const char* call_nm = call_name<M>();
  check_logits_shape(call_nm, logits);
  check_options(call_nm, opts);
  auto call = make_call(logits);
  return std::make_pair(call, make_full_plan(call_nm, space, call.batch, call.vocab, opts));
}

// Views or nothing, resolved to pointers after every check has passed.
template <class ExecutionSpace, class LogitsView, class KView, class PView,
          class StatsView>
void dispatch(ExecutionSpace const& space, LogitsView const& logits,
              KView const* k, PView const* p, StatsView const* stats,
              Options const& opts, WorkspaceMemory const& ws) {
  constexpr const char* call_nm = call_name<Mode::mask>();
  auto [call, full] = begin_call<Mode::mask>(space, logits, opts);
  const std::size_t batch = std::size_t(call.batch);
  if (k) check_column_extent(call_nm, *k, "k", batch);
  if (p) check_column_extent(call_nm, *p, "p", batch);
  if (stats) check_column_extent(call_nm, *stats, "stats", batch);
  if (k) {
    call.io.k        = k->data();
    call.io.k_stride = std::int64_t(k->stride(0));
  }
  if (p) {
    call.io.p        = p->data();
    call.io.p_stride = std::int64_t(p->stride(0));
  }
  if (stats) {
    call.io.stats        = stats->data();
    call.io.stats_stride = std::int64_t(stats->stride(0));
  }
  ProfilingRegion region(call_nm);
  launch<Mode::mask>(space, call, full, opts, ws);
}

// Placeholder types for arguments that were not given.
using NoK     = Kokkos::View<const int*, Kokkos::HostSpace>;
using NoP     = Kokkos::View<const float*, Kokkos::HostSpace>;
using NoStats = Kokkos::View<RowStats*, Kokkos::HostSpace>;

template <class ExecutionSpace, class LogitsView, class KView, class PView>
constexpr bool check_types() {
  static_assert(check_logits_type<ExecutionSpace, LogitsView>());
  static_assert(check_column_type<ExecutionSpace, KView, int>());
  static_assert(check_column_type<ExecutionSpace, PView, float>());
  return true;
}

template <class ExecutionSpace, class StatsView>
constexpr bool check_stats_type() {
  static_assert(check_column_type<ExecutionSpace, StatsView, RowStats>());
  static_assert(!std::is_const<typename StatsView::value_type>::value,
                "qrita::sample_mask: 'stats' must be writable");
  return true;
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
  static_assert(check_logits_type<ExecutionSpace, LogitsView>());
  static_assert(check_column_type<ExecutionSpace, FilterView, element>());
  const auto* no_stats = static_cast<NoStats const*>(nullptr);
  if constexpr (std::is_same<element, int>::value) {
    dispatch(space, logits, &k_or_p, static_cast<NoP const*>(nullptr), no_stats,
             opts, ws);
  } else {
    dispatch(space, logits, static_cast<NoK const*>(nullptr), &k_or_p, no_stats,
             opts, ws);
  }
}

// --------------------------------------------------- SamplingParams calls

// A params member: absent (a default-constructed View) or one per row.
template <class View>
bool present(const char* call, View const& v, const char* name, std::size_t batch) {
  if (v.data() == nullptr && v.extent(0) == 0) return false;
  check_column_extent(call, v, name, batch);
  return true;
}

template <class ExecutionSpace, class MemorySpace>
constexpr bool check_params_type() {
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, MemorySpace>::accessible,
                "qrita: the SamplingParams' memory space is not accessible from "
                "the execution space");
  return true;
}

// The params' Views into the call, each extent checked first.
template <class T, class MemorySpace>
void set_params(const char* call_nm, Call<T>& call,
                SamplingParams<MemorySpace> const& params) {
  const std::size_t batch = std::size_t(call.batch);
  const auto take = [&](auto const& view, const char* name, auto& data,
                        std::int64_t& stride) {
    if (!present(call_nm, view, name, batch)) return;
    data   = view.data();
    stride = std::int64_t(view.stride(0));
  };
  take(params.k, "params.k", call.io.k, call.io.k_stride);
  take(params.p, "params.p", call.io.p, call.io.p_stride);
  take(params.min_p, "params.min_p", call.io.min_p, call.io.min_p_stride);
  take(params.temperature, "params.temperature", call.io.temperature,
       call.io.temperature_stride);
}

template <class ExecutionSpace, class LogitsView, class MemorySpace>
void dispatch_params_mask(ExecutionSpace const& space, LogitsView const& logits,
                          SamplingParams<MemorySpace> const& params,
                          RowStats* stats, std::int64_t stats_stride,
                          std::size_t stats_extent, Options const& opts,
                          WorkspaceMemory const& ws) {
  static_assert(check_logits_type<ExecutionSpace, LogitsView>());
  static_assert(check_params_type<ExecutionSpace, MemorySpace>());
  constexpr const char* call_nm = call_name<Mode::mask>();
  auto [call, full] = begin_call<Mode::mask>(space, logits, opts);
  set_params(call_nm, call, params);
  if (stats) {
    if (stats_extent != std::size_t(call.batch))
      invalid_argument(call_nm, "argument 'stats' has " + str(stats_extent) +
                                    " entries, expected " + str(std::size_t(call.batch)) +
                                    " (one per row of 'logits')");
    call.io.stats        = stats;
    call.io.stats_stride = stats_stride;
  }
  ProfilingRegion region(call_nm);
  launch<Mode::mask>(space, call, full, opts, ws);
}

// seeds and offsets: 64-bit integers, one per row.
template <class ExecutionSpace, class View>
constexpr bool check_u64_type() {
  static_assert(Kokkos::is_view<View>::value && unsigned(View::rank) == 1u,
                "qrita::sample_tokens: 'seeds' and 'offsets' must be rank-1 "
                "Views, one per row");
  using E = typename View::non_const_value_type;
  static_assert(std::is_same<E, std::uint64_t>::value ||
                    std::is_same<E, std::int64_t>::value,
                "qrita::sample_tokens: 'seeds' and 'offsets' must hold "
                "std::uint64_t or std::int64_t");
  static_assert(Kokkos::SpaceAccessibility<
                    ExecutionSpace, typename View::memory_space>::accessible,
                "qrita::sample_tokens: 'seeds' or 'offsets' is not accessible "
                "from the execution space");
  return true;
}

// An output View of `Element`, rank `Rank`, writable, accessible.
template <class ExecutionSpace, class View, class Element, unsigned Rank>
constexpr bool check_output_type() {
  static_assert(Kokkos::is_view<View>::value && unsigned(View::rank) == Rank,
                "qrita: 'tokens' and 'counts' must be rank-1 Views, 'ids', "
                "'probs' and 'logprobs' rank-2 Views [batch][C]");
  static_assert(std::is_same<typename View::value_type, Element>::value,
                "qrita: 'tokens', 'ids' and 'counts' must hold non-const int, "
                "'probs' and 'logprobs' non-const float");
  static_assert(Kokkos::SpaceAccessibility<
                    ExecutionSpace, typename View::memory_space>::accessible,
                "qrita: an output View is not accessible from the execution space");
  return true;
}

// seeds, offsets and tokens into the call, each extent checked first.
template <class T, class SeedView, class OffsetView, class TokenView>
void set_sample_outputs(const char* call_nm, Call<T>& call, SeedView const& seeds,
                        OffsetView const& offsets, TokenView const& tokens) {
  const std::size_t batch = std::size_t(call.batch);
  check_column_extent(call_nm, seeds, "seeds", batch);
  check_column_extent(call_nm, offsets, "offsets", batch);
  check_column_extent(call_nm, tokens, "tokens", batch);
  call.io.seeds          = reinterpret_cast<const std::uint64_t*>(seeds.data());
  call.io.seeds_stride   = std::int64_t(seeds.stride(0));
  call.io.offsets        = reinterpret_cast<const std::uint64_t*>(offsets.data());
  call.io.offsets_stride = std::int64_t(offsets.stride(0));
  call.io.tokens         = tokens.data();
  call.io.tokens_stride  = std::int64_t(tokens.stride(0));
}

template <class ExecutionSpace, class LogitsView, class MemorySpace, class SeedView,
          class OffsetView, class TokenView>
void dispatch_sample(ExecutionSpace const& space, LogitsView const& logits,
                     SamplingParams<MemorySpace> const& params, SeedView const& seeds,
                     OffsetView const& offsets, TokenView const& tokens,
                     Options const& opts, WorkspaceMemory const& ws) {
  static_assert(check_logits_type<ExecutionSpace, LogitsView, false>());
  static_assert(check_params_type<ExecutionSpace, MemorySpace>());
  static_assert(check_u64_type<ExecutionSpace, SeedView>());
  static_assert(check_u64_type<ExecutionSpace, OffsetView>());
  static_assert(check_output_type<ExecutionSpace, TokenView, int, 1>());
  constexpr const char* call_nm = call_name<Mode::sample>();
  auto [call, full] = begin_call<Mode::sample>(space, logits, opts);
  set_params(call_nm, call, params);
  set_sample_outputs(call_nm, call, seeds, offsets, tokens);
  ProfilingRegion region(call_nm);
  launch<Mode::sample>(space, call, full, opts, ws);
}

// ids, probs, logprobs and counts into the call, each shape checked
// first (probs and logprobs may be empty Views: skipped).
template <class T, class IdView, class ProbView, class LogprobView, class CountView>
void set_list_outputs(const char* call_nm, Call<T>& call, IdView const& ids,
                      ProbView const& probs, LogprobView const& logprobs,
                      CountView const& counts) {
  const std::size_t batch = std::size_t(call.batch);
  const std::size_t C     = ids.extent(1);
  if (ids.extent(0) != batch)
    invalid_argument(call_nm, "argument 'ids' has " + str(ids.extent(0)) +
                                  " rows, expected " + str(batch) +
                                  " (one per row of 'logits')");
  const auto check_like_ids = [&](auto const& v, const char* name) {
    if (v.data() == nullptr && v.size() == 0) return false;
    if (v.extent(0) != batch || v.extent(1) != C)
      invalid_argument(call_nm, std::string("argument '") + name + "' is " +
                                    str(v.extent(0)) + " x " + str(v.extent(1)) +
                                    ", expected " + str(batch) + " x " + str(C) +
                                    " (the shape of 'ids'), or empty");
    return true;
  };
  const bool with_probs    = check_like_ids(probs, "probs");
  const bool with_logprobs = check_like_ids(logprobs, "logprobs");
  check_column_extent(call_nm, counts, "counts", batch);
  if (C > std::size_t(INT_MAX))
    invalid_argument(call_nm, "argument 'ids' has " + str(C) + " columns; at most " +
                                  std::to_string(INT_MAX) + " are supported");
  call.io.ids      = ids.data();
  call.io.ids_row  = std::int64_t(ids.stride(0));
  call.io.ids_slot = std::int64_t(ids.stride(1));
  if (with_probs) {
    call.io.probs      = probs.data();
    call.io.probs_row  = std::int64_t(probs.stride(0));
    call.io.probs_slot = std::int64_t(probs.stride(1));
  }
  if (with_logprobs) {
    call.io.logprobs      = logprobs.data();
    call.io.logprobs_row  = std::int64_t(logprobs.stride(0));
    call.io.logprobs_slot = std::int64_t(logprobs.stride(1));
  }
  call.io.counts        = counts.data();
  call.io.counts_stride = std::int64_t(counts.stride(0));
  call.io.list_size     = int(C);
}

template <class ExecutionSpace, class LogitsView, class MemorySpace, class IdView,
          class ProbView, class LogprobView, class CountView>
void dispatch_candidates(ExecutionSpace const& space, LogitsView const& logits,
                         SamplingParams<MemorySpace> const& params, IdView const& ids,
                         ProbView const& probs, LogprobView const& logprobs,
                         CountView const& counts, Options const& opts,
                         WorkspaceMemory const& ws) {
  static_assert(check_logits_type<ExecutionSpace, LogitsView, false>());
  static_assert(check_params_type<ExecutionSpace, MemorySpace>());
  static_assert(check_output_type<ExecutionSpace, IdView, int, 2>());
  static_assert(check_output_type<ExecutionSpace, ProbView, float, 2>());
  static_assert(check_output_type<ExecutionSpace, LogprobView, float, 2>());
  static_assert(check_output_type<ExecutionSpace, CountView, int, 1>());
  constexpr const char* call_nm = call_name<Mode::candidates>();
  auto [call, full] = begin_call<Mode::candidates>(space, logits, opts);
  set_params(call_nm, call, params);
  set_list_outputs(call_nm, call, ids, probs, logprobs, counts);
  const std::size_t C = ids.extent(1);
  if (call.batch > 0 && call.vocab > 0) {
    // The largest list a call can make: the candidates a team holds.
    const int most = full.plan.candidate_capacity + (ws.given ? full.plan.tier_capacity : 0);
    if (C > std::size_t(most))
      invalid_argument(call_nm, "a list of " + str(C) +
                                    " candidates per row is more than a team holds here (" +
                                    std::to_string(most) +
                                    (ws.given ? "" : "; a qrita::Workspace adds the device tier") +
                                    ")");
  }
  ProfilingRegion region(call_nm);
  launch<Mode::candidates>(space, call, full, opts, ws);
}

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_DISPATCH_HPP
