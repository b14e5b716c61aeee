// SPDX-License-Identifier: Apache-2.0
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

#include <cstddef>
#include <cstdint>
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

// What one multiprocessor of a device holds, for counting the teams that
// run at once (Policy::split_resident_teams). Zeros: not known.
struct MultiprocessorLimits {
  std::int64_t multiprocessors = 0;
  std::int64_t threads         = 0;  // per multiprocessor
  std::int64_t shared_bytes    = 0;  // per multiprocessor
  std::int64_t reserved_shared_bytes = 0;  // per block, the driver's
};

// The device's, asked of the CUDA runtime for the space's device (a host
// query, no stream operation, so a call stays capturable in a CUDA graph);
// not known elsewhere.
template <class ExecutionSpace>
MultiprocessorLimits multiprocessor_limits(ExecutionSpace const&) {
  return {};
}
#if defined(KOKKOS_ENABLE_CUDA)
inline MultiprocessorLimits multiprocessor_limits(Kokkos::Cuda const& space) {
  const int device = space.cuda_device();
  int count = 0, threads = 0, shared = 0, reserved = 0;
  MultiprocessorLimits out;
  if (cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&threads, cudaDevAttrMaxThreadsPerMultiProcessor, device) !=
          cudaSuccess ||
      cudaDeviceGetAttribute(&shared, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device) !=
          cudaSuccess)
    return out;
#if defined(CUDART_VERSION) && CUDART_VERSION >= 11000
  if (cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, device) !=
      cudaSuccess)
    reserved = 0;
#endif
  out.multiprocessors       = count;
  out.threads               = threads;
  out.shared_bytes          = shared;
  out.reserved_shared_bytes = reserved;
  return out;
}
#endif

// Teams of `team_threads` threads and `scratch_bytes` of team scratch that
// one multiprocessor of `mp` runs at once, at most `bound` (what the
// kernel's launch bounds leave registers for): fewer where its threads or
// its shared memory hold fewer. A team's shared memory is its scratch,
// Kokkos' 8 bytes a thread plus 16 for team reductions, and the driver's
// reserve. 0 where `mp` is not known.
inline std::int64_t resident_teams_per_multiprocessor(MultiprocessorLimits const& mp,
                                                      int team_threads,
                                                      std::size_t scratch_bytes,
                                                      int bound) {
  if (mp.multiprocessors <= 0 || mp.threads <= 0 || mp.shared_bytes <= 0 ||
      team_threads <= 0)
    return 0;
  std::int64_t per = bound;
  const std::int64_t by_threads = mp.threads / team_threads;
  if (by_threads < per) per = by_threads;
  const std::int64_t team_shared = std::int64_t(scratch_bytes) +
                                   std::int64_t(sizeof(double)) * (team_threads + 2) +
                                   mp.reserved_shared_bytes;
  const std::int64_t by_shared = mp.shared_bytes / team_shared;
  if (by_shared < per) per = by_shared;
  return per < 1 ? 1 : per;
}

// The row decision's tuning, the same on every backend; every Policy
// holds it. Each number trades a little work for fewer misses of a guess
// that never costs exactness (a miss costs another read or search).
struct Tuning {
  // Sigma-truncation's sample (sample_threshold, sigma_truncate.hpp):
  // sample_segments runs of segment_length entries spread over the row;
  // runs keep reads coalesced, the spread keeps an ordered vocabulary's hot
  // head from biasing mu and sigma.
  static constexpr int sample_segments = 32;
  static constexpr int segment_length  = 128;
  // Sample entries a thread loads before it adds any: reads in flight.
  static constexpr int sample_loads = 4;
  // The paper's margin: the table's delta lowered by 20% of its magnitude.
  static constexpr float sigma_margin = 0.2f;
  // Share of the on-chip candidate buffer the threshold aims to fill: half
  // leaves room for a row whose tail is heavier than the sample's.
  static constexpr double threshold_fill = 0.5;
  // The top-k histogram's low end (histogram_low, row/threshold.hpp): the
  // bulk quantile that leaves histogram_entries_per_k * k +
  // histogram_entries_extra entries above, so that a row whose k-th entry
  // falls below t still finds it in the histogram, ...
  static constexpr int histogram_entries_per_k = 8;
  static constexpr int histogram_entries_extra = 2048;
  // ... and at least histogram_depth sigmas below t: the table's bins are
  // half a percent wide, so without it small k put the low end on t.
  static constexpr double histogram_depth = 0.5;
  // Kept entries a ranked draw takes (draw_ranked, draw.hpp): m x m
  // comparisons on one team, cheaper than a search below this.
  static constexpr int rank_draw_limit = 128;
  // Teams that search a split deferred row's ahead set while its last team
  // cuts the boundary's set (SplitKernel::ahead_helpers): the sampler's
  // (which also bounds the kept weight) and the list's.
  static constexpr int sampler_ahead_helpers = 2;
  static constexpr int list_ahead_helpers    = 1;
};

template <class ExecutionSpace>
struct Policy : Tuning {
  static constexpr bool runs_on_host =
      Kokkos::SpaceAccessibility<ExecutionSpace,
                                 Kokkos::HostSpace>::accessible;

  // Device teams: 512 threads while the batch leaves the device half empty
  // (a row then gets more of a multiprocessor), 256 beyond, where several
  // teams per multiprocessor overlap one team's search with the others'
  // reads (docs/DESIGN.md, "Backends and launch bounds").
  static constexpr int team_size            = runs_on_host ? 1 : 512;
  static constexpr int wide_batch_team_size = runs_on_host ? 1 : 256;

  // Device kernels are compiled for teams of up to 1024 threads with one
  // team per multiprocessor, which caps them at 64 registers a thread
  // (NVIDIA). Without a cap the kernel takes more than 80 registers on
  // sm_90 and a multiprocessor holds a single 512-thread team: too few
  // bytes in flight to keep HBM busy while a team searches. Fewer teams
  // with more registers, or more with fewer, keep fewer bytes in flight or
  // spill more (docs/DESIGN.md, "Backends and launch bounds").
  using launch_bounds = typename std::conditional<
      runs_on_host, Kokkos::LaunchBounds<>, Kokkos::LaunchBounds<1024, 1>>::type;

  // Unsplit launches whose teams are alone on their multiprocessors
  // (LaunchArrangement::one_team_per_multiprocessor: a batch no larger than the multiprocessors,
  // one team_size team per row), on CUDA: one team of up to team_size
  // threads per multiprocessor, which leaves 128 registers a thread
  // (ptxas takes 126-128) against the cap's 64: such a team is alone on
  // its multiprocessor anyway, so the cap would only cost spills.
  // Elsewhere launch_bounds.
  static constexpr bool one_team_bounds_own = IsCuda<ExecutionSpace>::value;
  using one_team_launch_bounds =
      typename std::conditional<one_team_bounds_own, Kokkos::LaunchBounds<unsigned(team_size), 1>,
                                launch_bounds>::type;

  // The split launches (split_kernel.hpp, small batches) on CUDA: teams of
  // wide_batch_team_size = 256 threads, three per multiprocessor, which
  // leaves 85 registers a thread (ptxas takes 80) against the cap's 64. A
  // split row's deciding team runs a long chain of dependent steps alone;
  // with fewer spills it is shorter (docs/DESIGN.md, "Small batches").
  // Elsewhere launch_bounds.
  static constexpr bool split_bounds_own = IsCuda<ExecutionSpace>::value;
  // Split teams per multiprocessor under split_launch_bounds (CUDA), and the
  // threads a multiprocessor holds (NVIDIA: 2048; Kokkos' concurrency counts
  // them). split_resident_teams derives the teams that run at once from both.
  static constexpr int split_teams_per_multiprocessor = 3;
  static constexpr int threads_per_multiprocessor     = 2048;
  using split_launch_bounds = typename std::conditional<
      split_bounds_own,
      Kokkos::LaunchBounds<unsigned(wide_batch_team_size),
                           unsigned(split_teams_per_multiprocessor)>,
      launch_bounds>::type;
  // Split launches whose teams are alone on their multiprocessors
  // (LaunchArrangement::split_one_team_per_multiprocessor: the batch's split teams no more than the
  // multiprocessors, e.g. batch 1), on CUDA: one team of
  // wide_batch_team_size threads per multiprocessor, which leaves up to
  // 255 registers a thread (ptxas takes 130-138 on split_scan). The
  // deciding team's chain and every team's sample and read spill less.
  // Elsewhere split_launch_bounds.
  using split_one_team_launch_bounds =
      typename std::conditional<split_bounds_own,
                                Kokkos::LaunchBounds<unsigned(wide_batch_team_size), 1>,
                                split_launch_bounds>::type;

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

  // The split teams of `team_threads` threads, each with `scratch_bytes` of
  // team scratch, that run at once. CUDA, with the device's limits (`mp`):
  // per multiprocessor split_teams_per_multiprocessor (what
  // split_launch_bounds leaves registers for), or fewer where the
  // multiprocessor's threads or shared memory hold fewer
  // (resident_teams_per_multiprocessor). A 132-multiprocessor device with
  // 2048 threads and 228 KiB each: 3 (132 x 3 = 396); one with 1536
  // threads and 100 KiB: 2 of about 44 KiB. CUDA without the limits: 3 of
  // every threads_per_multiprocessor of Kokkos' concurrency. Other
  // devices: half the concurrency (launch_bounds' 64 registers leave 1024
  // threads of 2048); hosts all. Teams beyond these queue for a second
  // wave.
  static std::int64_t split_resident_teams(std::int64_t concurrency, int team_threads,
                                           std::size_t scratch_bytes,
                                           MultiprocessorLimits const& mp) {
    if (runs_on_host) return concurrency / team_threads;
    if (!split_bounds_own) return concurrency / 2 / team_threads;
    const std::int64_t per = resident_teams_per_multiprocessor(
        mp, team_threads, scratch_bytes, split_teams_per_multiprocessor);
    if (per > 0) return mp.multiprocessors * per;
    return concurrency / threads_per_multiprocessor * split_teams_per_multiprocessor *
           wide_batch_team_size / team_threads;
  }

  // Small batches: a row is split across several teams when the teams
  // that run at once (split_resident_teams) give each row at least
  // split_min_teams of them; the row then takes all its share, so the split
  // teams fill one wave (in two, each team's fixed work, its sample of the
  // row and its histogram, delays the second), each team taking at least
  // split_segment entries. Past a few teams per row, one team per row
  // reads as fast and saves the split's extra launches (docs/DESIGN.md,
  // "Small batches"). CUDA, with 3 teams per multiprocessor (396 on a
  // 132-multiprocessor device) and at least 6 teams a row: a row is split
  // up to batch 66. Elsewhere 8. Hosts never split by default.
  static constexpr bool split_rows        = !runs_on_host;
  static constexpr int split_min_teams    = split_bounds_own ? 6 : 8;
  static constexpr int split_segment      = 4096;

  // 16-byte loads each thread has in flight in a whole-row pass.
  static constexpr int row_unroll = 2;

  // The sampler's unsplit kernel calls the pivot search out of line
  // (RowCall's OutOfLineSearch): one copy of the search instead of a
  // dozen inlined ones leaves that kernel fewer spills (docs/DESIGN.md,
  // "Code shape on GPUs"). CUDA only: hipcc 5.2 for gfx908 fails to
  // compile the out-of-line function ("unhandled SGPR spill to memory").
  // The ranked draw (draw.hpp) is out of line on the same terms.
  static constexpr bool sampler_search_out_of_line = IsCuda<ExecutionSpace>::value;

  // The sampler's and the list's second kernel (RowCall's Deferred)
  // finishes a deferred row in a function that is not inlined, on a copy
  // of the kernel made for that row only, so that its idle path does not
  // copy the functor into every thread's local memory (see
  // finish_deferred_out_of_line). CUDA only, like the above:
  // elsewhere the row's work is inlined.
  static constexpr bool deferred_out_of_line = IsCuda<ExecutionSpace>::value;

  // A split sampler or list call with p values runs split_deferred_finish's
  // work inside split_gather where every split team is resident at once
  // (no LaunchArrangement::split_plans_apart): a deferred row's teams wait there
  // for its last team's cut instead of for another launch
  // (SplitKernel::deferred_end). CUDA only: the wait needs the teams to
  // run side by side, which a host backend running teams one after another
  // on fewer threads does not do, and no other device backend promises.
  static constexpr bool split_fused_finish = IsCuda<ExecutionSpace>::value;
};

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_POLICY_HPP
