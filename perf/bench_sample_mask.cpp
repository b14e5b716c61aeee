// Google Benchmark suite for qrita::sample_mask on the default execution
// space. Every time is reported next to the memory floor of an in-place
// mask: a read+write copy of the same logits, measured in the same process
// (counter x_copy = time / copy time), plus rows per millisecond.
//
//   qrita_perf [--smoke] [google benchmark flags]
//
// Timing: fence, start, call, fence, stop; manual time; the input is
// restored from a pristine copy before every call (not timed).

#include <qrita/qrita.hpp>

#include <benchmark/benchmark.h>

#include "synthetic.hpp"

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using space_type = Kokkos::DefaultExecutionSpace;
using mem        = space_type::memory_space;
using logits_type = Kokkos::View<float**, Kokkos::LayoutRight, mem>;

enum Mode : int { topk10, topp07, topk50_topp09, random_kp, num_modes };
const char* mode_name[] = {"k=10", "p=0.7", "k=50,p=0.9", "k,p=rand"};

enum Variant : int { full, no_truncation, binary, keep_all_ties, num_variants };
const char* variant_name[] = {"qrita", "no-trunc", "binary", "no-dup"};

struct Input {
  logits_type pristine, work;
  Kokkos::View<int*, mem> k;
  Kokkos::View<float*, mem> p;
};

Input make_input(std::int64_t batch, std::int64_t vocab, Mode mode) {
  Input in{logits_type(Kokkos::view_alloc(Kokkos::WithoutInitializing, "pristine"), batch, vocab),
           logits_type(Kokkos::view_alloc(Kokkos::WithoutInitializing, "work"), batch, vocab),
           Kokkos::View<int*, mem>("k", batch), Kokkos::View<float*, mem>("p", batch)};
  const std::vector<float> host = qrita::synthetic::lm_batch(batch, vocab, 1234);
  auto h = Kokkos::create_mirror_view(in.pristine);
  std::memcpy(h.data(), host.data(), host.size() * sizeof(float));
  Kokkos::deep_copy(in.pristine, h);
  auto kh = Kokkos::create_mirror_view(in.k);
  auto ph = Kokkos::create_mirror_view(in.p);
  std::mt19937_64 rng(99);
  for (std::int64_t b = 0; b < batch; ++b) {
    switch (mode) {
      case topk10: kh(b) = 10; ph(b) = 1.0f; break;
      case topp07: kh(b) = 0; ph(b) = 0.7f; break;
      case topk50_topp09: kh(b) = 50; ph(b) = 0.9f; break;
      default:
        kh(b) = 1 + int(rng() % 99);
        ph(b) = 0.5f + 0.5f * float(rng() % 1000) / 1000.0f;
    }
  }
  Kokkos::deep_copy(in.k, kh);
  Kokkos::deep_copy(in.p, ph);
  return in;
}

// Median time of a device read+write copy of the logits.
double copy_seconds(Input const& in) {
  std::vector<double> t;
  for (int i = 0; i < 7; ++i) {
    space_type().fence();
    Kokkos::Timer timer;
    Kokkos::deep_copy(in.work, in.pristine);
    space_type().fence();
    t.push_back(timer.seconds());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void report(benchmark::State& state, std::int64_t batch, std::int64_t vocab, double copy_s,
            double total_s) {
  const double per_call = total_s / double(state.iterations());
  state.counters["rows_per_ms"] = double(batch) / (per_call * 1e3);
  state.counters["x_copy"]      = per_call / copy_s;
  state.counters["copy_ms"]     = copy_s * 1e3;
  state.SetBytesProcessed(state.iterations() * batch * vocab * std::int64_t(2 * sizeof(float)));
}

void BM_Copy(benchmark::State& state) {
  const std::int64_t batch = state.range(0), vocab = state.range(1);
  const Input in = make_input(batch, vocab, topk10);
  double total = 0;
  for (auto _ : state) {
    space_type().fence();
    Kokkos::Timer timer;
    Kokkos::deep_copy(in.work, in.pristine);
    space_type().fence();
    const double s = timer.seconds();
    state.SetIterationTime(s);
    total += s;
  }
  report(state, batch, vocab, copy_seconds(in), total);
}

void BM_SampleMask(benchmark::State& state) {
  const std::int64_t batch = state.range(0), vocab = state.range(1);
  const Mode mode = Mode(state.range(2));
  const Variant variant = Variant(state.range(3));
  const Input in = make_input(batch, vocab, mode);
  qrita::Options opts;
  opts.sigma_truncation = variant != no_truncation;
  opts.search = variant == binary ? qrita::Search::binary : qrita::Search::quaternary;
  opts.ties = variant == keep_all_ties ? qrita::Ties::keep_all : qrita::Ties::exact;
  const space_type space;
  // Warm-up (first-call scratch set-up).
  Kokkos::deep_copy(in.work, in.pristine);
  qrita::sample_mask(space, in.work, in.k, in.p, opts);
  double total = 0;
  for (auto _ : state) {
    Kokkos::deep_copy(in.work, in.pristine);
    space.fence();
    Kokkos::Timer timer;
    qrita::sample_mask(space, in.work, in.k, in.p, opts);
    space.fence();
    const double s = timer.seconds();
    state.SetIterationTime(s);
    total += s;
  }
  state.SetLabel(std::string(variant_name[variant]) + " " + mode_name[mode]);
  report(state, batch, vocab, copy_seconds(in), total);
}

void register_all(bool smoke) {
  const std::vector<std::int64_t> batches = smoke ? std::vector<std::int64_t>{2}
                                                  : std::vector<std::int64_t>{1, 8, 64};
  const std::vector<std::int64_t> vocabs = smoke ? std::vector<std::int64_t>{5000}
                                                 : std::vector<std::int64_t>{32000, 128256};
  for (auto v : vocabs)
    for (auto b : batches) {
      benchmark::RegisterBenchmark("copy", BM_Copy)->Args({b, v})->UseManualTime();
      for (int m = 0; m < num_modes; ++m)
        for (int var = 0; var < num_variants; ++var) {
          if (var != full && m != topk50_topp09) continue;  // ablations on one mode
          benchmark::RegisterBenchmark("sample_mask", BM_SampleMask)
              ->Args({b, v, m, var})
              ->ArgNames({"B", "V", "mode", "variant"})
              ->UseManualTime();
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  bool smoke = false;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::string(argv[i]) == "--smoke")
      smoke = true;
    else
      args.push_back(argv[i]);
  }
  int n = int(args.size());
  benchmark::Initialize(&n, args.data());
  benchmark::AddCustomContext("kokkos_version", std::to_string(KOKKOS_VERSION));
  benchmark::AddCustomContext("kokkos_execution_space", space_type::name());
  benchmark::AddCustomContext("kokkos_concurrency", std::to_string(space_type().concurrency()));
  benchmark::AddCustomContext("qrita_version", std::to_string(QRITA_VERSION));
  register_all(smoke);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
