#ifndef QRITA_DETAIL_MASK_KERNEL_HPP
#define QRITA_DETAIL_MASK_KERNEL_HPP

// The persistent team kernel: each team takes rows league_rank,
// league_rank + league_size, ... and runs the stages on each.
//
// Per row:
//   1. sigma_truncate: threshold from a sample, one read of the row that
//      gathers the outliers and finds max / min / candidate count.
//   2. pivot_search for top-k on the outliers (hit) or the row (miss), then
//      for top-p on the top-k survivors (or on all candidates).
//   3. resolve_ties: on a hit, one write of the row (-inf everywhere, then the
//      kept entries back from the buffer); otherwise a read + masked write.
// Memory traffic on a hit: one read and one write of the row (plus the
// 4096-entry sample), the same as a copy; more on a miss.

#include <qrita/detail/backend.hpp>
#include <qrita/detail/keys.hpp>
#include <qrita/detail/pivot_search.hpp>
#include <qrita/detail/resolve_ties.hpp>
#include <qrita/detail/sigma_truncate.hpp>
#include <qrita/detail/tables.hpp>
#include <qrita/options.hpp>

#include <cstdint>

namespace qrita {
namespace detail {

struct KernelParams {
  std::int64_t batch      = 0;
  int vocab               = 0;
  std::int64_t row_stride = 0;  // elements between consecutive rows
  std::int64_t k_stride   = 0;
  std::int64_t p_stride   = 0;
  int capacity            = 0;  // candidate buffer entries per team
  bool truncation         = true;
  bool exact_ties         = true;
  bool binary_search      = false;
  float weight_scale      = 0;  // 2^F, see weight_fraction_bits
};

// Smallest integer weight >= p * S (at least 1): the top-p target.
KOKKOS_INLINE_FUNCTION weight_type mass_target(float p, double total) {
  double t = double(p) * total;
  // ceil without <cmath>: weights stay below 2^62, so the cast is exact
  // enough and safe.
  weight_type w = static_cast<weight_type>(t);
  if (double(w) < t) w += 1;
  return w < 1 ? weight_type(1) : w;
}

template <class ExecutionSpace>
struct MaskKernel {
  using policy_type   = Kokkos::TeamPolicy<
      ExecutionSpace, typename BackendDefaults<ExecutionSpace>::launch_bounds>;
  using member_type   = typename policy_type::member_type;
  using scratch_space = typename ExecutionSpace::scratch_memory_space;
  using float_scratch  = Kokkos::View<float*, scratch_space, Kokkos::MemoryUnmanaged>;
  using int_scratch    = Kokkos::View<int*, scratch_space, Kokkos::MemoryUnmanaged>;

  float* logits;
  const int* k;      // nullptr: no top-k on any row
  const float* p;    // nullptr: no top-p on any row
  RowStats* stats;   // nullptr: no diagnostics
  KernelParams prm;
  SigmaTables tables;

  // Scratch per team: the candidate values and their columns, and the
  // gather counter.
  static std::size_t scratch_bytes(int capacity) {
    return float_scratch::shmem_size(std::size_t(capacity)) +
           int_scratch::shmem_size(std::size_t(capacity)) + int_scratch::shmem_size(1);
  }
  static constexpr std::size_t bytes_per_candidate = sizeof(float) + sizeof(int);

  KOKKOS_INLINE_FUNCTION void operator()(member_type const& team) const {
    float_scratch buffer(team.team_scratch(0), std::size_t(prm.capacity));
    int_scratch columns(team.team_scratch(0), std::size_t(prm.capacity));
    int_scratch counter(team.team_scratch(0), 1);
    for (std::int64_t r = team.league_rank(); r < prm.batch;
         r += team.league_size()) {
      mask_row(team, r, buffer.data(), columns.data(), counter.data());
    }
  }

  template <class Measure>
  KOKKOS_INLINE_FUNCTION Boundary search(member_type const& team,
                                         Source const& src,
                                         Measure const& measure, key_type floor,
                                         std::uint32_t boundary_count,
                                         weight_type target, key_type lo,
                                         key_type hi) const {
    if (prm.binary_search)
      return pivot_search<1>(team, src, measure, floor, boundary_count, target,
                             lo, hi);
    return pivot_search<3>(team, src, measure, floor, boundary_count, target,
                           lo, hi);
  }

  // delta of the truncation threshold t = mu + delta * sigma.
  //
  // Top-k: the paper's quantile for k / V less its margin. Top-p alone: the
  // paper's delta_p less its margin; on a Gaussian bulk that gathers about a
  // fifth of the row, more than the buffer holds at LLM vocabularies, and an
  // overflowing row is searched whole. So t is raised, where needed, to the
  // bulk quantile that leaves about half the buffer above it: real logits
  // hold nearly all their softmax mass in a few hundred outliers, which such
  // a t keeps (the hit test decides; a miss costs time, never exactness).
  // Top-k's t is raised the same way, but never above its margin-free
  // quantile.
  KOKKOS_INLINE_FUNCTION float truncation_delta(bool topk, int kr,
                                                float pr) const {
    const double vocab = double(prm.vocab);
    const float fit    = tables.topk[table_index(0.5 * prm.capacity / vocab)];
    if (topk) {
      const float dk = tables.topk[table_index(double(kr) / vocab)];
      const float lo = with_margin(dk);
      const float up = fit < dk ? fit : dk;
      return lo > up ? lo : up;
    }
    const float dp = with_margin(tables.topp[table_index(double(pr))]);
    return dp > fit ? dp : fit;
  }

  KOKKOS_INLINE_FUNCTION void mask_row(member_type const& team, std::int64_t r,
                                       float* buffer, int* columns,
                                       int* counter) const {
    float* row      = logits + r * prm.row_stride;
    const int vocab = prm.vocab;

    int kr    = k ? k[r * prm.k_stride] : 0;
    float pr  = p ? p[r * prm.p_stride] : 1.0f;
    bool topk = kr > 0 && kr < vocab;
    bool topp = pr < 1.0f;  // NaN: off
    if (topp && !(pr > 0.0f)) {
      // p <= 0 keeps exactly one entry: the top one, i.e. top-1.
      topp = false;
      kr   = 1;
      topk = 1 < vocab;
    }
    RowStats st{RowPath::off, RowPath::off, 0, 0, 0};
    if (!topk && !topp) {
      record(team, r, st);
      return;
    }

    // Stage 1: threshold, then one read that gathers the outliers.
    const float nan = bits_as_float(0x7FC00000u);
    float t         = nan;
    if (prm.truncation) {
      t = sample_threshold(team, row, vocab, truncation_delta(topk, kr, pr));
    }
    const bool have_t    = t == t;
    const bool want_tail = have_t && topp && !topk;
    // The counter and the buffer are reused row after row: no thread may
    // reset or refill them while another still reads the previous row's.
    team.team_barrier();
    Kokkos::single(Kokkos::PerTeam(team), [&]() { *counter = 0; });
    team.team_barrier();
    const RowScan scan = scan_row(team, row, vocab, t, buffer, columns,
                                  prm.capacity, counter, want_tail,
                                  prm.weight_scale);
    team.team_barrier();
    const int outliers  = *counter;
    const bool gathered = have_t && outliers <= prm.capacity;
    st.outliers         = outliers;

    if (scan.candidates == 0) {  // all -inf / NaN: the row stays as it is
      if (topk) st.topk_path = RowPath::trivial;
      if (topp) st.topp_path = RowPath::trivial;
      record(team, r, st);
      return;
    }
    const auto miss_path = [&](bool hit) {
      return hit ? RowPath::truncated
                 : (!have_t ? RowPath::full
                            : (outliers > prm.capacity ? RowPath::overflow
                                                       : RowPath::miss));
    };

    // The kept set so far: keys above `cut`, plus `keep` of the `group`
    // entries of the row whose key is `cut`. Start: every candidate.
    Boundary cut{scan.min_key, scan.candidates, scan.candidates, 0};
    Source topk_src{row, vocab};
    // Whether the kept set was searched in the buffer (so lies in it).
    bool from_buffer = false;

    // Stage 2a: top-k.
    if (topk && scan.candidates > std::uint32_t(kr)) {
      const bool hit = gathered && outliers >= kr;
      st.topk_path   = miss_path(hit);
      topk_src       = hit ? Source{buffer, outliers} : Source{row, vocab};
      from_buffer    = hit;
      const key_type lo = hit ? order_key(t) : key_type(scan.min_key - 1);
      cut = search(team, topk_src, CountMeasure{}, neg_inf_key, 0,
                   weight_type(kr), lo, scan.max_key);
      st.topk_passes = std::int16_t(cut.passes);
    } else if (topk) {
      st.topk_path = RowPath::trivial;  // no more candidates than k
      topk         = false;
    }

    // Stage 2b: top-p on the survivors, in fixed-point probability.
    if (topp) {
      const MassMeasure mass{key_value(scan.max_key), prm.weight_scale};
      if (topk) {
        // Survivors: keys above the top-k cut plus `cut.keep` copies of it.
        const double total =
            double(sum_above(team, topk_src, mass, cut.key) +
                   mass.unit(cut.key) * cut.keep);
        const Boundary b =
            search(team, topk_src, mass, cut.key, cut.keep,
                   mass_target(pr, total), key_type(cut.key - 1), scan.max_key);
        st.topp_path   = st.topk_path;
        st.topp_passes = std::int16_t(b.passes);
        // A boundary on the top-k cut keeps fewer of the same row group.
        cut = Boundary{b.key, b.keep, b.key == cut.key ? cut.group : b.group,
                       b.passes};
      } else {
        bool hit           = false;
        weight_type target = 0;
        if (want_tail && gathered && outliers > 0) {
          const Source head{buffer, outliers};
          const weight_type head_mass = sum_above(team, head, mass, neg_inf_key);
          // The tail was weighed relative to t; rescale it to the max.
          const double total =
              double(head_mass) +
              double(scan.tail) * exp_d(double(t) - double(mass.ref));
          target = mass_target(pr, total);
          hit    = head_mass >= target;
        }
        // Without the tail's weight (top-k turned out trivial) the gathered
        // set cannot be judged: the whole row is searched.
        st.topp_path = want_tail ? miss_path(hit) : RowPath::full;
        Source src{row, vocab};
        key_type lo = key_type(scan.min_key - 1);
        from_buffer = hit;
        if (hit) {
          src = Source{buffer, outliers};
          lo  = order_key(t);
        } else {
          target = mass_target(
              pr, double(sum_above(team, src, mass, neg_inf_key)));
        }
        cut = search(team, src, mass, neg_inf_key, 0, target, lo,
                     scan.max_key);
        st.topp_passes = std::int16_t(cut.passes);
      }
    }

    // Stage 3.
    const std::uint32_t keep = prm.exact_ties ? cut.keep : cut.group;
    if (from_buffer && (keep >= cut.group || cut.group <= max_buffer_ties))
      apply_mask_from_buffer(team, row, vocab, buffer, columns, outliers,
                             cut.key, keep, cut.group);
    else
      apply_mask(team, row, vocab, cut.key, keep, cut.group);
    record(team, r, st);
  }

  KOKKOS_INLINE_FUNCTION void record(member_type const& team, std::int64_t r,
                                     RowStats const& st) const {
    if (stats == nullptr) return;
    Kokkos::single(Kokkos::PerTeam(team), [&]() { stats[r] = st; });
  }
};

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_MASK_KERNEL_HPP
