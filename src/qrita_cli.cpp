// qrita-cli: masks a batch of logits (synthetic, or read from a .npy file)
// with qrita::sample_mask on Kokkos' default execution space, shows what
// happened to each row, times the call against a plain copy of the same
// data, and checks every row against the host oracle.

#include "npy.hpp"
#include "synthetic.hpp"

#include <qrita/oracle.hpp>
#include <qrita/qrita.hpp>

#include <Kokkos_Core.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using Space = Kokkos::DefaultExecutionSpace;
using Memory = Space::memory_space;
using Logits = Kokkos::View<float**, Kokkos::LayoutRight, Memory>;

constexpr const char* kHelp = R"(usage: qrita-cli [options] [--kokkos-... options for Kokkos]

Masks a batch of logits with qrita::sample_mask (top-k, then top-p) on
Kokkos' default execution space, prints what happened to each row, times the
call against a plain copy of the same logits, and compares every row with
the host reference (qrita::oracle).

input (synthetic unless --input is given):
  --batch N              rows (default 32)
  --vocab V              entries per row (default 128256)
  --seed S               random seed (default 0)
  --shape NAME           lm | ties | flat | spread | peaked | sparse (default lm),
                         or the perf suite's counter shapes (src/synthetic.hpp):
                         serving | serving-bf16 (calibrated LLM logits),
                         ordered (serving with low token ids hotter),
                         randn (N(0,1)) | uniform (U[0,1)) | temp2 (serving / 2)
  --input FILE.npy       float32 [batch, vocab] logits, C order, instead
  --save-input FILE.npy  write the input batch before masking

masking:
  --k K                  top-k on every row (default 50; <= 0 or >= vocab: off)
  --p P                  top-p on every row (default 0.9; >= 1: off)
  --no-truncation        search whole rows (Options::sigma_truncation = false)
  --binary               one pivot per pass (Options::search = Search::binary)
  --keep-ties            keep the whole tie group at the boundary
                         (Options::ties = Ties::keep_all; not exact, so rows
                         with such ties differ from the oracle)
  --team-size N          threads per team (Options::team_size; 0: default)
  --capacity N           candidate buffer entries per team
                         (Options::candidate_capacity; 0: default)
  --max-teams N          cap on the persistent league (Options::max_teams)

output:
  --output FILE.npy      write the masked logits
  --rows N               print at most N rows (default 16)
  --repeat N             timed calls (default 20)
  --no-check             skip the comparison with the oracle
  --help                 this text; --kokkos-help lists Kokkos' options

Options take their value as the next argument or after '='.
Exit status: 0 success, 1 a row differs from the oracle, 2 bad options or
input file, 3 any other failure.
)";

// A bad command line: reported with a pointer to --help.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A synthetic shape: one of the host-drawn test shapes, or a counter-based
// perf shape (serving, serving-bf16, ordered, randn, uniform, temp2).
struct ShapeChoice {
  bool counter = false;
  qrita::synthetic::Shape shape = qrita::synthetic::Shape::lm;
  qrita::synthetic::CounterShape counter_shape = qrita::synthetic::CounterShape::serving;
  const char* name() const {
    return counter ? qrita::synthetic::name(counter_shape) : qrita::synthetic::name(shape);
  }
};

struct Config {
  std::int64_t batch = 32;
  std::int64_t vocab = 128256;
  std::uint64_t seed = 0;
  ShapeChoice shape;
  bool synthetic_given = false;  // any of the four above
  int k = 50;
  float p = 0.9f;
  int repeat = 20;
  std::int64_t rows = 16;
  std::string input, save_input, output;
  bool check = true;
  bool help = false;
  bool kokkos_help = false;
  qrita::Options opts;
};

struct Batch {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<float> values;  // row-major
  std::string origin;
};

template <class T>
T parse_number(const std::string& option, const std::string& text) {
  T value{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec == std::errc::result_out_of_range)
    throw UsageError(fmt::format("{} value '{}' is out of range", option, text));
  if (ec != std::errc() || ptr != end || text.empty())
    throw UsageError(fmt::format("{} expects {}, got '{}'", option,
                                 std::is_integral<T>::value ? "an integer" : "a number", text));
  return value;
}

ShapeChoice parse_shape(const std::string& text) {
  using qrita::synthetic::CounterShape;
  using qrita::synthetic::Shape;
  ShapeChoice c;
  for (Shape s : {Shape::lm, Shape::ties, Shape::flat, Shape::spread, Shape::peaked, Shape::sparse})
    if (text == qrita::synthetic::name(s)) {
      c.shape = s;
      return c;
    }
  for (CounterShape s : {CounterShape::serving, CounterShape::serving_bf16, CounterShape::ordered,
                         CounterShape::randn, CounterShape::uniform, CounterShape::temp2})
    if (text == qrita::synthetic::name(s)) {
      c.counter       = true;
      c.counter_shape = s;
      return c;
    }
  throw UsageError(fmt::format(
      "--shape must be one of lm, ties, flat, spread, peaked, sparse, serving, serving-bf16, "
      "ordered, randn, uniform, temp2; got '{}'",
      text));
}

// Runs before Kokkos starts, so that --help and mistakes need no device;
// --kokkos-* arguments are left to Kokkos::initialize.
Config parse(int argc, char** argv) {
  Config c;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--kokkos-", 0) == 0) {
      c.kokkos_help = c.kokkos_help || arg == "--kokkos-help";
      continue;
    }
    std::string inline_value;
    bool has_inline = false;
    if (const auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      inline_value = arg.substr(eq + 1);
      arg.resize(eq);
      has_inline = true;
    }
    const auto value = [&]() -> std::string {
      if (has_inline) return inline_value;
      if (i + 1 >= argc) throw UsageError(fmt::format("{} needs a value", arg));
      return argv[++i];
    };
    const auto no_value = [&] {
      if (has_inline) throw UsageError(fmt::format("{} takes no value", arg));
    };
    if (arg == "--help" || arg == "-h") {
      no_value();
      c.help = true;
    } else if (arg == "--batch") {
      c.batch = parse_number<std::int64_t>(arg, value());
      c.synthetic_given = true;
      if (c.batch < 0) throw UsageError(fmt::format("--batch must be >= 0, got {}", c.batch));
    } else if (arg == "--vocab") {
      c.vocab = parse_number<std::int64_t>(arg, value());
      c.synthetic_given = true;
      if (c.vocab < 1 || c.vocab > INT_MAX)
        throw UsageError(fmt::format("--vocab must be between 1 and {}, got {}", INT_MAX, c.vocab));
    } else if (arg == "--seed") {
      c.seed = parse_number<std::uint64_t>(arg, value());
      c.synthetic_given = true;
    } else if (arg == "--shape") {
      c.shape = parse_shape(value());
      c.synthetic_given = true;
    } else if (arg == "--k") {
      c.k = parse_number<int>(arg, value());
    } else if (arg == "--p") {
      c.p = parse_number<float>(arg, value());
      if (std::isnan(c.p)) throw UsageError("--p must be a number, got NaN");
    } else if (arg == "--repeat") {
      const auto r = parse_number<std::int64_t>(arg, value());
      if (r < 1 || r > 1000000)
        throw UsageError(fmt::format("--repeat must be between 1 and 1000000, got {}", r));
      c.repeat = int(r);
    } else if (arg == "--rows") {
      c.rows = parse_number<std::int64_t>(arg, value());
      if (c.rows < 0) throw UsageError(fmt::format("--rows must be >= 0, got {}", c.rows));
    } else if (arg == "--input") {
      c.input = value();
    } else if (arg == "--save-input") {
      c.save_input = value();
    } else if (arg == "--output") {
      c.output = value();
    } else if (arg == "--no-check") {
      no_value();
      c.check = false;
    } else if (arg == "--no-truncation") {
      no_value();
      c.opts.sigma_truncation = false;
    } else if (arg == "--binary") {
      no_value();
      c.opts.search = qrita::Search::binary;
    } else if (arg == "--keep-ties") {
      no_value();
      c.opts.ties = qrita::Ties::keep_all;
    } else if (arg == "--team-size" || arg == "--capacity" || arg == "--max-teams") {
      const int n = parse_number<int>(arg, value());
      if (n < 0) throw UsageError(fmt::format("{} must be >= 0, got {}", arg, n));
      (arg == "--team-size" ? c.opts.team_size
                            : arg == "--capacity" ? c.opts.candidate_capacity : c.opts.max_teams) = n;
    } else {
      throw UsageError(fmt::format("{} '{}'",
                                   arg.rfind('-', 0) == 0 ? "unknown option" : "unexpected argument",
                                   argv[i]));
    }
  }
  if (!c.input.empty() && c.synthetic_given)
    throw UsageError("--batch, --vocab, --seed and --shape describe synthetic input; "
                     "--input takes the batch from the file");
  if (c.batch > std::numeric_limits<std::int64_t>::max() / std::int64_t(sizeof(float)) / c.vocab)
    throw UsageError(fmt::format("--batch {} x --vocab {} is too large", c.batch, c.vocab));
  return c;
}

Batch load(const Config& c) {
  Batch b;
  if (c.input.empty()) {
    b.rows = c.batch;
    b.cols = c.vocab;
    if (c.shape.counter) {
      b.values.resize(std::size_t(c.batch * c.vocab));
      for (std::int64_t r = 0; r < c.batch; ++r)
        qrita::synthetic::counter_row(b.values.data() + r * c.vocab, c.vocab,
                                      c.shape.counter_shape, c.seed, r);
    } else {
      b.values = qrita::synthetic::lm_batch(c.batch, c.vocab, c.seed, c.shape.shape);
    }
    b.origin = fmt::format("synthetic '{}' logits, seed {}", c.shape.name(), c.seed);
    return b;
  }
  qrita::npy::Array a = qrita::npy::read_float32_2d(c.input);
  if (a.shape[1] > INT_MAX)
    throw qrita::npy::Error(fmt::format("{}: vocab {} is more than qrita supports ({})", c.input,
                                        a.shape[1], INT_MAX));
  b.rows = a.shape[0];
  b.cols = a.shape[1];
  b.values = std::move(a.data);
  b.origin = c.input;
  return b;
}

const char* path_name(qrita::RowPath p) {
  switch (p) {
    case qrita::RowPath::off: return "off";
    case qrita::RowPath::trivial: return "trivial";
    case qrita::RowPath::truncated: return "truncated";
    case qrita::RowPath::buckets: return "buckets";
    case qrita::RowPath::flat: return "flat";
    case qrita::RowPath::full: return "full";
  }
  return "?";
}

struct Timing {
  double median_ms = 0;
  double min_ms = 0;
};

// Each call is fenced on both sides; `prepare` runs before it, untimed.
template <class Prepare, class Call>
Timing time_calls(const Space& space, int repeat, Prepare prepare, Call call) {
  std::vector<double> ms;
  for (int r = 0; r < repeat; ++r) {
    prepare();
    space.fence();
    Kokkos::Timer timer;
    call();
    space.fence();
    ms.push_back(timer.seconds() * 1e3);
  }
  std::sort(ms.begin(), ms.end());
  const std::size_t n = ms.size();
  return {n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2, ms.front()};
}

std::string format_k(int k, std::int64_t vocab) {
  return k <= 0 || k >= vocab ? std::string("off") : std::to_string(k);
}

std::string format_p(float p) { return p >= 1.0f ? std::string("off") : fmt::format("{}", p); }

int run(const Config& cfg, const Batch& in) {
  const Space space;
  const std::int64_t batch = in.rows;
  const std::int64_t vocab = in.cols;

  fmt::print("qrita-cli {}.{}.{} | Kokkos {}.{}.{:02} | {} (concurrency {})\n",
             QRITA_VERSION_MAJOR, QRITA_VERSION_MINOR, QRITA_VERSION_PATCH, KOKKOS_VERSION / 10000,
             KOKKOS_VERSION / 100 % 100, KOKKOS_VERSION % 100, Space::name(), space.concurrency());
  fmt::print("input: {}, batch {} x vocab {}\n", in.origin, batch, vocab);
  fmt::print("mask: k {}, p {}, sigma truncation {}, {} search, {} ties\n", format_k(cfg.k, vocab),
             format_p(cfg.p), cfg.opts.sigma_truncation ? "on" : "off",
             cfg.opts.search == qrita::Search::binary ? "binary" : "quaternary",
             cfg.opts.ties == qrita::Ties::keep_all ? "keep-all" : "exact");
  const qrita::LaunchPlan plan = qrita::plan(space, batch, vocab, cfg.opts);
  fmt::print("launch: {} teams x {} threads, {} candidates ({} B scratch) per team, {} B workspace\n",
             plan.league_size, plan.team_size, plan.candidate_capacity, plan.team_scratch_bytes,
             plan.workspace_bytes);
  if (!cfg.save_input.empty()) {
    qrita::npy::write_float32_2d(cfg.save_input, in.values.data(), batch, vocab);
    fmt::print("saved the input to {}\n", cfg.save_input);
  }

  const std::vector<int> k_host(std::size_t(batch), cfg.k);
  const std::vector<float> p_host(std::size_t(batch), cfg.p);
  Logits pristine("qrita-cli::pristine", batch, vocab);
  Logits work("qrita-cli::logits", batch, vocab);
  Kokkos::View<int*, Memory> k("qrita-cli::k", batch);
  Kokkos::View<float*, Memory> p("qrita-cli::p", batch);
  Kokkos::View<qrita::RowStats*, Memory> stats("qrita-cli::stats", batch);
  {
    auto h = Kokkos::create_mirror_view(pristine);
    std::copy(in.values.begin(), in.values.end(), h.data());
    Kokkos::deep_copy(pristine, h);
    auto hk = Kokkos::create_mirror_view(k);
    std::copy(k_host.begin(), k_host.end(), hk.data());
    Kokkos::deep_copy(k, hk);
    auto hp = Kokkos::create_mirror_view(p);
    std::copy(p_host.begin(), p_host.end(), hp.data());
    Kokkos::deep_copy(p, hp);
  }

  const auto copy = [&] { Kokkos::deep_copy(space, work, pristine); };
  const qrita::Workspace<Space> workspace(space, batch, vocab, cfg.opts);
  const auto mask = [&] { qrita::sample_mask(space, work, k, p, cfg.opts, workspace, stats); };
  time_calls(space, 1, copy, mask);  // warm-up, and first touch of `work`
  const Timing copy_time = time_calls(space, cfg.repeat, [] {}, copy);
  const Timing mask_time = time_calls(space, cfg.repeat, copy, mask);

  const auto result = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), work);
  const auto row_stats = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), stats);
  const auto row_of = [vocab](const auto* data, std::int64_t b) { return data + b * vocab; };

  fmt::print("\n{:>5} {:>7} {:>7} {:>7} {:>10} {:>10}  {:<9}  {:<9}  {}\n", "row", "k", "p", "kept",
             "largest", "min kept", "top-k", "top-p", "passes k/p");
  const std::int64_t shown = std::min(batch, cfg.rows);
  for (std::int64_t b = 0; b < shown; ++b) {
    const float* before = row_of(in.values.data(), b);
    const float* after = row_of(result.data(), b);
    float largest = -std::numeric_limits<float>::infinity();
    float smallest_kept = std::numeric_limits<float>::infinity();
    std::int64_t kept = 0;
    for (std::int64_t i = 0; i < vocab; ++i) {
      if (qrita::oracle::is_candidate(before[i])) largest = std::max(largest, before[i]);
      if (qrita::oracle::is_candidate(after[i])) {
        ++kept;
        smallest_kept = std::min(smallest_kept, after[i]);
      }
    }
    const qrita::RowStats& s = row_stats(b);
    fmt::print("{:>5} {:>7} {:>7} {:>7} {:>10.4f} {:>10}  {:<9}  {:<9}  {}/{}\n", b,
               format_k(k_host[std::size_t(b)], vocab), format_p(p_host[std::size_t(b)]), kept,
               largest, kept ? fmt::format("{:.4f}", smallest_kept) : std::string("-"),
               path_name(s.topk_path), path_name(s.topp_path), s.topk_passes, s.topp_passes);
  }
  if (batch > shown)
    fmt::print("... ({} more row{})\n", batch - shown, batch - shown == 1 ? "" : "s");

  // Every row, summarised: which way each stage went, passes, outliers.
  {
    std::int64_t topk_paths[6] = {}, topp_paths[6] = {};
    std::int64_t k_passes = 0, p_passes = 0, outliers = 0, max_outliers = 0;
    std::int64_t row_passes = 0, max_row_passes = 0, tier_rows = 0;
    for (std::int64_t b = 0; b < batch; ++b) {
      const qrita::RowStats& s = row_stats(b);
      topk_paths[std::clamp(int(s.topk_path), 0, 5)] += 1;
      topp_paths[std::clamp(int(s.topp_path), 0, 5)] += 1;
      k_passes += s.topk_passes;
      p_passes += s.topp_passes;
      outliers += s.outliers;
      max_outliers = std::max<std::int64_t>(max_outliers, s.outliers);
      row_passes += s.row_passes;
      max_row_passes = std::max<std::int64_t>(max_row_passes, s.row_passes);
      tier_rows += s.tier ? 1 : 0;
    }
    const auto paths = [](const std::int64_t* n) {
      std::string out;
      for (int i = 0; i < 6; ++i)
        if (n[i] > 0)
          out += fmt::format("{}{} {}", out.empty() ? "" : ", ",
                             path_name(qrita::RowPath(i)), n[i]);
      return out;
    };
    const double rows = batch > 0 ? double(batch) : 1.0;
    fmt::print("paths: top-k {} | top-p {}\n", paths(topk_paths), paths(topp_paths));
    fmt::print("row passes (reads + writes): mean {:.2f}, max {}; rows using the workspace tier: {}\n",
               double(row_passes) / rows, max_row_passes, tier_rows);
    fmt::print("passes (mean): top-k {:.1f}, top-p {:.1f}; outliers: mean {:.0f}, max {}\n",
               double(k_passes) / rows, double(p_passes) / rows, double(outliers) / rows,
               max_outliers);
  }

  const double bytes = double(batch) * double(vocab) * sizeof(float);
  fmt::print("\ntiming: {} call{}, each on a fresh copy of the input\n", cfg.repeat,
             cfg.repeat == 1 ? "" : "s");
  fmt::print("  qrita::sample_mask  median {:9.3f} ms  min {:9.3f} ms  {:.2f} rows/ms\n",
             mask_time.median_ms, mask_time.min_ms,
             mask_time.median_ms > 0 ? double(batch) / mask_time.median_ms : 0.0);
  fmt::print("  copy (deep_copy)    median {:9.3f} ms  min {:9.3f} ms  {:.1f} GB/s read+write\n",
             copy_time.median_ms, copy_time.min_ms,
             copy_time.median_ms > 0 ? 2 * bytes / copy_time.median_ms * 1e-6 : 0.0);
  if (bytes > 0 && copy_time.median_ms > 0)
    fmt::print("  qrita / copy        {:.1f}x\n", mask_time.median_ms / copy_time.median_ms);

  int status = 0;
  if (cfg.check) {
    // Top-k rows must match the reference bitwise; top-p rows may differ
    // only where a prefix's mass is within rounding of p (oracle::verify).
    std::vector<std::int64_t> differ;
    std::string first_problem;
    for (std::int64_t b = 0; b < batch; ++b) {
      const std::string problem =
          qrita::oracle::verify(row_of(in.values.data(), b), row_of(result.data(), b), vocab,
                                k_host[std::size_t(b)], p_host[std::size_t(b)]);
      if (problem.empty()) continue;
      if (differ.empty()) first_problem = fmt::format("row {}: {}", b, problem);
      differ.push_back(b);
    }
    fmt::print("\noracle: {}/{} rows match\n", batch - std::int64_t(differ.size()), batch);
    if (!differ.empty()) {
      const std::size_t listed = std::min<std::size_t>(differ.size(), 32);
      fmt::print("oracle: rows that differ: {}{}\n",
                 fmt::join(differ.begin(), differ.begin() + std::ptrdiff_t(listed), ", "),
                 differ.size() > listed ? ", ..." : "");
      fmt::print("oracle: {}\n", first_problem);
      status = 1;
    }
  }
  if (!cfg.output.empty()) {
    qrita::npy::write_float32_2d(cfg.output, result.data(), batch, vocab);
    fmt::print("wrote {}\n", cfg.output);
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Config cfg = parse(argc, argv);
    if (cfg.help) {
      fmt::print("{}", kHelp);
      return 0;
    }
    if (cfg.kokkos_help) {  // Kokkos::initialize prints it
      Kokkos::ScopeGuard kokkos(argc, argv);
      return 0;
    }
    const Batch input = load(cfg);
    // Views live in run(), so they are gone before the guard finalizes
    // Kokkos, on return and on an exception alike.
    Kokkos::ScopeGuard kokkos(argc, argv);
    return run(cfg, input);
  } catch (const UsageError& e) {
    fmt::print(stderr, "qrita-cli: error: {}\ntry 'qrita-cli --help'\n", e.what());
    return 2;
  } catch (const qrita::npy::Error& e) {
    fmt::print(stderr, "qrita-cli: error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "qrita-cli: error: {}\n", e.what());
    return 3;
  }
}
