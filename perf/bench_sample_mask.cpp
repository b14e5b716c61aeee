// SPDX-License-Identifier: Apache-2.0
// qrita_perf: the Google Benchmark suite of qrita::sample_mask on Kokkos'
// default execution space, next to the memory floor (a read+write copy of
// the same logits), a sort-based exact mask (the pre-Qrita way) and the
// paper's ablations; and, on the same rows and filters, the sampler
// (qrita::sample_tokens, qrita::candidate_list) and sample_mask on bf16 and
// fp16 logits. perf/README.md describes the grid, the names and the flags;
// scripts/perf_page.py turns the JSON it writes into docs/PERFORMANCE.md.
//
//   qrita_perf [--quick | --smoke] [--calibrate] [--seed=N] [google benchmark flags]
//
// Every benchmark is one configuration, named
//   KIND/SHAPE/MODE/V:<vocab>/B:<batch>       (copy: copy/V:<vocab>/B:<batch>)
// e.g. qrita/serving/k50p0.9/V:128256/B:1024, qrita-sample/serving/k10/V:128256/B:64;
// --benchmark_filter selects by name.
//
// Per configuration: the inputs are generated once per (shape, vocab) at the
// largest batch that shape and vocab are run with, on the device, and a
// batch of B rows is their first B rows. A warm-up call is checked against
// the host oracle on up to four rows (first two, last two); a mismatch
// skips the benchmark with the reason. Then per iteration: restore the
// input from the pristine copy (not timed), fence, then time the call:
// CUDA events on the instance's stream on CUDA, the host clock up to a
// fence elsewhere (manual time; the sampler's calls, which do not write the
// logits, find them restored the same way). A configuration's time is the
// median of its calls (counter median_us; real_time is their mean). The
// checks hold the definition with temperature and min-p (reference_row,
// below). Counters: rows_per_ms,
// bytes_per_second (one read and one write of the logits; one read for the
// sampler), x_copy (median time / median time of a read+write copy of the same
// B x V logits, measured right before), copy_ms, workspace_bytes
// (Workspace::bytes() of the one qrita::Workspace each qrita configuration
// builds outside the timing and passes to every call, or the sort's key
// buffer), alloc_bytes and allocs (Kokkos allocations seen during the timed
// calls, per call; -1 when a Kokkos tool is loaded and owns the callbacks),
// and for qrita's variants, from RowStats: topk_hit / topp_hit (fraction of
// rows with path == RowPath::truncated), outliers (mean count) and passes
// (mean RowStats::row_passes: whole-row reads plus writes per row).

#include <qrita/oracle.hpp>
#include <qrita/qrita.hpp>

#include <benchmark/benchmark.h>
#ifdef KOKKOS_ENABLE_CUDA
#include <cuda_runtime.h>
#endif

#include "sort_mask.hpp"
#include "synthetic.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <future>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace {

using space_type  = Kokkos::DefaultExecutionSpace;
using mem         = space_type::memory_space;
using logits_view = Kokkos::View<float**, Kokkos::LayoutRight, mem>;
using logits_ref =
    Kokkos::View<float**, Kokkos::LayoutRight, mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
using clock_type = std::chrono::steady_clock;

std::uint64_t g_seed = 1234;
// Options::teams_per_row of every qrita call (--teams-per-row=N; 0: the
// backend decides).
int g_teams_per_row = 0;
// Batches of the GPU grid (--batches=1,64,256; empty: 1, 8, 64 and 1024,
// the 16-bit masks at 64 and 1024).
std::vector<std::int64_t> g_batches;

// --- what a configuration is ------------------------------------------------

enum class Kind { qrita, notrunc, binary, nodup, nohist, sort, copy, sample, cand, cand_big, bf16, fp16 };
enum class Mode { k10, p07, k50p09, rand, tminp };
enum class Shape { serving, ordered, randn, uniform, temp2, serving_bf16, flat, lm };

const char* name(Kind k) {
  switch (k) {
    case Kind::qrita: return "qrita";
    case Kind::notrunc: return "ablation-notrunc";
    case Kind::binary: return "ablation-binary";
    case Kind::nodup: return "ablation-nodup";
    case Kind::nohist: return "ablation-nohist";
    case Kind::sort: return "sort";
    case Kind::copy: return "copy";
    case Kind::sample: return "qrita-sample";
    case Kind::cand: return "qrita-cand64";
    case Kind::cand_big: return "qrita-cand1024";
    case Kind::bf16: return "qrita-bf16";
    case Kind::fp16: return "qrita-fp16";
  }
  return "?";
}
const char* name(Mode m) {
  switch (m) {
    case Mode::k10: return "k10";
    case Mode::p07: return "p0.7";
    case Mode::k50p09: return "k50p0.9";
    case Mode::rand: return "rand";
    case Mode::tminp: return "t0.7-mp0.05-k50-p0.9";
  }
  return "?";
}
const char* name(Shape s) {
  switch (s) {
    case Shape::serving: return "serving";
    case Shape::ordered: return "ordered";
    case Shape::randn: return "randn";
    case Shape::uniform: return "uniform";
    case Shape::temp2: return "temp2";
    case Shape::serving_bf16: return "serving-bf16";
    case Shape::flat: return "flat";
    case Shape::lm: return "lm";
  }
  return "?";
}
// The ablations' masks and qrita's: RowStats, the same checks.
bool is_mask_variant(Kind k) {
  return k == Kind::qrita || k == Kind::notrunc || k == Kind::binary || k == Kind::nodup ||
         k == Kind::nohist;
}
bool is_16bit(Kind k) { return k == Kind::bf16 || k == Kind::fp16; }
bool is_candidates(Kind k) { return k == Kind::cand || k == Kind::cand_big; }
// Every qrita call: a Workspace, no allocation allowed, teams_per_row.
bool is_qrita(Kind k) {
  return is_mask_variant(k) || is_16bit(k) || k == Kind::sample || is_candidates(k);
}
// Calls that mask the logits in place (and report RowStats).
bool has_row_stats(Kind k) { return is_mask_variant(k) || is_16bit(k); }
int candidate_columns(Kind k) { return k == Kind::cand_big ? 1024 : 64; }
qrita::synthetic::CounterShape counter_shape(Shape s) {
  using qrita::synthetic::CounterShape;
  switch (s) {
    case Shape::ordered: return CounterShape::ordered;
    case Shape::randn: return CounterShape::randn;
    case Shape::uniform: return CounterShape::uniform;
    case Shape::temp2: return CounterShape::temp2;
    case Shape::serving_bf16: return CounterShape::serving_bf16;
    case Shape::flat: return CounterShape::flat;
    default: return CounterShape::serving;
  }
}

// The counter shapes of the GPU grid, in the order they run.
const Shape grid_shapes[] = {Shape::serving, Shape::ordered,      Shape::randn, Shape::uniform,
                             Shape::temp2,   Shape::serving_bf16, Shape::flat};

const Mode all_modes[] = {Mode::k10, Mode::p07, Mode::k50p09, Mode::rand};

struct Config {
  Kind kind;
  Shape shape;
  Mode mode;
  std::int64_t vocab, batch;
  std::int64_t input_rows = 0;  // rows generated for (shape, vocab)
  std::int64_t key_rows   = 0;  // rows of sort keys kept for vocab
  std::string label() const {
    std::string s = std::string(name(kind)) + "/";
    if (kind != Kind::copy) s += std::string(name(shape)) + "/" + name(mode) + "/";
    return s + "V:" + std::to_string(vocab) + "/B:" + std::to_string(batch);
  }
};

// --- the definition with temperature and min-p, on the host -----------------
//
// qrita::oracle checks masks with k and p (every mode but tminp). The
// sampler's checks (tokens, candidate lists) and the tminp mask are held to
// docs/SEMANTICS.md's definition here, per row, in double: the order
// (descending value, ties by lower index; NaN as -inf), temperature (T <= 0:
// greedy), min-p (x >= M + T ln m, an entry within 1e-12 of the cut either
// way), top-k, then top-p on softmax((x - M) / T) of the survivors (a kept
// count whose boundary mass is within 1e-6 of p either way).

struct RowRef {
  bool skip = false;  // a case these checks do not cover (a +inf maximum)
  std::int64_t candidates = 0;
  std::int64_t lo = 0, hi = 0;      // accepted kept counts
  std::vector<std::int64_t> order;  // the order's first hi entries
  std::vector<double> w;            // exp((x - M) / T) of those
  double max = 0, temperature = 1;
};

RowRef reference_row(const float* x, std::int64_t vocab, int k, float p, float min_p, float t) {
  RowRef r;
  std::vector<std::int64_t> idx;
  idx.reserve(std::size_t(vocab));
  for (std::int64_t i = 0; i < vocab; ++i)
    if (x[i] > -std::numeric_limits<float>::infinity()) idx.push_back(i);  // NaN fails too
  r.candidates = std::int64_t(idx.size());
  if (idx.empty()) return r;
  std::sort(idx.begin(), idx.end(), [&](std::int64_t a, std::int64_t b) {
    return x[a] > x[b] || (x[a] == x[b] && a < b);
  });
  const double m = double(x[idx[0]]);
  if (std::isinf(m)) {
    r.skip = true;
    return r;
  }
  r.max = m;
  if (!(t > 0.0f)) {  // greedy: the top entry
    r.lo = r.hi = 1;
    r.order = {idx[0]};
    r.w     = {1.0};
    r.temperature = 0;
    return r;
  }
  r.temperature = double(t);
  std::int64_t n_lo = r.candidates, n_hi = r.candidates;
  if (min_p > 0.0f) {  // false for NaN
    const double cut = m + double(t) * std::log(double(std::min(min_p, 1.0f)));
    const double tol = 1e-12 * std::max(1.0, std::fabs(cut));
    n_lo = n_hi = 0;
    for (std::int64_t i : idx) {
      n_lo += double(x[i]) >= cut + tol || x[i] == x[idx[0]];  // the maximum's ties: kept
      n_hi += double(x[i]) >= cut - tol;
    }
  }
  if (k > 0 && k < vocab) {
    n_lo = std::min<std::int64_t>(n_lo, k);
    n_hi = std::min<std::int64_t>(n_hi, k);
  }
  std::vector<double> w(static_cast<std::size_t>(n_hi));
  for (std::int64_t j = 0; j < n_hi; ++j) w[std::size_t(j)] = std::exp((double(x[idx[std::size_t(j)]]) - m) / double(t));
  r.lo = n_lo;
  r.hi = n_hi;
  if (p < 1.0f) {  // false for NaN
    if (p <= 0.0f) {
      r.lo = r.hi = 1;
    } else {
      r.lo = n_hi;
      r.hi = 1;
      for (std::int64_t n : {n_lo, n_hi}) {
        double total = 0;
        for (std::int64_t j = 0; j < n; ++j) total += w[std::size_t(j)];
        std::int64_t first_lo = n, first_hi = n;
        double acc = 0;
        for (std::int64_t j = 0; j < n; ++j) {
          acc += w[std::size_t(j)];
          const double mass = acc / total;
          if (first_lo == n && mass >= double(p) - 1e-6) first_lo = j + 1;
          if (mass >= double(p) + 1e-6) {
            first_hi = j + 1;
            break;
          }
        }
        r.lo = std::min(r.lo, first_lo);
        r.hi = std::max(r.hi, first_hi);
      }
    }
  }
  r.order.assign(idx.begin(), idx.begin() + r.hi);
  w.resize(std::size_t(r.hi));
  r.w = std::move(w);
  return r;
}

// References per (dtype, shape, vocab, row, mode): the sampler's kinds check
// the same rows in the same modes. Cleared when the input changes.
std::map<std::tuple<int, int, std::int64_t, std::int64_t, int>, std::shared_ptr<const RowRef>>
    g_references;
void clear_references() { g_references.clear(); }

// Whether out (masked from in) keeps a prefix of the reference order of an
// accepted length, bitwise, and -inf elsewhere; empty if so.
std::string check_mask_against(RowRef const& ref, const float* in, const float* out,
                               std::int64_t vocab) {
  if (ref.skip) return {};
  const float neg_inf = -std::numeric_limits<float>::infinity();
  std::int64_t kept = 0;
  for (std::int64_t i = 0; i < vocab; ++i) {
    if (std::memcmp(in + i, out + i, sizeof(float)) == 0 && !(out[i] == neg_inf && in[i] == neg_inf))
      ++kept;
    else if (std::memcmp(out + i, &neg_inf, sizeof(float)) != 0)
      return "entry " + std::to_string(i) + " is neither kept nor -inf";
  }
  if (ref.candidates == 0) return {};
  if (kept < ref.lo || kept > ref.hi)
    return "kept " + std::to_string(kept) + " entries, the definition keeps " +
           std::to_string(ref.lo) + (ref.hi > ref.lo ? " to " + std::to_string(ref.hi) : "");
  for (std::int64_t j = 0; j < kept; ++j) {
    const std::int64_t i = ref.order[std::size_t(j)];
    if (std::memcmp(in + i, out + i, sizeof(float)) != 0)
      return "entry " + std::to_string(i) + " (place " + std::to_string(j) +
             " of the order) was dropped";
  }
  return {};
}

// --- inputs: generated on the device, kept per (shape, vocab) ---------------

struct GenerateCounterShape {
  logits_view out;
  Kokkos::View<const qrita::synthetic::ServingRow*, mem> params;
  qrita::synthetic::CounterShape shape;
  std::uint64_t seed;
  std::int64_t vocab;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    const std::int64_t r = i / vocab, c = i % vocab;
    out(r, c) = qrita::synthetic::counter_value(shape, params(r), seed, r, c, vocab);
  }
};

struct Inputs {
  Shape shape       = Shape::serving;
  std::int64_t vocab = 0, rows = 0;
  logits_view pristine, work;
  Kokkos::View<std::uint64_t*, mem> keys;  // sort baseline workspace
  std::int64_t key_vocab = 0, key_rows = 0;
};
Inputs g_in;

// The same logits in 16 bits (qrita::bfloat16 or qrita::float16, rounded to
// nearest even from g_in's floats on the device), for the 16-bit masks.
using bits_view = Kokkos::View<std::uint16_t**, Kokkos::LayoutRight, mem>;
using bits_ref =
    Kokkos::View<std::uint16_t**, Kokkos::LayoutRight, mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class T>
using typed_ref = Kokkos::View<T**, Kokkos::LayoutRight, mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

struct Inputs16 {
  Kind type          = Kind::bf16;
  Shape shape        = Shape::serving;
  std::int64_t vocab = 0, rows = 0;
  bits_view pristine, work;
};
Inputs16 g_in16;


void generate(logits_view const& out, Shape shape, std::int64_t rows, std::int64_t vocab) {
  if (shape == Shape::lm) {
    // The mt19937 shape the tests use: host only, row after row.
    const std::vector<float> host = qrita::synthetic::lm_batch(rows, vocab, g_seed);
    auto mirror = Kokkos::create_mirror_view(out);
    std::memcpy(mirror.data(), host.data(), host.size() * sizeof(float));
    Kokkos::deep_copy(out, mirror);
    return;
  }
  Kokkos::View<qrita::synthetic::ServingRow*, mem> params("qrita_perf::row_params",
                                                          std::size_t(rows));
  auto host = Kokkos::create_mirror_view(params);
  {
    // ordered's row parameters sum over 16384 columns each: two host threads.
    const auto fill = [&](std::int64_t from, std::int64_t to) {
      for (std::int64_t r = from; r < to; ++r)
        host(r) = qrita::synthetic::row_params(counter_shape(shape), g_seed, r, vocab);
    };
    auto half = std::async(std::launch::async, fill, rows / 2, rows);
    fill(0, rows / 2);
    half.get();
  }
  Kokkos::deep_copy(params, host);
  Kokkos::parallel_for(
      "qrita_perf::generate",
      Kokkos::RangePolicy<space_type, Kokkos::IndexType<std::int64_t>>(0, rows * vocab),
      GenerateCounterShape{out, params, counter_shape(shape), g_seed, vocab});
  Kokkos::fence();
}

// Makes g_in hold (shape, vocab) with at least `rows` rows; frees what it
// held before allocating (at most two inputs of 1 GiB at a time).
void ensure_inputs(Shape shape, std::int64_t vocab, std::int64_t rows) {
  if (g_in.pristine.data() && g_in.shape == shape && g_in.vocab == vocab && g_in.rows >= rows)
    return;
  g_in.pristine = logits_view();
  g_in.work     = logits_view();
  g_in16        = Inputs16{};
  clear_references();
  if (g_in.key_vocab != vocab) {
    g_in.keys      = Kokkos::View<std::uint64_t*, mem>();
    g_in.key_vocab = g_in.key_rows = 0;
  }
  g_in.pristine = logits_view(Kokkos::view_alloc(Kokkos::WithoutInitializing, "qrita_perf::pristine"),
                              std::size_t(rows), std::size_t(vocab));
  g_in.work = logits_view(Kokkos::view_alloc(Kokkos::WithoutInitializing, "qrita_perf::work"),
                          std::size_t(rows), std::size_t(vocab));
  generate(g_in.pristine, shape, rows, vocab);
  g_in.shape = shape;
  g_in.vocab = vocab;
  g_in.rows  = rows;
}

template <class T>
struct RoundTo16 {
  logits_view in;
  bits_view out;
  std::int64_t vocab;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    const std::int64_t r = i / vocab, c = i % vocab;
    out(r, c) = qrita::from_float<T>(in(r, c)).bits;
  }
};

// Makes g_in16 hold g_in's first `rows` rows in `type`'s format.
void ensure_inputs16(Kind type, std::int64_t rows) {
  if (g_in16.pristine.data() && g_in16.type == type && g_in16.shape == g_in.shape &&
      g_in16.vocab == g_in.vocab && g_in16.rows >= rows)
    return;
  g_in16 = Inputs16{};
  const std::int64_t vocab = g_in.vocab;
  g_in16.pristine = bits_view(Kokkos::view_alloc(Kokkos::WithoutInitializing, "qrita_perf::pristine16"),
                              std::size_t(rows), std::size_t(vocab));
  g_in16.work = bits_view(Kokkos::view_alloc(Kokkos::WithoutInitializing, "qrita_perf::work16"),
                          std::size_t(rows), std::size_t(vocab));
  const Kokkos::RangePolicy<space_type, Kokkos::IndexType<std::int64_t>> all(0, rows * vocab);
  if (type == Kind::bf16)
    Kokkos::parallel_for("qrita_perf::to_bf16", all,
                         RoundTo16<qrita::bfloat16>{g_in.pristine, g_in16.pristine, vocab});
  else
    Kokkos::parallel_for("qrita_perf::to_fp16", all,
                         RoundTo16<qrita::float16>{g_in.pristine, g_in16.pristine, vocab});
  Kokkos::fence();
  g_in16.type  = type;
  g_in16.shape = g_in.shape;
  g_in16.vocab = vocab;
  g_in16.rows  = rows;
}

void ensure_keys(std::int64_t vocab, std::int64_t rows) {
  if (g_in.keys.data() && g_in.key_vocab == vocab && g_in.key_rows >= rows) return;
  g_in.keys = Kokkos::View<std::uint64_t*, mem>();
  g_in.keys = Kokkos::View<std::uint64_t*, mem>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "qrita_perf::sort_keys"),
      std::size_t(rows * vocab));
  g_in.key_vocab = vocab;
  g_in.key_rows  = rows;
}

// k, p, min-p and temperature per row, on the device and on the host (k 0,
// p 1, min-p 0, temperature 1: that filter off). params holds the filters
// the mode uses (the others absent), for the calls that take SamplingParams.
struct Filters {
  Kokkos::View<int*, mem> k;
  Kokkos::View<float*, mem> p, min_p, t;
  std::vector<int> k_host;
  std::vector<float> p_host, min_p_host, t_host;
  qrita::SamplingParams<mem> params;
};

template <class T>
void to_device(Kokkos::View<T*, mem> const& v, std::vector<T> const& host) {
  Kokkos::deep_copy(v, Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                           host.data(), host.size()));
}

Filters make_filters(Mode mode, std::int64_t batch) {
  const std::size_t n = std::size_t(batch);
  Filters f{Kokkos::View<int*, mem>("qrita_perf::k", n), Kokkos::View<float*, mem>("qrita_perf::p", n),
            Kokkos::View<float*, mem>("qrita_perf::min_p", n), Kokkos::View<float*, mem>("qrita_perf::t", n),
            std::vector<int>(n),   std::vector<float>(n),
            std::vector<float>(n, 0.0f), std::vector<float>(n, 1.0f),
            qrita::SamplingParams<mem>{}};
  for (std::int64_t b = 0; b < batch; ++b) {
    int k   = 0;
    float p = 1.0f;
    switch (mode) {
      case Mode::k10: k = 10; break;
      case Mode::p07: p = 0.7f; break;
      case Mode::k50p09: k = 50; p = 0.9f; break;
      case Mode::tminp:
        k = 50;
        p = 0.9f;
        f.min_p_host[std::size_t(b)] = 0.05f;
        f.t_host[std::size_t(b)]     = 0.7f;
        break;
      case Mode::rand: {
        // k in [1, 100), p in [0.5, 1): a function of the row alone.
        const std::uint64_t h = qrita::synthetic::counter_hash(g_seed, 4, std::uint64_t(b), 0);
        k = 1 + int(h % 99u);
        p = 0.5f + 0.5f * float(h >> 41) * (1.0f / 8388608.0f);
        break;
      }
    }
    f.k_host[std::size_t(b)] = k;
    f.p_host[std::size_t(b)] = p;
  }
  to_device(f.k, f.k_host);
  to_device(f.p, f.p_host);
  to_device(f.min_p, f.min_p_host);
  to_device(f.t, f.t_host);
  if (mode != Mode::p07) f.params.k = f.k;
  if (mode != Mode::k10) f.params.p = f.p;
  if (mode == Mode::tminp) {
    f.params.min_p       = f.min_p;
    f.params.temperature = f.t;
  }
  return f;
}

// --- device allocations seen through Kokkos Tools ----------------------------

struct AllocationLog {
  bool available = false;  // false: a Kokkos tool owns the callbacks
  bool counting  = false;
  std::int64_t bytes = 0, count = 0;
};
AllocationLog g_alloc;

void on_allocate(Kokkos::Profiling::SpaceHandle, const char*, const void*, std::uint64_t size) {
  if (!g_alloc.counting) return;
  g_alloc.bytes += std::int64_t(size);
  g_alloc.count += 1;
}

// Listens while alive (if no tool is loaded).
struct AllocationListener {
  AllocationListener() {
    g_alloc.bytes = g_alloc.count = 0;
    if (g_alloc.available) Kokkos::Tools::Experimental::set_allocate_data_callback(on_allocate);
  }
  ~AllocationListener() {
    if (g_alloc.available) Kokkos::Tools::Experimental::set_allocate_data_callback(nullptr);
  }
  AllocationListener(AllocationListener const&)            = delete;
  AllocationListener& operator=(AllocationListener const&) = delete;
};

// --- checks against the host oracle -----------------------------------------

std::uint64_t row_hash(const float* row, std::int64_t vocab) {
  std::uint64_t h = 0x243F6A8885A308D3ull;
  for (std::int64_t i = 0; i < vocab; ++i) {
    std::uint32_t u;
    std::memcpy(&u, row + i, sizeof u);
    h = qrita::synthetic::mix64(h ^ u);
  }
  return h;
}

// The paper's "no duplicate handling" keeps the whole tie group at a
// boundary, so it is held to the definition only where no tie straddles
// one; elsewhere to: entries kept bitwise or -inf, and the definition's kept
// set (less its last entry under top-p, for rounding) among the kept.
std::string verify_keep_all(const float* in, const float* out, std::int64_t vocab, int k,
                            float p) {
  const qrita::oracle::RowResult ref = qrita::oracle::evaluate(in, vocab, k, p);
  const std::int64_t n = std::int64_t(ref.order.size());
  const auto value     = [&](std::int64_t j) { return in[ref.order[std::size_t(j)]]; };
  const bool tied_k = !ref.untouched && ref.topk_count < n && value(ref.topk_count - 1) == value(ref.topk_count);
  const bool tied_p = ref.topp_active && ref.kept < ref.topk_count && value(ref.kept - 1) == value(ref.kept);
  if (!tied_k && !tied_p) return qrita::oracle::verify(in, out, vocab, k, p);
  const float neg_inf = -std::numeric_limits<float>::infinity();
  for (std::int64_t i = 0; i < vocab; ++i)
    if (std::memcmp(in + i, out + i, sizeof(float)) != 0 && std::memcmp(out + i, &neg_inf, sizeof(float)) != 0)
      return "entry " + std::to_string(i) + " is neither kept nor -inf";
  const std::int64_t must = ref.topp_active ? ref.kept - 1 : ref.kept;
  for (std::int64_t j = 0; j < must; ++j) {
    const std::int64_t i = ref.order[std::size_t(j)];
    if (std::memcmp(in + i, out + i, sizeof(float)) != 0)
      return "entry " + std::to_string(i) + " (place " + std::to_string(j) +
             " of the order) was dropped, but the tie-keeping ablation keeps a superset";
  }
  return {};
}

// Rows already checked with this input and this output (qrita's output does
// not depend on the batch, so most rows repeat across batch sizes).
std::set<std::tuple<int, std::int64_t, std::int64_t, int, float, std::uint64_t, bool>> g_verified;
std::set<std::pair<int, std::int64_t>> g_generator_checked;
std::set<std::string> g_config_verified;

std::vector<std::int64_t> sample_rows(std::int64_t batch) {
  std::vector<std::int64_t> rows;
  for (std::int64_t r : {std::int64_t(0), std::int64_t(1), batch - 2, batch - 1})
    if (r >= 0 && r < batch && std::find(rows.begin(), rows.end(), r) == rows.end())
      rows.push_back(r);
  return rows;
}

std::vector<float> row_to_host(logits_ref const& v, std::int64_t r) {
  std::vector<float> host(v.extent(1));
  Kokkos::deep_copy(Kokkos::View<float*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(host.data(), host.size()),
                    Kokkos::subview(v, std::size_t(r), Kokkos::ALL()));
  return host;
}

// A device row of 16-bit logits as floats (exact).
std::vector<float> row16_to_host(bits_ref const& v, std::int64_t r, Kind type) {
  std::vector<std::uint16_t> bits(v.extent(1));
  Kokkos::deep_copy(
      Kokkos::View<std::uint16_t*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(bits.data(), bits.size()),
      Kokkos::subview(v, std::size_t(r), Kokkos::ALL()));
  std::vector<float> out(bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i)
    out[i] = type == Kind::bf16 ? qrita::to_float(qrita::bfloat16{bits[i]})
                                : qrita::to_float(qrita::float16{bits[i]});
  return out;
}

int dtype_of(Kind k) { return k == Kind::bf16 ? 1 : k == Kind::fp16 ? 2 : 0; }

// The device generator against its host reference, once per input.
std::string check_generator(Config const& c, std::int64_t row, std::vector<float> const& got) {
  if (c.shape == Shape::lm || !g_generator_checked.insert({int(c.shape), c.vocab}).second) return {};
  const std::int64_t vocab = c.vocab;
  std::vector<float> ref(static_cast<std::size_t>(vocab));
  qrita::synthetic::counter_row(ref.data(), vocab, counter_shape(c.shape), g_seed, row);
  std::int64_t off = 0;
  for (std::int64_t i = 0; i < vocab; ++i) {
    const float a = got[std::size_t(i)], b = ref[std::size_t(i)];
    if (!(std::fabs(a - b) <= 1e-6f * std::max(1.0f, std::fabs(b)))) ++off;
  }
  // serving-bf16: a last-bit difference before the rounding can move a
  // value by one bf16 step; allow a few.
  if (off > (c.shape == Shape::serving_bf16 ? vocab / 1000 : 0))
    return "the device generator disagrees with its host reference on " + std::to_string(off) +
           " entries of row " + std::to_string(row);
  return {};
}

// References of sampled rows (computed in parallel, cached): rows[i]'s input
// is in[i].
std::vector<std::shared_ptr<const RowRef>> references(Config const& c, Filters const& f,
                                                      std::vector<std::int64_t> const& rows,
                                                      std::vector<std::vector<float>> const& in) {
  std::vector<std::shared_ptr<const RowRef>> out(rows.size());
  std::vector<std::future<RowRef>> todo(rows.size());
  const int dtype = dtype_of(c.kind);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto key = std::make_tuple(dtype, int(c.shape), c.vocab, rows[i], int(c.mode));
    auto it = g_references.find(key);
    if (it != g_references.end()) {
      out[i] = it->second;
      continue;
    }
    const std::size_t r = std::size_t(rows[i]);
    const float* x = in[i].data();
    const std::int64_t vocab = c.vocab;
    const int k = f.k_host[r];
    const float p = f.p_host[r], mp = f.min_p_host[r], t = f.t_host[r];
    todo[i] = std::async(std::launch::async, [=] { return reference_row(x, vocab, k, p, mp, t); });
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (out[i]) continue;
    out[i] = std::make_shared<const RowRef>(todo[i].get());
    g_references[std::make_tuple(dtype_of(c.kind), int(c.shape), c.vocab, rows[i], int(c.mode))] = out[i];
  }
  return out;
}

std::string row_failure(std::int64_t row, Filters const& f, std::string const& why) {
  const std::size_t r = std::size_t(row);
  std::string s = "row " + std::to_string(row) + " (k=" + std::to_string(f.k_host[r]) +
                  ", p=" + std::to_string(f.p_host[r]);
  if (f.min_p_host[r] != 0.0f || f.t_host[r] != 1.0f)
    s += ", min_p=" + std::to_string(f.min_p_host[r]) + ", T=" + std::to_string(f.t_host[r]);
  return s + ") does not match the definition: " + why;
}

// Checks masked rows (out, masked from in; rows[i]'s host copies) against
// the oracle (k and p) or the reference (tminp); empty if all conform.
std::string verify_mask_rows(Config const& c, Filters const& f, std::vector<std::int64_t> const& rows,
                             std::vector<std::vector<float>> const& in,
                             std::vector<std::vector<float>> const& out) {
  const std::int64_t vocab = c.vocab;
  if (c.mode == Mode::tminp) {
    const auto refs = references(c, f, rows, in);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const std::string why = check_mask_against(*refs[i], in[i].data(), out[i].data(), vocab);
      if (!why.empty()) return row_failure(rows[i], f, why);
    }
    return {};
  }
  const bool weak = c.kind == Kind::nodup;
  const int shape_key = int(c.shape) + 100 * dtype_of(c.kind);
  std::vector<std::future<std::string>> results;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const int k   = f.k_host[std::size_t(rows[i])];
    const float p = f.p_host[std::size_t(rows[i])];
    const auto key = std::make_tuple(shape_key, vocab, rows[i], k, p, row_hash(out[i].data(), vocab), weak);
    if (g_verified.count(key)) {
      results.push_back(std::async(std::launch::deferred, [] { return std::string(); }));
      continue;
    }
    const float* in_p  = in[i].data();
    const float* out_p = out[i].data();
    results.push_back(std::async(std::launch::async, [=] {
      return weak ? verify_keep_all(in_p, out_p, vocab, k, p)
                  : qrita::oracle::verify(in_p, out_p, vocab, k, p);
    }));
  }
  std::string failure;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string why = results[i].get();
    const int k   = f.k_host[std::size_t(rows[i])];
    const float p = f.p_host[std::size_t(rows[i])];
    if (why.empty())
      g_verified.insert(std::make_tuple(shape_key, vocab, rows[i], k, p,
                                        row_hash(out[i].data(), vocab), weak));
    else if (failure.empty())
      failure = row_failure(rows[i], f, why);
  }
  return failure;
}

// Checks sampled rows of `out` (masked from `in`); empty if all conform.
std::string verify_sample(Config const& c, logits_ref const& in, logits_ref const& out,
                          Filters const& f) {
  const std::vector<std::int64_t> rows = sample_rows(c.batch);
  std::vector<std::vector<float>> in_rows, out_rows;
  for (std::int64_t r : rows) {
    in_rows.push_back(row_to_host(in, r));
    out_rows.push_back(row_to_host(out, r));
  }
  const std::string gen = check_generator(c, rows[0], in_rows[0]);
  if (!gen.empty()) return gen;
  return verify_mask_rows(c, f, rows, in_rows, out_rows);
}

// The same for 16-bit logits, on their exact float values.
std::string verify_sample16(Config const& c, bits_ref const& in, bits_ref const& out, Filters const& f) {
  const std::vector<std::int64_t> rows = sample_rows(c.batch);
  std::vector<std::vector<float>> in_rows, out_rows;
  for (std::int64_t r : rows) {
    in_rows.push_back(row16_to_host(in, r, c.kind));
    out_rows.push_back(row16_to_host(out, r, c.kind));
  }
  return verify_mask_rows(c, f, rows, in_rows, out_rows);
}

// Tokens of sampled rows: a kept entry (within the definition's top-p
// rounding freedom), -1 exactly for a row without a candidate.
std::string verify_tokens(Config const& c, logits_ref const& in, Filters const& f,
                          std::vector<int> const& tokens) {
  const std::vector<std::int64_t> rows = sample_rows(c.batch);
  std::vector<std::vector<float>> in_rows;
  for (std::int64_t r : rows) in_rows.push_back(row_to_host(in, r));
  const std::string gen = check_generator(c, rows[0], in_rows[0]);
  if (!gen.empty()) return gen;
  const auto refs = references(c, f, rows, in_rows);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const RowRef& ref = *refs[i];
    const int t = tokens[std::size_t(rows[i])];
    if (ref.skip) continue;
    if (ref.candidates == 0) {
      if (t != -1) return row_failure(rows[i], f, "token " + std::to_string(t) + " from a row without candidates");
      continue;
    }
    if (std::find(ref.order.begin(), ref.order.end(), std::int64_t(t)) == ref.order.end())
      return row_failure(rows[i], f, "token " + std::to_string(t) + " is not among the " +
                                         std::to_string(ref.hi) + " kept entries");
  }
  return {};
}

struct CandidateHost {
  std::vector<int> ids, counts;
  std::vector<float> probs, logprobs;
};

// Candidate lists of sampled rows: the count an accepted kept count, the ids
// the order's first min(C, count), probabilities within 1e-6 of w_j / W in
// double, log-probabilities within 1e-5 (relative, from 1) of
// (x_j - M) / T - ln(W), the slots past the list (-1, 0, -inf).
std::string verify_candidates(Config const& c, logits_ref const& in, Filters const& f, int columns,
                              CandidateHost const& h) {
  const std::vector<std::int64_t> rows = sample_rows(c.batch);
  std::vector<std::vector<float>> in_rows;
  for (std::int64_t r : rows) in_rows.push_back(row_to_host(in, r));
  const std::string gen = check_generator(c, rows[0], in_rows[0]);
  if (!gen.empty()) return gen;
  const auto refs = references(c, f, rows, in_rows);
  const float neg_inf = -std::numeric_limits<float>::infinity();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const RowRef& ref = *refs[i];
    if (ref.skip) continue;
    const std::size_t r = std::size_t(rows[i]);
    const std::int64_t count = h.counts[r];
    if (ref.candidates == 0 ? count != 0 : (count < ref.lo || count > ref.hi))
      return row_failure(rows[i], f, "count " + std::to_string(count) + ", the definition keeps " +
                                         std::to_string(ref.lo) +
                                         (ref.hi > ref.lo ? " to " + std::to_string(ref.hi) : ""));
    const std::int64_t listed = std::min<std::int64_t>(columns, count);
    double total = 0;
    for (std::int64_t j = 0; j < count; ++j) total += ref.w[std::size_t(j)];
    for (std::int64_t j = 0; j < columns; ++j) {
      const std::size_t at = r * std::size_t(columns) + std::size_t(j);
      const int id = h.ids[at];
      const float prob = h.probs[at], lp = h.logprobs[at];
      const std::string slot = "slot " + std::to_string(j) + ": ";
      if (j >= listed) {
        if (id != -1 || prob != 0.0f || lp != neg_inf)
          return row_failure(rows[i], f, slot + "past the list, expected (-1, 0, -inf), got (" +
                                             std::to_string(id) + ", " + std::to_string(prob) + ", " +
                                             std::to_string(lp) + ")");
        continue;
      }
      if (id != ref.order[std::size_t(j)])
        return row_failure(rows[i], f, slot + "id " + std::to_string(id) + ", the order has " +
                                           std::to_string(ref.order[std::size_t(j)]));
      const double want = ref.w[std::size_t(j)] / total;
      if (!(std::fabs(double(prob) - want) <= 1e-6))
        return row_failure(rows[i], f, slot + "probability " + std::to_string(prob) + ", expected " +
                                           std::to_string(want));
      const double want_lp = (ref.temperature > 0 ? (double(in_rows[i][std::size_t(id)]) - ref.max) / ref.temperature : 0.0) -
                             std::log(total);
      if (!(std::fabs(double(lp) - want_lp) <= 1e-5 * std::max(1.0, std::fabs(want_lp))))
        return row_failure(rows[i], f, slot + "log-probability " + std::to_string(lp) +
                                           ", expected " + std::to_string(want_lp));
    }
  }
  return {};
}

// --- qrita's per-row paths ---------------------------------------------------

struct PathStats {
  double topk_hit = -1, topp_hit = -1, outliers = 0, passes = 0;
};
std::map<std::string, PathStats> g_paths;

// A truncation hit: the row's search ran on the gathered outliers.
bool hit(qrita::RowPath path) { return path == qrita::RowPath::truncated; }

template <class Call>
PathStats path_stats(std::int64_t batch, Call&& call_with_stats) {
  Kokkos::View<qrita::RowStats*, mem> stats("qrita_perf::stats", std::size_t(batch));
  call_with_stats(stats);
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), stats);
  PathStats s;
  std::int64_t k_rows = 0, k_hits = 0, p_rows = 0, p_hits = 0;
  double outliers = 0, passes = 0;
  for (std::int64_t r = 0; r < batch; ++r) {
    const qrita::RowStats& st = host(r);
    if (st.topk_path != qrita::RowPath::off) {
      ++k_rows;
      k_hits += hit(st.topk_path) ? 1 : 0;
    }
    if (st.topp_path != qrita::RowPath::off) {
      ++p_rows;
      p_hits += hit(st.topp_path) ? 1 : 0;
    }
    outliers += double(st.outliers);
    passes += double(st.row_passes);
  }
  if (k_rows) s.topk_hit = double(k_hits) / double(k_rows);
  if (p_rows) s.topp_hit = double(p_hits) / double(p_rows);
  s.outliers = outliers / double(batch);
  s.passes   = passes / double(batch);
  return s;
}

// --- one benchmark -----------------------------------------------------------

int g_sort_team_size = 1;

// Benchmarks that failed (a mismatch with the oracle, an allocation, an
// exception): the exit status reports them, so ctest and scripts notice.
std::vector<std::string> g_failed;

void fail(benchmark::State& state, std::string const& label, std::string const& why) {
  state.SkipWithError(why.c_str());
  if (std::find(g_failed.begin(), g_failed.end(), label) == g_failed.end()) g_failed.push_back(label);
}

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// The time of one call on `space`: CUDA events recorded on the instance's
// stream around it where the backend is CUDA, else the host clock between
// two fences. The caller fences before start().
class CallTimer {
 public:
  explicit CallTimer(space_type const& space) : space_(space) {
#ifdef KOKKOS_ENABLE_CUDA
    if constexpr (std::is_same<space_type, Kokkos::Cuda>::value) {
      cudaEventCreate(&start_);
      cudaEventCreate(&stop_);
    }
#endif
  }
  ~CallTimer() {
#ifdef KOKKOS_ENABLE_CUDA
    if constexpr (std::is_same<space_type, Kokkos::Cuda>::value) {
      cudaEventDestroy(start_);
      cudaEventDestroy(stop_);
    }
#endif
  }
  CallTimer(CallTimer const&)            = delete;
  CallTimer& operator=(CallTimer const&) = delete;

  void start() {
#ifdef KOKKOS_ENABLE_CUDA
    if constexpr (std::is_same<space_type, Kokkos::Cuda>::value) {
      cudaEventRecord(start_, space_.cuda_stream());
      return;
    }
#endif
    t0_ = clock_type::now();
  }
  // Seconds since start(), once the call has finished.
  double stop() {
#ifdef KOKKOS_ENABLE_CUDA
    if constexpr (std::is_same<space_type, Kokkos::Cuda>::value) {
      cudaEventRecord(stop_, space_.cuda_stream());
      cudaEventSynchronize(stop_);
      float ms = 0;
      cudaEventElapsedTime(&ms, start_, stop_);
      return double(ms) * 1e-3;
    }
#endif
    space_.fence();
    return seconds_since(t0_);
  }

 private:
  space_type space_;
  clock_type::time_point t0_{};
#ifdef KOKKOS_ENABLE_CUDA
  cudaEvent_t start_{}, stop_{};
#endif
};

double median_of(std::vector<double> t) {
  if (t.empty()) return 0;
  std::sort(t.begin(), t.end());
  const std::size_t n = t.size();
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

template <class View>
double copy_median(space_type const& space, View const& dst, View const& src) {
  std::vector<double> t;
  CallTimer timer(space);
  for (int i = 0; i < 9; ++i) {
    space.fence();
    timer.start();
    Kokkos::deep_copy(space, dst, src);
    t.push_back(timer.stop());
  }
  return median_of(t);
}

qrita::Options options_for(Kind kind) {
  qrita::Options opts;
  opts.sigma_truncation = kind != Kind::notrunc;
  opts.histogram        = kind != Kind::nohist;
  opts.search           = kind == Kind::binary ? qrita::Search::binary : qrita::Search::quaternary;
  opts.ties             = kind == Kind::nodup ? qrita::Ties::keep_all : qrita::Ties::exact;
  opts.teams_per_row    = g_teams_per_row;
  return opts;
}

void run(benchmark::State& state, Config const& c) {
  const space_type space;
  ensure_inputs(c.shape, c.vocab, c.input_rows);
  const std::size_t batch = std::size_t(c.batch), vocab = std::size_t(c.vocab);
  const logits_ref pristine(g_in.pristine.data(), batch, vocab);
  const logits_ref work(g_in.work.data(), batch, vocab);
  const bool half = is_16bit(c.kind);
  bits_ref pristine16, work16;
  if (half) {
    ensure_inputs16(c.kind, c.input_rows);
    pristine16 = bits_ref(g_in16.pristine.data(), batch, vocab);
    work16     = bits_ref(g_in16.work.data(), batch, vocab);
  }
  const Filters f = make_filters(c.mode, c.batch);
  const bool use_k = c.mode != Mode::p07, use_p = c.mode != Mode::k10;
  const qrita::Options opts = options_for(c.kind);
  const std::string label   = c.label();

  // The sampler's outputs (allocated here, outside the timing).
  Kokkos::View<std::uint64_t*, mem> seeds, offsets;
  Kokkos::View<int*, mem> tokens, counts;
  Kokkos::View<int**, Kokkos::LayoutRight, mem> ids;
  Kokkos::View<float**, Kokkos::LayoutRight, mem> probs, logprobs;
  const int columns = is_candidates(c.kind) ? candidate_columns(c.kind) : 0;
  if (c.kind == Kind::sample) {
    seeds   = Kokkos::View<std::uint64_t*, mem>("qrita_perf::seeds", batch);
    offsets = Kokkos::View<std::uint64_t*, mem>("qrita_perf::offsets", batch);
    tokens  = Kokkos::View<int*, mem>("qrita_perf::tokens", batch);
    std::vector<std::uint64_t> s(batch), o(batch);
    for (std::size_t r = 0; r < batch; ++r) {
      s[r] = qrita::synthetic::counter_hash(g_seed, 7, r, 0);
      o[r] = r;
    }
    to_device(seeds, s);
    to_device(offsets, o);
  } else if (columns > 0) {
    ids      = Kokkos::View<int**, Kokkos::LayoutRight, mem>("qrita_perf::ids", batch, std::size_t(columns));
    probs    = Kokkos::View<float**, Kokkos::LayoutRight, mem>("qrita_perf::probs", batch, std::size_t(columns));
    logprobs = Kokkos::View<float**, Kokkos::LayoutRight, mem>("qrita_perf::logprobs", batch, std::size_t(columns));
    counts   = Kokkos::View<int*, mem>("qrita_perf::counts", batch);
  }

  std::function<void()> call;
  std::size_t workspace = 0;
  // qrita's workspace: allocated once here, outside the timing, and passed
  // to every call (which then allocates nothing and does not fence).
  std::unique_ptr<qrita::Workspace<space_type>> ws;
  if (is_qrita(c.kind)) {
    ws        = std::make_unique<qrita::Workspace<space_type>>(space, c.batch, c.vocab, opts);
    workspace = ws->bytes();
  }
  if (c.kind == Kind::sample) {
    call = [&] { qrita::sample_tokens(space, work, f.params, seeds, offsets, tokens, opts, *ws); };
  } else if (columns > 0) {
    call = [&] { qrita::candidate_list(space, work, f.params, ids, probs, logprobs, counts, opts, *ws); };
  } else if (c.kind == Kind::bf16) {
    const typed_ref<qrita::bfloat16> w(reinterpret_cast<qrita::bfloat16*>(work16.data()), batch, vocab);
    call = [&, w] { qrita::sample_mask(space, w, f.params, opts, *ws); };
  } else if (c.kind == Kind::fp16) {
    const typed_ref<qrita::float16> w(reinterpret_cast<qrita::float16*>(work16.data()), batch, vocab);
    call = [&, w] { qrita::sample_mask(space, w, f.params, opts, *ws); };
  } else if (is_mask_variant(c.kind)) {
    if (c.mode == Mode::tminp)
      call = [&] { qrita::sample_mask(space, work, f.params, opts, *ws); };
    else if (!use_p)
      call = [&] { qrita::sample_mask(space, work, f.k, opts, *ws); };
    else if (!use_k)
      call = [&] { qrita::sample_mask(space, work, f.p, opts, *ws); };
    else
      call = [&] { qrita::sample_mask(space, work, f.k, f.p, opts, *ws); };
  } else if (c.kind == Kind::sort) {
#if QRITA_PERF_HAVE_SORT
    ensure_keys(c.vocab, c.key_rows);
    workspace = std::size_t(c.batch * c.vocab) * sizeof(std::uint64_t);
    call      = [&] {
      qrita_perf::sort_mask(space, work.data(), c.batch, int(c.vocab), c.vocab, g_in.keys.data(),
                                 use_k ? f.k.data() : nullptr, use_p ? f.p.data() : nullptr,
                                 g_sort_team_size);
    };
#else
    fail(state, label, "the sort baseline needs Kokkos 4 or Kokkos Kernels");
    return;
#endif
  } else {
    call = [&] { Kokkos::deep_copy(space, work, pristine); };
  }

  // The floor: a read+write copy of the same logits (16-bit ones for the
  // 16-bit masks).
  const double copy_s = half ? copy_median(space, work16, pristine16) : copy_median(space, work, pristine);
  // Every timed call finds its input as the mask benchmarks do: restored
  // from the pristine copy (untimed) right before. The sampler's calls do not
  // write the logits; they are restored anyway, so that every kind starts
  // from the same caches.
  const auto restore = [&] {
    if (half)
      Kokkos::deep_copy(space, work16, pristine16);
    else
      Kokkos::deep_copy(space, work, pristine);
  };

  // Warm-up, checked against the oracle the first time this configuration
  // runs (Google Benchmark calls this function again while it sizes the
  // iteration count).
  restore();
  call();
  space.fence();
  std::vector<int> warm_tokens;
  if (c.kind == Kind::sample) {
    warm_tokens.resize(batch);
    Kokkos::deep_copy(Kokkos::View<int*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(warm_tokens.data(), batch),
                      tokens);
  }
  if (c.kind != Kind::copy && !g_config_verified.count(label)) {
    std::string failure;
    if (c.kind == Kind::sample) {
      failure = verify_tokens(c, pristine, f, warm_tokens);
    } else if (columns > 0) {
      CandidateHost h;
      const std::size_t n = batch * std::size_t(columns);
      h.ids.resize(n);
      h.probs.resize(n);
      h.logprobs.resize(n);
      h.counts.resize(batch);
      Kokkos::deep_copy(Kokkos::View<int**, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                            h.ids.data(), batch, std::size_t(columns)), ids);
      Kokkos::deep_copy(Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                            h.probs.data(), batch, std::size_t(columns)), probs);
      Kokkos::deep_copy(Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                            h.logprobs.data(), batch, std::size_t(columns)), logprobs);
      Kokkos::deep_copy(Kokkos::View<int*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(h.counts.data(), batch),
                        counts);
      failure = verify_candidates(c, pristine, f, columns, h);
    } else if (half) {
      failure = verify_sample16(c, pristine16, work16, f);
    } else {
      failure = verify_sample(c, pristine, work, f);
    }
    if (!failure.empty()) {
      fail(state, label, failure);
      return;
    }
    g_config_verified.insert(label);
  }
  if (has_row_stats(c.kind) && !g_paths.count(label)) {
    restore();
    g_paths[label] = path_stats(c.batch, [&](Kokkos::View<qrita::RowStats*, mem> const& stats) {
      if (c.kind == Kind::bf16)
        qrita::sample_mask(space, typed_ref<qrita::bfloat16>(reinterpret_cast<qrita::bfloat16*>(work16.data()), batch, vocab),
                           f.params, opts, *ws, stats);
      else if (c.kind == Kind::fp16)
        qrita::sample_mask(space, typed_ref<qrita::float16>(reinterpret_cast<qrita::float16*>(work16.data()), batch, vocab),
                           f.params, opts, *ws, stats);
      else if (c.mode == Mode::tminp)
        qrita::sample_mask(space, work, f.params, opts, *ws, stats);
      else
        qrita::sample_mask(space, work, f.k, f.p, opts, *ws, stats);
      space.fence();
    });
  }

  std::vector<double> times;
  {
    AllocationListener listening;
    CallTimer timer(space);
    for (auto _ : state) {
      if (c.kind != Kind::copy) restore();
      space.fence();
      g_alloc.counting = true;
      timer.start();
      call();
      const double s   = timer.stop();
      g_alloc.counting = false;
      state.SetIterationTime(s);
      times.push_back(s);
    }
  }

  // qrita promises no allocation once a first call has sized the scratch.
  if (is_qrita(c.kind) && g_alloc.available && g_alloc.count > 0) {
    const std::string why = "qrita allocated " + std::to_string(g_alloc.bytes) + " bytes in " +
                            std::to_string(g_alloc.count) + " Kokkos allocations during the timed calls";
    fail(state, label, why);
    return;
  }
  // A token is a function of the row, its filters, its seed and its offset.
  if (c.kind == Kind::sample) {
    std::vector<int> again(batch);
    Kokkos::deep_copy(Kokkos::View<int*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(again.data(), batch), tokens);
    for (std::size_t r = 0; r < batch; ++r)
      if (again[r] != warm_tokens[r]) {
        fail(state, label, "row " + std::to_string(r) + ": token " + std::to_string(again[r]) +
                               " after the timed calls, " + std::to_string(warm_tokens[r]) +
                               " before, with the same seed and offset");
        return;
      }
  }
  const double iterations = double(state.iterations());
  // The median call: robust to the odd slow call (a clock change, another
  // process); Google Benchmark's own real_time is the mean.
  const double per_call = median_of(times);
  // Bytes a call must move: the mask reads and writes the logits; the
  // sampler only reads them.
  const std::int64_t element = half ? 2 : std::int64_t(sizeof(float));
  const std::int64_t passes  = (c.kind == Kind::sample || columns > 0) ? 1 : 2;
  state.SetBytesProcessed(std::int64_t(state.iterations()) * c.batch * c.vocab * element * passes);
  state.counters["batch"]           = double(c.batch);
  state.counters["vocab"]           = double(c.vocab);
  state.counters["median_us"]       = per_call * 1e6;
  state.counters["rows_per_ms"]     = double(c.batch) / (per_call * 1e3);
  state.counters["x_copy"]          = per_call / copy_s;
  state.counters["copy_ms"]         = copy_s * 1e3;
  state.counters["workspace_bytes"] = double(workspace);
  if (columns > 0) state.counters["columns"] = double(columns);
  if (half) state.counters["bytes_per_entry"] = 2.0;
  if (is_qrita(c.kind))
    state.counters["teams_per_row"] =
        double(qrita::plan(space, c.batch, c.vocab, opts).teams_per_row);
  state.counters["alloc_bytes"] =
      g_alloc.available ? double(g_alloc.bytes) / std::max(1.0, iterations) : -1.0;
  state.counters["allocs"] =
      g_alloc.available ? double(g_alloc.count) / std::max(1.0, iterations) : -1.0;
  if (has_row_stats(c.kind)) {
    const PathStats& s = g_paths[label];
    if (s.topk_hit >= 0) state.counters["topk_hit"] = s.topk_hit;
    if (s.topp_hit >= 0) state.counters["topp_hit"] = s.topp_hit;
    state.counters["outliers"] = s.outliers;
    state.counters["passes"]   = s.passes;
  }
}

// --- the grids ---------------------------------------------------------------

enum class Suite { full, quick, smoke };

struct Grid {
  std::vector<Config> configs;
  void add(Kind kind, Shape shape, std::vector<Mode> const& modes, std::int64_t vocab,
           std::vector<std::int64_t> const& batches) {
    for (Mode m : modes)
      for (std::int64_t b : batches) configs.push_back(Config{kind, shape, m, vocab, b});
  }
  void add_all(Kind kind, Shape shape, std::int64_t vocab, std::vector<std::int64_t> const& batches) {
    add(kind, shape, {std::begin(all_modes), std::end(all_modes)}, vocab, batches);
  }
  // Rows to generate per (shape, vocab) and sort keys per vocab: the largest
  // batch each is used with.
  void size_inputs() {
    std::map<std::pair<int, std::int64_t>, std::int64_t> rows;
    std::map<std::int64_t, std::int64_t> keys;
    for (Config const& c : configs) {
      auto& r = rows[{int(c.shape), c.vocab}];
      r       = std::max(r, c.batch);
      if (c.kind == Kind::sort) keys[c.vocab] = std::max(keys[c.vocab], c.batch);
    }
    for (Config& c : configs) {
      c.input_rows = rows[{int(c.shape), c.vocab}];
      c.key_rows   = keys[c.vocab];
    }
  }
};

// The sampler's benchmarks for one (shape, vocabulary), on the mask's
// batches: sample_tokens and candidate_list (C = 64) in every mode, and on
// the serving shape also in the temperature / min-p mode (with qrita's mask
// there, for the ratio); candidate_list with C = 1024 where `big`; the
// 16-bit masks at batches b16 (fp16 only where `fp16`).
void add_sampler(Grid& g, Shape s, std::int64_t v, std::vector<std::int64_t> const& b,
                 std::vector<std::int64_t> const& b16, bool big, bool fp16) {
  g.add_all(Kind::sample, s, v, b);
  g.add_all(Kind::cand, s, v, b);
  if (s == Shape::serving)
    for (Kind k : {Kind::qrita, Kind::sample, Kind::cand}) g.add(k, s, {Mode::tminp}, v, b);
  if (big) g.add_all(Kind::cand_big, s, v, b);
  if (!b16.empty()) g.add_all(Kind::bf16, s, v, b16);
  if (!b16.empty() && fp16) g.add_all(Kind::fp16, s, v, b16);
}

Grid make_grid(Suite suite) {
  Grid g;
  const std::vector<Mode> sort_modes = {Mode::k50p09, Mode::p07};
  const Kind ablations[]             = {Kind::notrunc, Kind::binary, Kind::nodup, Kind::nohist};
  if (suite == Suite::smoke) {
    // Every kind, shape and mode on tiny inputs, every row checked.
    const std::int64_t v = 3000;
    const std::vector<std::int64_t> b = {1, 3};
    g.add(Kind::copy, Shape::serving, {Mode::k10}, v, b);
    for (Shape s : {Shape::serving, Shape::ordered, Shape::randn, Shape::uniform, Shape::temp2,
                    Shape::serving_bf16, Shape::flat, Shape::lm}) {
      g.add_all(Kind::qrita, s, v, b);
      if (s == Shape::serving)
        for (Kind a : ablations) g.add_all(a, s, v, b);
#if QRITA_PERF_HAVE_SORT
      g.add_all(Kind::sort, s, v, b);
#endif
      // The sampler and the 16-bit masks on the shapes that differ most
      // (ties, flat rows, wide nuclei).
      if (s == Shape::serving || s == Shape::uniform || s == Shape::flat || s == Shape::lm)
        add_sampler(g, s, v, b, b, s == Shape::serving, s == Shape::serving);
      else if (s == Shape::serving_bf16)
        g.add_all(Kind::bf16, s, v, b);
      if (s != Shape::serving) g.add(Kind::qrita, s, {Mode::tminp}, v, b);
    }
  } else if (suite == Suite::quick) {
    // A CPU-sized grid: two vocabularies, batches up to 64; the other
    // shapes at V 128256, B 1 and 16; the sampler and the 16-bit masks on
    // serving logits.
    const std::vector<std::int64_t> b = {1, 4, 16, 64};
    for (std::int64_t v : {std::int64_t(32000), std::int64_t(128256)}) {
      g.add(Kind::copy, Shape::serving, {Mode::k10}, v, b);
      g.add_all(Kind::qrita, Shape::serving, v, b);
      for (Kind a : ablations)
        if (v == 128256) g.add_all(a, Shape::serving, v, b);
#if QRITA_PERF_HAVE_SORT
      g.add(Kind::sort, Shape::serving, sort_modes, v, v == 128256 ? std::vector<std::int64_t>{1, 4} : b);
#endif
      if (v == 32000) add_sampler(g, Shape::serving, v, b, {16, 64}, true, true);
      if (v == 128256) {
        add_sampler(g, Shape::serving, v, {1, 16}, {16, 64}, false, false);
        for (Shape s : grid_shapes)
          if (s != Shape::serving) g.add_all(Kind::qrita, s, v, {1, 16});
        g.add_all(Kind::qrita, Shape::lm, v, {1, 16});
      }
    }
  } else {
    // The GPU grid: every counter shape, mode, vocabulary and batch for
    // qrita, sample_tokens and candidate_list (C = 64; C = 1024 on serving
    // at V 128256); the copy floor for each (vocabulary, batch); the sort
    // baseline on serving and randn; the ablations on serving at V 128256;
    // the bf16 mask at B 64 and 1024 (fp16 on serving and randn). Grouped by
    // (vocabulary, shape): each input is generated once.
    const std::vector<std::int64_t> b =
        g_batches.empty() ? std::vector<std::int64_t>{1, 8, 64, 1024} : g_batches;
    const std::vector<std::int64_t> b16 =
        g_batches.empty() ? std::vector<std::int64_t>{64, 1024} : g_batches;
    for (std::int64_t v : {std::int64_t(128256), std::int64_t(262144)}) {
      g.add(Kind::copy, Shape::serving, {Mode::k10}, v, b);
      for (Shape s : grid_shapes) {
        g.add_all(Kind::qrita, s, v, b);
        if (s == Shape::serving && v == 128256)
          for (Kind a : ablations) g.add_all(a, s, v, b);
#if QRITA_PERF_HAVE_SORT
        if (s == Shape::serving || s == Shape::randn) g.add(Kind::sort, s, sort_modes, v, b);
#endif
        add_sampler(g, s, v, b, b16, s == Shape::serving && v == 128256,
                    s == Shape::serving || s == Shape::randn);
      }
    }
  }
  g.size_inputs();
  return g;
}

void register_grid(Grid const& grid) {
  const space_type space;
  for (Config const& c : grid.configs) {
    // candidate_list takes at most the candidates a team can hold.
    if (is_candidates(c.kind)) {
      const qrita::LaunchPlan plan = qrita::plan(space, c.batch, c.vocab, options_for(c.kind));
      if (candidate_columns(c.kind) > plan.candidate_capacity + plan.tier_capacity) continue;
    }
    benchmark::RegisterBenchmark(c.label().c_str(), [c](benchmark::State& state) {
      try {
        run(state, c);
      } catch (std::exception const& e) {
        fail(state, c.label(), e.what());
      }
    })
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
  }
}

// --- --calibrate: how the serving shape compares with real models -----------

// Prints, for a few rows of the serving shape at each vocabulary, the
// numbers the Qrita paper reports for real models (its table of
// sigma-truncation hit rates): the entries above qrita's top-k (k = 50)
// threshold, the softmax mass above its top-p (p = 0.9) threshold, and
// where the mass sits.
void calibrate(std::vector<std::int64_t> const& vocabs, std::int64_t rows) {
  const space_type space;
  std::printf("serving shape, seed %llu, rows 0..%lld; qrita's outliers from RowStats\n",
              static_cast<unsigned long long>(g_seed), static_cast<long long>(rows - 1));
  std::printf("%8s %-22s %10s %10s %10s\n", "V", "quantity", "mean", "min", "max");
  for (std::int64_t vocab : vocabs) {
    ensure_inputs(Shape::serving, vocab, rows);
    const logits_ref pristine(g_in.pristine.data(), std::size_t(rows), std::size_t(vocab));
    const logits_ref work(g_in.work.data(), std::size_t(rows), std::size_t(vocab));
    Kokkos::View<qrita::RowStats*, mem> stats("qrita_perf::stats", std::size_t(rows));
    Kokkos::View<int*, mem> k("k", std::size_t(rows));
    Kokkos::View<float*, mem> p("p", std::size_t(rows));
    auto outliers = [&](int kv, float pv) {
      Kokkos::deep_copy(k, kv);
      Kokkos::deep_copy(p, pv);
      Kokkos::deep_copy(work, pristine);
      qrita::sample_mask(space, work, k, p, qrita::Options{}, stats);
      space.fence();
      return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), stats);
    };
    const auto st_k = outliers(50, 1.0f);
    const auto st_p = outliers(0, 0.9f);
    std::map<std::string, std::vector<double>> q;
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::vector<float> x = row_to_host(pristine, r);
      std::vector<double> v(x.begin(), x.end());
      std::sort(v.begin(), v.end(), std::greater<double>());
      double total = 0;
      for (double a : v) total += std::exp(a - v[0]);
      std::vector<double> cum(v.size());
      double acc = 0;
      for (std::size_t i = 0; i < v.size(); ++i) cum[i] = (acc += std::exp(v[i] - v[0]) / total);
      const auto nucleus = [&](double pv) {
        return double(std::lower_bound(cum.begin(), cum.end(), pv) - cum.begin() + 1);
      };
      double s = 0, s2 = 0;
      const std::size_t n = std::min<std::size_t>(4096, x.size());
      for (std::size_t i = 0; i < n; ++i) {
        s += double(x[i]);
        s2 += double(x[i]) * double(x[i]);
      }
      const double mean = s / double(n), sd = std::sqrt(s2 / double(n) - mean * mean);
      const std::int64_t out_p = st_p(r).outliers;
      q["top z (sample sd)"].push_back((v[0] - mean) / sd);
      q["mass in top 50"].push_back(cum[std::min<std::size_t>(49, cum.size() - 1)]);
      q["mass in top 300"].push_back(cum[std::min<std::size_t>(299, cum.size() - 1)]);
      q["nucleus size p=0.9"].push_back(nucleus(0.9));
      q["nucleus size p=0.7"].push_back(nucleus(0.7));
      q["N_t k=50 (outliers)"].push_back(double(st_k(r).outliers));
      q["outliers p=0.9"].push_back(double(out_p));
      q["S_t p=0.9 (mass)"].push_back(out_p > 0 ? cum[std::size_t(std::min<std::int64_t>(out_p, std::int64_t(cum.size()))) - 1] : 0.0);
      q["k=50 hit"].push_back(hit(st_k(r).topk_path) ? 1.0 : 0.0);
      q["p=0.9 hit"].push_back(hit(st_p(r).topp_path) ? 1.0 : 0.0);
    }
    for (auto const& [what, values] : q) {
      double sum = 0, lo = values[0], hi = values[0];
      for (double a : values) {
        sum += a;
        lo = std::min(lo, a);
        hi = std::max(hi, a);
      }
      std::printf("%8lld %-22s %10.4g %10.4g %10.4g\n", static_cast<long long>(vocab), what.c_str(),
                  sum / double(values.size()), lo, hi);
    }
  }
}

// Prints, per counter shape and vocabulary, how far the first 4096 entries
// (sigma-truncation's sample) sit from the whole row, against an evenly
// strided sample, and how often mu + 3 sigma of the first 4096 has nothing
// above it (synthetic::order_bias). The ordered shape is matched to a real
// 262144-entry vocabulary (Gemma-3): +0.9 row sd, sd ratio 1.35, strided
// +0.05 / 1.006, nothing above on about a quarter of rows.
void calibrate_order(std::vector<std::int64_t> const& vocabs, std::int64_t rows) {
  std::printf("\nvocabulary-order bias, seed %llu, rows 0..%lld (host); offsets in row sd\n",
              static_cast<unsigned long long>(g_seed), static_cast<long long>(rows - 1));
  std::printf("%8s %-13s %12s %10s %14s %13s %12s %12s\n", "V", "shape", "head offset",
              "head sd x", "strided offset", "strided sd x", "none above", "mean above");
  for (std::int64_t vocab : vocabs)
    for (qrita::synthetic::CounterShape s : qrita::synthetic::all_counter_shapes) {
      if (s == qrita::synthetic::CounterShape::flat) continue;
      const qrita::synthetic::OrderBias b = qrita::synthetic::order_bias(s, g_seed, vocab, rows);
      std::printf("%8lld %-13s %+12.3f %10.3f %+14.3f %13.3f %12.3f %12.1f\n",
                  static_cast<long long>(vocab), qrita::synthetic::name(s), b.head_offset,
                  b.head_ratio, b.strided_offset, b.strided_ratio, b.empty_fraction,
                  b.above_mean);
    }
}

std::string kokkos_configuration() {
  std::ostringstream os;
  Kokkos::print_configuration(os, true);
  return os.str();
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  Suite suite    = Suite::full;
  bool calibrate_only = false;
  bool min_time_given = false;
  // A count on the command line: 1 to 6 decimal digits.
  const auto is_count = [](std::string const& n) {
    return !n.empty() && n.size() <= 6 && n.find_first_not_of("0123456789") == std::string::npos;
  };
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--smoke")
      suite = Suite::smoke;
    else if (a == "--quick")
      suite = Suite::quick;
    else if (a == "--calibrate")
      calibrate_only = true;
    else if (a.rfind("--seed=", 0) == 0)
      g_seed = std::stoull(a.substr(7));
    else if (a.rfind("--teams-per-row=", 0) == 0) {
      const std::string n = a.substr(16);
      if (!is_count(n)) {
        std::fprintf(stderr, "qrita_perf: --teams-per-row takes a count >= 0, got '%s'\n",
                     n.c_str());
        return 2;
      }
      g_teams_per_row = std::stoi(n);
    } else if (a.rfind("--batches=", 0) == 0) {
      std::string list = a.substr(10) + ",";
      for (std::size_t at = 0, comma; (comma = list.find(',', at)) != std::string::npos;
           at = comma + 1) {
        const std::string n = list.substr(at, comma - at);
        if (!is_count(n) || std::stoi(n) < 1) {
          std::fprintf(stderr, "qrita_perf: --batches takes batches >= 1, e.g. 1,64,256; got '%s'\n",
                       a.substr(10).c_str());
          return 2;
        }
        g_batches.push_back(std::stoi(n));
      }
    }
    else if (a == "--help" || a == "-h") {
      std::printf(
          "qrita_perf [--quick | --smoke] [--calibrate] [--seed=N] [--batches=B1,B2,...]\n"
          "           [--teams-per-row=N] [google benchmark flags]\n"
          "  (default)    the full grid for a GPU: 7 shapes x 4 modes x V 128256, 262144 x B 1, 64,\n"
          "               1024, with copy, sort and ablations; sample_tokens and candidate_list on\n"
          "               the same cells; bf16 / fp16 masks at B 64 and 1024 (~3 min on an H100)\n"
          "  --quick      a small grid for CPUs (V 32000 and 128256, B 1..64)\n"
          "  --smoke      every benchmark kind on tiny inputs (a test)\n"
          "  --calibrate  print how the serving shape compares with real models and each\n"
          "               shape's vocabulary-order bias (the ordered shape's targets), then exit\n"
          "  --seed=N     seed of the generated logits (default 1234)\n"
          "  --batches=B1,B2,...  batches of the default grid (default 1,64,1024)\n"
          "  --teams-per-row=N  Options::teams_per_row of every qrita call (0: the backend\n"
          "               decides; 1: never split a row; N >= 2: N teams per row at every batch)\n"
          "Names: KIND/SHAPE/MODE/V:<vocab>/B:<batch>, e.g. qrita/serving/k50p0.9/V:128256/B:1024;\n"
          "KIND: qrita, qrita-sample, qrita-cand64, qrita-cand1024, qrita-bf16, qrita-fp16, sort,\n"
          "copy, ablation-*. Select with --benchmark_filter=<regex>, e.g.\n"
          "'^(qrita|qrita-sample|qrita-cand64|qrita-bf16|copy)/'. See perf/README.md.\n\n");
      args.push_back(argv[i]);
    } else {
      if (a.rfind("--benchmark_min_time", 0) == 0) min_time_given = true;
      args.push_back(argv[i]);
    }
  }
  // Few iterations by default: the whole grid runs in a few minutes on one GPU.
  std::string default_min_time = "--benchmark_min_time=0.05";
  if (!min_time_given) args.insert(args.begin() + 1, default_min_time.data());

  if (calibrate_only) {
    std::vector<std::int64_t> vocabs = {128256, 262144};
    if (suite == Suite::smoke) vocabs = {3000};
    calibrate(vocabs, suite == Suite::full ? 64 : 8);
    calibrate_order(vocabs, suite == Suite::full ? 128 : suite == Suite::quick ? 32 : 4);
    g_in16 = Inputs16{};
    g_in = Inputs{};
    return 0;
  }

  if (suite == Suite::full &&
      Kokkos::SpaceAccessibility<space_type, Kokkos::HostSpace>::accessible)
    std::fprintf(stderr,
                 "qrita_perf: the default grid is sized for GPUs and takes very long on a CPU; on "
                 "%s use --quick, or select with --benchmark_filter\n",
                 space_type::name());
  int n = int(args.size());
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;

  // Kokkos Tools: count allocations unless a tool library owns the callbacks.
  g_alloc.available = !Kokkos::Tools::profileLibraryLoaded();
#if QRITA_PERF_HAVE_SORT
  g_sort_team_size = qrita_perf::sort_team_size(space_type());
#endif
  const space_type space;
  const qrita::LaunchPlan launch = qrita::plan(space, 1024, 128256);
  benchmark::AddCustomContext("qrita_version", std::to_string(QRITA_VERSION_MAJOR) + "." +
                                                   std::to_string(QRITA_VERSION_MINOR) + "." +
                                                   std::to_string(QRITA_VERSION_PATCH));
  benchmark::AddCustomContext("kokkos_version", std::to_string(KOKKOS_VERSION));
  benchmark::AddCustomContext("kokkos_execution_space", space_type::name());
  benchmark::AddCustomContext("kokkos_memory_space", mem::name());
  benchmark::AddCustomContext("kokkos_concurrency", std::to_string(space.concurrency()));
  benchmark::AddCustomContext("qrita_team_size", std::to_string(launch.team_size));
  benchmark::AddCustomContext("qrita_candidate_capacity", std::to_string(launch.candidate_capacity));
  benchmark::AddCustomContext("qrita_league_1024x128256", std::to_string(launch.league_size));
#if QRITA_PERF_HAVE_SORT
  benchmark::AddCustomContext("sort_baseline", "bitonic team sort of 64-bit keys, team size " +
                                                   std::to_string(g_sort_team_size));
#else
  benchmark::AddCustomContext("sort_baseline", "unavailable (needs Kokkos 4 or Kokkos Kernels)");
#endif
  benchmark::AddCustomContext("suite", suite == Suite::full    ? "full"
                                       : suite == Suite::quick ? "quick"
                                                               : "smoke");
  benchmark::AddCustomContext("seed", std::to_string(g_seed));
  benchmark::AddCustomContext("teams_per_row_option", std::to_string(g_teams_per_row));
  if (!g_batches.empty()) {
    std::string list;
    for (std::int64_t b : g_batches) list += (list.empty() ? "" : ",") + std::to_string(b);
    benchmark::AddCustomContext("batches", list);
  }
  benchmark::AddCustomContext("allocation_tracking", g_alloc.available
                                                         ? "Kokkos Tools allocate callback"
                                                         : "off (a Kokkos tool is loaded)");
  benchmark::AddCustomContext("kokkos_configuration", kokkos_configuration());

  register_grid(make_grid(suite));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  g_in16 = Inputs16{};
  g_in   = Inputs{};  // free device memory before Kokkos finalizes
  if (!g_failed.empty()) {
    std::fprintf(stderr, "qrita_perf: %zu benchmark(s) failed:\n", g_failed.size());
    for (std::string const& label : g_failed) std::fprintf(stderr, "  %s\n", label.c_str());
    return 1;
  }
  return 0;
}
