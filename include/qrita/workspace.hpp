// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_WORKSPACE_HPP
#define QRITA_WORKSPACE_HPP

// qrita::Workspace: the device memory a sample_mask call may gather
// candidates into when they do not fit on chip (the "tier"), owned by the
// caller.
//
//   qrita::Workspace<Kokkos::Cuda> ws(space, max_batch, vocab);  // allocates
//   qrita::sample_mask(space, logits, k, p, qrita::Options{}, ws);  // does not
//   qrita::Workspace<Kokkos::Cuda> own(space, max_batch, vocab, opts, ptr, bytes);
//                                    // over the caller's zero-filled memory
//
// A workspace made for (batch, vocab, options) serves every call on at most
// that batch and vocab with the same options. Calls that take one allocate
// nothing and never synchronise the host, so a serving engine can capture
// them in a CUDA graph. Calls without one allocate nothing either, but use
// on-chip candidates only: a row whose boundary set does not fit on chip is
// then searched whole (same answer, more reads), and so is a sampler's or
// list's row whose top-p set is larger than the tiers (with a workspace, a
// second kernel finishes those in one or two more reads). qrita::plan(...)
// .workspace_bytes says how large a workspace is: the tier (Options::
// tier_capacity entries per team; none where a row fits on chip), the
// state of split rows (GPUs, small batches), and a record per
// row (8336 bytes with the default histogram) for the sampler's and the
// list's deferred rows: what their first read found, and a flag.

#include <qrita/detail/launch.hpp>
#include <qrita/options.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace qrita {

template <class ExecutionSpace>
class Workspace {
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                "qrita::Workspace: the template argument must be a Kokkos "
                "execution space");

 public:
  using execution_space = ExecutionSpace;
  using memory_space    = typename ExecutionSpace::memory_space;

  Workspace() = default;

  // Allocates plan(space, batch, vocab, opts).workspace_bytes in the space's
  // memory (labelled "qrita::Workspace").
  Workspace(ExecutionSpace const& space, std::int64_t batch, std::int64_t vocab,
            Options const& opts = Options{})
      : plan_(detail::checked_plan("qrita::Workspace", space, batch, vocab, opts)),
        storage_("qrita::Workspace",
                 plan_.workspace_bytes) {}

  // Over memory the caller owns (a framework's allocator, a pool), of at
  // least plan(space, batch, vocab, opts).workspace_bytes bytes in the
  // space's memory, zero-filled before its first use (the calls leave it
  // so), 16-byte aligned, and used by one call at a time. The caller keeps
  // it alive while the workspace is in use.
  Workspace(ExecutionSpace const& space, std::int64_t batch, std::int64_t vocab,
            Options const& opts, void* memory, std::size_t memory_bytes)
      : plan_(detail::checked_plan("qrita::Workspace", space, batch, vocab, opts)) {
    if (memory_bytes < plan_.workspace_bytes)
      detail::invalid_argument(
          "qrita::Workspace", "argument 'memory_bytes' is " + detail::str(memory_bytes) +
                                  "; a workspace for " + std::to_string(batch) + " x " +
                                  std::to_string(vocab) + " logits with these options needs " +
                                  detail::str(plan_.workspace_bytes));
    if (plan_.workspace_bytes > 0 && memory == nullptr)
      detail::invalid_argument("qrita::Workspace", "argument 'memory' is null");
    if (reinterpret_cast<std::uintptr_t>(memory) % 16 != 0)
      detail::invalid_argument("qrita::Workspace",
                               "argument 'memory' is not 16-byte aligned");
    storage_ = Kokkos::View<char*, memory_space>(static_cast<char*>(memory), memory_bytes);
  }

  std::size_t bytes() const { return storage_.extent(0); }
  LaunchPlan const& plan() const { return plan_; }

  // For qrita's calls: the memory as an untyped range.
  detail::WorkspaceMemory memory() const {
    return detail::WorkspaceMemory{
        bytes() > 0 ? static_cast<void*>(storage_.data()) : nullptr, bytes(), true};
  }

 private:
  LaunchPlan plan_{};
  Kokkos::View<char*, memory_space> storage_;
};

}  // namespace qrita

#endif  // QRITA_WORKSPACE_HPP
