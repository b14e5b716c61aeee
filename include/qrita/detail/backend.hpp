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
  static constexpr int team_size = runs_on_host ? 1 : 512;
  // Entries a team gathers in level-0 scratch (before clamping to the
  // backend's scratch limit). The paper measures a few hundred to a few
  // thousand outliers per row on real models at k = 50 / p = 0.9.
  static constexpr int candidate_capacity = 8192;
};

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_BACKEND_HPP
