// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_PYTHON_SHARDED_HPP
#define QRITA_PYTHON_SHARDED_HPP

// The sharded calls (qrita/sharded.hpp) on arrays described from Python,
// over a communication engine that Python drives (qrita/distributed.py:
// torch.distributed). The engine reaches C++ as a Collectives: its rank,
// its size, and one function that runs a collective on buffers named by
// address; module.cpp makes it from a Python object.

#include "calls.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

namespace qrita_python {

enum class Collective : int { sum = 0, max = 1, gather = 2 };

struct Collectives {
  int rank = 0;
  int size = 1;
  // run(kind, data, send, n): sum and max replace the n words at `data`
  // with their sum or maximum over the ranks (uint64, the sum wrapping);
  // gather writes rank q's n words of `send` at data + q * n.
  std::function<void(Collective, std::uint64_t*, const std::uint64_t*, std::size_t)> run;
};

// Where this rank's shard lies: columns [first_column, first_column +
// columns) of rows of `vocab` columns.
struct ShardSpec {
  std::int64_t first_column = 0, columns = 0, vocab = 0;
};

// A qrita::sharded::Workspace kept for later calls (made collectively).
struct ShardedWorkspace {
  ShardSpec shard;
  std::int64_t batch = 0;
  int list_capacity  = 0;
  int ranks          = 1;
  std::shared_ptr<void> impl;  // the qrita::sharded::Workspace<Space>
};

// Takes part in the exchange of argument records as a rank whose
// arguments failed, so that every other rank's call throws; for a failure
// found before the call (in Python).
void announce_failure(Space const& space, Collectives const& comm);

ShardedWorkspace make_sharded_workspace(Space const& space, Collectives const& comm,
                                        ShardSpec const& shard, std::int64_t batch,
                                        int list_capacity);

// Each call: its arguments checked (every rank learns any rank's failure
// when check_agreement is on), then qrita::sharded's call.
void sharded_mask(Space const& space, Collectives const& comm, Array const& logits,
                  ShardSpec const& shard, Filters const& f, ShardedWorkspace const* ws,
                  bool check_agreement);

void sharded_sample(Space const& space, Collectives const& comm, Array const& logits,
                    ShardSpec const& shard, Filters const& f, Array const& seeds,
                    Array const& offsets, Array const& tokens, ShardedWorkspace const* ws,
                    bool check_agreement);

void sharded_candidates(Space const& space, Collectives const& comm, Array const& logits,
                        ShardSpec const& shard, Filters const& f, Array const& ids,
                        std::optional<Array> const& probs, std::optional<Array> const& logprobs,
                        Array const& counts, ShardedWorkspace const* ws, bool check_agreement);

}  // namespace qrita_python

#endif  // QRITA_PYTHON_SHARDED_HPP
