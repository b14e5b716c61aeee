// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_COMM_MPI_HPP
#define QRITA_COMM_MPI_HPP

// qrita::MpiCommunicator: the communicator of the sharded calls
// (qrita/communicator.hpp) over an MPI communicator the caller owns, for
// execution spaces whose memory the host can read (OpenMP, Serial, or a
// CUDA-aware MPI's device pointers if the caller's MPI takes them).
//
//   qrita::MpiCommunicator comm(MPI_COMM_WORLD);
//   qrita::sharded::sample_mask(space, comm, shard_logits, shard, params);
//
// Each collective fences the space first (MPI calls block the host), so a
// call on this communicator synchronises; CUDA graphs need NCCL.

#include <qrita/communicator.hpp>

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace qrita {

class MpiCommunicator {
 public:
  explicit MpiCommunicator(MPI_Comm comm) : comm_(comm) {
    check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  }
  int rank() const { return rank_; }
  int size() const { return size_; }
  MPI_Comm handle() const { return comm_; }

  template <class ExecutionSpace>
  void allreduce_sum(ExecutionSpace const& space, std::uint64_t* data, std::size_t n) const {
    reduce(space, data, n, MPI_SUM);
  }
  template <class ExecutionSpace>
  void allreduce_max(ExecutionSpace const& space, std::uint64_t* data, std::size_t n) const {
    reduce(space, data, n, MPI_MAX);
  }
  template <class ExecutionSpace>
  void allgather(ExecutionSpace const& space, const std::uint64_t* send, std::uint64_t* recv,
                 std::size_t n) const {
    space.fence();
    check(MPI_Allgather(send, count(n), MPI_UINT64_T, recv, count(n), MPI_UINT64_T, comm_),
          "MPI_Allgather");
  }

 private:
  template <class ExecutionSpace>
  void reduce(ExecutionSpace const& space, std::uint64_t* data, std::size_t n, MPI_Op op) const {
    space.fence();
    check(MPI_Allreduce(MPI_IN_PLACE, data, count(n), MPI_UINT64_T, op, comm_), "MPI_Allreduce");
  }
  static int count(std::size_t n) {
    if (n > std::size_t(INT32_MAX))
      throw std::invalid_argument("qrita::MpiCommunicator: a buffer of " + std::to_string(n) +
                                  " values is more than one MPI call takes");
    return int(n);
  }
  static void check(int rc, const char* what) {
    if (rc != MPI_SUCCESS)
      throw std::runtime_error(std::string("qrita::MpiCommunicator: ") + what + " failed (" +
                               std::to_string(rc) + ")");
  }

  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace qrita

#endif  // QRITA_COMM_MPI_HPP
