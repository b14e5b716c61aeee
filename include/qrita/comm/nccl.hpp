// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_COMM_NCCL_HPP
#define QRITA_COMM_NCCL_HPP

// qrita::NcclCommunicator: the communicator of the sharded calls
// (qrita/communicator.hpp) over an NCCL communicator the caller owns, on
// Kokkos::Cuda. Every collective is enqueued on the execution space
// instance's stream and the host never waits, so a sharded call with a
// sharded::Workspace and check_agreement off can be captured in a CUDA
// graph.
//
//   ncclComm_t nccl;  // the caller's (ncclCommInitRank, or its engine's)
//   qrita::NcclCommunicator comm(nccl);
//   qrita::sharded::sample_tokens(space, comm, shard_logits, shard, params,
//                                 seeds, offsets, tokens, opts, ws);

#include <qrita/communicator.hpp>

#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace qrita {

class NcclCommunicator {
 public:
  explicit NcclCommunicator(ncclComm_t comm) : comm_(comm) {
    check(ncclCommUserRank(comm_, &rank_), "ncclCommUserRank");
    check(ncclCommCount(comm_, &size_), "ncclCommCount");
  }
  int rank() const { return rank_; }
  int size() const { return size_; }
  ncclComm_t handle() const { return comm_; }

  template <class ExecutionSpace>
  void allreduce_sum(ExecutionSpace const& space, std::uint64_t* data, std::size_t n) const {
    check(ncclAllReduce(data, data, n, ncclUint64, ncclSum, comm_, stream(space)),
          "ncclAllReduce");
  }
  template <class ExecutionSpace>
  void allreduce_max(ExecutionSpace const& space, std::uint64_t* data, std::size_t n) const {
    check(ncclAllReduce(data, data, n, ncclUint64, ncclMax, comm_, stream(space)),
          "ncclAllReduce");
  }
  template <class ExecutionSpace>
  void allgather(ExecutionSpace const& space, const std::uint64_t* send, std::uint64_t* recv,
                 std::size_t n) const {
    check(ncclAllGather(send, recv, n, ncclUint64, comm_, stream(space)), "ncclAllGather");
  }

 private:
  template <class ExecutionSpace>
  static cudaStream_t stream(ExecutionSpace const& space) {
#if defined(KOKKOS_ENABLE_CUDA)
    static_assert(std::is_same<ExecutionSpace, Kokkos::Cuda>::value,
                  "qrita::NcclCommunicator: the execution space must be Kokkos::Cuda");
    return space.cuda_stream();
#else
    static_assert(sizeof(ExecutionSpace) == 0,
                  "qrita::NcclCommunicator needs Kokkos built with CUDA");
    return nullptr;
#endif
  }
  static void check(ncclResult_t rc, const char* what) {
    if (rc != ncclSuccess)
      throw std::runtime_error(std::string("qrita::NcclCommunicator: ") + what + " failed: " +
                               ncclGetErrorString(rc));
  }

  ncclComm_t comm_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace qrita

#endif  // QRITA_COMM_NCCL_HPP
