// qrita_perf: the Google Benchmark suite of qrita::sample_mask on Kokkos'
// default execution space, next to the memory floor (a read+write copy of
// the same logits), a sort-based exact mask (the pre-Qrita way) and the
// paper's ablations. perf/README.md describes the grid, the names and the
// flags; scripts/plot_perf.py draws the JSON it writes.
//
//   qrita_perf [--quick | --smoke] [--calibrate] [--seed=N] [google benchmark flags]
//
// Every benchmark is one configuration, named
//   KIND/SHAPE/MODE/V:<vocab>/B:<batch>       (copy: copy/V:<vocab>/B:<batch>)
// e.g. qrita/serving/k50p0.9/V:128256/B:1024; --benchmark_filter selects by name.
//
// Per configuration: the inputs are generated once per (shape, vocab) at the
// largest batch that shape and vocab are run with, on the device, and a
// batch of B rows is their first B rows. A warm-up call is checked against
// the host oracle on up to four rows (first two, last two); a mismatch
// skips the benchmark with the reason. Then per iteration: restore the
// input from the pristine copy (not timed), fence, start, call, fence, stop
// (manual time). Counters: rows_per_ms, bytes_per_second (one read and one
// write of the logits), x_copy (time / median time of a read+write copy of
// the same B x V logits, measured right before), copy_ms, workspace_bytes
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
#include <vector>

namespace {

using space_type  = Kokkos::DefaultExecutionSpace;
using mem         = space_type::memory_space;
using logits_view = Kokkos::View<float**, Kokkos::LayoutRight, mem>;
using logits_ref =
    Kokkos::View<float**, Kokkos::LayoutRight, mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
using clock_type = std::chrono::steady_clock;

std::uint64_t g_seed = 1234;

// --- what a configuration is ------------------------------------------------

enum class Kind { qrita, notrunc, binary, nodup, nohist, sort, copy };
enum class Mode { k10, p07, k50p09, rand };
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
  }
  return "?";
}
const char* name(Mode m) {
  switch (m) {
    case Mode::k10: return "k10";
    case Mode::p07: return "p0.7";
    case Mode::k50p09: return "k50p0.9";
    case Mode::rand: return "rand";
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
bool is_qrita(Kind k) {
  return k == Kind::qrita || k == Kind::notrunc || k == Kind::binary || k == Kind::nodup ||
         k == Kind::nohist;
}
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

void ensure_keys(std::int64_t vocab, std::int64_t rows) {
  if (g_in.keys.data() && g_in.key_vocab == vocab && g_in.key_rows >= rows) return;
  g_in.keys = Kokkos::View<std::uint64_t*, mem>();
  g_in.keys = Kokkos::View<std::uint64_t*, mem>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "qrita_perf::sort_keys"),
      std::size_t(rows * vocab));
  g_in.key_vocab = vocab;
  g_in.key_rows  = rows;
}

// k and p per row, on the device and on the host (0 / 1: that filter off).
struct Filters {
  Kokkos::View<int*, mem> k;
  Kokkos::View<float*, mem> p;
  std::vector<int> k_host;
  std::vector<float> p_host;
};

Filters make_filters(Mode mode, std::int64_t batch) {
  Filters f{Kokkos::View<int*, mem>("qrita_perf::k", std::size_t(batch)),
            Kokkos::View<float*, mem>("qrita_perf::p", std::size_t(batch)),
            std::vector<int>(std::size_t(batch)), std::vector<float>(std::size_t(batch))};
  for (std::int64_t b = 0; b < batch; ++b) {
    int k   = 0;
    float p = 1.0f;
    switch (mode) {
      case Mode::k10: k = 10; break;
      case Mode::p07: p = 0.7f; break;
      case Mode::k50p09: k = 50; p = 0.9f; break;
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
  Kokkos::deep_copy(f.k, Kokkos::View<const int*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                             f.k_host.data(), f.k_host.size()));
  Kokkos::deep_copy(f.p, Kokkos::View<const float*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                             f.p_host.data(), f.p_host.size()));
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

// Checks sampled rows of `out` (masked from `in`); empty if all conform.
std::string verify_sample(Config const& c, logits_ref const& in, logits_ref const& out,
                          Filters const& f) {
  const std::int64_t vocab = c.vocab;
  const bool weak          = c.kind == Kind::nodup;
  struct Job {
    std::int64_t row;
    std::vector<float> in, out;
    std::future<std::string> result;
  };
  std::vector<Job> jobs;
  for (std::int64_t r : sample_rows(c.batch)) {
    Job j{r, row_to_host(in, r), row_to_host(out, r), {}};
    jobs.push_back(std::move(j));
  }
  // The device generator against its host reference, once per input.
  if (c.shape != Shape::lm && g_generator_checked.insert({int(c.shape), vocab}).second) {
    std::vector<float> ref(static_cast<std::size_t>(vocab));
    qrita::synthetic::counter_row(ref.data(), vocab, counter_shape(c.shape), g_seed, jobs[0].row);
    std::int64_t off = 0;
    for (std::int64_t i = 0; i < vocab; ++i) {
      const float a = jobs[0].in[std::size_t(i)], b = ref[std::size_t(i)];
      if (!(std::fabs(a - b) <= 1e-6f * std::max(1.0f, std::fabs(b)))) ++off;
    }
    // serving-bf16: a last-bit difference before the rounding can move a
    // value by one bf16 step; allow a few.
    if (off > (c.shape == Shape::serving_bf16 ? vocab / 1000 : 0))
      return "the device generator disagrees with its host reference on " + std::to_string(off) +
             " entries of row " + std::to_string(jobs[0].row);
  }
  for (Job& j : jobs) {
    const int k   = f.k_host[std::size_t(j.row)];
    const float p = f.p_host[std::size_t(j.row)];
    const auto key = std::make_tuple(int(c.shape), vocab, j.row, k, p,
                                     row_hash(j.out.data(), vocab), weak);
    if (g_verified.count(key)) {
      j.result = std::async(std::launch::deferred, [] { return std::string(); });
      continue;
    }
    const float* in_p  = j.in.data();
    const float* out_p = j.out.data();
    j.result = std::async(std::launch::async, [=] {
      return weak ? verify_keep_all(in_p, out_p, vocab, k, p)
                  : qrita::oracle::verify(in_p, out_p, vocab, k, p);
    });
  }
  std::string failure;
  for (Job& j : jobs) {
    const std::string why = j.result.get();
    const int k           = f.k_host[std::size_t(j.row)];
    const float p         = f.p_host[std::size_t(j.row)];
    if (why.empty())
      g_verified.insert(std::make_tuple(int(c.shape), vocab, j.row, k, p,
                                        row_hash(j.out.data(), vocab), weak));
    else if (failure.empty())
      failure = "row " + std::to_string(j.row) + " (k=" + std::to_string(k) +
                ", p=" + std::to_string(p) + ") does not match the oracle: " + why;
  }
  return failure;
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

double copy_median(space_type const& space, logits_ref const& dst, logits_ref const& src) {
  std::vector<double> t;
  for (int i = 0; i < 9; ++i) {
    space.fence();
    const auto t0 = clock_type::now();
    Kokkos::deep_copy(space, dst, src);
    space.fence();
    t.push_back(seconds_since(t0));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

qrita::Options options_for(Kind kind) {
  qrita::Options opts;
  opts.sigma_truncation = kind != Kind::notrunc;
  opts.histogram        = kind != Kind::nohist;
  opts.search           = kind == Kind::binary ? qrita::Search::binary : qrita::Search::quaternary;
  opts.ties             = kind == Kind::nodup ? qrita::Ties::keep_all : qrita::Ties::exact;
  return opts;
}

void run(benchmark::State& state, Config const& c) {
  const space_type space;
  ensure_inputs(c.shape, c.vocab, c.input_rows);
  const logits_ref pristine(g_in.pristine.data(), std::size_t(c.batch), std::size_t(c.vocab));
  const logits_ref work(g_in.work.data(), std::size_t(c.batch), std::size_t(c.vocab));
  const Filters f = make_filters(c.mode, c.batch);
  const bool use_k = c.mode != Mode::p07, use_p = c.mode != Mode::k10;
  const qrita::Options opts = options_for(c.kind);

  std::function<void()> call;
  std::size_t workspace = 0;
  // qrita's workspace: allocated once here, outside the timing, and passed
  // to every call (which then allocates nothing and does not fence).
  std::unique_ptr<qrita::Workspace<space_type>> ws;
  if (is_qrita(c.kind)) {
    ws        = std::make_unique<qrita::Workspace<space_type>>(space, c.batch, c.vocab, opts);
    workspace = ws->bytes();
    if (!use_p)
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
    fail(state, c.label(), "the sort baseline needs Kokkos 4 or Kokkos Kernels");
    return;
#endif
  } else {
    call = [&] { Kokkos::deep_copy(space, work, pristine); };
  }

  const double copy_s = copy_median(space, work, pristine);

  // Warm-up, checked against the oracle the first time this configuration
  // runs (Google Benchmark calls this function again while it sizes the
  // iteration count).
  Kokkos::deep_copy(space, work, pristine);
  call();
  space.fence();
  const std::string label = c.label();
  if (c.kind != Kind::copy && !g_config_verified.count(label)) {
    const std::string failure = verify_sample(c, pristine, work, f);
    if (!failure.empty()) {
      fail(state, label, failure);
      return;
    }
    g_config_verified.insert(label);
  }
  if (is_qrita(c.kind) && !g_paths.count(label)) {
    Kokkos::deep_copy(space, work, pristine);
    g_paths[label] = path_stats(c.batch, [&](Kokkos::View<qrita::RowStats*, mem> const& stats) {
      qrita::sample_mask(space, work, f.k, f.p, opts, *ws, stats);
      space.fence();
    });
  }

  double total = 0;
  {
    AllocationListener listening;
    for (auto _ : state) {
      if (c.kind != Kind::copy) Kokkos::deep_copy(space, work, pristine);
      space.fence();
      g_alloc.counting = true;
      const auto t0    = clock_type::now();
      call();
      space.fence();
      const double s   = seconds_since(t0);
      g_alloc.counting = false;
      state.SetIterationTime(s);
      total += s;
    }
  }

  // qrita promises no allocation once a first call has sized the scratch.
  if (is_qrita(c.kind) && g_alloc.available && g_alloc.count > 0) {
    const std::string why = "qrita allocated " + std::to_string(g_alloc.bytes) + " bytes in " +
                            std::to_string(g_alloc.count) + " Kokkos allocations during the timed calls";
    fail(state, label, why);
    return;
  }
  const double iterations = double(state.iterations());
  const double per_call   = total / std::max(1.0, iterations);
  state.SetBytesProcessed(std::int64_t(state.iterations()) * c.batch * c.vocab *
                          std::int64_t(2 * sizeof(float)));
  state.counters["batch"]           = double(c.batch);
  state.counters["vocab"]           = double(c.vocab);
  state.counters["rows_per_ms"]     = double(c.batch) / (per_call * 1e3);
  state.counters["x_copy"]          = per_call / copy_s;
  state.counters["copy_ms"]         = copy_s * 1e3;
  state.counters["workspace_bytes"] = double(workspace);
  if (is_qrita(c.kind))
    state.counters["teams_per_row"] =
        double(qrita::plan(space, c.batch, c.vocab, opts).teams_per_row);
  state.counters["alloc_bytes"] =
      g_alloc.available ? double(g_alloc.bytes) / std::max(1.0, iterations) : -1.0;
  state.counters["allocs"] =
      g_alloc.available ? double(g_alloc.count) / std::max(1.0, iterations) : -1.0;
  if (is_qrita(c.kind)) {
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
    }
  } else if (suite == Suite::quick) {
    // A CPU-sized grid: two vocabularies, batches up to 64; the other
    // shapes at V 128256, B 1 and 16.
    const std::vector<std::int64_t> b = {1, 4, 16, 64};
    for (std::int64_t v : {std::int64_t(32000), std::int64_t(128256)}) {
      g.add(Kind::copy, Shape::serving, {Mode::k10}, v, b);
      g.add_all(Kind::qrita, Shape::serving, v, b);
      for (Kind a : ablations)
        if (v == 128256) g.add_all(a, Shape::serving, v, b);
#if QRITA_PERF_HAVE_SORT
      g.add(Kind::sort, Shape::serving, sort_modes, v, v == 128256 ? std::vector<std::int64_t>{1, 4} : b);
#endif
      if (v == 128256) {
        for (Shape s : grid_shapes)
          if (s != Shape::serving) g.add_all(Kind::qrita, s, v, {1, 16});
        g.add_all(Kind::qrita, Shape::lm, v, {1, 16});
      }
    }
  } else {
    // The GPU grid: every counter shape, mode, vocabulary and batch for
    // qrita; the copy floor for each (vocabulary, batch); the sort baseline
    // on serving and randn; the ablations on serving at V 128256. Grouped by
    // (vocabulary, shape): each input is generated once.
    const std::vector<std::int64_t> b = {1, 64, 1024};
    for (std::int64_t v : {std::int64_t(128256), std::int64_t(262144)}) {
      g.add(Kind::copy, Shape::serving, {Mode::k10}, v, b);
      for (Shape s : grid_shapes) {
        g.add_all(Kind::qrita, s, v, b);
        if (s == Shape::serving && v == 128256)
          for (Kind a : ablations) g.add_all(a, s, v, b);
#if QRITA_PERF_HAVE_SORT
        if (s == Shape::serving || s == Shape::randn) g.add(Kind::sort, s, sort_modes, v, b);
#endif
      }
    }
  }
  g.size_inputs();
  return g;
}

void register_grid(Grid const& grid) {
  for (Config const& c : grid.configs) {
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
    else if (a == "--help" || a == "-h") {
      std::printf(
          "qrita_perf [--quick | --smoke] [--calibrate] [--seed=N] [google benchmark flags]\n"
          "  (default)    the full grid for a GPU: 7 shapes x 4 modes x V 128256, 262144 x B 1, 64,\n"
          "               1024, with copy, sort and ablations (~2-3 min on an H100)\n"
          "  --quick      a small grid for CPUs (V 32000 and 128256, B 1..64)\n"
          "  --smoke      every benchmark kind on tiny inputs (a test)\n"
          "  --calibrate  print how the serving shape compares with real models and each\n"
          "               shape's vocabulary-order bias (the ordered shape's targets), then exit\n"
          "  --seed=N     seed of the generated logits (default 1234)\n"
          "Names: KIND/SHAPE/MODE/V:<vocab>/B:<batch>, e.g. qrita/serving/k50p0.9/V:128256/B:1024;\n"
          "select with --benchmark_filter=<regex>. See perf/README.md.\n\n");
      args.push_back(argv[i]);
    } else {
      if (a.rfind("--benchmark_min_time", 0) == 0) min_time_given = true;
      args.push_back(argv[i]);
    }
  }
  // Few iterations by default: the whole grid must fit a short GPU session.
  std::string default_min_time = "--benchmark_min_time=0.05";
  if (!min_time_given) args.insert(args.begin() + 1, default_min_time.data());

  if (calibrate_only) {
    std::vector<std::int64_t> vocabs = {128256, 262144};
    if (suite == Suite::smoke) vocabs = {3000};
    calibrate(vocabs, suite == Suite::full ? 64 : 8);
    calibrate_order(vocabs, suite == Suite::full ? 128 : suite == Suite::quick ? 32 : 4);
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
  benchmark::AddCustomContext("allocation_tracking", g_alloc.available
                                                         ? "Kokkos Tools allocate callback"
                                                         : "off (a Kokkos tool is loaded)");
  benchmark::AddCustomContext("kokkos_configuration", kokkos_configuration());

  register_grid(make_grid(suite));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  g_in = Inputs{};  // free device memory before Kokkos finalizes
  if (!g_failed.empty()) {
    std::fprintf(stderr, "qrita_perf: %zu benchmark(s) failed:\n", g_failed.size());
    for (std::string const& label : g_failed) std::fprintf(stderr, "  %s\n", label.c_str());
    return 1;
  }
  return 0;
}
