// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_DETAIL_ROW_LIST_HPP
#define QRITA_DETAIL_ROW_LIST_HPP

// candidate_list: the first min(C, K) kept entries in order, with their
// probabilities and log-probabilities under the kept set's weights, and K.

#include <qrita/detail/resolve_ties.hpp>
#include <qrita/detail/row/boundary.hpp>
#include <qrita/detail/row/gather.hpp>
#include <qrita/detail/row/kept.hpp>
#include <qrita/detail/row/search.hpp>
#include <qrita/detail/row/state.hpp>

#include <climits>
#include <cstdint>

namespace qrita {
namespace detail {

// One listed entry's probability and log-probability under the kept
// set's weight W (kept.mass): w / W, and (x - max) / T - ln(W / 2^F) in
// double, exact from the value (a +inf maximum's limit log(w / W)
// otherwise). The sharded list (detail/shard) writes its slots with it too.
struct ListEntry {
  float prob;
  float logprob;
};

struct ListNorm {
  MassMeasure mass;
  double W;
  double log_norm;
  float inv_t;
  bool inf_max;

  KOKKOS_INLINE_FUNCTION static ListNorm of(weight_type kept_mass, MassMeasure const& mass,
                                            Filters const& f, float weight_scale) {
    const double W = double(kept_mass);
    return ListNorm{mass, W, log_d(W / double(weight_scale)), f.inv_t,
                    !is_finite_value(mass.ref)};
  }

  KOKKOS_INLINE_FUNCTION ListEntry entry(key_type key) const {
    const float z       = key_value(key);
    const weight_type w = mass(z);
    const double lp =
        inf_max ? (w > 0 ? log_d(double(w) / W) : -double(bits_as_float(0x7F800000u)))
                : (double(z) - double(mass.ref)) * double(inv_t) - log_norm;
    return ListEntry{float(double(w) / W), float(lp)};
  }
};

// Slot `place` of row r's list: the column, its probability and its
// log-probability (where the call asked for them).
KOKKOS_INLINE_FUNCTION void write_list_slot(RowIO const& io, std::int64_t r, int place,
                                            int column, ListEntry const& e) {
  io.ids[r * io.ids_row + place * io.ids_slot] = column;
  if (io.probs) io.probs[r * io.probs_row + place * io.probs_slot] = e.prob;
  if (io.logprobs) io.logprobs[r * io.logprobs_row + place * io.logprobs_slot] = e.logprob;
}


// candidate_list on a deferred row in one read of it (the second kernel,
// finish_deferred): the buckets of the list's first C entries (exact
// counts from the top: they do not depend on the cut) are gathered by
// the same read as the top-p boundary's (plan.range), into the tier's
// last entries, where a third read would gather them after the cut.
// Then the cut on the boundary's set, the kept set's W and K, and the
// list from the second set, checked with exact integers as a third
// read's is (list_in_answer); where the check fails, the row goes on as
// before (write_list: a third read). false, having read nothing, when
// the list's buckets do not lie above the boundary's or do not fit
// beside them in the set. (The draw's buckets depend on the cut's W; this
// kernel reads them after the cut: draw_partial. The split path gathers
// the list's so too, in split_gather: list_ahead.)
template <class CallT>
KOKKOS_INLINE_FUNCTION bool list_with_cut(CallT const& call,
                                          typename CallT::member_type const& team, std::int64_t r,
                                          const typename CallT::value_type* row, Filters const& f,
                                          BucketMap const& map, RowScan const& scan,
                                          BucketPlan const& plan, RowScratch const& s) {
  DeferredRow& dr        = deferred_row(call, r);
  const MassMeasure mass = mass_of(call, scan, f);
  const int tier         = s.set.cap1;
  if (tier <= 0 || call.io.list_size == 0) return false;
  const BucketRange second = list_buckets(call, team, map, dr.outliers, s);
  if (!(second.lo > plan.range.hi && second.hi >= second.lo)) return false;
  const std::uint32_t n1 = count_range(team, s.hist, map.nb, dr.outliers, plan.range).inside;
  const std::uint32_t n2 = count_range(team, s.hist, map.nb, dr.outliers, second).inside;
  if (n2 == 0 || n2 > std::uint32_t(tier) || n1 + n2 > std::uint32_t(s.set.capacity()))
    return false;
  // The boundary's set: the on-chip entries and the tier less its last
  // n2, where the list's set goes.
  RowScratch cut_set = s;
  cut_set.set.cap1 -= int(n2);
  RowScratch list_set = s;
  list_set.set        = Candidates{s.set.vals1 + cut_set.set.cap1,
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
  const TwoRangeMass m = gather_two_ranges<CallT::gather_unroll>(
      team, row, call.prm.vocab, map, plan.range, cut_set.set, second, list_set.set, mass);
  team.team_barrier();
  const int gathered = *cut_set.set.counter;
  const int listable = *list_set.set.counter;
  team.team_barrier();
  Decision d;
  RowStats st{RowPath::off, RowPath::off, 0, 0, 0, 0, 1, 0, false};
  RangeMass exact;
  exact.above = m.above;
  exact.total = m.total;
  resolve_buckets(call, team, f, scan, map, plan, exact, gathered, cut_set, d, st);
  AnswerSet got;
  got.n           = listable <= int(n2) ? listable : -1;
  got.exact.above = m.above2;
  got.exact.total = m.total;
  bound_answer(got, map, second, d.cut, scan.max_key);
  const KeptSum kept = partial_kept(call, team, d, cut_set, mass);
  int listed         = 0;
  if (d.partial && kept.count > std::uint32_t(call.io.list_size) &&
      list_in_answer(call, team, r, f, d, list_set, mass, kept, got, listed))
    list_tail(call, team, r, listed, kept.count);
  else
    write_list(call, team, r, row, f, scan, map, d, s);
  return true;
}

// candidate_list on a partial decision: the buckets from where the
// histogram's exact counts from the top reach C. false when they do not
// fit the set (or the list is not shorter than K).
template <class CallT>
KOKKOS_INLINE_FUNCTION bool list_partial(CallT const& call, typename CallT::member_type const& team,
                                         std::int64_t r, const typename CallT::value_type* row,
                                         Filters const& f, RowScan const& scan,
                                         BucketMap const& map, Decision const& d,
                                         RowScratch const& s, MassMeasure const& mass,
                                         KeptSum& kept, int& listed) {
  if (s.hist == nullptr) return false;
  BucketRange range;
  listed = 0;
  switch (list_range(call, team, map, d, s, mass, kept, range)) {
    case ListRange::none:
      return true;  // C = 0: only the count
    case ListRange::fails:
      return false;
    case ListRange::read:
      break;
  }
  const AnswerSet got = gather_answer(call, team, row, map, range, d, s, mass, scan.max_key);
  return list_in_answer(call, team, r, f, d, s, mass, kept, got, listed);
}

template <class CallT>
KOKKOS_INLINE_FUNCTION ListRange list_range(CallT const& call,
                                            typename CallT::member_type const& team,
                                            BucketMap const& map, Decision const& d,
                                            RowScratch const& s, MassMeasure const& mass,
                                            KeptSum& kept, BucketRange& range) {
  const int C = call.io.list_size;
  kept        = partial_kept(call, team, d, s, mass);
  if (C == 0) return ListRange::none;
  if (kept.count <= std::uint32_t(C)) return ListRange::fails;
  range = list_buckets(call, team, map, d.outliers, s);
  return range.lo < 0 ? ListRange::fails : ListRange::read;
}

// The buckets a deferred row's first C list entries lie in, placed
// before the cut, from the partial plan (the split path gathers them
// with the boundary's: SplitKernel::deferred_gather). They do not depend
// on the cut (list_buckets). Empty (lo > hi) where there are none. (The
// draw's: draw_buckets, placed by split_gather.)
template <class CallT>
KOKKOS_INLINE_FUNCTION BucketRange list_ahead(CallT const& call,
                                              typename CallT::member_type const& team,
                                              BucketMap const& map, BucketPlan const& plan,
                                              RowScratch const& s) {
  BucketRange range;  // empty
  if constexpr (CallT::mode == Mode::candidates) {
    if (s.hist == nullptr || !plan.partial || call.io.list_size == 0) return range;
    range = list_buckets(call, team, map, plan.outliers, s);
    if (range.lo < 0) range = BucketRange{};
  } else {
    (void)team, (void)map, (void)plan, (void)s;
  }
  return range;
}

// The buckets from the top whose exact counts reach C (lo -1: none).
template <class CallT>
KOKKOS_INLINE_FUNCTION BucketRange list_buckets(CallT const& call,
                                                typename CallT::member_type const& team,
                                                BucketMap const& map, std::uint32_t outliers,
                                                RowScratch const& s) {
  const std::uint32_t* hist = s.hist;
  BucketRange range;
  range.hi = map.nb;
  range.lo = suffix_crossing<std::uint32_t>(
      team, map.nb, outliers, [&](int b) { return hist[b]; }, std::uint32_t(call.io.list_size),
      s.result);
  return range;
}

// The list from what a third read gathered (the set). false when it
// does not hold the first C kept entries.
template <class CallT>
KOKKOS_INLINE_FUNCTION bool list_in_answer(CallT const& call,
                                           typename CallT::member_type const& team, std::int64_t r,
                                           Filters const& f, Decision const& d, RowScratch const& s,
                                           MassMeasure const& mass, KeptSum const& kept,
                                           AnswerSet const& got, int& listed) {
  if (got.n < 0) return false;
  const int C        = call.io.list_size;
  const Boundary cut = d.cut;
  const Source src   = s.set.source(got.n);
  // The range reaches the top: the set's kept entries are the first ones.
  if (sum_above(team, src, CountMeasure{}, cut.key) + got.copies < weight_type(C)) return false;
  const Boundary list_cut = search(call, team, src, CountMeasure{}, cut.key, got.copies,
                                   weight_type(C), answer_low(got, cut), got.top);
  listed                  = list_entries(call, team, r, s, got.n, list_cut, mass, kept, f);
  return true;
}

// candidate_list: the first min(C, K) kept entries in order, with their
// probabilities under the kept set's weights, and K.
template <class CallT>
KOKKOS_INLINE_FUNCTION void write_list(CallT const& call, typename CallT::member_type const& team,
                                       std::int64_t r, const typename CallT::value_type* row,
                                       Filters const& f, RowScan const& scan, BucketMap const& map,
                                       Decision d, RowScratch const& s) {
  const int C = call.io.list_size;
  int listed  = 0;
  KeptSum kept{0, 0};
  if (scan.candidates > 0) {
    const MassMeasure mass = mass_of(call, scan, f);
    Boundary list_cut      = d.cut;
    // (C = 0: only the count.)
    if (whole_row_group(call, d, scan) && !f.list_all) {
      // A flat row without -inf or NaN: columns 0 .. keep-1, equal
      // probabilities.
      kept.count      = d.cut.keep;
      kept.mass       = mass.unit(d.cut.key) * d.cut.keep;
      const int n       = int(d.cut.keep) < C ? int(d.cut.keep) : C;
      const ListEntry e = ListNorm::of(kept.mass, mass, f, call.prm.weight_scale).entry(d.cut.key);
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n),
                           [&](int j) { write_list_slot(call.io, r, j, j, e); });
      listed = n;
    } else if (CallT::deferred && d.partial &&
               list_partial(call, team, r, row, f, scan, map, d, s, mass, kept, listed)) {
      // Listed from the buckets that hold its first C entries (a third read).
    } else {
      bool in_set      = kept_in_set(call, d) || gather_kept(call, team, row, d.cut, s, d);
      int listed_count = -1;  // list_entries' m, when known here
      if (f.list_all) {
        // d is the row's top C: the probabilities are the whole row's.
        kept = kept_sum(call, team, RowSource<typename CallT::value_type>{row, call.prm.vocab},
                        mass, Boundary{neg_inf_key, 0, 0, 0});
      } else if (in_set) {
        kept = kept_sum(call, team, s.set.source(d.set_size), mass, d.cut);
        if (kept.count > std::uint32_t(C) && C > 0)
          list_cut = search(call, team, s.set.source(d.set_size), CountMeasure{}, d.cut.key,
                            d.cut.keep, weight_type(C), key_type(d.cut.key - 1), scan.max_key);
        else
          listed_count = int(kept.count);  // the same entries, counted so
      } else {
        // More kept entries than the tiers hold: the list's cut over the
        // row, then exactly the listed entries gathered.
        const RowSource<typename CallT::value_type> src{row, call.prm.vocab};
        kept = kept_sum(call, team, src, mass, d.cut);
        if (C > 0) {
          list_cut = search(call, team, src, CountMeasure{}, d.cut.key, d.cut.keep, weight_type(C),
                            key_type(d.cut.key - 1), scan.max_key);
          in_set   = gather_kept(call, team, row, list_cut, s, d);
        }
      }
      if (in_set && C > 0)
        listed = list_entries(call, team, r, s, d.set_size, list_cut, mass, kept, f, listed_count);
    }
  }
  list_tail(call, team, r, listed, kept.count);
}

// Past the list: id -1, probability 0, log-probability -inf; and K.
template <class CallT>
KOKKOS_INLINE_FUNCTION void list_tail(CallT const& call, typename CallT::member_type const& team,
                                      std::int64_t r, int listed, std::uint32_t count) {
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, listed, call.io.list_size), [&](int j) {
    call.io.ids[r * call.io.ids_row + j * call.io.ids_slot] = -1;
    if (call.io.probs) call.io.probs[r * call.io.probs_row + j * call.io.probs_slot] = 0.0f;
    if (call.io.logprobs)
      call.io.logprobs[r * call.io.logprobs_row + j * call.io.logprobs_slot] =
          bits_as_float(neg_inf_bits);
  });
  Kokkos::single(Kokkos::PerTeam(team),
                 [&]() { call.io.counts[r * call.io.counts_stride] = int(count); });
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
template <class CallT>
KOKKOS_INLINE_FUNCTION int list_entries(CallT const& call, typename CallT::member_type const& team,
                                        std::int64_t r, RowScratch const& s, int n,
                                        Boundary const& cut, MassMeasure const& mass,
                                        KeptSum const& kept, Filters const& f, int known_m = -1) {
  const int bound = known_m >= 0 && cut.keep >= cut.group
                        ? INT_MAX
                        : tie_column_bound(team, s.set, n, cut.key, cut.keep, call.prm.vocab);
  int m           = known_m;
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
  return list_placed(call, team, r, s, n, cut, bound, m, mass, kept, f);
}

// list_entries once the group's bound (the highest listed column of the
// cut's key) and m, the listed entries' count, are known (a split
// list's helper team finds them: SplitKernel::help_cut).
template <class CallT>
KOKKOS_INLINE_FUNCTION int list_placed(CallT const& call, typename CallT::member_type const& team,
                                       std::int64_t r, RowScratch const& s, int n,
                                       Boundary const& cut, int bound, int m,
                                       MassMeasure const& mass, KeptSum const& kept,
                                       Filters const& f) {
  const Candidates& set = s.set;
  const auto listed     = [&](key_type key, int column) {
    return key > cut.key || (key == cut.key && column <= bound);
  };
  const ListNorm norm = ListNorm::of(kept.mass, mass, f, call.prm.weight_scale);
  const auto write     = [&](int place, key_type key, int column) {
    write_list_slot(call.io, r, place, column, norm.entry(key));
  };
  const auto before = [](key_type kj, int cj, key_type key, int column) {
    return kj > key || (kj == key && cj < column);
  };

  if (s.hist != nullptr && 2 * m <= call.prm.buckets + 1) {
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

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_ROW_LIST_HPP
