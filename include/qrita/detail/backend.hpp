#ifndef QRITA_DETAIL_BACKEND_HPP
#define QRITA_DETAIL_BACKEND_HPP

// The one place where backends differ: launch defaults. Kernels never test
// the backend; they read these numbers through the launch configuration.
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

template <class ExecutionSpace>
struct BackendDefaults {
  static constexpr bool runs_on_host =
      Kokkos::SpaceAccessibility<ExecutionSpace,
                                 Kokkos::HostSpace>::accessible;
  // Device teams: 512 threads while the batch leaves the device half empty
  // (a row then gets more of a multiprocessor), 256 beyond, where four
  // teams per multiprocessor overlap one team's search with the others'
  // reads. Measured on an H100 (docs/PERFORMANCE.md): at batch 1024, 256
  // threads are 8-14% faster than 512; at batch 1, 512 are 2-30% faster
  // than 256 or 1024.
  static constexpr int team_size = runs_on_host ? 1 : 512;
  static constexpr int wide_batch_team_size = runs_on_host ? 1 : 256;
  // Device kernels are compiled for teams of up to 1024 threads with one
  // team per multiprocessor, which caps them at 64 registers a thread
  // (NVIDIA; on AMD, 1024 threads is what the kernel must allow). Without a
  // cap the mask kernel takes 83 registers on sm_90, and a multiprocessor
  // then holds a single team of 512: one row in flight per SM, too few
  // bytes in flight to keep HBM busy while a team searches.
  using launch_bounds = typename std::conditional<
      runs_on_host, Kokkos::LaunchBounds<>, Kokkos::LaunchBounds<1024, 1>>::type;
  // Entries a team gathers in level-0 scratch (before clamping to the
  // backend's scratch limit). The paper measures a few hundred to a few
  // thousand outliers per row on real models at k = 50 / p = 0.9.
  // 4096 entries (value and column: 32 KiB) leave room for several teams
  // per multiprocessor.
  static constexpr int candidate_capacity = 4096;
};

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_BACKEND_HPP
