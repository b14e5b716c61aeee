// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_DETAIL_SHARD_AGREE_HPP
#define QRITA_DETAIL_SHARD_AGREE_HPP

// What the ranks of a sharded call must agree on, checked so that a
// disagreement throws the same error on every rank instead of hanging one
// or writing a wrong mask: each rank sends a fixed-size record (its local
// check's verdict, its shapes, a digest of its per-row inputs) through one
// allgather, and every rank judges the same records. The exchange reads
// the records back on the host, so it synchronises.

#include <qrita/detail/philox.hpp>
#include <qrita/detail/row/state.hpp>
#include <qrita/detail/shard/select.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace qrita {
namespace detail {
namespace shard {

constexpr std::size_t record_words = 8;

// Allgathers one record per rank; returns every rank's, in rank order.
template <class Space, class Comm>
std::vector<std::uint64_t> exchange(Space const& space, Comm const& comm,
                                    std::uint64_t const (&mine)[record_words]) {
  using memory = typename Space::memory_space;
  const int R  = comm.size();
  Kokkos::View<std::uint64_t*, memory> send(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "qrita::sharded_record"),
      record_words);
  Kokkos::View<std::uint64_t*, memory> recv(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "qrita::sharded_records"),
      std::size_t(R) * record_words);
  auto host_send = Kokkos::create_mirror_view(send);
  for (std::size_t i = 0; i < record_words; ++i) host_send(i) = mine[i];
  Kokkos::deep_copy(space, send, host_send);
  comm.allgather(space, send.data(), recv.data(), record_words);
  auto host_recv = Kokkos::create_mirror_view(recv);
  Kokkos::deep_copy(space, host_recv, recv);
  space.fence();
  return std::vector<std::uint64_t>(host_recv.data(), host_recv.data() + host_recv.size());
}

// Throws on every rank when any rank's local checks failed: its own
// message where it failed, else the first failing rank's number.
inline void throw_if_any_failed(const char* call, std::vector<std::uint64_t> const& records,
                                std::string const& own_error) {
  const std::size_t R = records.size() / record_words;
  for (std::size_t q = 0; q < R; ++q) {
    if (records[q * record_words] == 0) continue;
    if (!own_error.empty()) throw std::invalid_argument(own_error);
    throw std::invalid_argument(std::string(call) + ": the arguments of rank " +
                                std::to_string(q) + " are invalid (its error names them)");
  }
}

// Every rank's word `at` must equal rank 0's; `what` names it.
inline void require_same(const char* call, std::vector<std::uint64_t> const& records,
                         std::size_t at, const char* what) {
  const std::size_t R = records.size() / record_words;
  for (std::size_t q = 1; q < R; ++q)
    if (records[q * record_words + at] != records[at])
      throw std::invalid_argument(std::string(call) + ": " + what + " differs across the ranks (" +
                                  std::to_string(records[at]) + " on rank 0, " +
                                  std::to_string(records[q * record_words + at]) + " on rank " +
                                  std::to_string(q) + ")");
}

// The shards (first column, columns) of every rank must tile
// [0, vocab) without a gap or an overlap, in some order. Returns the ranks
// whose shards precede rank `me`'s.
inline std::vector<int> shard_order(const char* call,
                                    std::vector<std::pair<std::int64_t, std::int64_t>> const& shards,
                                    std::int64_t vocab, int me) {
  std::vector<int> order(shards.size());
  for (std::size_t q = 0; q < shards.size(); ++q) order[q] = int(q);
  // By first column; an empty shard before a shard that starts where it
  // does.
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return shards[std::size_t(a)] < shards[std::size_t(b)];
  });
  std::int64_t next = 0;
  for (int q : order) {
    auto const& sq = shards[std::size_t(q)];
    if (sq.first != next)
      throw std::invalid_argument(
          std::string(call) + ": the shards do not tile the vocabulary: rank " +
          std::to_string(q) + "'s starts at column " + std::to_string(sq.first) +
          " where " + std::to_string(next) + " was expected");
    next += sq.second;
  }
  if (next != vocab)
    throw std::invalid_argument(std::string(call) + ": the shards cover " + std::to_string(next) +
                                " columns of a vocabulary of " + std::to_string(vocab));
  std::vector<int> before;
  for (int q : order) {
    if (q == me) break;
    before.push_back(q);
  }
  return before;
}

// A digest of the per-row inputs, the same on every rank exactly when
// they agree (up to a 64-bit collision): a sum over rows of a mix of each
// row's values, so the order of the additions does not matter.
template <class Space>
std::uint64_t inputs_digest(Space const& space, RowIO const& io, std::int64_t batch) {
  std::uint64_t digest = 0;
  Kokkos::parallel_reduce(
      "qrita::sharded_digest", RowRange<Space>(space, 0, batch),
      KOKKOS_LAMBDA(std::int64_t r, std::uint64_t& acc) {
        std::uint64_t h = mix64(std::uint64_t(r));
        const auto add  = [&](std::uint64_t v) { h = mix64(h ^ v); };
        if (io.k) add(std::uint64_t(std::uint32_t(io.k[r * io.k_stride])));
        if (io.p) add(float_as_bits(io.p[r * io.p_stride]));
        if (io.min_p) add(float_as_bits(io.min_p[r * io.min_p_stride]));
        if (io.temperature) add(float_as_bits(io.temperature[r * io.temperature_stride]));
        if (io.seeds) add(io.seeds[r * io.seeds_stride]);
        if (io.offsets) add(io.offsets[r * io.offsets_stride]);
        acc += h;
      },
      Kokkos::Sum<std::uint64_t>(digest));
  space.fence();
  return digest;
}

// Which per-row inputs a call has, as bits.
inline std::uint64_t inputs_present(RowIO const& io) {
  return (io.k ? 1u : 0u) | (io.p ? 2u : 0u) | (io.min_p ? 4u : 0u) |
         (io.temperature ? 8u : 0u) | (io.seeds ? 16u : 0u) | (io.probs ? 32u : 0u) |
         (io.logprobs ? 64u : 0u);
}

}  // namespace shard
}  // namespace detail
}  // namespace qrita

#endif  // QRITA_DETAIL_SHARD_AGREE_HPP
