// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_DETAIL_SHARD_STEPS_HPP
#define QRITA_DETAIL_SHARD_STEPS_HPP

// The steps of a sharded call, each a kernel (labelled qrita::sharded_*)
// and at most one collective, in the order the calls make them:
//
//   row_maximum     the row's largest key over every shard (allreduce max)
//   row_setup       the filters (read_filters, global vocabulary), the
//                   weights, min-p as the region's floor
//   select          top-k, top-p, the draw or the list (select.hpp:
//                   four histogram passes, each an allreduce sum)
//   count_ties      each shard's members of the boundary key (allgather),
//                   so that a group is numbered across shards by column
//   write_mask      the shard's part of the kept set
//   pick_token      the drawn entry's global column (allreduce max)
//   gather_list     each shard's listed entries, sorted (allgather)
//   write_list      the list, merged in the order, on every rank
//
// Nothing here allocates or waits for the device: a call with a
// sharded::Workspace on a stream-ordered communicator (NCCL) can be
// captured in a CUDA graph.

#include <qrita/detail/compat.hpp>
#include <qrita/detail/policy.hpp>
#include <qrita/detail/resolve_ties.hpp>
#include <qrita/detail/row/filters.hpp>
#include <qrita/detail/row/list.hpp>
#include <qrita/detail/shard/select.hpp>

#include <climits>
#include <cstdint>

namespace qrita {
namespace detail {
namespace shard {

// A sharded call's arguments: the shard's logits (storage type T) and
// where they sit in the whole row, the rows' inputs and outputs, and the
// global vocabulary the filters and the weights are defined on.
template <class T, Mode M>
struct ShardCall {
  static constexpr Mode mode = M;
  struct Params {
    int vocab          = 0;  // the whole row's
    float weight_scale = 0;  // 2^F for the whole row
  };
  T* logits               = nullptr;
  std::int64_t batch      = 0;
  int width               = 0;  // the shard's columns
  std::int64_t row_stride = 0;
  std::int64_t first      = 0;  // the shard's first column in the whole row
  RowIO io;
  Params prm;

  KOKKOS_INLINE_FUNCTION T* row(std::int64_t r) const { return logits + r * row_stride; }
};

// The workspace's buffers, as pointers (the kernels capture them by value).
struct Buffers {
  ShardRow* rows            = nullptr;  // [batch]
  std::uint64_t* row_word   = nullptr;  // [batch]: the maximum, the token
  std::uint64_t* hist       = nullptr;  // [batch][histogram_words]
  std::uint64_t* ties       = nullptr;  // [batch]: this shard's members
  std::uint64_t* ties_all   = nullptr;  // [ranks][batch]
  std::uint64_t* list       = nullptr;  // [batch][list_capacity]
  std::uint64_t* list_all   = nullptr;  // [ranks][batch][list_capacity]
  const int* before         = nullptr;  // the ranks whose shards precede this one
  int n_before              = 0;
  int ranks                 = 1;
  int list_capacity         = 0;
};

template <class Space>
using TeamPolicyOf = Kokkos::TeamPolicy<Space>;
template <class Space>
using Member = typename TeamPolicyOf<Space>::member_type;

// A team per row. Device teams have a power-of-two size, which Kokkos'
// team scans on CUDA require (Kokkos::AUTO may choose another).
template <class Space>
TeamPolicyOf<Space> row_teams(Space const& space, std::int64_t batch) {
  if constexpr (Policy<Space>::runs_on_host)
    return TeamPolicyOf<Space>(space, int(batch), Kokkos::AUTO);
  else
    return TeamPolicyOf<Space>(space, int(batch), Policy<Space>::wide_batch_team_size);
}

// The members of a row's boundary group in the shards before this one.
KOKKOS_INLINE_FUNCTION std::uint64_t ties_before(Buffers const& b, std::int64_t batch,
                                                 std::int64_t r) {
  std::uint64_t n = 0;
  for (int i = 0; i < b.n_before; ++i) n += b.ties_all[std::int64_t(b.before[i]) * batch + r];
  return n;
}

// A listed entry as one word: the key above, the column's complement
// below, so that a larger word is earlier in the order; 0 is no entry
// (no candidate has key 0).
KOKKOS_INLINE_FUNCTION std::uint64_t list_word(key_type key, std::int64_t column) {
  return (std::uint64_t(key) << 32) | std::uint64_t(~std::uint32_t(column));
}
KOKKOS_INLINE_FUNCTION key_type word_key(std::uint64_t w) { return key_type(w >> 32); }
KOKKOS_INLINE_FUNCTION int word_column(std::uint64_t w) { return int(~std::uint32_t(w)); }

// The scan that places a shard's listed entries in column order: every key
// above the pick's `key`, then the first `keep` members of `key`. Its
// value counts the members of `key` (low half) and the keys above it (high
// half), so that an entry's step does not depend on the entries before it:
// a GPU's team scan calls the step with zero, not with the running value
// (Kokkos' TeamThreadRange parallel_scan).
KOKKOS_INLINE_FUNCTION std::uint64_t list_scan_step(key_type k, key_type key) {
  return k == key ? std::uint64_t(1) : k > key ? std::uint64_t(1) << 32 : std::uint64_t(0);
}
// With the scan's value before the entry (`before`): whether it is listed,
KOKKOS_INLINE_FUNCTION bool is_listed(key_type k, key_type key, std::uint64_t before,
                                      std::uint32_t keep) {
  return k > key || (k == key && std::uint32_t(before) < keep);
}
// and the listed entries before it (after the last entry: the count).
KOKKOS_INLINE_FUNCTION std::uint64_t list_place(std::uint64_t before, std::uint32_t keep) {
  const std::uint32_t members = std::uint32_t(before);
  return (before >> 32) + (members < keep ? members : keep);
}

// ------------------------------------------------------------ the steps

template <class Space, class T, Mode M, class Comm>
void row_maximum(Space const& space, Comm const& comm, ShardCall<T, M> const& call,
                 Buffers const& b) {
  Kokkos::parallel_for(
      "qrita::sharded_maximum", row_teams(space, call.batch),
      KOKKOS_LAMBDA(Member<Space> const& team) {
        const std::int64_t r = team.league_rank();
        const RowSource<T> src{call.row(r), call.width};
        key_type top = neg_inf_key;
        team_reduce(
            team, call.width,
            [&](int i, key_type& m) {
              const key_type k = order_key(src[i]);
              m                = k > m ? k : m;
            },
            Kokkos::Max<key_type>(top));
        Kokkos::single(Kokkos::PerTeam(team), [&]() { b.row_word[r] = top; });
      });
  comm.allreduce_max(space, b.row_word, std::size_t(call.batch));
}

// The smallest key whose value v has double(v) >= c (min-p's cut), at most
// `top` (whose value is at least c).
KOKKOS_INLINE_FUNCTION key_type min_p_floor(double c, key_type top) {
  key_type lo = neg_inf_key + 1, hi = top;
  while (lo < hi) {
    const key_type mid = lo + (hi - lo) / 2;
    if (double(key_value(mid)) >= c)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

template <class Space, class T, Mode M>
void row_setup(Space const& space, ShardCall<T, M> const& call, Buffers const& b) {
  Kokkos::parallel_for(
      "qrita::sharded_setup", RowRange<Space>(space, 0, call.batch),
      KOKKOS_LAMBDA(std::int64_t r) {
        ShardRow s;
        s.f       = read_filters(call, r);
        s.max_key = key_type(b.row_word[r]);
        s.mass    = MassMeasure{key_value(s.max_key), call.prm.weight_scale, s.f.inv_t};
        const bool candidate = s.max_key > neg_inf_key;
        s.write              = candidate && s.f.any();
        s.cut                = Cut{neg_inf_key, 0};
        if (candidate && s.f.minp)
          s.cut.key = min_p_floor(min_p_cut(s.f, key_value(s.max_key)), s.max_key) - 1;
        b.rows[r] = s;
      });
}

template <class Space, class T, Mode M, class Comm>
void select(Space const& space, Comm const& comm, ShardCall<T, M> const& call, Buffers const& b,
            Goal goal) {
  const int list_size = call.io.list_size;
  Kokkos::parallel_for(
      "qrita::sharded_select", RowRange<Space>(space, 0, call.batch),
      KOKKOS_LAMBDA(std::int64_t r) { begin_select(goal, b.rows[r]); });
  const int scratch = int(histogram_words * sizeof(std::uint64_t));
  using Scratch     = Kokkos::View<std::uint64_t*, typename Space::scratch_memory_space,
                               Kokkos::MemoryUnmanaged>;
  for (int pass = 0; pass < digit_passes; ++pass) {
    Kokkos::parallel_for(
        "qrita::sharded_histogram",
        row_teams(space, call.batch)
            .set_scratch_size(0, Kokkos::PerTeam(scratch)),
        KOKKOS_LAMBDA(Member<Space> const& team) {
          const std::int64_t r = team.league_rank();
          ShardRow const& s    = b.rows[r];
          Scratch h(team.team_scratch(0), histogram_words);
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, histogram_words),
                               [&](int i) { h(i) = 0; });
          team.team_barrier();
          if (s.active)
            histogram_shard(team, call.row(r), call.width, s, pass, h.data());
          team.team_barrier();
          std::uint64_t* out = b.hist + r * histogram_words;
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, histogram_words),
                               [&](int i) { out[i] = h(i); });
        });
    comm.allreduce_sum(space, b.hist, std::size_t(call.batch) * histogram_words);
    Kokkos::parallel_for(
        "qrita::sharded_choose", RowRange<Space>(space, 0, call.batch),
        KOKKOS_LAMBDA(std::int64_t r) {
          choose_digit(goal, b.rows[r], b.hist + r * histogram_words, pass, list_size);
        });
  }
}

// This shard's members of each row's boundary key (the region's cut for
// the mask, the pick for a draw or a list), gathered from every rank.
template <class Space, class T, Mode M, class Comm>
void count_ties(Space const& space, Comm const& comm, ShardCall<T, M> const& call,
                Buffers const& b) {
  Kokkos::parallel_for(
      "qrita::sharded_ties", row_teams(space, call.batch),
      KOKKOS_LAMBDA(Member<Space> const& team) {
        const std::int64_t r = team.league_rank();
        ShardRow const& s    = b.rows[r];
        const key_type key   = M == Mode::mask ? s.cut.key : s.pick.key;
        const RowSource<T> src{call.row(r), call.width};
        std::uint64_t n = 0;
        team_reduce(
            team, call.width,
            [&](int i, std::uint64_t& acc) { acc += order_key(src[i]) == key ? 1u : 0u; },
            Kokkos::Sum<std::uint64_t>(n));
        Kokkos::single(Kokkos::PerTeam(team), [&]() { b.ties[r] = n; });
      });
  comm.allgather(space, b.ties, b.ties_all, std::size_t(call.batch));
}

// How many of this shard's members of a group the first `keep` of the
// whole group (numbered by column across the shards) hold.
KOKKOS_INLINE_FUNCTION std::uint32_t shard_keep(std::uint64_t keep, std::uint64_t before,
                                                std::uint64_t mine) {
  if (keep <= before) return 0;
  const std::uint64_t k = keep - before;
  return std::uint32_t(k < mine ? k : mine);
}

template <class Space, class T>
void write_mask(Space const& space, ShardCall<T, Mode::mask> const& call, Buffers const& b) {
  Kokkos::parallel_for(
      "qrita::sharded_write_mask", row_teams(space, call.batch),
      KOKKOS_LAMBDA(Member<Space> const& team) {
        const std::int64_t r = team.league_rank();
        ShardRow const& s    = b.rows[r];
        if (!s.write || call.width == 0) return;
        const std::uint64_t mine = b.ties[r];
        const std::uint32_t keep = shard_keep(s.cut.keep, ties_before(b, call.batch, r), mine);
        const int tie_column     = keep >= mine ? INT_MAX : -1;
        apply_mask(team, call.row(r), call.width, s.cut.key, keep, std::uint32_t(mine),
                   tie_column);
      });
}

// The drawn entry: the pick's keep-th member of its key (numbered by
// column across the shards) reports its global column + 1 from the shard
// that holds it, every other shard 0; the maximum over the ranks is the
// token + 1 (0: a row without a candidate, token -1).
template <class Space, class T, class Comm>
void pick_token(Space const& space, Comm const& comm, ShardCall<T, Mode::sample> const& call,
                Buffers const& b) {
  Kokkos::parallel_for(
      "qrita::sharded_pick", row_teams(space, call.batch),
      KOKKOS_LAMBDA(Member<Space> const& team) {
        const std::int64_t r = team.league_rank();
        ShardRow const& s    = b.rows[r];
        Kokkos::single(Kokkos::PerTeam(team), [&]() { b.row_word[r] = 0; });
        team.team_barrier();
        if (!s.found) return;
        const std::uint64_t before = ties_before(b, call.batch, r);
        const std::uint64_t mine   = b.ties[r];
        const std::uint64_t n      = std::uint64_t(s.pick.keep) - 1;  // the member drawn
        if (n < before || n >= before + mine) return;
        const std::uint32_t local = std::uint32_t(n - before);
        const RowSource<T> src{call.row(r), call.width};
        const key_type key = s.pick.key;
        Kokkos::parallel_scan(Kokkos::TeamThreadRange(team, call.width),
                              [&](int i, std::uint32_t& rank, bool final) {
                                const bool member = order_key(src[i]) == key;
                                if (final && member && rank == local)
                                  b.row_word[r] = std::uint64_t(call.first + i + 1);
                                if (member) rank += 1;
                              });
      });
  comm.allreduce_max(space, b.row_word, std::size_t(call.batch));
  Kokkos::parallel_for(
      "qrita::sharded_token", RowRange<Space>(space, 0, call.batch),
      KOKKOS_LAMBDA(std::int64_t r) {
        call.io.tokens[r * call.io.tokens_stride] = int(std::int64_t(b.row_word[r]) - 1);
      });
}

// Each shard's listed entries (keys above the pick's, and its share of the
// pick's first keep members), as words sorted from the largest, 0 past
// them; gathered from every rank. A shard holds at most the list's
// length of them.
template <class Space, class T, class Comm>
void gather_list(Space const& space, Comm const& comm,
                 ShardCall<T, Mode::candidates> const& call, Buffers const& b) {
  const int C = b.list_capacity;
  using Scratch = Kokkos::View<std::uint64_t*, typename Space::scratch_memory_space,
                               Kokkos::MemoryUnmanaged>;
  const int scratch = int(Scratch::shmem_size(std::size_t(C + 1)));
  Kokkos::parallel_for(
      "qrita::sharded_list_entries",
      row_teams(space, call.batch)
          .set_scratch_size(0, Kokkos::PerTeam(scratch)),
      KOKKOS_LAMBDA(Member<Space> const& team) {
        const std::int64_t r = team.league_rank();
        ShardRow const& s    = b.rows[r];
        std::uint64_t* out   = b.list + r * C;
        Scratch w(team.team_scratch(0), C + 1);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, C), [&](int i) { out[i] = 0; });
        if (!s.found) return;
        const std::uint32_t keep =
            shard_keep(s.pick.keep, ties_before(b, call.batch, r), b.ties[r]);
        const RowSource<T> src{call.row(r), call.width};
        const key_type key = s.pick.key;
        const std::int64_t first = call.first;
        // Placed in column order (list_place); w(C) gets their count.
        Kokkos::single(Kokkos::PerTeam(team), [&]() { w(C) = 0; });
        team.team_barrier();
        const int width = call.width;
        Kokkos::parallel_scan(Kokkos::TeamThreadRange(team, width),
                              [&](int i, std::uint64_t& acc, bool final) {
                                const key_type k       = order_key(src[i]);
                                const std::uint64_t at = list_place(acc, keep);
                                if (final && is_listed(k, key, acc, keep) && at < std::uint64_t(C))
                                  w(int(at)) = list_word(k, first + i);
                                acc += list_scan_step(k, key);
                                if (final && i == width - 1) w(C) = list_place(acc, keep);
                              });
        team.team_barrier();
        const int m = int(w(C) < std::uint64_t(C) ? w(C) : std::uint64_t(C));
        // Sorted from the largest word: each one's place is the count of
        // larger words (all distinct: the columns differ).
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, m), [&](int i) {
          int place = 0;
          for (int j = 0; j < m; ++j) place += w(j) > w(i) ? 1 : 0;
          out[place] = w(i);
        });
      });
  comm.allgather(space, b.list, b.list_all, std::size_t(call.batch) * std::size_t(C));
}

// The list on every rank: each gathered word's place is its place in its
// own shard's sorted words plus the count of larger words in the others'
// (binary searches); then the probabilities (ListNorm, as the unsharded
// list) and the padding past the list.
template <class Space, class T>
void write_list(Space const& space, ShardCall<T, Mode::candidates> const& call,
                Buffers const& b) {
  const int C = b.list_capacity;
  const std::int64_t batch = call.batch;
  Kokkos::parallel_for(
      "qrita::sharded_write_list", row_teams(space, batch),
      KOKKOS_LAMBDA(Member<Space> const& team) {
        const std::int64_t r = team.league_rank();
        ShardRow const& s    = b.rows[r];
        const int n          = s.found ? int(s.target) : 0;
        const auto words     = [&](int q) { return b.list_all + (q * batch + r) * C; };
        const ListNorm norm  = ListNorm::of(s.weight, s.mass, s.f, call.prm.weight_scale);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, b.ranks * C), [&](int at) {
          const int q = at / C, i = at % C;
          const std::uint64_t v = words(q)[i];
          if (v == 0) return;
          int place = i;
          for (int o = 0; o < b.ranks; ++o) {
            if (o == q) continue;
            const std::uint64_t* x = words(o);
            int lo = 0, hi = C;  // the count of words above v (sorted, 0s last)
            while (lo < hi) {
              const int mid = (lo + hi) / 2;
              if (x[mid] > v)
                lo = mid + 1;
              else
                hi = mid;
            }
            place += lo;
          }
          write_list_slot(call.io, r, place, word_column(v), norm.entry(word_key(v)));
        });
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n, call.io.list_size), [&](int j) {
          write_list_slot(call.io, r, j, -1,
                          ListEntry{0.0f, -bits_as_float(0x7F800000u)});
        });
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          call.io.counts[r * call.io.counts_stride] =
              s.max_key > neg_inf_key ? int(s.count) : 0;
        });
      });
}

}  // namespace shard
}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_SHARD_STEPS_HPP
