// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_DETAIL_KERNELS_DIGIT_KERNEL_HPP
#define QRITA_DETAIL_KERNELS_DIGIT_KERNEL_HPP

// The small-batch kernel: one launch in which every one of a row's S teams
// runs every pass of the row's decision on its part of the row, so that no
// team carries a chain of steps alone while the others wait.
//
// It runs the sharded calls' steps (shard/steps.hpp) with the row's parts
// as the shards and the workspace as the wire: a pass's histogram is
// summed into the row's words with integer atomics (the same totals
// whatever the order), the row's teams meet at a barrier, and each then
// reads the totals and makes the same choice. So a row gets the sharded
// call's answer, which is the plain call's, bit for bit.
//
//   qrita::digit_mask, qrita::digit_sample, qrita::digit_list
//     1. maximum   each part's largest key, an atomic maximum; barrier
//     2. setup     the filters, the weights, min-p's floor (every team)
//     3. selects   top-k, top-p, then the draw or the list: four passes of
//                  8-bit digits (shard/select.hpp), each: a histogram in
//                  team scratch, its buckets added to the row's words,
//                  barrier, the digit chosen by team scans
//     4. ties      each part's members of the boundary key; barrier
//     5. output    each part writes its mask, or the part holding the drawn
//                  entry writes the token, or every part appends its listed
//                  entries, barrier, and each places a share of them
//     6. clear     the last team to finish zeroes the row's words
//
// The barrier needs every team of the batch resident at once, which the
// launch checks (LaunchArrangement::digits: CUDA, one wave). The row's
// words are zero between calls: the workspace starts zero-filled and the
// kernel leaves it so.

#include <qrita/detail/resolve_ties.hpp>
#include <qrita/detail/row/list.hpp>
#include <qrita/detail/shard/steps.hpp>

#include <climits>
#include <cstddef>
#include <cstdint>

namespace qrita {
namespace detail {

// A row's words in the digit kernel's region of the workspace (uint64).
struct DigitLayout {
  static constexpr int selects       = 3;  // top-k, top-p, the draw or the list
  static constexpr int list_capacity = 1024;
  // Per row: the barrier's arrivals, the teams done, the maximum, the
  // listed entries' count, then each part's tie count, a histogram per
  // pass of each select, and the listed entries.
  static constexpr std::int64_t arrivals = 0, done = 1, maximum = 2, listed = 3, ties = 4;
  int teams_per_row       = 1;  // S of this call
  std::int64_t row_words  = 0;  // the stride, for the workspace's largest S

  static std::int64_t words_per_row(int max_teams_per_row) {
    const std::int64_t n = ties + max_teams_per_row +
                           std::int64_t(selects) * shard::digit_passes * shard::histogram_words +
                           list_capacity;
    return (n + 31) / 32 * 32;
  }
  static std::size_t bytes(std::int64_t rows, int max_teams_per_row) {
    return std::size_t(rows) * std::size_t(words_per_row(max_teams_per_row)) *
           sizeof(std::uint64_t);
  }
  KOKKOS_INLINE_FUNCTION std::int64_t hist_at(int select, int pass) const {
    return ties + teams_per_row +
           std::int64_t(select * shard::digit_passes + pass) * shard::histogram_words;
  }
  KOKKOS_INLINE_FUNCTION std::int64_t list_at() const {
    return ties + teams_per_row +
           std::int64_t(selects) * shard::digit_passes * shard::histogram_words;
  }
};

namespace digit {

KOKKOS_INLINE_FUNCTION std::uint64_t load(const std::uint64_t* p) {
  return *reinterpret_cast<const volatile std::uint64_t*>(p);
}

// Every team of a row waits here until all S have arrived at their
// `phase`-th barrier (phases count from 1): the arrivals count only up,
// and the row's last team zeroes them after the last barrier. The fences
// publish a team's writes before its arrival and order its reads after
// the others'.
template <class Member>
KOKKOS_INLINE_FUNCTION void row_barrier(Member const& team, std::uint64_t* arrivals,
                                        std::uint64_t target) {
  team.team_barrier();
  Kokkos::single(Kokkos::PerTeam(team), [&]() {
    Kokkos::memory_fence();
    Kokkos::atomic_add(arrivals, std::uint64_t(1));
    while (load(arrivals) < target) {
    }
    Kokkos::memory_fence();
  });
  team.team_barrier();
}

// The digit of pass `pass` for the team's copy of the row (`s`, in team
// scratch), from the summed histogram `h` (team scratch, which the
// partial group is added to): what choose_digit does, with team scans over
// the buckets from the largest key down instead of one thread's loop.
// `ex` holds 2 x buckets words of scratch for the scans.
template <class Member>
KOKKOS_INLINE_FUNCTION void choose_digit_team(Member const& team, shard::Goal g, shard::ShardRow& s,
                                              std::uint64_t* h, std::uint64_t* ex, int pass,
                                              int list_size) {
  using namespace shard;
  std::uint64_t* counts  = h;
  std::uint64_t* weights = h + buckets;
  Kokkos::single(Kokkos::PerTeam(team), [&]() { add_partial_group(s, counts, weights, pass); });
  team.team_barrier();
  // Exclusive sums from the top bucket down: ex[i] the counts, ex[buckets
  // + i] the weights, of the buckets above bucket buckets - 1 - i.
  // (A barrier after each scan: Kokkos 3.4's CUDA team scans, like its
  // reductions, reuse one shared buffer per value type; docs/DESIGN.md,
  // "Portability notes".)
  Kokkos::parallel_scan(Kokkos::TeamThreadRange(team, buckets),
                        [&](int i, std::uint64_t& acc, bool final) {
                          if (final) ex[i] = acc;
                          acc += counts[buckets - 1 - i];
                        });
  team.team_barrier();
  Kokkos::parallel_scan(Kokkos::TeamThreadRange(team, buckets),
                        [&](int i, std::uint64_t& acc, bool final) {
                          if (final) ex[buckets + i] = acc;
                          acc += weights[buckets - 1 - i];
                        });
  team.team_barrier();
  const bool count_goal = by_count(g);
  if (pass == 0) {
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      const std::uint64_t n = ex[buckets - 1] + counts[0];
      const weight_type w   = ex[2 * buckets - 1] + weights[0];
      open_select(g, s, n, w, list_size);
    });
    team.team_barrier();
    if (!s.active) return;
  }
  // The first bucket from the top whose inclusive sum reaches the target;
  // the sums only grow, so exactly one bucket starts reaching it. ex[0]
  // (zero) marks none found.
  const std::uint64_t base = count_goal ? s.above : std::uint64_t(s.above_weight);
  const std::uint64_t target = s.target;
  std::uint64_t* found = ex + 2 * buckets;  // [pick + 1]
  Kokkos::single(Kokkos::PerTeam(team), [&]() { *found = 0; });
  team.team_barrier();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, buckets), [&](int i) {
    const int b             = buckets - 1 - i;
    const std::uint64_t e   = count_goal ? ex[i] : ex[buckets + i];
    const std::uint64_t v   = count_goal ? counts[b] : weights[b];
    if (base + e < target && base + e + v >= target) *found = std::uint64_t(i) + 1;
  });
  team.team_barrier();
  Kokkos::single(Kokkos::PerTeam(team), [&]() {
    int pick = 0;
    if (*found > 0) {
      const int i = int(*found) - 1;
      pick        = buckets - 1 - i;
      s.above += ex[i];
      s.above_weight += ex[buckets + i];
    } else {
      // As choose_digit's loop: no bucket reached it, so all lie above.
      s.above += ex[buckets - 1] + counts[0];
      s.above_weight += ex[2 * buckets - 1] + weights[0];
    }
    close_digit(g, s, pick, pass);
  });
  team.team_barrier();
}

}  // namespace digit

// The kernel for call M on logits of storage type T: a league of batch x
// S teams, team t taking part t % S of row t / S.
template <class ExecutionSpace, class T, Mode M>
struct DigitKernel {
  using member_type = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  using Call        = shard::ShardCall<T, M>;
  using Scratch     = Kokkos::View<std::uint64_t*, typename ExecutionSpace::scratch_memory_space,
                               Kokkos::MemoryUnmanaged>;

  Call call;
  std::uint64_t* words = nullptr;  // the region's first row
  DigitLayout lay;

  // Team scratch: the row's state, a histogram, and the scans' sums.
  static constexpr int state_words =
      int((sizeof(shard::ShardRow) + sizeof(std::uint64_t) - 1) / sizeof(std::uint64_t));
  static constexpr int scratch_words = state_words + shard::histogram_words +
                                       2 * shard::buckets + 1;
  static int scratch_bytes() { return int(Scratch::shmem_size(std::size_t(scratch_words))); }

  static constexpr const char* label() {
    return M == Mode::mask     ? "qrita::digit_mask"
           : M == Mode::sample ? "qrita::digit_sample"
                               : "qrita::digit_list";
  }

  KOKKOS_INLINE_FUNCTION void operator()(member_type const& team) const {
    using namespace shard;
    const int S          = lay.teams_per_row;
    const std::int64_t r = team.league_rank() / S;
    const int part       = team.league_rank() % S;
    const int lo = part_start(part), hi = part_start(part + 1);
    std::uint64_t* row_words = words + r * lay.row_words;
    Scratch scratch(team.team_scratch(0), std::size_t(scratch_words));
    ShardRow& s       = *reinterpret_cast<ShardRow*>(scratch.data());
    std::uint64_t* h  = scratch.data() + state_words;
    std::uint64_t* ex = h + histogram_words;
    const T* row      = call.row(r);
    std::uint64_t phase = 0;
    const auto barrier  = [&]() {
      ++phase;
      digit::row_barrier(team, row_words + DigitLayout::arrivals, phase * std::uint64_t(S));
    };

    // 1. The row's maximum.
    {
      const RowSource<T> src{row + lo, hi - lo};
      key_type top = neg_inf_key;
      team_reduce(
          team, hi - lo,
          [&](int i, key_type& m) {
            const key_type k = order_key(src[i]);
            m                = k > m ? k : m;
          },
          Kokkos::Max<key_type>(top));
      // Keys are 32-bit: the maximum is the word's low half.
      Kokkos::single(Kokkos::PerTeam(team), [&]() {
        Kokkos::atomic_fetch_max(maximum_word(row_words), static_cast<unsigned int>(top));
      });
    }
    barrier();
    // 2. The row's state, the same on every team (row_setup's).
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      const key_type top = *static_cast<const volatile unsigned int*>(maximum_word(row_words));
      s                  = setup_row(call, r, top);
    });
    team.team_barrier();
    // 3. The selects.
    const auto select = [&](Goal g, int index) {
      Kokkos::single(Kokkos::PerTeam(team), [&]() { begin_select(g, s); });
      team.team_barrier();
      for (int pass = 0; pass < digit_passes && s.active; ++pass) {
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, histogram_words),
                             [&](int i) { h[i] = 0; });
        team.team_barrier();
        histogram_shard(team, row + lo, hi - lo, s, pass, h);
        team.team_barrier();
        std::uint64_t* sum = row_words + lay.hist_at(index, pass);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, histogram_words), [&](int i) {
          if (h[i] != 0) Kokkos::atomic_add(sum + i, h[i]);
        });
        barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, histogram_words),
                             [&](int i) { h[i] = digit::load(sum + i); });
        team.team_barrier();
        digit::choose_digit_team(team, g, s, h, ex, pass, call.io.list_size);
      }
    };
    select(Goal::top_k, 0);
    select(Goal::top_p, 1);
    if (M == Mode::sample) select(Goal::draw, 2);
    if (M == Mode::candidates) select(Goal::list, 2);

    // 4. The boundary group's members in each part (shard/steps.hpp's
    // count_ties), where there is an output to make.
    const bool wanted = M == Mode::mask ? s.write : s.found;
    std::uint64_t before = 0, mine = 0;
    if (wanted) {
      const key_type key = M == Mode::mask ? s.cut.key : s.pick.key;
      mine               = count_members(team, row + lo, hi - lo, key);
      Kokkos::single(Kokkos::PerTeam(team),
                     [&]() { row_words[DigitLayout::ties + part] = mine; });
      barrier();
      for (int q = 0; q < part; ++q) before += digit::load(row_words + DigitLayout::ties + q);
    }
    // 5. The outputs.
    write_outputs(team, r, part, lo, hi, s, before, mine, row_words, barrier);
    // 6. The last team out zeroes the row's words.
    finish(team, row_words);
  }

  static KOKKOS_INLINE_FUNCTION unsigned int* maximum_word(std::uint64_t* row_words) {
    static_assert(sizeof(key_type) == sizeof(unsigned int),
                  "qrita: the digit kernel keeps the maximum key in 32 bits");
    return reinterpret_cast<unsigned int*>(row_words + DigitLayout::maximum);
  }

  // Part p's first column (4-aligned; part S ends the row).
  KOKKOS_INLINE_FUNCTION int part_start(int p) const {
    if (p >= lay.teams_per_row) return call.width;
    return int(std::int64_t(call.width) * p / lay.teams_per_row / 4 * 4);
  }

  template <class Barrier>
  KOKKOS_INLINE_FUNCTION void write_outputs(member_type const& team, std::int64_t r, int part,
                                            int lo, int hi, shard::ShardRow const& s,
                                            std::uint64_t before, std::uint64_t mine,
                                            std::uint64_t* row_words,
                                            Barrier const& barrier) const {
    using namespace shard;
    T* row = call.row(r);
    if constexpr (M == Mode::mask) {
      (void)row_words, (void)barrier;
      if (!s.write || hi == lo) return;
      const std::uint32_t keep = shard_keep(s.cut.keep, before, mine);
      const int tie_column     = keep >= mine ? INT_MAX : -1;
      apply_mask(team, row + lo, hi - lo, s.cut.key, keep, std::uint32_t(mine), tie_column);
    } else if constexpr (M == Mode::sample) {
      (void)row_words, (void)barrier;
      int* token = call.io.tokens + r * call.io.tokens_stride;
      if (!s.found) {
        if (part == 0) Kokkos::single(Kokkos::PerTeam(team), [&]() { *token = -1; });
        return;
      }
      const std::uint64_t n = std::uint64_t(s.pick.keep) - 1;  // the member drawn
      if (n < before || n >= before + mine) return;
      find_member(team, row + lo, hi - lo, s.pick.key, std::uint32_t(n - before),
                  [&](int i) { *token = lo + i; });
    } else {
      const int n         = s.found ? int(s.target) : 0;
      const ListNorm norm = ListNorm::of(s.weight, s.mass, s.f, call.prm.weight_scale);
      std::uint64_t* list = row_words + lay.list_at();
      if (s.found) {
        const std::uint32_t keep = shard_keep(s.pick.keep, before, mine);
        append_listed(team, row + lo, hi - lo, lo, s.pick.key, keep,
                      row_words + DigitLayout::listed, list);
        barrier();
        // Each part places a share of the list: a word's place is the
        // count of larger words (all distinct: the columns differ).
        const int from = int(std::int64_t(n) * part / lay.teams_per_row);
        const int to   = int(std::int64_t(n) * (part + 1) / lay.teams_per_row);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, from, to), [&](int i) {
          const std::uint64_t v = digit::load(list + i);
          int place             = 0;
          for (int j = 0; j < n; ++j) place += digit::load(list + j) > v ? 1 : 0;
          write_list_slot(call.io, r, place, word_column(v), norm.entry(word_key(v)));
        });
      }
      if (part != 0) return;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n, call.io.list_size), [&](int j) {
        write_list_slot(call.io, r, j, -1, ListEntry{0.0f, -bits_as_float(0x7F800000u)});
      });
      Kokkos::single(Kokkos::PerTeam(team), [&]() {
        call.io.counts[r * call.io.counts_stride] = s.max_key > neg_inf_key ? int(s.count) : 0;
      });
    }
  }

  // This part's listed entries (keys above `key`, and its first `keep`
  // members of `key`) appended to the row's list as words (list_word).
  KOKKOS_INLINE_FUNCTION void append_listed(member_type const& team, const T* part_row, int width,
                                            int first, key_type key, std::uint32_t keep,
                                            std::uint64_t* count, std::uint64_t* list) const {
    using namespace shard;
    const RowSource<T> src{part_row, width};
    std::uint64_t total = 0;
    team_reduce(
        team, width,
        [&](int i, std::uint64_t& acc) { acc += order_key(src[i]) > key ? 1u : 0u; },
        Kokkos::Sum<std::uint64_t>(total));
    const std::uint64_t m = total + keep;
    if (m == 0) return;
    std::uint64_t* base = list;
    Kokkos::single(
        Kokkos::PerTeam(team),
        [&](std::uint64_t*& b) { b = list + Kokkos::atomic_fetch_add(count, m); }, base);
    // Placed in column order: the low half of the scan counts the members
    // of `key`, the high half the entries listed (gather_list's scan).
    Kokkos::parallel_scan(Kokkos::TeamThreadRange(team, width),
                          [&](int i, std::uint64_t& acc, bool final) {
                            const key_type k  = order_key(src[i]);
                            const bool member = k == key;
                            const bool listed = k > key || (member && std::uint32_t(acc) < keep);
                            if (final && listed) base[acc >> 32] = list_word(k, first + i);
                            acc += (member ? 1u : 0u) + (listed ? std::uint64_t(1) << 32 : 0u);
                          });
  }

  // Every team, once done with the row's words, counts itself out; the
  // last one zeroes them for the next call.
  KOKKOS_INLINE_FUNCTION void finish(member_type const& team, std::uint64_t* row_words) const {
    const int S = lay.teams_per_row;
    bool last   = false;
    team.team_barrier();
    Kokkos::single(
        Kokkos::PerTeam(team),
        [&](bool& l) {
          Kokkos::memory_fence();
          l = Kokkos::atomic_fetch_add(row_words + DigitLayout::done, std::uint64_t(1)) ==
              std::uint64_t(S - 1);
          Kokkos::memory_fence();
        },
        last);
    if (!last) return;
    const std::int64_t n = lay.list_at() + DigitLayout::list_capacity;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n), [&](std::int64_t i) {
      row_words[i] = 0;
    });
  }
};

}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_KERNELS_DIGIT_KERNEL_HPP
