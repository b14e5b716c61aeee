// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_SHARDED_HPP
#define QRITA_SHARDED_HPP

// qrita::sharded: the mask, the sampler and the candidate list on logits
// whose vocabulary is split across ranks (tensor parallelism leaves each
// GPU one shard of the LM head's output), without gathering the
// vocabulary. Every rank passes its shard [batch][columns] and where it
// starts in the whole row; the answer is, bit for bit, the plain call's on
// the concatenated rows:
//
//   qrita::MpiCommunicator comm(MPI_COMM_WORLD);  // or NcclCommunicator
//   qrita::sharded::Shard shard{first_column, columns, vocab};
//   qrita::sharded::sample_mask(space, comm, shard_logits, shard, params);
//   qrita::sharded::sample_tokens(space, comm, shard_logits, shard, params,
//                                 seeds, offsets, tokens);
//   qrita::sharded::candidate_list(space, comm, shard_logits, shard, params,
//                                  ids, probs, logprobs, counts);
//
// * The mask writes each rank's own shard; every rank gets the same token
//   (a column of the whole row) and the same list.
// * Shards may be uneven or empty; they must tile [0, vocab) in some order
//   of the ranks. Every rank passes the same params, seeds, offsets and
//   list size.
// * What crosses the wire per row is a few histograms and the list, never
//   the row: sharded::wire_bytes says how much for each call.
// * Equal to the plain call, bit for bit: the mask, the tokens and the
//   lists.
//
// The communicator is the caller's, through an adapter
// (qrita/communicator.hpp). With check_agreement (the default) each call
// first exchanges a record of its arguments, so that a rank whose
// arguments are wrong, or that disagrees with the others, makes every rank
// throw the same std::invalid_argument; this reads back to the host. A
// call with a sharded::Workspace and check_agreement off allocates
// nothing and never waits for the device (with NCCL: capturable in a CUDA
// graph).

#include <qrita/communicator.hpp>
#include <qrita/detail/dispatch.hpp>
#include <qrita/detail/shard/agree.hpp>
#include <qrita/detail/shard/steps.hpp>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace qrita {
namespace sharded {

// Where a rank's shard sits: columns [first_column, first_column +
// columns) of rows of `vocab` columns.
struct Shard {
  std::int64_t first_column = 0;
  std::int64_t columns      = 0;
  std::int64_t vocab        = 0;
};

struct Options {
  // Exchange a record of the arguments first, so that wrong or
  // disagreeing arguments on any rank throw on every rank (one host
  // synchronisation). Off: each rank checks its own arguments only and
  // must be trusted to agree (a disagreement then hangs or corrupts).
  bool check_agreement = true;
};

enum class Call { mask, tokens, list };

// Bytes one rank sends and receives per row in a call on `ranks` ranks
// (lists of `list_size` entries): every collective's words per row, 8
// bytes each, an allgather counted with every rank's part.
inline std::size_t wire_bytes(Call call, int ranks, int list_size = 0) {
  using namespace detail::shard;
  const std::size_t select = std::size_t(digit_passes) * histogram_words;
  std::size_t words        = 1 + 2 * select + std::size_t(ranks);  // max, top-k, top-p, ties
  if (call == Call::tokens) words += select + 1;                    // the draw, the token
  if (call == Call::list) words += select + std::size_t(ranks) * std::size_t(list_size);
  return 8 * words;
}

// The buffers of sharded calls on up to `batch` rows with lists of up to
// `list_capacity` entries, and the shards' order. Making one is
// collective (every rank of `comm` makes its own, with its shard) and
// synchronises; a call with it allocates nothing.
template <class ExecutionSpace>
class Workspace {
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                "qrita::sharded::Workspace: the template argument must be a Kokkos execution "
                "space");

 public:
  using memory_space = typename ExecutionSpace::memory_space;

  template <class Comm>
  Workspace(ExecutionSpace const& space, Comm const& comm, Shard const& shard,
            std::int64_t batch, int list_capacity = 0)
      : shard_(shard), batch_(batch), ranks_(comm.size()), list_capacity_(list_capacity) {
    constexpr const char* name = "qrita::sharded::Workspace";
    std::string error;
    try {
      check_shard(name, shard);
      if (batch < 0) detail::invalid_argument(name, "argument 'batch' is negative");
      if (list_capacity < 0)
        detail::invalid_argument(name, "argument 'list_capacity' is negative");
    } catch (std::invalid_argument const& e) {
      error = e.what();
    }
    const std::uint64_t mine[detail::shard::record_words] = {
        error.empty() ? 0u : 1u,          std::uint64_t(shard.first_column),
        std::uint64_t(shard.columns),     std::uint64_t(shard.vocab),
        std::uint64_t(batch),             std::uint64_t(list_capacity),
        0,                                0};
    const auto records = detail::shard::exchange(space, comm, mine);
    detail::shard::throw_if_any_failed(name, records, error);
    detail::shard::require_same(name, records, 3, "the vocabulary (shard.vocab)");
    detail::shard::require_same(name, records, 4, "argument 'batch'");
    detail::shard::require_same(name, records, 5, "argument 'list_capacity'");
    std::vector<std::pair<std::int64_t, std::int64_t>> shards;
    for (int q = 0; q < ranks_; ++q)
      shards.emplace_back(std::int64_t(records[std::size_t(q) * detail::shard::record_words + 1]),
                          std::int64_t(records[std::size_t(q) * detail::shard::record_words + 2]));
    const std::vector<int> before = detail::shard::shard_order(name, shards, shard.vocab,
                                                               comm.rank());
    const auto alloc = [&](const char* label, std::size_t n) {
      return Kokkos::View<std::uint64_t*, memory_space>(
          Kokkos::view_alloc(space, std::string(label)), n > 0 ? n : 1);
    };
    const std::size_t B = std::size_t(batch), R = std::size_t(ranks_),
                      C = std::size_t(list_capacity);
    rows_     = Kokkos::View<detail::shard::ShardRow*, memory_space>(
        Kokkos::view_alloc(space, "qrita::sharded::Workspace::rows"), B > 0 ? B : 1);
    row_word_ = alloc("qrita::sharded::Workspace::row_word", B);
    hist_     = alloc("qrita::sharded::Workspace::histograms", B * detail::shard::histogram_words);
    ties_     = alloc("qrita::sharded::Workspace::ties", B);
    ties_all_ = alloc("qrita::sharded::Workspace::ties_all", R * B);
    list_     = alloc("qrita::sharded::Workspace::list", B * C);
    list_all_ = alloc("qrita::sharded::Workspace::list_all", R * B * C);
    before_   = Kokkos::View<int*, memory_space>(
        Kokkos::view_alloc(space, "qrita::sharded::Workspace::before"),
        before.empty() ? 1 : before.size());
    auto host_before = Kokkos::create_mirror_view(before_);
    for (std::size_t i = 0; i < before.size(); ++i) host_before(i) = before[i];
    Kokkos::deep_copy(space, before_, host_before);
    n_before_ = int(before.size());
    space.fence();
  }

  Shard shard() const { return shard_; }
  std::int64_t batch() const { return batch_; }
  int ranks() const { return ranks_; }
  int list_capacity() const { return list_capacity_; }

  detail::shard::Buffers buffers() const {
    detail::shard::Buffers b;
    b.rows          = rows_.data();
    b.row_word      = row_word_.data();
    b.hist          = hist_.data();
    b.ties          = ties_.data();
    b.ties_all      = ties_all_.data();
    b.list          = list_.data();
    b.list_all      = list_all_.data();
    b.before        = before_.data();
    b.n_before      = n_before_;
    b.ranks         = ranks_;
    b.list_capacity = list_capacity_;
    return b;
  }

  static void check_shard(const char* name, Shard const& s) {
    if (s.vocab < 1 || s.vocab > INT_MAX)
      detail::invalid_argument(name, "shard.vocab is " + std::to_string(s.vocab) +
                                         "; it must be in [1, " + std::to_string(INT_MAX) + "]");
    if (s.first_column < 0 || s.columns < 0 || s.first_column + s.columns > s.vocab)
      detail::invalid_argument(name, "shard columns [" + std::to_string(s.first_column) + ", " +
                                         std::to_string(s.first_column + s.columns) +
                                         ") do not lie in a vocabulary of " +
                                         std::to_string(s.vocab));
  }

 private:
  Shard shard_;
  std::int64_t batch_ = 0;
  int ranks_          = 1;
  int list_capacity_  = 0;
  int n_before_       = 0;
  Kokkos::View<detail::shard::ShardRow*, memory_space> rows_;
  Kokkos::View<std::uint64_t*, memory_space> row_word_, hist_, ties_, ties_all_, list_, list_all_;
  Kokkos::View<int*, memory_space> before_;
};

namespace impl {

// A sharded call: the local checks (which, with check_agreement, every
// rank learns the verdict of before anything runs), the agreement, then
// the steps of detail/shard/steps.hpp for call M.
template <detail::Mode M, class Space, class Comm, class LogitsView, class MemorySpace,
          class SetOutputs, class Steps>
void run(const char* name, Space const& space, Comm const& comm, LogitsView const& logits,
         Shard const& shard, SamplingParams<MemorySpace> const& params, Options const& opts,
         Workspace<Space> const* given, int list_size, SetOutputs const& set_outputs,
         Steps const& steps) {
  auto call = detail::make_call(logits);
  std::string error;
  try {
    detail::check_logits_shape(name, logits);
    Workspace<Space>::check_shard(name, shard);
    if (std::int64_t(logits.extent(1)) != shard.columns)
      detail::invalid_argument(name, "argument 'logits' has " + detail::str(logits.extent(1)) +
                                         " columns; shard.columns is " +
                                         std::to_string(shard.columns));
    detail::set_params(name, call, params);
    set_outputs(call);
    if (given) {
      Workspace<Space> const& ws = *given;
      if (ws.ranks() != comm.size())
        detail::invalid_argument(name, "the workspace was made for " +
                                           std::to_string(ws.ranks()) + " ranks, the "
                                           "communicator has " + std::to_string(comm.size()));
      if (ws.batch() < call.batch || ws.list_capacity() < list_size)
        detail::invalid_argument(
            name, "the workspace holds " + std::to_string(ws.batch()) + " rows and lists of " +
                      std::to_string(ws.list_capacity()) + "; the call has " +
                      std::to_string(call.batch) + " rows and lists of " +
                      std::to_string(list_size));
      if (ws.shard().first_column != shard.first_column || ws.shard().columns != shard.columns ||
          ws.shard().vocab != shard.vocab)
        detail::invalid_argument(name, "the workspace was made for another shard");
    }
  } catch (std::invalid_argument const& e) {
    if (!opts.check_agreement) throw;
    error = e.what();
  }
  if (opts.check_agreement) {
    const std::uint64_t digest =
        error.empty() ? detail::shard::inputs_digest(space, call.io, call.batch) : 0;
    const std::uint64_t mine[detail::shard::record_words] = {
        error.empty() ? 0u : 1u,
        std::uint64_t(M),
        std::uint64_t(call.batch),
        std::uint64_t(shard.vocab),
        std::uint64_t(list_size),
        detail::shard::inputs_present(call.io),
        digest,
        sizeof(typename LogitsView::value_type)};
    const auto records = detail::shard::exchange(space, comm, mine);
    detail::shard::throw_if_any_failed(name, records, error);
    detail::shard::require_same(name, records, 1, "the call");
    detail::shard::require_same(name, records, 2, "the batch (logits.extent(0))");
    detail::shard::require_same(name, records, 3, "the vocabulary (shard.vocab)");
    detail::shard::require_same(name, records, 4, "the list size (ids.extent(1))");
    detail::shard::require_same(name, records, 5, "the set of params and outputs given");
    detail::shard::require_same(name, records, 6,
                                "the params, seeds or offsets (a digest of their values)");
    detail::shard::require_same(name, records, 7, "the logits' element size");
  }
  using T = typename std::remove_pointer<decltype(call.logits)>::type;
  detail::shard::ShardCall<T, M> sc;
  sc.logits           = call.logits;
  sc.batch            = call.batch;
  sc.width            = call.vocab;
  sc.row_stride       = call.row_stride;
  sc.first            = shard.first_column;
  sc.io               = call.io;
  sc.prm.vocab        = int(shard.vocab);
  sc.prm.weight_scale = detail::weight_scale_of(shard.vocab);
  // A call without a workspace makes one (collective, like the call).
  const Workspace<Space> ws =
      given ? *given : Workspace<Space>(space, comm, shard, call.batch, list_size);
  if (call.batch == 0) return;
  detail::ProfilingRegion region(name);
  const detail::shard::Buffers b = ws.buffers();
  using detail::shard::Goal;
  detail::shard::row_maximum(space, comm, sc, b);
  detail::shard::row_setup(space, sc, b);
  detail::shard::select(space, comm, sc, b, Goal::top_k);
  detail::shard::select(space, comm, sc, b, Goal::top_p);
  steps(sc, b);
}

}  // namespace impl

/// The kept set of every row, each rank writing its own shard in place.
template <class ExecutionSpace, class Comm, class LogitsView, class MemorySpace,
          class = detail::if_space<ExecutionSpace>>
void sample_mask(ExecutionSpace const& space, Comm const& comm, LogitsView const& logits,
                 Shard const& shard, SamplingParams<MemorySpace> const& params,
                 Options const& opts = Options{},
                 Workspace<ExecutionSpace> const* workspace = nullptr) {
  static_assert(detail::check_logits_type<ExecutionSpace, LogitsView>());
  static_assert(detail::check_params_type<ExecutionSpace, MemorySpace>());
  impl::run<detail::Mode::mask>(
      "qrita::sharded::sample_mask", space, comm, logits, shard, params, opts, workspace, 0,
      [](auto&) {},
      [&](auto const& sc, detail::shard::Buffers const& b) {
        detail::shard::count_ties(space, comm, sc, b);
        detail::shard::write_mask(space, sc, b);
      });
}

/// One token per row (a column of the whole row), the same on every rank.
template <class ExecutionSpace, class Comm, class LogitsView, class MemorySpace, class SeedView,
          class OffsetView, class TokenView, class = detail::if_space<ExecutionSpace>>
void sample_tokens(ExecutionSpace const& space, Comm const& comm, LogitsView const& logits,
                   Shard const& shard, SamplingParams<MemorySpace> const& params,
                   SeedView const& seeds, OffsetView const& offsets, TokenView const& tokens,
                   Options const& opts = Options{},
                   Workspace<ExecutionSpace> const* workspace = nullptr) {
  static_assert(detail::check_logits_type<ExecutionSpace, LogitsView, false>());
  static_assert(detail::check_params_type<ExecutionSpace, MemorySpace>());
  static_assert(detail::check_u64_type<ExecutionSpace, SeedView>());
  static_assert(detail::check_u64_type<ExecutionSpace, OffsetView>());
  static_assert(detail::check_output_type<ExecutionSpace, TokenView, int, 1>());
  constexpr const char* name = "qrita::sharded::sample_tokens";
  impl::run<detail::Mode::sample>(
      name, space, comm, logits, shard, params, opts, workspace, 0,
      [&](auto& call) { detail::set_sample_outputs(name, call, seeds, offsets, tokens); },
      [&](auto const& sc, detail::shard::Buffers const& b) {
        detail::shard::select(space, comm, sc, b, detail::shard::Goal::draw);
        detail::shard::count_ties(space, comm, sc, b);
        detail::shard::pick_token(space, comm, sc, b);
      });
}

/// The list of every row's first kept entries, the same on every rank.
template <class ExecutionSpace, class Comm, class LogitsView, class MemorySpace, class IdView,
          class ProbView, class LogprobView, class CountView,
          class = detail::if_space<ExecutionSpace>>
void candidate_list(ExecutionSpace const& space, Comm const& comm, LogitsView const& logits,
                    Shard const& shard, SamplingParams<MemorySpace> const& params,
                    IdView const& ids, ProbView const& probs, LogprobView const& logprobs,
                    CountView const& counts, Options const& opts = Options{},
                    Workspace<ExecutionSpace> const* workspace = nullptr) {
  static_assert(detail::check_logits_type<ExecutionSpace, LogitsView, false>());
  static_assert(detail::check_params_type<ExecutionSpace, MemorySpace>());
  static_assert(detail::check_output_type<ExecutionSpace, IdView, int, 2>());
  static_assert(detail::check_output_type<ExecutionSpace, ProbView, float, 2>());
  static_assert(detail::check_output_type<ExecutionSpace, LogprobView, float, 2>());
  static_assert(detail::check_output_type<ExecutionSpace, CountView, int, 1>());
  constexpr const char* name = "qrita::sharded::candidate_list";
  impl::run<detail::Mode::candidates>(
      name, space, comm, logits, shard, params, opts, workspace, int(ids.extent(1)),
      [&](auto& call) { detail::set_list_outputs(name, call, ids, probs, logprobs, counts); },
      [&](auto const& sc, detail::shard::Buffers const& b) {
        detail::shard::select(space, comm, sc, b, detail::shard::Goal::list);
        detail::shard::count_ties(space, comm, sc, b);
        detail::shard::gather_list(space, comm, sc, b);
        detail::shard::write_list(space, sc, b);
      });
}

}  // namespace sharded
}  // namespace qrita

#endif  // QRITA_SHARDED_HPP
