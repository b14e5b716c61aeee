// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_DETAIL_MASK_KERNEL_HPP
#define QRITA_DETAIL_MASK_KERNEL_HPP

// The persistent team kernel: each team takes rows league_rank,
// league_rank + league_size, ... and decides each row in a few named steps
// (mask_row). Paths, by what holds the boundary of the kept set:
//
//   hit       the outliers above t, gathered by the first read: one read and
//             one write of the row (the write does not read).
//   buckets   a truncation miss (too few outliers, or too little mass): the
//             histogram of the first read names the boundary buckets; a
//             second read masks everything outside them and gathers them.
//             Read; read + write.
//   flat      every candidate equal: read; read + write.
//   full      sigma-truncation off (the paper's ablation), no threshold, or
//             a boundary set too large for the candidate tiers: the pivot
//             search over the whole row (at most 17 reads), then a masked
//             read + write.
//
// docs/DESIGN.md gives the reasoning and the pass counts.

#include <qrita/detail/boundary_buckets.hpp>
#include <qrita/detail/candidates.hpp>
#include <qrita/detail/draw.hpp>
#include <qrita/detail/histogram.hpp>
#include <qrita/detail/keys.hpp>
#include <qrita/detail/philox.hpp>
#include <qrita/detail/pivot_search.hpp>
#include <qrita/detail/policy.hpp>
#include <qrita/detail/resolve_ties.hpp>
#include <qrita/detail/row_access.hpp>
#include <qrita/detail/sigma_truncate.hpp>
#include <qrita/detail/tables.hpp>
#include <qrita/options.hpp>

#include <climits>
#include <cstddef>
#include <cstdint>

namespace qrita {
namespace detail {

// What a call computes per row.
enum class Mode : std::int8_t {
  mask,        // sample_mask: the kept set, written in place
  sample,      // sample_tokens: one token drawn from the kept set
  candidates   // candidate_list: the kept set's head, in order
};

// The per-row inputs and outputs of a call (nullptr: absent), with their
// strides in elements.
struct RowIO {
  const int* k              = nullptr;
  std::int64_t k_stride     = 0;
  const float* p            = nullptr;
  std::int64_t p_stride     = 0;
  const float* min_p        = nullptr;
  std::int64_t min_p_stride = 0;
  const float* temperature  = nullptr;
  std::int64_t temperature_stride = 0;
  RowStats* stats           = nullptr;
  std::int64_t stats_stride = 0;
  // sample_tokens
  const std::uint64_t* seeds   = nullptr;
  std::int64_t seeds_stride    = 0;
  const std::uint64_t* offsets = nullptr;
  std::int64_t offsets_stride  = 0;
  int* tokens                  = nullptr;
  std::int64_t tokens_stride   = 0;
  // candidate_list: [row][slot] at row * *_row + slot * *_slot
  int* ids                  = nullptr;
  std::int64_t ids_row = 0, ids_slot = 0;
  float* probs              = nullptr;
  std::int64_t probs_row = 0, probs_slot = 0;
  float* logprobs           = nullptr;
  std::int64_t logprobs_row = 0, logprobs_slot = 0;
  int* counts               = nullptr;
  std::int64_t counts_stride = 0;
  int list_size             = 0;  // C
};

struct KernelParams {
  std::int64_t batch        = 0;
  int vocab                 = 0;
  std::int64_t row_stride   = 0;  // elements between consecutive rows
  int capacity              = 0;  // on-chip candidates per team
  int tier_capacity         = 0;  // device-memory candidates per team
  int buckets               = 0;  // histogram buckets (0: no histogram)
  bool truncation           = true;
  bool exact_ties           = true;
  bool binary_search        = false;
  float weight_scale        = 0;  // 2^F, see weight_fraction_bits
  float* tier_values        = nullptr;  // tier_capacity per team, by league rank
  int* tier_columns         = nullptr;
  // The sampler's and the list's deferred rows (nullptr: none): row r's
  // record is the deferred_stride bytes below deferred_end - r *
  // deferred_stride, at the workspace's end, its last byte the row's flag
  // (see deferred_flag and DeferredRow).
  std::uint8_t* deferred_end = nullptr;
  std::int64_t deferred_stride = 1;
  // The unsplit first kernel defers every top-p miss it would finish with
  // a second read, not only those past the tiers (plan_buckets): a row
  // read twice there kept its team running long after the others, the
  // whole launch waiting on it.
  bool defer_misses = false;
};

// Smallest integer weight >= p * S (at least 1): the top-p target.
KOKKOS_INLINE_FUNCTION weight_type mass_target(float p, double total) {
  const weight_type w = weight_ceil(double(p) * total);
  return w < 1 ? weight_type(1) : w;
}

// A row's filters after the definition's special cases.
struct Filters {
  int k      = 0;
  float p    = 1.0f;
  bool topk  = false;
  bool topp  = false;
  bool tail  = false;  // the first read weighed the entries at or below t
  bool minp  = false;  // min-p not yet resolved into k (see apply_min_p)
  bool draw  = false;  // sample_tokens on a row without a filter: top-p's
                       // search finds the drawn entry (see decide_after_scan)
  bool list_all = false;  // candidate_list on a row without a filter
  float min_p       = 0.0f;
  float temperature = 1.0f;
  float inv_t       = 1.0f;  // 1 / temperature; 0 at +inf
  std::uint64_t u   = 0;     // the draw's uniform 64 bits
  KOKKOS_INLINE_FUNCTION bool any() const { return topk || topp || minp; }
  // Whether the row is decided at all (a list of a row without a filter
  // whose C covers the row is: every candidate).
  KOKKOS_INLINE_FUNCTION bool work() const { return any() || list_all; }
};

// How the decided mask reaches the row.
enum class Write : std::int8_t {
  none,      // the row stays as it is
  from_set,  // every kept entry is in the gathered set: write-only pass
  gathered,  // the second read masked the rest: -inf over the set's losers
  row        // a masked read + write of the row
};

// The decision: keys above `cut.key` are kept, and `cut.keep` of the
// `cut.group` entries with that key (lowest columns first).
struct Decision {
  Boundary cut{0, 0, 0, 0};
  Write write = Write::none;
  int set_size = 0;    // gathered entries the write uses
  bool drawn = false;  // cut's last kept entry is the drawn token
  // The sampler's cut is the top-p search's on the set alone (no floor,
  // no copies, the row's mass): cut_below is the set's weight above
  // cut.key, which the search gave, and the kept weight is known without
  // a pass (kept_mass). Never set for the mask or the list.
  bool searched_mass = false;
  // The sampler and the list on a top-p survivor set larger than the
  // tiers: the cut was searched on the boundary's buckets alone, which the
  // set holds, and the kept entries above them are known by their exact
  // weight and count (see draw_partial and list_partial).
  bool partial              = false;
  weight_type above_mass    = 0;  // kept entries above the set's buckets
  weight_type cut_below     = 0;  // see searched_mass
  std::uint32_t above_count = 0;
  std::uint32_t outliers    = 0;  // the first read's outliers (above t)
  double head               = 0;  // and their exact weight
};

// The buckets a miss gathers, and the entries above them.
struct BucketPlan {
  BucketRange range;
  std::uint32_t above = 0;
  bool partial = false;        // see Decision::partial
  std::uint32_t inside = 0;    // entries in range (where above is set)
  std::uint32_t outliers = 0;  // (for a partial decision: the first
  double head  = 0;            // read's outliers and HeadMass, which the
  double total = 0;            // split path's deferred launch plans from)
};

// The outliers' softmax mass, for a top-p-only row (see try_outliers).
struct HeadMass {
  double head  = 0;  // exact fixed-point weight of the outliers
  double total = 0;  // head + the tail weighed by the first read
  bool known   = false;
};

// What the first kernel knows of a row it defers, after its first read
// and the decisions that read allows (MaskKernel::defer): the second
// kernel starts from here instead of reading the row again. Stored in the
// row's record at the workspace's end, followed by the first read's
// histogram (buckets + 1 counts) and, in the record's last byte, the flag.
struct DeferredRow {
  Filters f;
  BucketMap map;
  RowScan scan;
  HeadMass head;
  std::uint32_t outliers = 0;
  int second_counter     = 0;  // the list buckets' set (list_with_cut)
};

// Bytes of a row's deferral record: the flag alone without a histogram (no
// row is deferred then), else DeferredRow, the histogram and the flag, in
// a multiple of 16 bytes so that every record is aligned as the first.
constexpr std::size_t deferred_header_bytes = (sizeof(DeferredRow) + 15) / 16 * 16;
constexpr std::size_t deferred_record_bytes(int buckets) {
  return buckets > 1 ? (deferred_header_bytes +
                        std::size_t(buckets + 1) * sizeof(std::uint32_t) + 1 + 15) /
                           16 * 16
                     : 1;
}

// One kernel per execution space, logit type and mode: the sampler's and
// the list's steps are not compiled into the mask's kernel (whose row
// passes are the hot loops of every call).
//
// OutOfLineSearch: the pivot search is called out of line instead of
// inlined at each call site (see search(); launch.hpp sets it for the
// sampler's unsplit kernel on CUDA).
//
// Deferred: the sampler's and the list's second kernel, which takes only
// the rows the first one deferred: top-p survivor sets larger than the
// candidate tiers, from the first kernel's record of its first read
// (DeferredRow), finished by a read of the boundary's buckets and one of
// the draw's or the list's (draw_partial, list_partial; one read for both
// where the list's fit beside the boundary's: list_with_cut).
// That code lives in its own kernel so that it costs the common rows only
// that kernel's idle launch: compiled into the first kernel, it would
// weigh on every other sampler and list row (registers, code size;
// docs/DESIGN.md, "Deferred rows").
template <class ExecutionSpace, class T = float, Mode M = Mode::mask,
          bool OutOfLineSearch = false, bool Deferred = false>
struct MaskKernel {
  static_assert(!Deferred || M != Mode::mask,
                "qrita: only the sampler and the list defer rows");
  using policy_type = Kokkos::TeamPolicy<
      ExecutionSpace, typename Policy<ExecutionSpace>::launch_bounds>;
  using member_type   = typename policy_type::member_type;
  using scratch_space = typename ExecutionSpace::scratch_memory_space;
  template <class U>
  using scratch_view = Kokkos::View<U*, scratch_space, Kokkos::MemoryUnmanaged>;
  static constexpr int row_unroll = Policy<ExecutionSpace>::row_unroll;
  // Loads in flight in gather_range (pass 2, the third read): row_unroll
  // for 4-byte logits. 16-bit logits read one group at a time there: with
  // two, the unsplit bf16 and fp16 kernels grow past what nvcc inlines, and
  // an out-of-line call makes them copy their functor into every thread's
  // local memory at entry (docs/DESIGN.md, "Code shape on GPUs").
  static constexpr int gather_unroll = sizeof(T) == 4 ? row_unroll : 1;
  static constexpr int slots      = 2;  // team-shared ints: counter, result
  // What a third read (the draw's or the list's buckets) weighs (Weigh).
  static constexpr Weigh third_weigh = M == Mode::candidates ? Weigh::none : Weigh::all;
  // What a second read (the boundary's buckets) weighs: top-p's search
  // needs the exact weight above the buckets unless top-k set the range.
  KOKKOS_FORCEINLINE_FUNCTION static Weigh second_weigh(Filters const& f) {
    return f.topp && !f.topk ? Weigh::all : Weigh::none;
  }
  // Whether the top-p bucket plans (topp_range) are inlined: in the 4-byte
  // mask and sampler kernels, which have room for them and save the call.
  // Out of line in the 16-bit and list kernels: inlined, it pushes the
  // unsplit 16-bit mask and the split list kernels into a functor copy
  // (see topp_range).
  static constexpr bool inline_topp = sizeof(T) == 4 && M != Mode::candidates;

  using value_type = T;

  T* logits;  // written only by Mode::mask
  RowIO io;
  KernelParams prm;

  // The same call's kernel in another variant (OutOfLineSearch, Deferred):
  // every member above, copied. (The one place that lists them: a member
  // added above must be added here.)
  template <bool O, bool D>
  static MaskKernel from(MaskKernel<ExecutionSpace, T, M, O, D> const& k) {
    return MaskKernel{k.logits, k.io, k.prm};
  }

  // Team scratch: candidate values and columns, histogram, shared ints.
  static std::size_t scratch_bytes(int capacity, int buckets) {
    return scratch_view<float>::shmem_size(std::size_t(capacity)) +
           scratch_view<int>::shmem_size(std::size_t(capacity)) +
           scratch_view<std::uint32_t>::shmem_size(std::size_t(buckets + 1)) +
           scratch_view<int>::shmem_size(std::size_t(slots));
  }
  static constexpr std::size_t bytes_per_candidate = sizeof(float) + sizeof(int);

  struct Scratch {
    Candidates set;
    std::uint32_t* hist;  // nullptr without a histogram
    int* result;          // a team-shared int
  };

  KOKKOS_INLINE_FUNCTION void operator()(member_type const& team) const {
    scratch_view<float> values(team.team_scratch(0), std::size_t(prm.capacity));
    scratch_view<int> columns(team.team_scratch(0), std::size_t(prm.capacity));
    scratch_view<std::uint32_t> hist(team.team_scratch(0),
                                     std::size_t(prm.buckets + 1));
    scratch_view<int> shared(team.team_scratch(0), std::size_t(slots));
    const std::int64_t tier = std::int64_t(team.league_rank()) * prm.tier_capacity;
    Scratch s;
    s.set = Candidates{values.data(),
                       columns.data(),
                       prm.capacity,
                       prm.tier_capacity > 0 ? prm.tier_values + tier : nullptr,
                       prm.tier_capacity > 0 ? prm.tier_columns + tier : nullptr,
                       prm.tier_capacity,
                       shared.data()};
    s.hist   = prm.buckets > 1 ? hist.data() : nullptr;
    s.result = shared.data() + 1;
    for (std::int64_t r = team.league_rank(); r < prm.batch;
         r += team.league_size()) {
      if constexpr (Deferred) {
        if (deferred_flag(r) == 0) continue;  // the first kernel finished it
        if constexpr (Policy<ExecutionSpace>::deferred_out_of_line) {
          // The row's work runs on a copy of the kernel made here, for
          // this row only (see finish_deferred_out_of_line).
          const MaskKernel k(*this);
          k.finish_deferred_out_of_line(team, r, s);
        } else {
          finish_deferred(team, r, s);
        }
      } else {
        mask_row(team, r, s);
      }
    }
  }

  // The second kernel's work on a deferred row, from what the first read
  // left in the row's record (defer): its histogram back into the team's
  // scratch, the boundary's buckets planned and gathered (the second read
  // of mask_row's miss path), then the draw or the list. It clears the
  // row's flag.
  KOKKOS_INLINE_FUNCTION void finish_deferred(member_type const& team, std::int64_t r,
                                              Scratch const& s) const {
    T* row                = logits + r * prm.row_stride;
    const DeferredRow& dr = deferred_row(r);
    const Filters f       = dr.f;
    const BucketMap map   = dr.map;
    const RowScan scan    = dr.scan;
    const std::uint32_t* kept_hist = deferred_hist(r);
    team.team_barrier();  // the previous row's histogram is read
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, map.nb + 1),
                         [&](int b) { s.hist[b] = kept_hist[b]; });
    team.team_barrier();
    RowStats st{RowPath::off, RowPath::off, 0, 0, 0, 0, 1, 0, false};
    Decision d;
    BucketPlan plan;
    const bool planned = plan_buckets(team, f, map, scan, int(dr.outliers), dr.head, s, plan);
    bool done          = false;
    if constexpr (M == Mode::candidates)
      done = planned && plan.partial && list_with_cut(team, r, row, f, map, scan, plan, s);
    if (!done) {
      if (planned)
        second_read(team, row, f, map, scan, plan, s, d, st);
      else
        d = decide_whole_row(team, row, f, scan, st);
      finish_row(team, r, row, f, scan, map, d, s);
    }
    team.team_barrier();  // every thread has read the flag and the record
    Kokkos::single(Kokkos::PerTeam(team), [&]() { deferred_flag(r) = 0; });
  }

  // The same, not inlined, called on a copy of the kernel that operator()
  // makes for a deferred row only (CUDA: Policy::deferred_out_of_line).
  // nvcc keeps some of the row's functions out of line, and a kernel whose
  // functor (a kernel argument) has its address taken copies it whole into
  // every thread's local memory at the kernel's entry, deferred row or not
  // (docs/DESIGN.md, "Code shape on GPUs"). Here only a deferred row's team
  // pays that copy; the idle path stays a read of the flags.
  KOKKOS_FUNCTION QRITA_NOINLINE void finish_deferred_out_of_line(
      member_type const& team, std::int64_t r, Scratch const& s) const {
    finish_deferred(team, r, s);
  }

  // Row r's record (deferred_record_bytes): counted from the workspace's
  // end, so that a row's record is the same whatever the call's batch,
  // and never within the tier or split state of a call the workspace was
  // made for. Its last byte is the row's deferral flag: set by the first
  // kernel, cleared by the second, so the workspace's flags are all 0
  // between calls.
  KOKKOS_INLINE_FUNCTION std::uint8_t* deferred_record(std::int64_t r) const {
    return prm.deferred_end - (r + 1) * prm.deferred_stride;
  }
  KOKKOS_INLINE_FUNCTION std::uint8_t& deferred_flag(std::int64_t r) const {
    return deferred_record(r)[prm.deferred_stride - 1];
  }
  KOKKOS_INLINE_FUNCTION DeferredRow& deferred_row(std::int64_t r) const {
    return *reinterpret_cast<DeferredRow*>(deferred_record(r));
  }
  KOKKOS_INLINE_FUNCTION std::uint32_t* deferred_hist(std::int64_t r) const {
    return reinterpret_cast<std::uint32_t*>(deferred_record(r) + deferred_header_bytes);
  }

  // The first kernel leaves row r to the second, with what its first read
  // found (DeferredRow, the histogram): the second kernel does not read
  // the row again for them. The outliers' count and exact weight come in
  // the partial plan (plan_buckets).
  KOKKOS_INLINE_FUNCTION void defer(member_type const& team, std::int64_t r,
                                    Filters const& f, BucketMap const& map,
                                    RowScan const& scan, BucketPlan const& plan,
                                    Scratch const& s) const {
    std::uint32_t* kept_hist = deferred_hist(r);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, map.nb + 1),
                         [&](int b) { kept_hist[b] = s.hist[b]; });
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      DeferredRow& dr = deferred_row(r);
      dr.f            = f;
      dr.map          = map;
      dr.scan         = scan;
      dr.head.head    = plan.head;
      dr.head.total   = plan.total;
      dr.head.known   = true;
      dr.outliers     = plan.outliers;
      deferred_flag(r) = 1;
    });
  }

  // ---------------------------------------------------------------- a row

  KOKKOS_INLINE_FUNCTION void mask_row(member_type const& team, std::int64_t r,
                                       Scratch const& s) const {
    T* row = logits + r * prm.row_stride;
    RowStats st{RowPath::off, RowPath::off, 0, 0, 0, 0, 1, 0, false};
    Filters f = row_filters(r);
    if (!f.work()) return record(team, r, st);

    const Threshold th  = threshold(team, row, f);
    const BucketMap map = BucketMap::make(histogram_low(th, f), th.t,
                                          th.valid() && prm.buckets > 1 ? prm.buckets : 1);
    f.tail             = th.valid() && f.topp && !f.topk;
    const RowScan scan = gather_outliers(team, row, map, s, f);
    const int outliers   = *s.set.counter;
    st.outliers          = outliers;
    st.row_passes        = 1;
    team.team_barrier();
    if (f.minp) apply_min_p(team, row, f, th, scan, outliers, s, st);

    Decision d;
    BucketPlan plan;
    switch (decide_after_scan(team, f, th, map, scan, outliers, s, d, plan, st)) {
      case Next::second_read: second_read(team, row, f, map, scan, plan, s, d, st); break;
      case Next::whole_row: d = decide_whole_row(team, row, f, scan, st); break;
      case Next::write: break;
      case Next::defer:
        if constexpr (M != Mode::mask) return defer(team, r, f, map, scan, plan, s);
        break;
    }
    if constexpr (M == Mode::mask) {
      write_mask(team, row, d, s);
      record(team, r, st);
    } else {
      finish_row(team, r, row, f, scan, map, d, s);
    }
  }

  // The row's filters as the call's mode needs them. A row without a
  // filter is left alone by a mask; the sampler draws from all of it (the
  // drawn entry is where the order's cumulative weight reaches the draw's
  // target, which top-p's search finds), and the list is its first C
  // entries (a top-k) with the whole row's probabilities.
  KOKKOS_INLINE_FUNCTION Filters row_filters(std::int64_t r) const {
    Filters f = read_filters(r);
    if (f.any() || M == Mode::mask) return f;
    if (M == Mode::sample) {
      f.draw = true;
      f.topp = true;
    } else {
      f.list_all = true;
      f.k        = io.list_size;
      f.topk     = f.k > 0 && f.k < prm.vocab;
    }
    return f;
  }

  // The sampler's or the list's last step, once the row is decided.
  KOKKOS_INLINE_FUNCTION void finish_row(member_type const& team, std::int64_t r,
                                         const T* row, Filters const& f,
                                         RowScan const& scan, BucketMap const& map,
                                         Decision const& d, Scratch const& s) const {
    if constexpr (M == Mode::sample)
      write_token(team, r, row, f, scan, map, d, s);
    else if constexpr (M == Mode::candidates)
      write_list(team, r, row, f, scan, map, d, s);
  }

  // The row's filters (RowIO) after the definition's special cases
  // (docs/SEMANTICS.md): greedy rows are top-1, p <= 0 is top-1, and
  // min-p is resolved into a k after the first read (apply_min_p).
  KOKKOS_INLINE_FUNCTION Filters read_filters(std::int64_t r) const {
    Filters f;
    const float temp = io.temperature ? io.temperature[r * io.temperature_stride] : 1.0f;
    if (!(temp > 0.0f)) {
      // Greedy (T <= 0 or NaN): the top entry alone; no other filter.
      f.k    = 1;
      f.topk = 1 < prm.vocab;
      return f;
    }
    f.temperature = temp;
    f.inv_t       = 1.0f / temp;
    f.k    = io.k ? io.k[r * io.k_stride] : 0;
    f.p    = io.p ? io.p[r * io.p_stride] : 1.0f;
    f.topk = f.k > 0 && f.k < prm.vocab;
    f.topp = f.p < 1.0f;  // NaN: off
    if (f.topp && !(f.p > 0.0f)) {
      // p <= 0 keeps exactly one entry: the top one, i.e. top-1.
      f.topp = false;
      f.k    = 1;
      f.topk = 1 < prm.vocab;
    }
    const float m = io.min_p ? io.min_p[r * io.min_p_stride] : 0.0f;
    f.minp        = m > 0.0f;  // NaN: off
    f.min_p       = m < 1.0f ? m : 1.0f;
    if (io.seeds)
      f.u = philox_u64(io.seeds[r * io.seeds_stride], io.offsets[r * io.offsets_stride]);
    return f;
  }

  // The row's fixed-point weights: relative to its maximum, at its
  // temperature.
  KOKKOS_INLINE_FUNCTION MassMeasure mass_of(RowScan const& scan,
                                             Filters const& f) const {
    return MassMeasure{key_value(scan.max_key), prm.weight_scale, f.inv_t};
  }

  // min-p, once the first read knows the row's maximum M: the entries with
  // x >= c = M + T ln(min_p) are a prefix of the order, so min-p is top-k
  // with k = their count (or top-k's own k, if smaller). The count is taken
  // in the gathered set when c lies above t and every outlier was kept,
  // else by one more read of the row.
  KOKKOS_INLINE_FUNCTION void apply_min_p(member_type const& team, const T* row,
                                          Filters& f, Threshold const& th,
                                          RowScan const& scan, int outliers,
                                          Scratch const& s, RowStats& st) const {
    f.minp = false;
    if (scan.candidates == 0) return;
    const float top = key_value(scan.max_key);
    double c        = double(top);
    if (f.min_p < 1.0f && is_finite_value(top))
      c = double(top) + double(f.temperature) * log_d(double(f.min_p));
    std::uint32_t count = 0;
    const auto at_least = [&](float z) { return double(z) >= c; };
    if (th.valid() && c > double(th.t) && outliers <= s.set.capacity()) {
      team_reduce(
          team, outliers,
          [&](int i, std::uint32_t& acc) { acc += at_least(s.set.value(i)) ? 1u : 0u; },
          Kokkos::Sum<std::uint32_t>(count));
    } else {
      const RowSource<T> src{row, prm.vocab};
      team_reduce(
          team, prm.vocab,
          [&](int i, std::uint32_t& acc) { acc += at_least(src[i]) ? 1u : 0u; },
          Kokkos::Sum<std::uint32_t>(count));
      st.row_passes = std::int16_t(st.row_passes + 1);
    }
    const std::uint32_t k = f.topk ? std::uint32_t(f.k) : scan.candidates;
    if (count < k) {
      f.k    = int(count);
      f.topk = true;
    }
  }

  // ------------------------------------------------------- stage 1: gather

  // delta of the truncation threshold t = mu + delta * sigma.
  //
  // Top-k: the paper's quantile for k / V less its margin. Top-p alone: the
  // paper's delta_p less its margin; on a Gaussian bulk that gathers about a
  // fifth of the row, more than the buffer holds at LLM vocabularies. So t
  // is raised, where needed, to the bulk quantile that leaves about half the
  // on-chip buffer above it: real logits hold nearly all their softmax mass
  // in a few hundred outliers, which such a t keeps (the hit test decides; a
  // miss costs one more read, never exactness). Top-k's t is raised the
  // same way, but never above its margin-free quantile.
  KOKKOS_INLINE_FUNCTION float truncation_delta(Filters const& f) const {
    const double vocab = double(prm.vocab);
    const float fit    = sigma_topk(table_index(0.5 * prm.capacity / vocab));
    // A draw, min-p alone, or a list of a row without a filter: the
    // threshold that fits the buffer.
    if (f.draw || !(f.topk || f.topp)) return fit;
    if (f.topk) {
      const float dk = sigma_topk(table_index(double(f.k) / vocab));
      const float lo = with_margin(dk);
      const float up = fit < dk ? fit : dk;
      return lo > up ? lo : up;
    }
    const float dp = with_margin(sigma_topp(table_index(double(f.p))));
    return dp > fit ? dp : fit;
  }

  // Low end of the histogram's range. Top-p: the sample's minimum (a wide
  // nucleus can end anywhere). Top-k (and top-k with top-p, whose boundary
  // lies above top-k's): where the bulk quantile leaves about 8k + 2048
  // entries above, and at least histogram_depth sigmas below t, so that
  // only the entries near t cost an atomic; a miss whose k-th entry lies
  // lower than that is searched whole. (Without the second bound, small k
  // put lo on t: the table's bins are half a percent wide, and t, which
  // leaves about capacity / 2 entries above, came from the same bin as the
  // 8k + 2048 share, so lo fell back to the sample's minimum and every
  // entry of the row cost an atomic.)
  KOKKOS_INLINE_FUNCTION float histogram_low(Threshold const& th,
                                             Filters const& f) const {
    if (!th.valid() || !f.topk) return th.lo;
    const double share = (8.0 * double(f.k) + 2048.0) / double(prm.vocab);
    if (share >= 0.5) return th.lo;
    double low = th.mean + double(sigma_topk(table_index(share))) * th.sigma;
    const double deepest = double(th.t) - histogram_depth * th.sigma;
    if (low > deepest) low = deepest;
    const float lo = static_cast<float>(low);
    return lo > th.lo && lo < th.t ? lo : th.lo;
  }

  KOKKOS_INLINE_FUNCTION Threshold threshold(member_type const& team,
                                             const T* row,
                                             Filters const& f) const {
    const float nan = bits_as_float(0x7FC00000u);
    if (!prm.truncation) return Threshold{nan, nan, 0.0, 0.0};
    // t just under a bounded row's maximum (sample_threshold) while the
    // row holds at most half the on-chip buffer's entries at it.
    return sample_threshold(team, row, prm.vocab, truncation_delta(f),
                            0.5 * double(prm.capacity));
  }

  // Pass 1: outliers into the candidate set, the rest into the histogram.
  KOKKOS_INLINE_FUNCTION RowScan gather_outliers(member_type const& team,
                                                 const T* row,
                                                 BucketMap const& map,
                                                 Scratch const& s,
                                                 Filters const& f) const {
    // The set and the histogram are reused row after row: no thread may
    // reset them while another still reads the previous row's.
    team.team_barrier();
    s.set.reset(team);
    std::uint32_t* hist = map.t == map.t && map.nb > 1 ? s.hist : nullptr;
    if (hist != nullptr)
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, map.nb + 1),
                           [&](int b) { hist[b] = 0; });
    team.team_barrier();
    const RowScan scan = scan_row<row_unroll>(team, row, prm.vocab, map, s.set,
                                              hist, f.tail, prm.weight_scale, f.inv_t);
    if (hist != nullptr)
      Kokkos::single(Kokkos::PerTeam(team), [&]() { hist[0] = scan.below; });
    team.team_barrier();
    return scan;
  }

  // ------------------------------------------------------ stage 2: search

  template <class Src, class Measure>
  KOKKOS_INLINE_FUNCTION Boundary search(member_type const& team,
                                         Src const& src,
                                         Measure const& measure, key_type floor,
                                         std::uint32_t boundary_count,
                                         weight_type target, key_type lo,
                                         key_type hi, weight_type* below = nullptr) const {
    if constexpr (OutOfLineSearch)
      return pivot_search_out_of_line(prm.binary_search, team, src, measure, floor,
                                      boundary_count, target, lo, hi, below);
    else
      return pivot_search_either(prm.binary_search, team, src, measure, floor,
                                 boundary_count, target, lo, hi, below);
  }

  // Top-p on the survivors of a top-k cut in `src`: keys above cut.key plus
  // cut.keep copies of it. Returns the combined boundary.
  template <class Src>
  KOKKOS_INLINE_FUNCTION Boundary topp_after_topk(member_type const& team,
                                                  Src const& src,
                                                  MassMeasure const& mass,
                                                  Boundary const& cut, float pr,
                                                  key_type hi, RowStats& st) const {
    const double total = double(sum_above(team, src, mass, cut.key) +
                                mass.unit(cut.key) * cut.keep);
    const Boundary b   = search(team, src, mass, cut.key, cut.keep,
                                mass_target(pr, total), key_type(cut.key - 1), hi);
    st.topp_passes = std::int16_t(b.passes);
    // A boundary on the top-k cut keeps fewer of the same row group.
    return Boundary{b.key, b.keep, b.key == cut.key ? cut.group : b.group, b.passes};
  }

  // Top-k by count, then top-p on its survivors when the row has a p; the
  // search set `src` holds every survivor. `target` is k less the entries
  // known to lie above the set.
  template <class Src>
  KOKKOS_INLINE_FUNCTION Boundary search_k_then_p(member_type const& team,
                                                  Src const& src, Filters const& f,
                                                  MassMeasure const& mass,
                                                  weight_type target, key_type lo,
                                                  key_type hi, RowPath path,
                                                  RowStats& st) const {
    Boundary cut = search(team, src, CountMeasure{}, neg_inf_key, 0, target, lo, hi);
    st.topk_path   = path;
    st.topk_passes = std::int16_t(cut.passes);
    if (f.topp) {
      cut          = topp_after_topk(team, src, mass, cut, f.p, hi, st);
      st.topp_path = path;
    }
    return cut;
  }

  // Every candidate equal: the first k (and of those, as many as top-p's
  // share needs) in column order.
  KOKKOS_INLINE_FUNCTION Decision decide_flat(member_type const&,
                                              Filters const& f,
                                              RowScan const& scan,
                                              RowStats& st) const {
    std::uint32_t keep = scan.candidates;
    if (f.topk && std::uint32_t(f.k) < keep) keep = std::uint32_t(f.k);
    if (f.topp) {
      // Equal weights (the maximum's, 2^F): the target over the unit.
      const MassMeasure mass   = mass_of(scan, f);
      const weight_type unit   = mass.unit(scan.max_key);
      const weight_type target = mass_target(f.p, double(unit * keep));
      const std::uint32_t need = std::uint32_t((target + unit - 1) / unit);
      if (need < keep) keep = need;
    }
    mark(st, f, RowPath::flat);
    st.row_passes = std::int16_t(st.row_passes + (scan.candidates == std::uint32_t(prm.vocab) ? 1 : 2));
    Decision d;
    d.cut   = Boundary{scan.max_key, keep, scan.candidates, 0};
    d.write = Write::row;
    return d;
  }

  // The hit path: the boundary lies among the gathered outliers.
  KOKKOS_INLINE_FUNCTION bool try_outliers(member_type const& team,
                                           Filters const& f, Threshold const& th,
                                           RowScan const& scan, int outliers,
                                           Scratch const& s, Decision& d,
                                           HeadMass& head, RowStats& st) const {
    if (outliers > s.set.capacity()) return false;
    const Source src       = s.set.source(outliers);
    const key_type lo      = order_key(th.t);
    const MassMeasure mass = mass_of(scan, f);
    Boundary cut;
    if (f.topk) {
      if (outliers < f.k || outliers == 0) return false;
      cut = search_k_then_p(team, src, f, mass, weight_type(f.k), lo, scan.max_key,
                            RowPath::truncated, st);
    } else {
      if (!(f.topp && f.tail)) return false;
      head = head_mass(team, src, th, scan, mass);
      // A draw needs the exact total of the row's weights, which only a
      // second read gives: never a hit.
      if (f.draw) return false;
      const weight_type target = mass_target(f.p, head.total);
      if (!(head.head >= double(target))) return false;
      cut = search(team, src, mass, neg_inf_key, 0, target, lo, scan.max_key);
      st.topp_path   = RowPath::truncated;
      st.topp_passes = std::int16_t(cut.passes);
    }
    st.tier       = outliers > s.set.cap0;
    st.row_passes += 1;
    d.cut      = cut;
    d.write    = Write::from_set;
    d.set_size = outliers;
    return true;
  }

  // The exact weight of the first read's outliers (src) and, with the
  // tail it weighed relative to t rescaled to the max, the row's total.
  template <class Src>
  KOKKOS_INLINE_FUNCTION static HeadMass head_mass(member_type const& team, Src const& src,
                                                   Threshold const& th, RowScan const& scan,
                                                   MassMeasure const& mass) {
    HeadMass head;
    head.head = double(sum_above(team, src, mass, neg_inf_key));
    // (A row whose maximum is +inf gives its finite tail weight 0.)
    const double down = (double(th.t) - double(mass.ref)) * double(mass.inv_t);
    head.total = head.head + (down == down ? double(scan.tail) * exp_d(down) : 0.0);
    head.known = true;
    return head;
  }

  // What a row needs after its first read and the decisions that read
  // allows: nothing but the write, the second read of a miss, the
  // whole-row search, or (the sampler's and the list's first kernel) the
  // second kernel: see plan_buckets. The split path (split_kernel.hpp)
  // takes the same decisions, then spreads the second read over its teams.
  enum class Next : std::int8_t { write, second_read, whole_row, defer };

  KOKKOS_INLINE_FUNCTION Next decide_after_scan(member_type const& team, Filters& f,
                                                Threshold const& th,
                                                BucketMap const& map,
                                                RowScan const& scan, int outliers,
                                                Scratch const& s, Decision& d,
                                                BucketPlan& plan, RowStats& st) const {
    if (scan.candidates == 0) {
      mark(st, f, RowPath::trivial);  // all -inf / NaN: left as it is
      return Next::write;
    }
    if (scan.min_key == scan.max_key && !f.draw) {
      d = decide_flat(team, f, scan, st);
      return Next::write;
    }
    if (scan.min_key == scan.max_key) {
      d = all_candidates(scan, st);  // a draw on a flat row: by column
      return Next::write;
    }
    if (f.topk && scan.candidates <= std::uint32_t(f.k)) {
      st.topk_path = RowPath::trivial;  // no more candidates than k
      f.topk       = false;
    }
    if (!f.any()) {
      // Top-k kept every candidate: only NaN entries change (to -inf).
      d = all_candidates(scan, st);
      return Next::write;
    }
    HeadMass head;
    if (th.valid() && try_outliers(team, f, th, scan, outliers, s, d, head, st))
      return Next::write;
    if (th.valid() && plan_buckets(team, f, map, scan, outliers, head, s, plan))
      return Next::second_read;
    if constexpr (!Deferred && M != Mode::mask)
      if (plan.partial) return Next::defer;
    return Next::whole_row;
  }

  // Every candidate of the row kept (written by a masked read + write):
  // the keys above -inf's, and none of -inf's group. (Said as "the smallest
  // key and all of the row" it would be right for the mask, but not as a
  // boundary the sampler's and the list's searches add copies of.)
  KOKKOS_INLINE_FUNCTION static Decision all_candidates(RowScan const&,
                                                        RowStats& st) {
    Decision d;
    d.cut   = Boundary{neg_inf_key, 0, 0, 0};
    d.write = Write::row;
    st.row_passes += 2;
    return d;
  }

  // The miss path (boundary_buckets.hpp): the buckets that hold the
  // boundary are gathered by a second read, which masks the rest.
  KOKKOS_INLINE_FUNCTION void second_read(member_type const& team, T* row,
                                          Filters const& f, BucketMap const& map,
                                          RowScan const& scan,
                                          BucketPlan const& plan, Scratch const& s,
                                          Decision& d, RowStats& st) const {
    // From here on the row is partly masked.
    team.team_barrier();
    s.set.reset(team);
    team.team_barrier();
    const MassMeasure mass = mass_of(scan, f);
    const RangeMass exact =
        gather_range<gather_unroll, M == Mode::mask>(team, row, prm.vocab, map, plan.range,
                                                     s.set, second_weigh(f), mass);
    team.team_barrier();
    resolve_buckets(team, f, scan, map, plan, exact, *s.set.counter, s, d, st);
  }

  // Which buckets a miss gathers: false when none can (no histogram, the
  // boundary lies above t among outliers that were not all kept, or the
  // range holds more than the candidate tiers).
  KOKKOS_INLINE_FUNCTION bool plan_buckets(member_type const& team,
                                           Filters const& f, BucketMap const& map,
                                           RowScan const& scan, int outliers,
                                           HeadMass const& head, Scratch const& s,
                                           BucketPlan& plan) const {
    if (s.hist == nullptr) return false;
    const int nb = map.nb;
    const bool all_outliers = outliers <= s.set.capacity();
    BucketRange range;
    if (f.topk) {
      // Exact counts: the bucket where the count from the top reaches k.
      // With top-p too, everything from there up is gathered (the
      // survivors, fewer than k plus that bucket).
      if (!all_outliers && outliers >= f.k) return false;  // boundary above t
      const std::uint32_t* hist = s.hist;
      range.lo = suffix_crossing<std::uint32_t>(
          team, nb, std::uint32_t(outliers),
          [&](int b) { return hist[b]; }, std::uint32_t(f.k), s.result);
      range.hi = f.topp ? nb : range.lo;
      if (range.lo < 0) return false;  // unreachable: candidates > k
    } else if (head.known) {
      const double slack = 1e-5 * head.total + 4.0 * double(prm.vocab) + 4.0;
      const double share = f.draw ? double(f.u) * 0x1p-64 : double(f.p);
      const double want  = share * head.total;
      range = topp_buckets(team, s.hist, map, head.head, want - slack, want + slack,
                           key_value(scan.max_key), f.inv_t, s.result);
    } else {
      range.lo = 0;  // top-p whose top-k was trivial: every candidate
      range.hi = nb;
    }
    // The sampler and the list need every survivor in the set: the
    // range then reaches the top (a draw needs only its target's buckets).
    // A top-p survivor set larger than the tiers is decided on the
    // boundary's own buckets instead, as the mask does, and finished by a
    // third read (Decision::partial). The first kernel defers such a row
    // (plan.partial, false) to the second, which plans it so. The unsplit
    // first kernel defers every other miss too (KernelParams::defer_misses):
    // the second kernel, planning it afresh, gathers all its survivors.
    // (One count_range in the first kernel: a second one there kept the
    // split path's decide from being inlined.)
    const int boundary_hi = range.hi;
    if (M != Mode::mask && !f.draw) range.hi = nb;
    const std::uint32_t cap = std::uint32_t(s.set.capacity());
    RangeCounts counts = count_range(team, s.hist, nb, std::uint32_t(outliers), range);
    const bool past_tiers = counts.inside > cap;
    const bool miss_moved = !Deferred && prm.defer_misses && counts.inside > 0;
    if (M != Mode::mask && !f.draw && (past_tiers || miss_moved) && !f.topk && head.known &&
        prm.deferred_end != nullptr) {
      plan.partial  = true;
      plan.outliers = std::uint32_t(outliers);
      plan.head     = head.head;
      plan.total    = head.total;
      // The boundary's buckets, kept in the partial plan: the split path's
      // deferred launches take them from there (plan_partial) instead of
      // placing them again.
      plan.range = BucketRange{range.lo, boundary_hi};
      if constexpr (!Deferred) return false;
      range.hi = boundary_hi;
      counts   = count_range(team, s.hist, nb, std::uint32_t(outliers), range);
    }
    if (counts.inside > cap || counts.inside == 0) return false;
    plan.range  = range;
    plan.above  = counts.above;
    plan.inside = counts.inside;
    return true;
  }

  // A deferred row's plan (plan.partial, with the first read's outliers
  // and head mass) on the boundary's buckets plan_buckets placed before it
  // deferred the row (plan.range): what plan_buckets goes on to do with
  // them, from the same histogram. false when they do not fit the set.
  KOKKOS_INLINE_FUNCTION bool plan_partial(member_type const& team, BucketMap const& map,
                                           Scratch const& s, BucketPlan& plan) const {
    if (s.hist == nullptr) return false;
    const RangeCounts counts = count_range(team, s.hist, map.nb, plan.outliers, plan.range);
    if (counts.inside > std::uint32_t(s.set.capacity()) || counts.inside == 0) return false;
    plan.above  = counts.above;
    plan.inside = counts.inside;
    return true;
  }

  // The search on the n entries the second read gathered.
  KOKKOS_INLINE_FUNCTION void resolve_buckets(member_type const& team,
                                              Filters const& f,
                                              RowScan const& scan,
                                              BucketMap const& map,
                                              BucketPlan const& plan,
                                              RangeMass const& exact, int n,
                                              Scratch const& s, Decision& d,
                                              RowStats& st) const {
    const MassMeasure mass = mass_of(scan, f);
    const Source src       = s.set.source(n);
    st.row_passes += 2;
    st.gathered = n;
    st.tier     = n > s.set.cap0;
    // The set lies between the range's bounds.
    const key_type bottom = range_bottom_key(map, plan.range);
    const key_type top    = range_top_key(map, plan.range, scan.max_key);
    Boundary cut;
    d.searched_mass = false;
    if (f.topk) {
      const std::uint32_t above = f.topp ? 0u : plan.above;
      cut = search_k_then_p(team, src, f, mass, weight_type(std::uint32_t(f.k) - above),
                            bottom, top, RowPath::buckets, st);
    } else {
      // A draw's target: floor(u W / 2^64) + 1 of the exact total W.
      const weight_type target = f.draw ? mul_high_64(f.u, exact.total) + 1
                                        : mass_target(f.p, double(exact.total));
      // The range holds the boundary: more than `above`, at most all.
      const weight_type inside = exact.total - exact.above;
      const bool held = target > exact.above && target - exact.above <= inside;
      if (f.draw && !held) {
        // The planned buckets missed the target (the first read's total is
        // approximate): the draw is taken over the whole row instead.
        d = all_candidates(scan, st);
        return;
      }
      d.drawn = f.draw;
      if constexpr (M == Mode::sample) {
        cut = search(team, src, mass, neg_inf_key, 0, target - exact.above, bottom, top,
                     &d.cut_below);
        d.searched_mass = cut.passes > 0;
      } else {
        cut = search(team, src, mass, neg_inf_key, 0, target - exact.above, bottom, top);
      }
      st.topp_path   = RowPath::buckets;
      st.topp_passes = held ? std::int16_t(cut.passes) : std::int16_t(-1);
    }
    d.cut      = cut;
    d.write    = Write::gathered;
    d.set_size = n;
    if (Deferred && plan.partial) {
      d.partial     = true;
      d.above_mass  = exact.above;
      d.above_count = plan.above;
      d.outliers    = plan.outliers;
      d.head        = plan.head;
    }
  }

  // The whole-row search: the paper's ablation without truncation, and the
  // fallback when no candidate tier can hold the boundary.
  KOKKOS_INLINE_FUNCTION Decision decide_whole_row(member_type const& team,
                                                   const T* row,
                                                   Filters const& f,
                                                   RowScan const& scan,
                                                   RowStats& st) const {
    // A draw over the whole row is write_token's (it needs the total).
    if (f.draw) return all_candidates(scan, st);
    const RowSource<T> src{row, prm.vocab};
    const MassMeasure mass = mass_of(scan, f);
    const key_type lo = key_type(scan.min_key - 1);
    Boundary cut{scan.min_key, scan.candidates, scan.candidates, 0};
    if (f.topk) {
      cut = search_k_then_p(team, src, f, mass, weight_type(f.k), lo, scan.max_key,
                            RowPath::full, st);
      st.row_passes += std::int16_t(st.topk_passes + (f.topp ? 1 + st.topp_passes : 0));
    } else if (f.topp) {
      const weight_type target =
          mass_target(f.p, double(sum_above(team, src, mass, neg_inf_key)));
      cut = search(team, src, mass, neg_inf_key, 0, target, lo, scan.max_key);
      st.topp_path   = RowPath::full;
      st.topp_passes = std::int16_t(cut.passes);
      st.row_passes += std::int16_t(1 + cut.passes);
    }
    st.row_passes += 2;
    Decision d;
    d.cut   = cut;
    d.write = (f.topk || f.topp) ? Write::row : Write::none;
    return d;
  }

  // ------------------------------------------------ stage 3: ties, write

  // How many of the boundary group a decision keeps: `keep`, or the whole
  // group under the Ties::keep_all ablation.
  KOKKOS_INLINE_FUNCTION std::uint32_t kept_of(Boundary const& cut) const {
    return prm.exact_ties ? cut.keep : cut.group;
  }

  // The column bound of the boundary group (members in columns up to it are
  // kept): INT_MAX when the whole group is kept; for a gathered set, by a
  // column search on it; for a masked row write, keep - 1 when the group is
  // the whole row (a flat row without -inf or NaN), else -1: the write then
  // numbers the group by an ordered scan.
  KOKKOS_INLINE_FUNCTION int tie_column(member_type const& team, Decision const& d,
                                        Candidates const& set) const {
    const std::uint32_t keep = kept_of(d.cut);
    if (keep >= d.cut.group) return INT_MAX;
    if (d.write == Write::row)
      return d.cut.group == std::uint32_t(prm.vocab) ? int(keep) - 1 : -1;
    return tie_column_bound(team, set, d.set_size, d.cut.key, keep, prm.vocab);
  }

  KOKKOS_INLINE_FUNCTION void write_mask(member_type const& team, T* row,
                                         Decision const& d, Scratch const& s) const {
    if (d.write == Write::none) return;
    const int bound = tie_column(team, d, s.set);
    if (d.write == Write::row)
      apply_mask(team, row, prm.vocab, d.cut.key, kept_of(d.cut), d.cut.group, bound);
    else if (d.write == Write::from_set)
      apply_mask_from_set(team, row, prm.vocab, s.set, d.set_size, d.cut.key, bound);
    else
      mask_gathered(team, row, s.set, d.set_size, d.cut.key, bound);
  }

  // ------------------------------------ sample_tokens and candidate_list

  // Whether d keeps the first cut.keep columns of a row whose entries are
  // all equal candidates (a flat row without -inf or NaN).
  KOKKOS_INLINE_FUNCTION bool whole_row_group(Decision const& d,
                                              RowScan const& scan) const {
    return d.write == Write::row && d.cut.key == scan.max_key &&
           d.cut.group == std::uint32_t(prm.vocab) && d.cut.keep > 0;
  }

  // Whether every kept entry of decision d is in the gathered set.
  KOKKOS_INLINE_FUNCTION static bool kept_in_set(Decision const& d) {
    return !(Deferred && d.partial) &&
           (d.write == Write::from_set || d.write == Write::gathered);
  }

  // Gathers exactly the kept set of `cut` (keys above it, and the first
  // cut.keep of its group by column) with an ordered scan of the row.
  // Returns false when it holds more entries than the set.
  KOKKOS_INLINE_FUNCTION bool gather_kept(member_type const& team, const T* row,
                                          Boundary const& cut, Scratch const& s,
                                          Decision& d) const {
    team.team_barrier();
    s.set.reset(team);
    team.team_barrier();
    const float c = key_value(cut.key);
    Kokkos::parallel_scan(Kokkos::TeamThreadRange(team, prm.vocab),
                          [&](int i, std::uint32_t& rank, bool final) {
                            const float z  = to_float(row[i]);
                            const bool tie = z == c;
                            if (final && (z > c || (tie && rank < cut.keep)))
                              s.set.push(z, i);
                            if (tie) rank += 1;
                          });
    team.team_barrier();
    d.set_size = *s.set.counter;
    d.write    = Write::from_set;
    team.team_barrier();
    return d.set_size <= s.set.capacity();
  }

  // Column of the keep-th entry (in column order) with key K in the row.
  KOKKOS_INLINE_FUNCTION int column_in_row(member_type const& team, const T* row,
                                           key_type K, std::uint32_t keep,
                                           Scratch const& s) const {
    const float c = key_value(K);
    Kokkos::parallel_scan(Kokkos::TeamThreadRange(team, prm.vocab),
                          [&](int i, std::uint32_t& rank, bool final) {
                            const bool tie = to_float(row[i]) == c;
                            if (final && tie && rank + 1 == keep) *s.result = i;
                            if (tie) rank += 1;
                          });
    team.team_barrier();
    const int column = *s.result;
    team.team_barrier();
    return column;
  }

  // sample_tokens: the entry where the kept set's cumulative weight, in
  // the definition's order, first exceeds floor(u W / 2^64). The search is
  // top-p's, on the kept set (keys above the cut plus cut.keep copies of
  // it), with that integer target; the drawn entry is the last one the
  // search keeps.
  KOKKOS_INLINE_FUNCTION void write_token(member_type const& team, std::int64_t r,
                                          const T* row, Filters const& f,
                                          RowScan const& scan, BucketMap const& map,
                                          Decision d, Scratch const& s) const {
    int token = -1;
    if (scan.candidates > 0) {
      const MassMeasure mass = mass_of(scan, f);
      Boundary cut           = d.cut;
      if (d.drawn) {
        token = tie_column_bound(team, s.set, d.set_size, cut.key, cut.keep, prm.vocab);
      } else if (whole_row_group(d, scan)) {
        // A flat row without -inf or NaN: the kept entries are columns
        // 0 .. keep-1, of equal weight; the n-th is column n - 1.
        const weight_type unit = mass.unit(cut.key);
        const weight_type t    = mul_high_64(f.u, unit * cut.keep) + 1;
        token                  = int((t + unit - 1) / unit) - 1;
      } else if (Deferred && d.partial &&
                 draw_partial(team, row, f, scan, map, d, s, token)) {
        // Drawn from the buckets that hold the target (a third read).
      } else if (kept_in_set(d) || gather_kept(team, row, cut, s, d)) {
        if (!draw_ranked(team, f, d, s, mass, token)) {
          const Source src = s.set.source(d.set_size);
          const weight_type W =
              sum_above(team, src, mass, cut.key) + mass.unit(cut.key) * cut.keep;
          const Boundary b = search(team, src, mass, cut.key, cut.keep,
                                    mul_high_64(f.u, W) + 1, key_type(cut.key - 1),
                                    scan.max_key);
          token = tie_column_bound(team, s.set, d.set_size, b.key, b.keep, prm.vocab);
        }
      } else {
        // The kept set is larger than the candidate tiers: the same search
        // over the row.
        const RowSource<T> src{row, prm.vocab};
        const weight_type W =
            sum_above(team, src, mass, cut.key) + mass.unit(cut.key) * cut.keep;
        const Boundary b = search(team, src, mass, cut.key, cut.keep,
                                  mul_high_64(f.u, W) + 1, key_type(cut.key - 1),
                                  scan.max_key);
        token = column_in_row(team, row, b.key, b.keep, s);
      }
    }
    put_token(team, r, token);
  }

  KOKKOS_INLINE_FUNCTION void put_token(member_type const& team, std::int64_t r,
                                        int token) const {
    Kokkos::single(Kokkos::PerTeam(team),
                   [&]() { io.tokens[r * io.tokens_stride] = token; });
  }

  // The draw by ranking (draw.hpp), out of line on CUDA.
  KOKKOS_INLINE_FUNCTION bool draw_ranked(member_type const& team, Filters const& f,
                                          Decision const& d, Scratch const& s,
                                          MassMeasure const& mass, int& token) const {
    if (s.hist == nullptr || rank_draw_scratch > prm.buckets + 1) return false;
    if constexpr (Policy<ExecutionSpace>::sampler_search_out_of_line)
      return draw_ranked_out_of_line(team, s.set, d.set_size, d.cut, mass, f.u, prm.vocab,
                                     s.hist, s.result, token);
    else
      return detail::draw_ranked(team, s.set, d.set_size, d.cut, mass, f.u, prm.vocab, s.hist,
                                 s.result, token);
  }

  // Size and fixed-point weight of the kept entries of a set or row.
  struct KeptSum {
    weight_type mass;
    std::uint32_t count;
    KOKKOS_INLINE_FUNCTION static void init(KeptSum& v) {
      v.mass  = 0;
      v.count = 0;
    }
    KOKKOS_INLINE_FUNCTION static void join(KeptSum& a, const KeptSum& b) {
      a.mass += b.mass;
      a.count += b.count;
    }
  };

  template <class Src>
  KOKKOS_INLINE_FUNCTION KeptSum kept_sum(member_type const& team, Src const& src,
                                          MassMeasure const& mass,
                                          Boundary const& cut) const {
    KeptSum sum;
    team_reduce(
        team, src.count(),
        [&](int i, KeptSum& acc) {
          const float z = src[i];
          if (order_key(z) > cut.key) {
            acc.mass += mass(z);
            acc.count += 1;
          }
        },
        StructReducer<KeptSum>(sum));
    sum.mass += mass.unit(cut.key) * cut.keep;
    sum.count += cut.keep;
    return sum;
  }

  // ------------------------------------------- partial decisions: read 3
  //
  // A top-p survivor set larger than the tiers (Decision::partial) is cut
  // as the mask cuts it: the second read gathers the boundary's buckets
  // and sums the exact weight above them. That gives the kept set's exact
  // weight W and size K; a third read then gathers only the buckets the
  // sampler's target or the list's first C entries lie in, found with the
  // first read's histogram (the list's, which do not depend on the cut,
  // often in the second read: list_with_cut). Three reads in all, the
  // first kernel's included, instead of a pivot search over the row; exact
  // either way: the gathered buckets are checked to
  // hold the answer with exact integers, and when they do not (the
  // histogram's mass bounds are approximate) the row is searched whole.

  // K and W of a partial decision: the set's kept entries and those above.
  KOKKOS_INLINE_FUNCTION KeptSum partial_kept(member_type const& team, Decision const& d,
                                              Scratch const& s,
                                              MassMeasure const& mass) const {
    KeptSum kept = kept_sum(team, s.set.source(d.set_size), mass, d.cut);
    kept.mass += d.above_mass;
    kept.count += d.above_count;
    return kept;
  }

  // W alone of a partial decision: from the search's own M(> K) where the
  // cut is the top-p search's on the set (Decision::searched_mass), the
  // sum kept_sum takes in a pass otherwise.
  KOKKOS_INLINE_FUNCTION weight_type kept_mass(member_type const& team, Decision const& d,
                                               Scratch const& s,
                                               MassMeasure const& mass) const {
    if (d.searched_mass)
      return d.above_mass + d.cut_below + mass.unit(d.cut.key) * d.cut.keep;
    return partial_kept(team, d, s, mass).mass;
  }

  // What a third read gathered: n entries (-1: none, or more than the set
  // holds), the exact weight above its buckets (the sampler's: the list's
  // third read weighs nothing, third_weigh), and how many of the cut's
  // group the set counts (see cut_copies).
  struct ThirdRead {
    int n = -1;
    RangeMass exact;
    std::uint32_t copies = 0;
    key_type bottom = neg_inf_key;  // below the set's keys (range_bottom_key)
    key_type top    = no_key;       // at or above them, at most the row's maximum
  };

  // What a third read of the buckets `range` knows before it reads: how
  // many of the cut's group its set counts, and the keys that bound the
  // set (range_bottom_key, and range_top_key no higher than max_key, the
  // row's maximum). Both kernels' third reads fill them here.
  KOKKOS_INLINE_FUNCTION static void bound_third(ThirdRead& got, BucketMap const& map,
                                                 BucketRange range, Boundary const& cut,
                                                 key_type max_key) {
    got.copies = cut_copies(map, range, cut);
    got.bottom = range_bottom_key(map, range);
    got.top    = range_top_key(map, range, max_key);
  }

  // Where a search on a third read's set starts from below: just under the
  // cut (whose copies the set counts there), or the set's own bottom when
  // the set holds no copies of the cut and that is higher.
  KOKKOS_INLINE_FUNCTION static key_type third_low(ThirdRead const& got,
                                                   Boundary const& cut) {
    const key_type under = cut.key - 1;
    return got.copies == 0 && got.bottom > under ? got.bottom : under;
  }

  // The third read: gathers the buckets `range` into the set (the row is
  // not written) and sums the exact weight above them.
  KOKKOS_INLINE_FUNCTION ThirdRead third_read(member_type const& team, const T* row,
                                              BucketMap const& map, BucketRange range,
                                              Decision const& d, Scratch const& s,
                                              MassMeasure const& mass,
                                              key_type max_key) const {
    ThirdRead got;
    if (!range_fits(team, s.hist, map.nb, d.outliers, range, s.set.capacity())) return got;
    team.team_barrier();
    s.set.reset(team);
    team.team_barrier();
    // (write = false: nothing is stored through the pointer.) The draw
    // needs the weight above the range, the list no weight.
    got.exact = gather_range<gather_unroll, false>(team, const_cast<T*>(row), prm.vocab,
                                                   map, range, s.set, third_weigh, mass);
    team.team_barrier();
    got.n = *s.set.counter;
    team.team_barrier();
    bound_third(got, map, range, d.cut, max_key);
    return got;
  }

  // How many of the cut's group a third read's set counts: all `keep` when
  // the cut's bucket is in the range (the group is then in the set), none
  // when the range lies above it. (A range below it holds no kept entry.)
  KOKKOS_INLINE_FUNCTION static std::uint32_t cut_copies(BucketMap const& map,
                                                         BucketRange range,
                                                         Boundary const& cut) {
    const int b = map.index(key_value(cut.key));
    return b >= range.lo && b <= range.hi ? cut.keep : 0u;
  }

  // candidate_list on a deferred row in one read of it (the second kernel,
  // finish_deferred): the buckets of the list's first C entries (exact
  // counts from the top: they do not depend on the cut) are gathered by
  // the same read as the top-p boundary's (plan.range), into the tier's
  // last entries, where a third read would gather them after the cut.
  // Then the cut on the boundary's set, the kept set's W and K, and the
  // list from the second set, checked with exact integers as a third
  // read's is (list_third); where the check fails, the row goes on as
  // before (write_list: a third read). false, having read nothing, when
  // the list's buckets do not lie above the boundary's or do not fit
  // beside them in the set. (The draw's buckets depend on the cut's W; this
  // kernel reads them after the cut: draw_partial. The split path gathers
  // the list's so too, in split_gather: early_range.)
  KOKKOS_INLINE_FUNCTION bool list_with_cut(member_type const& team, std::int64_t r,
                                            const T* row, Filters const& f,
                                            BucketMap const& map, RowScan const& scan,
                                            BucketPlan const& plan, Scratch const& s) const {
    DeferredRow& dr        = deferred_row(r);
    const MassMeasure mass = mass_of(scan, f);
    const int tier         = s.set.cap1;
    if (tier <= 0 || io.list_size == 0) return false;
    const BucketRange second = list_buckets(team, map, dr.outliers, s);
    if (!(second.lo > plan.range.hi && second.hi >= second.lo)) return false;
    const std::uint32_t n1 =
        count_range(team, s.hist, map.nb, dr.outliers, plan.range).inside;
    const std::uint32_t n2 = count_range(team, s.hist, map.nb, dr.outliers, second).inside;
    if (n2 == 0 || n2 > std::uint32_t(tier) || n1 + n2 > std::uint32_t(s.set.capacity()))
      return false;
    // The boundary's set: the on-chip entries and the tier less its last
    // n2, where the list's set goes.
    Scratch cut_set = s;
    cut_set.set.cap1 -= int(n2);
    Scratch list_set = s;
    list_set.set     = Candidates{s.set.vals1 + cut_set.set.cap1,
                              s.set.cols1 + cut_set.set.cap1,
                              int(n2),
                              nullptr,
                              nullptr,
                              0,
                              &dr.second_counter};
    team.team_barrier();
    cut_set.set.reset(team);
    list_set.set.reset(team);
    team.team_barrier();
    const TwoRangeMass m = gather_two_ranges<gather_unroll>(
        team, row, prm.vocab, map, plan.range, cut_set.set, second, list_set.set, mass);
    team.team_barrier();
    const int gathered = *cut_set.set.counter;
    const int listable = *list_set.set.counter;
    team.team_barrier();
    Decision d;
    RowStats st{RowPath::off, RowPath::off, 0, 0, 0, 0, 1, 0, false};
    RangeMass exact;
    exact.above = m.above;
    exact.total = m.total;
    resolve_buckets(team, f, scan, map, plan, exact, gathered, cut_set, d, st);
    ThirdRead got;
    got.n           = listable <= int(n2) ? listable : -1;
    got.exact.above = m.above2;
    got.exact.total = m.total;
    bound_third(got, map, second, d.cut, scan.max_key);
    const KeptSum kept = partial_kept(team, d, cut_set, mass);
    int listed         = 0;
    if (d.partial && kept.count > std::uint32_t(io.list_size) &&
        list_third(team, r, f, d, list_set, mass, kept, got, listed))
      list_tail(team, r, listed, kept.count);
    else
      write_list(team, r, row, f, scan, map, d, s);
    return true;
  }

  // sample_tokens on a partial decision. false when the buckets read miss
  // the target or do not fit the set.
  KOKKOS_INLINE_FUNCTION bool draw_partial(member_type const& team, const T* row,
                                           Filters const& f, RowScan const& scan,
                                           BucketMap const& map, Decision const& d,
                                           Scratch const& s, int& token) const {
    if (s.hist == nullptr) return false;
    const MassMeasure mass = mass_of(scan, f);
    weight_type target     = 0;
    const BucketRange range = draw_range(team, f, scan, map, d, s, mass, target);
    const ThirdRead got     = third_read(team, row, map, range, d, s, mass, scan.max_key);
    return draw_third(team, d, s, mass, target, got, token);
  }

  // The draw's exact target floor(u W / 2^64) + 1 on a partial decision
  // (W from the set the decision was searched on), and the buckets that
  // hold it by the first read's histogram.
  KOKKOS_INLINE_FUNCTION BucketRange draw_range(member_type const& team, Filters const& f,
                                                RowScan const& scan, BucketMap const& map,
                                                Decision const& d, Scratch const& s,
                                                MassMeasure const& mass,
                                                weight_type& target) const {
    const weight_type W = kept_mass(team, d, s, mass);
    target              = mul_high_64(f.u, W) + 1;
    // The target is exact; the slack covers the histogram's rounding.
    const double slack = 1e-6 * double(W) + 4.0 * double(prm.vocab) + 4.0;
    return topp_buckets(team, s.hist, map, d.head, double(target) - slack,
                        double(target) + slack, key_value(scan.max_key), f.inv_t, s.result);
  }

  // topp_range, inlined or not (inline_topp).
  KOKKOS_INLINE_FUNCTION BucketRange topp_buckets(member_type const& team,
                                                  const std::uint32_t* hist,
                                                  BucketMap const& map, double head_mass,
                                                  double target_lo, double target_hi,
                                                  float max, float inv_t, int* slot) const {
    if constexpr (inline_topp) {
      return topp_range_inline(team, hist, map, head_mass, target_lo, target_hi, max,
                               prm.weight_scale, inv_t, slot);
    } else {
      return topp_range(team, hist, map, head_mass, target_lo, target_hi, max,
                        prm.weight_scale, inv_t, slot);
    }
  }

  // The draw on what a third read gathered (the set). false when it does
  // not hold the target.
  KOKKOS_INLINE_FUNCTION bool draw_third(member_type const& team, Decision const& d,
                                         Scratch const& s, MassMeasure const& mass,
                                         weight_type target, ThirdRead const& got,
                                         int& token) const {
    if (got.n < 0) return false;
    const Boundary cut       = d.cut;
    const Source src         = s.set.source(got.n);
    const weight_type above  = got.exact.above;
    const weight_type inside = sum_above(team, src, mass, cut.key) + mass.unit(cut.key) * got.copies;
    // Above the range: kept entries of exact weight `above` (when the
    // range reaches the cut's bucket; otherwise inside is 0).
    if (!(target > above && target - above <= inside)) return false;
    const Boundary b = search(team, src, mass, cut.key, got.copies, target - above,
                              third_low(got, cut), got.top);
    token = tie_column_bound(team, s.set, got.n, b.key, b.keep, prm.vocab);
    return true;
  }

  // candidate_list on a partial decision: the buckets from where the
  // histogram's exact counts from the top reach C. false when they do not
  // fit the set (or the list is not shorter than K).
  KOKKOS_INLINE_FUNCTION bool list_partial(member_type const& team, std::int64_t r,
                                           const T* row, Filters const& f,
                                           RowScan const& scan, BucketMap const& map,
                                           Decision const& d, Scratch const& s,
                                           MassMeasure const& mass, KeptSum& kept,
                                           int& listed) const {
    if (s.hist == nullptr) return false;
    BucketRange range;
    listed = 0;
    switch (list_range(team, map, d, s, mass, kept, range)) {
      case ListRange::none: return true;  // C = 0: only the count
      case ListRange::fails: return false;
      case ListRange::read: break;
    }
    const ThirdRead got = third_read(team, row, map, range, d, s, mass, scan.max_key);
    return list_third(team, r, f, d, s, mass, kept, got, listed);
  }

  // What a partial decision's list needs: nothing more (C = 0), a third
  // read of `range` (the buckets from the top whose exact counts reach C),
  // or the row's other paths (K <= C). Sets K and W (kept).
  enum class ListRange : std::int8_t { none, read, fails };
  KOKKOS_INLINE_FUNCTION ListRange list_range(member_type const& team, BucketMap const& map,
                                              Decision const& d, Scratch const& s,
                                              MassMeasure const& mass, KeptSum& kept,
                                              BucketRange& range) const {
    const int C = io.list_size;
    kept        = partial_kept(team, d, s, mass);
    if (C == 0) return ListRange::none;
    if (kept.count <= std::uint32_t(C)) return ListRange::fails;
    range = list_buckets(team, map, d.outliers, s);
    return range.lo < 0 ? ListRange::fails : ListRange::read;
  }

  // The buckets a deferred row's first C list entries lie in, placed
  // before the cut, from the partial plan (the split path gathers them
  // with the boundary's: SplitKernel::deferred_gather). They do not depend
  // on the cut (list_buckets). Empty (lo > hi) where there are none. (The
  // draw's: draw_buckets, placed by split_gather.)
  KOKKOS_INLINE_FUNCTION BucketRange early_range(member_type const& team, BucketMap const& map,
                                                 BucketPlan const& plan,
                                                 Scratch const& s) const {
    BucketRange range;  // empty
    if constexpr (M == Mode::candidates) {
      if (s.hist == nullptr || !plan.partial || io.list_size == 0) return range;
      range = list_buckets(team, map, plan.outliers, s);
      if (range.lo < 0) range = BucketRange{};
    } else {
      (void)team, (void)map, (void)plan, (void)s;
    }
    return range;
  }

  // How far past the top-p target ceil(p * total) the kept weight W may
  // lie: less than one entry of the boundary's top bucket, which weighs at
  // most its upper bound (WeightBounds, capped at the scale), or the scale
  // where the buckets reach above t or the bound is 0 (underflow or NaN:
  // the scale only widens what uses it). draw_buckets' range and the split
  // path's helpers (SplitKernel::helper_target) both bound W so.
  KOKKOS_INLINE_FUNCTION static weight_type last_entry_bound(BucketMap const& map,
                                                             BucketPlan const& plan,
                                                             key_type max_key,
                                                             float weight_scale,
                                                             float inv_t) {
    const weight_type scale = weight_type(weight_scale);
    if (!(plan.range.hi < map.nb)) return scale;
    const weight_type w =
        WeightBounds::of(map, key_value(max_key), weight_scale, inv_t).upper(plan.range.hi, 1);
    return w > 0 ? w : scale;
  }

  // The buckets a deferred row's draw target lies in, placed before the
  // cut from the partial plan and the merged histogram. The target
  // floor(u W / 2^64) + 1 depends on the cut through W: the kept set
  // weighs at least the top-p target ceil(p * total) and less than it plus
  // its last entry, which lies in the boundary's buckets (so weighs at
  // most their upper bound, or the weight scale where they reach above t),
  // the exact total within the plan's slack of its estimate; the range
  // covers every such W. Empty (lo > hi) where there is none; what it
  // gathers is checked with exact integers (SplitKernel::early_finish).
  // Static: called out of line without the functor (SplitKernel::draw_early).
  KOKKOS_INLINE_FUNCTION static BucketRange draw_buckets(member_type const& team,
                                                         const std::uint32_t* hist,
                                                         BucketMap const& map,
                                                         BucketPlan const& plan,
                                                         Filters const& f, key_type max_key,
                                                         float weight_scale, int vocab,
                                                         int* slot) {
    const double slack = 1e-5 * plan.total + 4.0 * double(vocab) + 4.0;
    const double share = double(f.u) * 0x1p-64;
    const double last  = double(last_entry_bound(map, plan, max_key, weight_scale, f.inv_t));
    const double lo = share * double(f.p) * (plan.total - slack) - slack;
    const double hi = share * (double(f.p) * (plan.total + slack) + last) + slack;
    return topp_range_inline(team, hist, map, plan.head, lo, hi, key_value(max_key),
                             weight_scale, f.inv_t, slot);
  }

  // The buckets from the top whose exact counts reach C (lo -1: none).
  KOKKOS_INLINE_FUNCTION BucketRange list_buckets(member_type const& team,
                                                  BucketMap const& map,
                                                  std::uint32_t outliers,
                                                  Scratch const& s) const {
    const std::uint32_t* hist = s.hist;
    BucketRange range;
    range.hi = map.nb;
    range.lo = suffix_crossing<std::uint32_t>(
        team, map.nb, outliers, [&](int b) { return hist[b]; },
        std::uint32_t(io.list_size), s.result);
    return range;
  }

  // The list from what a third read gathered (the set). false when it
  // does not hold the first C kept entries.
  KOKKOS_INLINE_FUNCTION bool list_third(member_type const& team, std::int64_t r,
                                         Filters const& f, Decision const& d,
                                         Scratch const& s, MassMeasure const& mass,
                                         KeptSum const& kept, ThirdRead const& got,
                                         int& listed) const {
    if (got.n < 0) return false;
    const int C        = io.list_size;
    const Boundary cut = d.cut;
    const Source src   = s.set.source(got.n);
    // The range reaches the top: the set's kept entries are the first ones.
    if (sum_above(team, src, CountMeasure{}, cut.key) + got.copies < weight_type(C)) return false;
    const Boundary list_cut = search(team, src, CountMeasure{}, cut.key, got.copies,
                                     weight_type(C), third_low(got, cut), got.top);
    listed = list_entries(team, r, s, got.n, list_cut, mass, kept, f);
    return true;
  }

  // candidate_list: the first min(C, K) kept entries in order, with their
  // probabilities under the kept set's weights, and K.
  KOKKOS_INLINE_FUNCTION void write_list(member_type const& team, std::int64_t r,
                                         const T* row, Filters const& f,
                                         RowScan const& scan, BucketMap const& map,
                                         Decision d, Scratch const& s) const {
    const int C = io.list_size;
    int listed  = 0;
    KeptSum kept{0, 0};
    if (scan.candidates > 0) {
      const MassMeasure mass = mass_of(scan, f);
      Boundary list_cut      = d.cut;
      // (C = 0: only the count.)
      if (whole_row_group(d, scan) && !f.list_all) {
        // A flat row without -inf or NaN: columns 0 .. keep-1, equal
        // probabilities.
        kept.count      = d.cut.keep;
        kept.mass       = mass.unit(d.cut.key) * d.cut.keep;
        const int n     = int(d.cut.keep) < C ? int(d.cut.keep) : C;
        const double pr = 1.0 / double(d.cut.keep);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n), [&](int j) {
          io.ids[r * io.ids_row + j * io.ids_slot] = j;
          if (io.probs) io.probs[r * io.probs_row + j * io.probs_slot] = float(pr);
          if (io.logprobs)
            io.logprobs[r * io.logprobs_row + j * io.logprobs_slot] = float(-log_d(double(d.cut.keep)));
        });
        listed = n;
      } else if (Deferred && d.partial &&
                 list_partial(team, r, row, f, scan, map, d, s, mass, kept, listed)) {
        // Listed from the buckets that hold its first C entries (a third read).
      } else {
        bool in_set            = kept_in_set(d) || gather_kept(team, row, d.cut, s, d);
        int listed_count       = -1;  // list_entries' m, when known here
        if (f.list_all) {
          // d is the row's top C: the probabilities are the whole row's.
          kept = kept_sum(team, RowSource<T>{row, prm.vocab}, mass,
                          Boundary{neg_inf_key, 0, 0, 0});
        } else if (in_set) {
          kept = kept_sum(team, s.set.source(d.set_size), mass, d.cut);
          if (kept.count > std::uint32_t(C) && C > 0)
            list_cut = search(team, s.set.source(d.set_size), CountMeasure{}, d.cut.key,
                              d.cut.keep, weight_type(C), key_type(d.cut.key - 1),
                              scan.max_key);
          else
            listed_count = int(kept.count);  // the same entries, counted so
        } else {
          // More kept entries than the tiers hold: the list's cut over the
          // row, then exactly the listed entries gathered.
          const RowSource<T> src{row, prm.vocab};
          kept = kept_sum(team, src, mass, d.cut);
          if (C > 0) {
            list_cut = search(team, src, CountMeasure{}, d.cut.key, d.cut.keep,
                              weight_type(C), key_type(d.cut.key - 1), scan.max_key);
            in_set = gather_kept(team, row, list_cut, s, d);
          }
        }
        if (in_set && C > 0)
          listed = list_entries(team, r, s, d.set_size, list_cut, mass, kept, f, listed_count);
      }
    }
    list_tail(team, r, listed, kept.count);
  }

  // Past the list: id -1, probability 0, log-probability -inf; and K.
  KOKKOS_INLINE_FUNCTION void list_tail(member_type const& team, std::int64_t r,
                                        int listed, std::uint32_t count) const {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, listed, io.list_size), [&](int j) {
      io.ids[r * io.ids_row + j * io.ids_slot] = -1;
      if (io.probs) io.probs[r * io.probs_row + j * io.probs_slot] = 0.0f;
      if (io.logprobs)
        io.logprobs[r * io.logprobs_row + j * io.logprobs_slot] =
            bits_as_float(neg_inf_bits);
    });
    Kokkos::single(Kokkos::PerTeam(team),
                   [&]() { io.counts[r * io.counts_stride] = int(count); });
  }

  // Writes the set's entries kept by list_cut at their places in the order:
  // an entry's place is the number of listed entries before it (a larger
  // key, or the same key in a lower column). The listed entries are first
  // copied to the histogram's scratch (free once the row is decided), so
  // the ranking compares m x m entries on chip instead of m x set; a list
  // longer than that scratch holds is ranked against the set. Returns m.
  // known_m: -1, or m as the caller counted it (kept_sum on the same set)
  // when `cut` is the decision's own cut; the group's bound is then the
  // mask's (tie_column: the whole group kept, no search).
  KOKKOS_INLINE_FUNCTION int list_entries(member_type const& team, std::int64_t r,
                                          Scratch const& s, int n,
                                          Boundary const& cut,
                                          MassMeasure const& mass,
                                          KeptSum const& kept,
                                          Filters const& f, int known_m = -1) const {
    const int bound = known_m >= 0 && cut.keep >= cut.group
                          ? INT_MAX
                          : tie_column_bound(team, s.set, n, cut.key, cut.keep, prm.vocab);
    int m = known_m;
    if (m < 0) {
      std::uint32_t above = 0;
      team_reduce(
          team, n,
          [&](int i, std::uint32_t& acc) {
            if (order_key(s.set.value(i)) > cut.key) acc += 1;
          },
          Kokkos::Sum<std::uint32_t>(above));
      m = int(above + cut.keep);
    }
    return list_placed(team, r, s, n, cut, bound, m, mass, kept, f);
  }

  // list_entries once the group's bound (the highest listed column of the
  // cut's key) and m, the listed entries' count, are known (a split
  // list's helper team finds them: SplitKernel::help_cut).
  KOKKOS_INLINE_FUNCTION int list_placed(member_type const& team, std::int64_t r,
                                         Scratch const& s, int n, Boundary const& cut,
                                         int bound, int m, MassMeasure const& mass,
                                         KeptSum const& kept, Filters const& f) const {
    const Candidates& set = s.set;
    const auto listed = [&](key_type key, int column) {
      return key > cut.key || (key == cut.key && column <= bound);
    };
    const double W        = double(kept.mass);
    const double log_norm = log_d(W / double(prm.weight_scale));
    const bool inf_max    = !is_finite_value(mass.ref);
    const auto write = [&](int place, key_type key, int column) {
      const float z       = key_value(key);
      const weight_type w = mass(z);
      io.ids[r * io.ids_row + place * io.ids_slot] = column;
      if (io.probs)
        io.probs[r * io.probs_row + place * io.probs_slot] = float(double(w) / W);
      if (io.logprobs) {
        // Exact in double from the value; a +inf maximum's limit otherwise.
        const double lp =
            inf_max ? (w > 0 ? log_d(double(w) / W) : -double(bits_as_float(0x7F800000u)))
                    : (double(z) - double(mass.ref)) * double(f.inv_t) - log_norm;
        io.logprobs[r * io.logprobs_row + place * io.logprobs_slot] = float(lp);
      }
    };
    const auto before = [](key_type kj, int cj, key_type key, int column) {
      return kj > key || (kj == key && cj < column);
    };

    if (s.hist != nullptr && 2 * m <= prm.buckets + 1) {
      std::uint32_t* keys = s.hist;
      std::uint32_t* cols = s.hist + m;
      Kokkos::single(Kokkos::PerTeam(team), [&]() { *s.result = 0; });
      team.team_barrier();
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n), [&](int i) {
        const key_type key = order_key(set.value(i));
        const int column   = set.column(i);
        if (!listed(key, column)) return;
        const int at = Kokkos::atomic_fetch_add(s.result, 1);
        keys[at]     = key;
        cols[at]     = std::uint32_t(column);
      });
      team.team_barrier();
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, m), [&](int i) {
        const key_type key = keys[i];
        const int column   = int(cols[i]);
        int place          = 0;
        for (int j = 0; j < m; ++j) place += before(keys[j], int(cols[j]), key, column) ? 1 : 0;
        write(place, key, column);
      });
      team.team_barrier();
      return m;
    }
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n), [&](int i) {
      const key_type key = order_key(set.value(i));
      const int column   = set.column(i);
      if (!listed(key, column)) return;
      int place = 0;
      for (int j = 0; j < n; ++j) {
        const key_type kj = order_key(set.value(j));
        const int cj      = set.column(j);
        place += listed(kj, cj) && before(kj, cj, key, column) ? 1 : 0;
      }
      write(place, key, column);
    });
    team.team_barrier();
    return m;
  }

  KOKKOS_INLINE_FUNCTION static void mark(RowStats& st, Filters const& f,
                                          RowPath path) {
    if (f.topk) st.topk_path = path;
    if (f.topp) st.topp_path = path;
  }

  KOKKOS_INLINE_FUNCTION void record(member_type const& team, std::int64_t r,
                                     RowStats const& st) const {
    if (io.stats == nullptr) return;
    Kokkos::single(Kokkos::PerTeam(team),
                   [&]() { io.stats[r * io.stats_stride] = st; });
  }
};

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_MASK_KERNEL_HPP
