// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_PERF_SORT_MASK_HPP
#define QRITA_PERF_SORT_MASK_HPP

// The baseline qrita replaces: an exact top-k / top-p mask by sorting each
// row, the way vLLM did it before Qrita. Per row, on one team:
//
//   1. keys: 64-bit composite keys, high word the bitwise inverse of the
//      value's order key (descending value; NaN as -inf; -0 == +0), low word
//      the column (ascending). Sorting them ascending gives the definition's
//      order exactly, ties by lower index, so the kept set is the
//      definition's and the answer is deterministic.
//   2. a team bitonic sort of the row's keys (Kokkos Kernels' TeamBitonicSort
//      on Kokkos 3.x, Kokkos::Experimental::sort_team on Kokkos 4 and later:
//      the same algorithm, moved into Kokkos core);
//   3. top-k: the first k candidates; top-p: softmax relative to the row's
//      maximum in double, an inclusive team scan over the sorted order, the
//      shortest prefix whose mass is >= p * total;
//   4. -inf written through the permutation for every dropped position.
//
// Its workspace is one key per entry: B x V x 8 bytes, allocated by the
// caller once (the bitonic sort pads to a power of two implicitly, without
// memory). Written from the definition in include/qrita/oracle.hpp and
// docs/SEMANTICS.md; it shares no code with qrita's kernels.

#include <Kokkos_Core.hpp>

#include <cstdint>

#if KOKKOS_VERSION >= 40000
#include <Kokkos_NestedSort.hpp>
#define QRITA_PERF_HAVE_SORT 1
#elif defined(QRITA_PERF_HAVE_KOKKOSKERNELS)
#include <KokkosKernels_Sorting.hpp>
#define QRITA_PERF_HAVE_SORT 1
#else
#define QRITA_PERF_HAVE_SORT 0
#endif

namespace qrita_perf {

#if QRITA_PERF_HAVE_SORT

// Order key of a float: unsigned order equals the definition's value order;
// NaN maps to the key of -inf, -0.0 to the key of +0.0.
KOKKOS_INLINE_FUNCTION std::uint32_t sort_order_key(float x) {
  union {
    float f;
    std::uint32_t u;
  } b{x};
  if ((b.u & 0x7FFFFFFFu) > 0x7F800000u) b.u = 0xFF800000u;  // NaN -> -inf
  if (b.u == 0x80000000u) b.u = 0u;                          // -0 -> +0
  return (b.u & 0x80000000u) ? ~b.u : (b.u | 0x80000000u);
}

KOKKOS_INLINE_FUNCTION float sort_key_value(std::uint32_t key) {
  union {
    std::uint32_t u;
    float f;
  } b{(key & 0x80000000u) ? (key & 0x7FFFFFFFu) : ~key};
  return b.f;
}

// Order key of -inf: every key above it is a candidate.
constexpr std::uint32_t sort_neg_inf_key = 0x007FFFFFu;

KOKKOS_INLINE_FUNCTION double sort_exp(double x) {
#if KOKKOS_VERSION >= 30700
  return Kokkos::exp(x);
#else
  return Kokkos::Experimental::exp(x);
#endif
}

template <class ExecutionSpace>
struct SortMask {
  using policy_type = Kokkos::TeamPolicy<ExecutionSpace>;
  using member_type = typename policy_type::member_type;
  using scratch_int =
      Kokkos::View<int*, typename ExecutionSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;

  float* logits;             // [batch][row_stride]
  std::int64_t row_stride;
  int vocab;
  std::uint64_t* keys;       // [batch][vocab]
  const int* k;              // one per row, or null
  const float* p;            // one per row, or null

  // Weight of sorted position j relative to the row's maximum `top`; +inf
  // maximum: the +inf entries share the mass, finite entries get none.
  KOKKOS_INLINE_FUNCTION static double weight(std::uint64_t key, float top, bool inf_top) {
    const float x = sort_key_value(~std::uint32_t(key >> 32));
    if (inf_top) return x == top ? 1.0 : 0.0;
    return sort_exp(double(x) - double(top));
  }

  KOKKOS_INLINE_FUNCTION void operator()(member_type const& team) const {
    const std::int64_t r = team.league_rank();
    float* row           = logits + r * row_stride;
    std::uint64_t* key   = keys + r * std::int64_t(vocab);
    const int n_all      = vocab;

    int kr    = k ? k[r] : 0;
    float pr  = p ? p[r] : 1.0f;
    bool topk = kr > 0 && kr < n_all;
    bool topp = pr < 1.0f;  // NaN: off
    if (topp && !(pr > 0.0f)) {  // p <= 0: exactly the top entry
      topp = false;
      kr   = 1;
      topk = 1 < n_all;
    }
    if (!topk && !topp) return;

    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n_all), [&](int i) {
      key[i] = (std::uint64_t(~sort_order_key(row[i])) << 32) | std::uint64_t(std::uint32_t(i));
    });
    team.team_barrier();
#if KOKKOS_VERSION >= 40000
    Kokkos::Experimental::sort_team(
        team, Kokkos::View<std::uint64_t*, typename ExecutionSpace::memory_space,
                           Kokkos::MemoryUnmanaged>(key, std::size_t(n_all)));
#elif KOKKOS_VERSION >= 30500
    KokkosKernels::TeamBitonicSort<int, std::uint64_t, member_type>(key, n_all, team);
#else
    KokkosKernels::Impl::TeamBitonicSort<int, std::uint64_t, member_type>(key, n_all, team);
#endif
    team.team_barrier();

    // Candidates come first in the sorted order: binary search for their
    // count (every thread, the same answer).
    int lo = 0, hi = n_all;
    while (lo < hi) {
      const int mid = lo + (hi - lo) / 2;
      if (~std::uint32_t(key[mid] >> 32) > sort_neg_inf_key)
        lo = mid + 1;
      else
        hi = mid;
    }
    const int candidates = lo;
    if (candidates == 0) return;  // no candidate: the row is left as it is
    const int survivors = topk && kr < candidates ? kr : candidates;
    int kept            = survivors;

    if (topp) {
      const float top    = sort_key_value(~std::uint32_t(key[0] >> 32));
      const bool inf_top = top > 3.402823466e38f;
      double total       = 0.0;
      Kokkos::parallel_reduce(
          Kokkos::TeamThreadRange(team, survivors),
          [&](int j, double& sum) { sum += weight(key[j], top, inf_top); }, total);
      // Kokkos 3.x GPU team reductions return before every thread has read
      // the result; the scan below must not overwrite it (see
      // include/qrita/detail/compat.hpp).
      team.team_barrier();
      const double threshold = double(pr) * total;
      scratch_int cut(team.team_scratch(0), 1);
      Kokkos::single(Kokkos::PerTeam(team), [&]() { cut(0) = survivors; });
      team.team_barrier();
      // The one position whose exclusive prefix is below the threshold and
      // whose inclusive prefix reaches it ends the kept prefix. If rounding
      // leaves every prefix below it, all survivors stay.
      Kokkos::parallel_scan(Kokkos::TeamThreadRange(team, survivors),
                            [&](int j, double& prefix, bool final) {
                              const double w = weight(key[j], top, inf_top);
                              if (final && prefix < threshold && prefix + w >= threshold)
                                cut(0) = j + 1;
                              prefix += w;
                            });
      team.team_barrier();
      kept = cut(0);
      team.team_barrier();
    }

    const float neg_inf = sort_key_value(sort_neg_inf_key);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, kept, n_all),
                         [&](int j) { row[std::uint32_t(key[j])] = neg_inf; });
  }
};

// Team size for the sort: the backend's width on devices, one thread per
// team on host backends (like qrita's own default). A power of two: Kokkos
// 3.x's GPU team scan needs one.
template <class ExecutionSpace>
int sort_team_size(ExecutionSpace const& space) {
  if (Kokkos::SpaceAccessibility<ExecutionSpace, Kokkos::HostSpace>::accessible) return 1;
  SortMask<ExecutionSpace> probe{};
  typename SortMask<ExecutionSpace>::policy_type policy(space, 1, 1);
  policy.set_scratch_size(0, Kokkos::PerTeam(64));
  int limit = policy.team_size_max(probe, Kokkos::ParallelForTag());
  if (limit > 512) limit = 512;
  int size = 1;
  while (size * 2 <= limit) size *= 2;
  return size;
}

// Masks logits [batch][vocab] (rows row_stride apart) in place; keys must
// hold batch * vocab entries. Asynchronous on `space`.
template <class ExecutionSpace>
void sort_mask(ExecutionSpace const& space, float* logits, std::int64_t batch, int vocab,
               std::int64_t row_stride, std::uint64_t* keys, const int* k, const float* p,
               int team_size) {
  if (batch == 0 || vocab == 0) return;
  SortMask<ExecutionSpace> kernel{logits, row_stride, vocab, keys, k, p};
  typename SortMask<ExecutionSpace>::policy_type policy(space, int(batch), team_size);
  policy.set_scratch_size(0, Kokkos::PerTeam(64));
  Kokkos::parallel_for("qrita_perf::sort_mask", policy, kernel);
}

#endif  // QRITA_PERF_HAVE_SORT

}  // namespace qrita_perf

#endif  // QRITA_PERF_SORT_MASK_HPP
