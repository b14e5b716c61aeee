#ifndef QRITA_DETAIL_POLICY_HPP
#define QRITA_DETAIL_POLICY_HPP

// The one place where backends differ: the tuning policy. Kernels never
// test the backend; they read these numbers through the launch plan.
//
// Host backends (Serial, OpenMP, Threads, HPX) run one thread per team and
// one team per core: a row is small next to a core's cache, and threads of a
// team would only synchronise. Device backends run wide teams; the width is
// a multiple of every warp/wavefront size in use (32 on NVIDIA, 64 on AMD)
// and is clamped to what Kokkos reports as possible for the kernel.

#include <qrita/detail/compat.hpp>

#include <type_traits>

namespace qrita {
namespace detail {

// CUDA's execution space, for the one setting that is CUDA's alone.
template <class ExecutionSpace>
struct IsCuda : std::false_type {};
#if defined(KOKKOS_ENABLE_CUDA)
template <>
struct IsCuda<Kokkos::Cuda> : std::true_type {};
#endif

template <class ExecutionSpace>
struct Policy {
  static constexpr bool runs_on_host =
      Kokkos::SpaceAccessibility<ExecutionSpace,
                                 Kokkos::HostSpace>::accessible;

  // Device teams: 512 threads while the batch leaves the device half empty
  // (a row then gets more of a multiprocessor), 256 beyond, where several
  // teams per multiprocessor overlap one team's search with the others'
  // reads. Measured on an H100 (docs/PERFORMANCE.md).
  static constexpr int team_size            = runs_on_host ? 1 : 512;
  static constexpr int wide_batch_team_size = runs_on_host ? 1 : 256;

  // Device kernels are compiled for teams of up to 1024 threads with one
  // team per multiprocessor, which caps them at 64 registers a thread
  // (NVIDIA). Without a cap the kernel takes more than 80 registers on
  // sm_90 and a multiprocessor holds a single 512-thread team: too few
  // bytes in flight to keep HBM busy while a team searches.
  using launch_bounds = typename std::conditional<
      runs_on_host, Kokkos::LaunchBounds<>, Kokkos::LaunchBounds<1024, 1>>::type;

  // Candidates a team gathers on chip (level-0 scratch; the launch clamps
  // this to what the backend allows and to the vocabulary). The paper
  // measures a few hundred to a few thousand outliers per row on real models
  // at k = 50 / p = 0.9; 4096 entries (value and column: 32 KiB) leave room
  // for several teams per multiprocessor. (Kokkos' host backends allow 32
  // KiB of level-0 scratch, which leaves about 3000 after the histogram.)
  static constexpr int candidate_capacity = 4096;

  // Candidates a team may gather beyond that, in the workspace's memory
  // (the "tier"): the outliers of a row whose threshold was too low, or the
  // boundary buckets of a miss that do not fit on chip. Host memory is
  // plentiful next to a host's few teams, so hosts get a larger tier.
  static constexpr int tier_capacity = runs_on_host ? 65536 : 8192;

  // Buckets of the histogram the gathering read builds of the entries at or
  // below the threshold (counts, 4 bytes each, in team scratch).
  static constexpr int histogram_buckets = 2048;

  // Small batches: a row is split across several teams when the batch
  // leaves more than split_idle_factor teams idle per row, each team
  // taking at least split_segment entries. Hosts never split by default.
  static constexpr bool split_rows        = !runs_on_host;
  static constexpr int split_idle_factor  = 4;
  static constexpr int split_segment      = 4096;

  // 16-byte loads each thread has in flight in a whole-row pass.
  static constexpr int row_unroll = 2;

  // The sampler's unsplit kernel calls the pivot search out of line
  // (MaskKernel's OutOfLineSearch): on an H100 it is then a fifth faster.
  // CUDA only: hipcc 5.2 for gfx908 fails to compile the out-of-line
  // function ("unhandled SGPR spill to memory"), and hosts were not timed.
  // The ranked draw (draw.hpp) is out of line on the same terms.
  static constexpr bool sampler_search_out_of_line = IsCuda<ExecutionSpace>::value;

  // The sampler's and the list's second kernel (MaskKernel's Deferred)
  // finishes a deferred row in a function that is not inlined, on a copy
  // of the kernel made for that row only, so that its idle path does not
  // copy the functor into every thread's local memory (see
  // MaskKernel::finish_deferred_out_of_line). CUDA only, like the above:
  // elsewhere the row's work is inlined.
  static constexpr bool deferred_out_of_line = IsCuda<ExecutionSpace>::value;
};

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_POLICY_HPP
