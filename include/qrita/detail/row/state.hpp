// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_DETAIL_ROW_STATE_HPP
#define QRITA_DETAIL_ROW_STATE_HPP

// What a row's decision works on: the call (RowCall: the logits, the rows'
// inputs and outputs, the call's parameters, and the compile-time facts of
// the kernel that runs it), a row's state as the steps fill it in
// (RowState), and the team's scratch (RowScratch). The steps themselves
// are free functions of (call, team, ...), one header per stage:
//
//   row/filters.hpp     a row's filters after the definition's special cases
//   row/threshold.hpp   the truncation threshold t and the histogram's range
//   row/gather.hpp      the reads that gather entries into the set
//   row/search.hpp      the pivot search on the call (top-k, then top-p)
//   row/decide.hpp      the decision after the first read
//   row/boundary.hpp    a miss: the buckets that hold the boundary
//   row/write_mask.hpp  the tie bound and the mask's write
//   row/kept.hpp        the kept set's size and weight
//   row/token.hpp       sample_tokens: the draw
//   row/list.hpp        candidate_list: the list
//   row/deferred.hpp    the sampler's and the list's deferred rows
//
// kernels/row_kernel.hpp (one team per row) and kernels/split_kernel.hpp
// (a row split across teams) call them.

#include <qrita/detail/boundary_buckets.hpp>
#include <qrita/detail/candidates.hpp>
#include <qrita/detail/histogram.hpp>
#include <qrita/detail/keys.hpp>
#include <qrita/detail/philox.hpp>
#include <qrita/detail/policy.hpp>
#include <qrita/detail/sigma_truncate.hpp>
#include <qrita/options.hpp>

#include <cstddef>
#include <cstdint>

namespace qrita {
namespace detail {

// What a call computes per row.
enum class Mode : std::int8_t {
  mask,       // sample_mask: the kept set, written in place
  sample,     // sample_tokens: one token drawn from the kept set
  candidates  // candidate_list: the kept set's head, in order
};

// The per-row inputs and outputs of a call (nullptr: absent), with their
// strides in elements.
struct RowIO {
  const int* k                    = nullptr;
  std::int64_t k_stride           = 0;
  const float* p                  = nullptr;
  std::int64_t p_stride           = 0;
  const float* min_p              = nullptr;
  std::int64_t min_p_stride       = 0;
  const float* temperature        = nullptr;
  std::int64_t temperature_stride = 0;
  RowStats* stats                 = nullptr;
  std::int64_t stats_stride       = 0;
  // sample_tokens
  const std::uint64_t* seeds   = nullptr;
  std::int64_t seeds_stride    = 0;
  const std::uint64_t* offsets = nullptr;
  std::int64_t offsets_stride  = 0;
  int* tokens                  = nullptr;
  std::int64_t tokens_stride   = 0;
  // candidate_list: [row][slot] at row * *_row + slot * *_slot
  int* ids             = nullptr;
  std::int64_t ids_row = 0, ids_slot = 0;
  float* probs           = nullptr;
  std::int64_t probs_row = 0, probs_slot = 0;
  float* logprobs           = nullptr;
  std::int64_t logprobs_row = 0, logprobs_slot = 0;
  int* counts                = nullptr;
  std::int64_t counts_stride = 0;
  int list_size              = 0;  // C
};

struct KernelParams {
  std::int64_t batch      = 0;
  int vocab               = 0;
  std::int64_t row_stride = 0;  // elements between consecutive rows
  int capacity            = 0;  // on-chip candidates per team
  int tier_capacity       = 0;  // device-memory candidates per team
  int buckets             = 0;  // histogram buckets (0: no histogram)
  bool truncation         = true;
  bool exact_ties         = true;
  bool binary_search      = false;
  float weight_scale      = 0;        // 2^F, see weight_fraction_bits
  float* tier_values      = nullptr;  // tier_capacity per team, by league rank
  int* tier_columns       = nullptr;
  // The sampler's and the list's deferred rows (nullptr: none): row r's
  // record is the deferred_stride bytes below deferred_end - r *
  // deferred_stride, at the workspace's end, its last byte the row's flag
  // (see deferred_flag and DeferredRow).
  std::uint8_t* deferred_end   = nullptr;
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
  int k     = 0;
  float p   = 1.0f;
  bool topk = false;
  bool topp = false;
  bool tail = false;          // the first read weighed the entries at or below t
  bool minp = false;          // min-p not yet resolved into k (see apply_min_p)
  bool draw = false;          // sample_tokens on a row without a filter: top-p's
                              // search finds the drawn entry (see decide_after_scan)
  bool list_all     = false;  // candidate_list on a row without a filter
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
  Write write  = Write::none;
  int set_size = 0;      // gathered entries the write uses
  bool drawn   = false;  // cut's last kept entry is the drawn token
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
  std::uint32_t above    = 0;
  bool partial           = false;  // see Decision::partial
  std::uint32_t inside   = 0;      // entries in range (where above is set)
  std::uint32_t outliers = 0;      // (for a partial decision: the first
  double head            = 0;      // read's outliers and HeadMass, which the
  double total           = 0;      // split path's deferred launch plans from)
};

// The outliers' softmax mass, for a top-p-only row (see try_outliers).
struct HeadMass {
  double head  = 0;  // exact fixed-point weight of the outliers
  double total = 0;  // head + the tail weighed by the first read
  bool known   = false;
};

// What the first kernel knows of a row it defers, after its first read
// and the decisions that read allows (defer, row/deferred.hpp): the second
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
  return buckets > 1
             ? (deferred_header_bytes + std::size_t(buckets + 1) * sizeof(std::uint32_t) + 1 + 15) /
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

// Everything a row's steps carry from one to the next: the filters, the
// first read's threshold, buckets and scan, and the decision.
struct RowState {
  Filters f;
  Threshold th;
  BucketMap map;
  RowScan scan;
  int outliers = 0;  // the first read's (above t)
  BucketPlan plan;
  Decision d;
  RowStats st{RowPath::off, RowPath::off, 0, 0, 0, 0, 1, 0, false};
};

// A team's scratch as the steps use it: the candidate set, the histogram
// (nullptr without one) and a team-shared int.
struct RowScratch {
  Candidates set;
  std::uint32_t* hist;
  int* result;
};

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

// What the answer's read (the draw's target's or the list's first C
// entries' buckets, after a partial decision: gather_answer) gathered: n
// entries (-1: none, or more than the set holds), the exact weight above
// its buckets (the sampler's: the list's read weighs nothing,
// RowCall::answer_weigh), and how many of the cut's group the set counts
// (see cut_copies).
struct AnswerSet {
  int n = -1;
  RangeMass exact;
  std::uint32_t copies = 0;
  key_type bottom      = neg_inf_key;  // below the set's keys (range_bottom_key)
  key_type top         = no_key;       // at or above them, at most the row's maximum
};

// What a row needs after its first read and the decisions that read
// allows: nothing but the write, the read of the boundary's buckets
// (gather_boundary), the whole-row search, or (the sampler's and the
// list's first kernel) the second kernel: see plan_buckets. The split path
// (kernels/split_kernel.hpp) takes the same decisions, then spreads the
// boundary's read over its teams.
enum class Next : std::int8_t { write, gather_boundary, whole_row, defer };

// What a partial decision's list needs: nothing more (C = 0), the answer's
// read of `range` (the buckets from the top whose exact counts reach C),
// or the row's other paths (K <= C). Sets K and W (kept).
enum class ListRange : std::int8_t { none, read, fails };

// The call, as every step of a row sees it: one type per execution space,
// logit type and mode (the sampler's and the list's steps are not compiled
// into the mask's kernel, whose row passes are the hot loops of every
// call), and kernel variant:
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
template <class ExecutionSpace, class T = float, Mode M = Mode::mask, bool OutOfLineSearch = false,
          bool Deferred = false>
struct RowCall {
  static_assert(!Deferred || M != Mode::mask, "qrita: only the sampler and the list defer rows");
  using execution_space                    = ExecutionSpace;
  using value_type                         = T;
  static constexpr Mode mode               = M;
  static constexpr bool out_of_line_search = OutOfLineSearch;
  static constexpr bool deferred           = Deferred;
  using policy_type =
      Kokkos::TeamPolicy<ExecutionSpace, typename Policy<ExecutionSpace>::launch_bounds>;
  using member_type   = typename policy_type::member_type;
  using scratch_space = typename ExecutionSpace::scratch_memory_space;
  template <class U>
  using scratch_view              = Kokkos::View<U*, scratch_space, Kokkos::MemoryUnmanaged>;
  static constexpr int row_unroll = Policy<ExecutionSpace>::row_unroll;
  // Loads in flight in gather_range (the boundary's and the answer's
  // reads): row_unroll for 4-byte logits. 16-bit logits read one group at
  // a time there: with two, the unsplit bf16 and fp16 kernels grow past
  // what nvcc inlines, and an out-of-line call makes them copy their
  // functor into every thread's local memory at entry (docs/DESIGN.md,
  // "Code shape on GPUs").
  static constexpr int gather_unroll = sizeof(T) == 4 ? row_unroll : 1;
  static constexpr int slots         = 2;  // team-shared ints: counter, result
  // What the answer's read (the draw's or the list's buckets) weighs.
  static constexpr Weigh answer_weigh = M == Mode::candidates ? Weigh::none : Weigh::all;
  // What the boundary's read weighs: top-p's search needs the exact weight
  // above the buckets unless top-k set the range.
  KOKKOS_FORCEINLINE_FUNCTION static Weigh boundary_weigh(Filters const& f) {
    return f.topp && !f.topk ? Weigh::all : Weigh::none;
  }
  // Whether the top-p bucket plans (topp_range) are inlined: in the 4-byte
  // mask and sampler kernels, which have room for them and save the call.
  // Out of line in the 16-bit and list kernels: inlined, it pushes the
  // unsplit 16-bit mask and the split list kernels into a functor copy
  // (see topp_buckets).
  static constexpr bool inline_topp = sizeof(T) == 4 && M != Mode::candidates;

  T* logits;  // written only by Mode::mask
  RowIO io;
  KernelParams prm;

  // The same call in another variant (OutOfLineSearch, Deferred): every
  // member above, copied. (The one place that lists them: a member added
  // above must be added here.)
  template <bool O, bool D>
  static RowCall from(RowCall<ExecutionSpace, T, M, O, D> const& other) {
    return RowCall{other.logits, other.io, other.prm};
  }

  // Team scratch: candidate values and columns, histogram, shared ints.
  static std::size_t scratch_bytes(int capacity, int buckets) {
    return scratch_view<float>::shmem_size(std::size_t(capacity)) +
           scratch_view<int>::shmem_size(std::size_t(capacity)) +
           scratch_view<std::uint32_t>::shmem_size(std::size_t(buckets + 1)) +
           scratch_view<int>::shmem_size(std::size_t(slots));
  }
  static constexpr std::size_t bytes_per_candidate = sizeof(float) + sizeof(int);
};

// A row's path, in its statistics, for the filters it applies.
KOKKOS_INLINE_FUNCTION void mark(RowStats& st, Filters const& f, RowPath path) {
  if (f.topk) st.topk_path = path;
  if (f.topp) st.topp_path = path;
}

template <class CallT>
KOKKOS_INLINE_FUNCTION void record(CallT const& call, typename CallT::member_type const& team,
                                   std::int64_t r, RowStats const& st) {
  if (call.io.stats == nullptr) return;
  Kokkos::single(Kokkos::PerTeam(team), [&]() { call.io.stats[r * call.io.stats_stride] = st; });
}

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_ROW_STATE_HPP
