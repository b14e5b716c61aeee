// SPDX-License-Identifier: Apache-2.0
// The definitions of sharded.hpp: the argument checks of calls_impl.hpp,
// then qrita::sharded's calls over a Communicator that hands each
// collective to the Collectives module.cpp made from Python.

#include "sharded.hpp"

#include "calls_impl.hpp"

#include <qrita/sharded.hpp>


namespace qrita_python {
namespace {

using namespace calls_detail;
using SpaceWorkspace = qrita::sharded::Workspace<Space>;

// The communicator concept of qrita/communicator.hpp over a Collectives.
class Communicator {
 public:
  explicit Communicator(Collectives const& c) : c_(&c) {}
  int rank() const { return c_->rank; }
  int size() const { return c_->size; }
  template <class S>
  void allreduce_sum(S const& space, std::uint64_t* data, std::size_t n) const {
    run(space, Collective::sum, data, nullptr, n);
  }
  template <class S>
  void allreduce_max(S const& space, std::uint64_t* data, std::size_t n) const {
    run(space, Collective::max, data, nullptr, n);
  }
  template <class S>
  void allgather(S const& space, const std::uint64_t* send, std::uint64_t* recv,
                 std::size_t n) const {
    run(space, Collective::gather, recv, send, n);
  }

 private:
  // A host engine (Gloo) reads the buffers as soon as it is called, so the
  // space's work is finished first; a device engine (NCCL) orders its
  // collectives after the work on the call's stream itself.
  template <class S>
  void run(S const& space, Collective kind, std::uint64_t* data, const std::uint64_t* send,
           std::size_t n) const {
    if (Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename S::memory_space>::accessible)
      space.fence();
    c_->run(kind, data, send, n);
  }

  Collectives const* c_;
};

qrita::sharded::Shard to_shard(ShardSpec const& s) {
  qrita::sharded::Shard shard;
  shard.first_column = s.first_column;
  shard.columns      = s.columns;
  shard.vocab        = s.vocab;
  return shard;
}

qrita::sharded::Options options(bool check_agreement) {
  qrita::sharded::Options o;
  o.check_agreement = check_agreement;
  return o;
}

SpaceWorkspace const* workspace_of(ShardedWorkspace const* ws) {
  return ws ? static_cast<SpaceWorkspace const*>(ws->impl.get()) : nullptr;
}

// With check_agreement, every rank's first collective in a call is the
// exchange of argument records (qrita/detail/shard/agree.hpp). A rank whose
// own checks here fail takes part in it with a failed record, so that the
// others throw too instead of waiting for it, and then raises its error.
template <class Checks>
void check_here(Space const& space, Collectives const& comm, bool check_agreement,
                Checks&& checks) {
  try {
    checks();
  } catch (...) {
    if (check_agreement) announce_failure(space, comm);
    throw;
  }
}

template <class F>
void by_logit_type(Array const& logits, F&& f) {
  switch (logits.dtype) {
    case DType::float32: return f(float{});
    case DType::bfloat16: return f(qrita::bfloat16{});
    default: return f(qrita::float16{});
  }
}

}  // namespace

void announce_failure(Space const& space, Collectives const& comm) {
  std::uint64_t failed[qrita::detail::shard::record_words] = {};
  failed[0] = 1;
  (void)qrita::detail::shard::exchange(space, Communicator(comm), failed);
}

ShardedWorkspace make_sharded_workspace(Space const& space, Collectives const& comm,
                                        ShardSpec const& shard, std::int64_t batch,
                                        int list_capacity) {
  ShardedWorkspace ws;
  ws.shard         = shard;
  ws.batch         = batch;
  ws.list_capacity = list_capacity;
  ws.ranks         = comm.size;
  ws.impl          = std::make_shared<SpaceWorkspace>(space, Communicator(comm), to_shard(shard),
                                                      batch, list_capacity);
  return ws;
}

void sharded_mask(Space const& space, Collectives const& comm, Array const& logits,
                  ShardSpec const& shard, Filters const& f, ShardedWorkspace const* ws,
                  bool check_agreement) {
  qrita::SamplingParams<Memory> prm;
  check_here(space, comm, check_agreement, [&] { prm = params(f, logits.shape[0]); });
  by_logit_type(logits, [&](auto tag) {
    using T = decltype(tag);
    qrita::sharded::sample_mask(space, Communicator(comm), matrix<T>(logits), to_shard(shard),
                                prm, options(check_agreement), workspace_of(ws));
  });
  finish(space);
}

void sharded_sample(Space const& space, Collectives const& comm, Array const& logits,
                    ShardSpec const& shard, Filters const& f, Array const& seeds,
                    Array const& offsets, Array const& tokens, ShardedWorkspace const* ws,
                    bool check_agreement) {
  qrita::SamplingParams<Memory> prm;
  check_here(space, comm, check_agreement, [&] {
    prm = params(f, logits.shape[0]);
    check_draw(seeds, offsets, tokens, logits.shape[0]);
  });
  by_logit_type(logits, [&](auto tag) {
    using T = decltype(tag);
    qrita::sharded::sample_tokens(space, Communicator(comm), matrix<const T>(logits),
                                  to_shard(shard), prm, column<const std::uint64_t>(seeds),
                                  column<const std::uint64_t>(offsets), column<int>(tokens),
                                  options(check_agreement), workspace_of(ws));
  });
  finish(space);
}

void sharded_candidates(Space const& space, Collectives const& comm, Array const& logits,
                        ShardSpec const& shard, Filters const& f, Array const& ids,
                        std::optional<Array> const& probs, std::optional<Array> const& logprobs,
                        Array const& counts, ShardedWorkspace const* ws, bool check_agreement) {
  qrita::SamplingParams<Memory> prm;
  check_here(space, comm, check_agreement, [&] {
    prm = params(f, logits.shape[0]);
    check_list(ids, probs, logprobs, counts, logits.shape[0]);
  });
  const auto pr = optional_matrix(probs);
  const auto lp = optional_matrix(logprobs);
  by_logit_type(logits, [&](auto tag) {
    using T = decltype(tag);
    qrita::sharded::candidate_list(space, Communicator(comm), matrix<const T>(logits),
                                   to_shard(shard), prm, matrix<int>(ids), pr, lp,
                                   column<int>(counts), options(check_agreement),
                                   workspace_of(ws));
  });
  finish(space);
}

}  // namespace qrita_python
