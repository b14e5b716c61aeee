// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_COMMUNICATOR_HPP
#define QRITA_COMMUNICATOR_HPP

// What the sharded calls (qrita/sharded.hpp) need from a communication
// engine, and the adapter for a single rank.
//
// A communicator is any type with these members (the caller owns the
// engine's communicator; qrita never creates one):
//
//   int rank() const;   // this process's rank, 0 <= rank < size
//   int size() const;   // the number of ranks
//   template <class ExecutionSpace>
//   void allreduce_sum(ExecutionSpace const&, std::uint64_t* data, std::size_t n) const;
//   template <class ExecutionSpace>
//   void allreduce_max(ExecutionSpace const&, std::uint64_t* data, std::size_t n) const;
//   template <class ExecutionSpace>
//   void allgather(ExecutionSpace const&, const std::uint64_t* send, std::uint64_t* recv,
//                  std::size_t n) const;
//
// Buffers live in the execution space's memory. allreduce_* replace the n
// values in place with their sum (wrapping modulo 2^64) or maximum over the
// ranks; allgather writes rank q's n values at recv + q * n. A call must
// see every earlier kernel on `space` done before it reads a buffer, and
// finish before any later kernel on `space` reads one: an engine with
// stream semantics (NCCL) enqueues on the space's stream; a blocking one
// (MPI) fences the space first. Every rank makes the same sequence of
// calls with the same n, which the sharded calls guarantee.
//
// Adapters: qrita::SingleRank (here), qrita::MpiCommunicator
// (qrita/comm/mpi.hpp) and qrita::NcclCommunicator (qrita/comm/nccl.hpp).

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>

namespace qrita {

// One rank: every reduction is the identity and a gather a copy. The
// sharded calls on it give the plain calls' answers (the shard is the whole
// vocabulary); it needs no engine.
struct SingleRank {
  int rank() const { return 0; }
  int size() const { return 1; }
  template <class ExecutionSpace>
  void allreduce_sum(ExecutionSpace const&, std::uint64_t*, std::size_t) const {}
  template <class ExecutionSpace>
  void allreduce_max(ExecutionSpace const&, std::uint64_t*, std::size_t) const {}
  template <class ExecutionSpace>
  void allgather(ExecutionSpace const& space, const std::uint64_t* send, std::uint64_t* recv,
                 std::size_t n) const {
    using memory = typename ExecutionSpace::memory_space;
    using view   = Kokkos::View<std::uint64_t*, memory, Kokkos::MemoryUnmanaged>;
    Kokkos::deep_copy(space, view(recv, n),
                      Kokkos::View<const std::uint64_t*, memory, Kokkos::MemoryUnmanaged>(send, n));
  }
};

}  // namespace qrita

#endif  // QRITA_COMMUNICATOR_HPP
