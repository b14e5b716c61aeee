// SPDX-License-Identifier: Apache-2.0
// qrita-cli: masks a batch of logits (synthetic, or read from a .npy file;
// float32, float16 or bfloat16) with qrita::sample_mask on Kokkos' default
// execution space, optionally draws a token per row (qrita::sample_tokens)
// and lists each row's head (qrita::candidate_list), checks every row
// against the host oracle, and times the calls against a plain copy of the
// same data. The default output is a short summary; --verbose adds the
// launch plan and what happened to each row.

#include "npy.hpp"
#include "synthetic.hpp"

#include <qrita/oracle.hpp>
#include <qrita/qrita.hpp>

#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

namespace {

using Space = Kokkos::DefaultExecutionSpace;
using Memory = Space::memory_space;
using Dtype = qrita::npy::Dtype;

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
  Dtype dtype = Dtype::float32;
  bool dtype_given = false;
  int k = 50;
  float p = 0.9f;
  float temperature = 1.0f;  // passed to the calls only when given
  bool temperature_given = false;
  float min_p = 0.0f;        // likewise
  bool min_p_given = false;
  bool sample = false;       // qrita::sample_tokens, seed `seed`, offset = row
  int candidates = 0;        // qrita::candidate_list's C; 0: not called
  int repeat = 20;
  std::int64_t rows = 16;
  std::string input, save_input, output;
  bool check = true;
  bool verbose = false;      // the launch plan, per-row tables, search statistics
  bool help = false;
  std::string help_text;
  bool kokkos_help = false;
  qrita::Options opts;
};

struct Batch {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  Dtype dtype = Dtype::float32;
  std::vector<float> values;        // row-major; each entry's exact value
  std::vector<std::uint16_t> bits;  // float16, bfloat16: the stored patterns
  std::string origin;
};

// The 16-bit patterns a float becomes (round to nearest even), and back
// (exact: every float16 and bfloat16 value is a float).
std::uint16_t to_bits(Dtype dtype, float x) {
  return dtype == Dtype::float16 ? qrita::from_float<qrita::float16>(x).bits
                                 : qrita::from_float<qrita::bfloat16>(x).bits;
}

float from_bits(Dtype dtype, std::uint16_t bits) {
  return dtype == Dtype::float16 ? qrita::to_float(qrita::float16{bits})
                                 : qrita::to_float(qrita::bfloat16{bits});
}

Dtype parse_dtype(const std::string& text) {
  if (text == "fp32" || text == "float32") return Dtype::float32;
  if (text == "fp16" || text == "float16") return Dtype::float16;
  if (text == "bf16" || text == "bfloat16") return Dtype::bfloat16;
  throw UsageError(fmt::format("--dtype must be one of bf16, fp16, fp32; got '{}'", text));
}

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

// The command line, through CLI11. Values arrive as text and are converted
// by parse_number, not by CLI11's converters, so that every message names
// the option and what it expects, and so that text CLI11 would take (octal
// "010", "-1" as an unsigned seed, "true" as 1) is refused.
template <class T, class Check>
CLI::Option* add_number(CLI::App& app, const std::string& name, T& target, Check check) {
  return app.add_option(name, [&target, name, check](const CLI::results_t& values) {
    target = parse_number<T>(name, values.back());
    check(target);
    return true;
  });
}

template <class T>
CLI::Option* add_number(CLI::App& app, const std::string& name, T& target) {
  return add_number(app, name, target, [](T) {});
}

CLI::Option* add_text(CLI::App& app, const std::string& name, std::string& target) {
  return app.add_option(name, [&target](const CLI::results_t& values) {
    target = values.back();
    return true;
  });
}

// --help: usage line, description, the option groups as CLI11 lays them out,
// footer. Laid out here rather than by CLI::Formatter::make_help, whose
// order and paragraph wrapping change between CLI11 versions.
std::string help_text(const CLI::App& app) {
  CLI::Formatter layout;
  layout.column_width(28);
#if CLI11_VERSION_MAJOR > 2 || (CLI11_VERSION_MAJOR == 2 && CLI11_VERSION_MINOR >= 6)
  layout.long_option_alignment_ratio(4.5f / 28);  // "  -h, --help" and "      --batch N"
#endif
  std::string groups = layout.make_groups(&app, CLI::AppFormatMode::Normal);
  // One blank line before each group, whatever this CLI11 version puts there.
  groups.erase(0, groups.find_first_not_of('\n'));
  for (std::size_t at; (at = groups.find("\n\n\n")) != std::string::npos;) groups.erase(at, 1);
  std::string footer = app.get_footer();
  if (footer.empty() || footer.back() != '\n') footer += '\n';  // some versions trim it
  return "usage: qrita-cli [options] [--kokkos-... options for Kokkos]\n\n" +
         app.get_description() + "\n" + groups + "\n" + footer;
}

// Runs before Kokkos starts, so that --help and mistakes need no device;
// --kokkos-* arguments are left to Kokkos::initialize.
Config parse(int argc, char** argv) {
  Config c;
  const Config defaults{};  // for the help text (braces: nvcc wants an initializer)
  CLI::App app(
      "Masks a batch of logits with qrita::sample_mask (temperature, min-p, top-k,\n"
      "top-p) on Kokkos' default execution space, optionally draws a token per row\n"
      "and lists each row's head, compares every row with the host reference\n"
      "(qrita::oracle), and times the calls against a plain copy of the same\n"
      "logits. It prints a short summary: the entries kept per row, the rows that\n"
      "match the reference, and each call's time as a multiple of the copy's;\n"
      "--verbose adds the launch plan and what happened to each row.\n",
      "qrita-cli");
  // A repeated option takes its last value, and a flag takes no value
  // ("--no-check=0" would otherwise turn the check back on).
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.option_defaults()->disable_flag_override();
  app.footer(
      "Options take their value as the next argument or after '='. Arguments that\n"
      "start with --kokkos- go to Kokkos::initialize (--kokkos-help lists them).\n"
      "Exit status: 0 success, 1 a row differs from the oracle, 2 bad options or\n"
      "input file, 3 any other failure.\n");
  app.formatter_fn(
      [](const CLI::App* a, std::string, CLI::AppFormatMode) { return help_text(*a); });

  const std::string input = "input (synthetic unless --input is given)";
  std::vector<CLI::Option*> synthetic;
  synthetic.push_back(add_number(app, "--batch", c.batch, [](std::int64_t n) {
                        if (n == 0)
                          throw UsageError("--batch 0: no rows, nothing to do (give 1 or more)");
                        if (n < 0) throw UsageError(fmt::format("--batch must be >= 1, got {}", n));
                      })
                          ->type_name("N")
                          ->description(fmt::format("rows (default {})", defaults.batch)));
  synthetic.push_back(
      add_number(app, "--vocab", c.vocab, [](std::int64_t n) {
        if (n < 1 || n > INT_MAX)
          throw UsageError(fmt::format("--vocab must be between 1 and {}, got {}", INT_MAX, n));
      })
          ->type_name("V")
          ->description(fmt::format("entries per row (default {})", defaults.vocab)));
  CLI::Option* const seed =
      add_number(app, "--seed", c.seed)
          ->type_name("S")
          ->description(fmt::format(
              "random seed of the input and of --sample's draws (default {})", defaults.seed));
  synthetic.push_back(seed);
  synthetic.push_back(
      app.add_option("--shape",
                     [&c](const CLI::results_t& values) {
                       c.shape = parse_shape(values.back());
                       return true;
                     })
          ->type_name("NAME")
          ->description(fmt::format(
              "lm | ties | flat | spread | peaked | sparse (default {}),\n"
              "or the perf suite's counter shapes (src/synthetic.hpp):\n"
              "serving | serving-bf16 (calibrated LLM logits),\n"
              "ordered (serving with low token ids hotter),\n"
              "randn (N(0,1)) | uniform (U[0,1)) | temp2 (serving / 2)",
              defaults.shape.name())));
  for (CLI::Option* o : synthetic) o->group(input);
  app.add_option("--dtype",
                 [&c](const CLI::results_t& values) {
                   c.dtype = parse_dtype(values.back());
                   c.dtype_given = true;
                   return true;
                 })
      ->type_name("TYPE")
      ->description(
          "bf16 | fp16 | fp32: the logits' element type (default: fp32,\n"
          "or the type of --input). Generated and float32 input is\n"
          "rounded to it (qrita::from_float)")
      ->group(input);
  add_text(app, "--input", c.input)
      ->type_name("FILE.npy")
      ->description(
          "[batch, vocab] logits, C order, instead: float32 '<f4',\n"
          "float16 '<f2', or bfloat16 as raw bits '<u2' (or '<V2')")
      ->group(input);
  add_text(app, "--save-input", c.save_input)
      ->type_name("FILE.npy")
      ->description("write the input batch (in its --dtype) before masking")
      ->group(input);

  const std::string masking = "masking (the same filters on every row, applied in this order)";
  add_number(app, "--temperature", c.temperature, [&c](float t) {
    if (std::isnan(t)) throw UsageError("--temperature must be a number, got NaN");
    c.temperature_given = true;
  })
      ->type_name("T")
      ->description(
          "temperature on every row (SamplingParams::temperature;\n"
          "default: none, i.e. 1; <= 0: greedy, the top entry only)")
      ->group(masking);
  add_number(app, "--min-p", c.min_p, [&c](float m) {
    if (std::isnan(m)) throw UsageError("--min-p must be a number, got NaN");
    // The library reads m > 1 as 1 (docs/SEMANTICS.md); a value above 1 on
    // the command line is a mistake, not a request for that.
    if (m > 1.0f)
      throw UsageError(fmt::format(
          "--min-p must be at most 1 (1 keeps the largest entry's ties; <= 0: off), got {}", m));
    c.min_p_given = true;
  })
      ->type_name("M")
      ->description(
          "min-p on every row (SamplingParams::min_p; default: none;\n"
          "<= 0: off; at most 1): keeps x >= max + T ln(M)")
      ->group(masking);
  add_number(app, "--k", c.k)
      ->type_name("K")
      ->description(
          fmt::format("top-k on every row (default {}; <= 0 or >= vocab: off)", defaults.k))
      ->group(masking);
  add_number(app, "--p", c.p, [](float p) {
    if (std::isnan(p)) throw UsageError("--p must be a number, got NaN");
  })
      ->type_name("P")
      ->description(fmt::format("top-p on every row (default {}; >= 1: off)", defaults.p))
      ->group(masking);
  app.add_flag_callback("--no-truncation", [&c] { c.opts.sigma_truncation = false; },
                        "search whole rows (Options::sigma_truncation = false)")
      ->group(masking);
  app.add_flag_callback("--binary", [&c] { c.opts.search = qrita::Search::binary; },
                        "one pivot per pass (Options::search = Search::binary)")
      ->group(masking);
  app.add_flag_callback("--keep-ties", [&c] { c.opts.ties = qrita::Ties::keep_all; },
                        "keep the whole tie group at the boundary\n"
                        "(Options::ties = Ties::keep_all; not exact, so rows\n"
                        "with such ties differ from the oracle)")
      ->group(masking);
  const auto non_negative = [](const char* name) {
    return [name](int n) {
      if (n < 0) throw UsageError(fmt::format("{} must be >= 0, got {}", name, n));
    };
  };
  add_number(app, "--team-size", c.opts.team_size, non_negative("--team-size"))
      ->type_name("N")
      ->description("threads per team (Options::team_size; 0: default)")
      ->group(masking);
  add_number(app, "--capacity", c.opts.candidate_capacity, non_negative("--capacity"))
      ->type_name("N")
      ->description("candidate buffer entries per team\n(Options::candidate_capacity; 0: default)")
      ->group(masking);
  add_number(app, "--max-teams", c.opts.max_teams, non_negative("--max-teams"))
      ->type_name("N")
      ->description("cap on the persistent league (Options::max_teams)")
      ->group(masking);

  const std::string sampling = "sampling (on the unmasked logits, with the same filters)";
  app.add_flag_callback("--sample", [&c] { c.sample = true; },
                        "draw one token per row (qrita::sample_tokens): seed\n"
                        "--seed on every row, offset = the row's index")
      ->group(sampling);
  add_number(app, "--candidates", c.candidates, [](int n) {
    if (n < 0) throw UsageError(fmt::format("--candidates must be >= 0, got {}", n));
  })
      ->type_name("C")
      ->description(
          "list each row's first C kept entries (qrita::candidate_list):\n"
          "id, value, probability, log-probability, and the kept count\n"
          "(default 0: no list; C above the vocabulary acts as it)")
      ->group(sampling);

  const std::string output = "output";
  add_text(app, "--output", c.output)
      ->type_name("FILE.npy")
      ->description("write the masked logits")
      ->group(output);
  add_number(app, "--rows", c.rows, [](std::int64_t n) {
    if (n < 0) throw UsageError(fmt::format("--rows must be >= 0, got {}", n));
  })
      ->type_name("N")
      ->description(fmt::format("print at most N rows of each table (default {})",
                                defaults.rows))
      ->group(output);
  std::int64_t repeat = c.repeat;
  add_number(app, "--repeat", repeat, [](std::int64_t n) {
    if (n < 1 || n > 1000000)
      throw UsageError(fmt::format("--repeat must be between 1 and 1000000, got {}", n));
  })
      ->type_name("N")
      ->description(fmt::format("timed calls (default {})", defaults.repeat))
      ->group(output);
  app.add_flag_callback("--no-check", [&c] { c.check = false; },
                        "skip the comparison with the oracle")
      ->group(output);
  app.add_flag_callback("-v,--verbose", [&c] { c.verbose = true; },
                        "also print the launch plan, each row's kept entries,\n"
                        "search paths and passes (up to --rows rows), every\n"
                        "drawn token and list, and the timing details")
      ->group(output);
  app.set_help_flag("-h,--help", "this text; --kokkos-help lists Kokkos' options")->group(output);

  // CLI11 never sees Kokkos' arguments; it takes the rest in reverse order.
  std::vector<std::string> args;
  for (int i = argc - 1; i >= 1; --i) {
    const std::string arg = argv[i];
    if (arg.rfind("--kokkos-", 0) == 0)
      c.kokkos_help = c.kokkos_help || arg == "--kokkos-help";
    else
      args.push_back(arg);
  }
  try {
    app.parse(std::move(args));
  } catch (const CLI::CallForHelp&) {
    c.help = true;
    c.help_text = app.help();
    return c;
  } catch (const CLI::ParseError& e) {
    // Newer CLI11 versions start some messages with the program's name.
    std::string message = e.what();
    if (message.rfind("qrita-cli: ", 0) == 0) message.erase(0, 11);
    throw UsageError(message);
  }
  c.repeat = int(repeat);
  // With --input, --seed may still key --sample's draws.
  for (const CLI::Option* o : synthetic)
    c.synthetic_given = c.synthetic_given || (o->count() > 0 && !(o == seed && c.sample));
  if (!c.input.empty() && c.synthetic_given)
    throw UsageError("--batch, --vocab, --seed and --shape describe synthetic input; "
                     "--input takes the batch from the file (--seed goes with --sample only)");
  if (c.batch > std::numeric_limits<std::int64_t>::max() / std::int64_t(sizeof(float)) / c.vocab)
    throw UsageError(fmt::format("--batch {} x --vocab {} is too large", c.batch, c.vocab));
  return c;
}

// A file the run will write: its folder must exist, so that a mistake in
// the path fails before any work is done.
void check_writable(const char* option, const std::string& path) {
  if (path.empty()) return;
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path file(path);
  if (fs::is_directory(file, ec))
    throw UsageError(fmt::format("{} {}: that is a folder; give a file name", option, path));
  const fs::path folder = file.parent_path().empty() ? fs::path(".") : file.parent_path();
  if (!fs::is_directory(folder, ec))
    throw UsageError(
        fmt::format("{} {}: the folder {} does not exist", option, path, folder.string()));
#if defined(__unix__) || defined(__APPLE__)
  if (::access(folder.c_str(), W_OK) != 0)
    throw UsageError(
        fmt::format("{} {}: the folder {} is not writable", option, path, folder.string()));
#endif
}

// "1.5 GB": decimal units, as the copy's GB/s.
std::string format_bytes(double bytes) {
  static const char* const units[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
  int u = 0;
  for (; bytes >= 1000 && u < 6; ++u) bytes /= 1000;
  return u == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.1f} {}", bytes, units[u]);
}

// Memory a run holds at once, per logit entry. On the host: the values as
// floats (and their 16-bit patterns), the masked result as floats (and as
// 16-bit patterns for --output), and mirrors of the device's Views where the
// device's memory is not the host's. On the device: the input and the
// masked copy. Where they are the same memory, the host holds both.
struct MemoryNeed {
  double host = 0;    // bytes per entry
  double device = 0;  // bytes per entry; 0 where the device's Views live on the host
};

MemoryNeed memory_need(Dtype dtype) {
  const double stored = dtype == Dtype::float32 ? 4 : 2;
  MemoryNeed n;
  n.host   = 4 + 4 + (dtype == Dtype::float32 ? 0 : 2 + 2);
  n.device = 2 * stored;
  if (Kokkos::SpaceAccessibility<Kokkos::HostSpace, Memory>::accessible) {
    n.host += n.device;
    n.device = 0;
  } else {
    n.host += 2 * stored;
  }
  return n;
}

// The host's physical memory in bytes; 0 where unknown.
double physical_memory() {
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page  = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) return double(pages) * double(page);
#endif
  return 0;
}

// "about 64.0 kB of memory (16 bytes per entry)", and the device's share
// where it has memory of its own.
std::string describe_need(std::int64_t rows, std::int64_t cols, Dtype dtype) {
  const MemoryNeed n = memory_need(dtype);
  const double entries = double(rows) * double(cols);
  std::string out = fmt::format("about {} of {}memory ({} bytes per entry)",
                                format_bytes(entries * n.host), n.device > 0 ? "host " : "",
                                n.host);
  if (n.device > 0)
    out += fmt::format(" and {} of device memory ({} bytes per entry)",
                       format_bytes(entries * n.device), n.device);
  return out;
}

// Refuses, before anything is allocated, a batch larger than the host's
// memory (the device's is checked by its allocator: see main). `what`
// names the batch: "--batch 8 x --vocab 1000".
template <class Error>
void check_memory(const std::string& what, std::int64_t rows, std::int64_t cols, Dtype dtype) {
  const double need = double(rows) * double(cols) * memory_need(dtype).host;
  const double have = physical_memory();
  if (have > 0 && need > have)
    throw Error(fmt::format("{} ({}) is too large: it needs {}; this machine has {}", what,
                            qrita::npy::name(dtype), describe_need(rows, cols, dtype),
                            format_bytes(have)));
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
  } else {
    qrita::npy::LogitsArray a;
    try {
      a = qrita::npy::read_logits_2d(c.input);
    } catch (const std::bad_alloc&) {
      std::error_code ec;
      const auto bytes = std::filesystem::file_size(c.input, ec);
      throw qrita::npy::Error(fmt::format("{}: its data ({}) does not fit in memory", c.input,
                                          ec ? std::string("?") : format_bytes(double(bytes))));
    }
    if (a.shape[0] == 0 || a.shape[1] == 0)
      throw qrita::npy::Error(fmt::format("{}: a [{}, {}] array has no entries: nothing to do",
                                          c.input, a.shape[0], a.shape[1]));
    if (a.shape[1] > INT_MAX)
      throw qrita::npy::Error(fmt::format("{}: vocab {} is more than qrita supports ({})",
                                          c.input, a.shape[1], INT_MAX));
    b.rows = a.shape[0];
    b.cols = a.shape[1];
    b.origin = c.input;
    if (a.dtype == Dtype::float32) {
      b.values = std::move(a.f32);
    } else {
      // 16-bit input keeps its exact bits: rounding it to another 16-bit
      // type would silently change the data under test.
      if (c.dtype_given && c.dtype != a.dtype)
        throw UsageError(fmt::format("{} holds {} logits, not {}: leave --dtype out (only "
                                     "float32 input is converted)",
                                     c.input, qrita::npy::name(a.dtype),
                                     qrita::npy::name(c.dtype)));
      b.dtype = a.dtype;
      b.bits = std::move(a.bits16);
      b.values.resize(b.bits.size());
      for (std::size_t i = 0; i < b.bits.size(); ++i) b.values[i] = from_bits(b.dtype, b.bits[i]);
      return b;
    }
  }
  // Float values (generated, or a float32 file) rounded to --dtype; the
  // oracle then sees the rounded values.
  if (c.dtype != Dtype::float32) {
    b.dtype = c.dtype;
    b.bits.resize(b.values.size());
    for (std::size_t i = 0; i < b.values.size(); ++i) {
      b.bits[i] = to_bits(b.dtype, b.values[i]);
      b.values[i] = from_bits(b.dtype, b.bits[i]);
    }
  }
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

// Milliseconds with three decimals, or three significant digits below 0.1.
std::string format_ms(double ms) {
  return ms >= 0.1 ? fmt::format("{:.3f}", ms) : fmt::format("{:.3g}", ms);
}

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

// The filters every row gets, in the order they apply, in words.
std::string describe_filters(const Config& cfg, std::int64_t vocab) {
  std::string out;
  if (cfg.temperature_given)
    out += cfg.temperature > 0.0f
               ? fmt::format("temperature {}, ", cfg.temperature)
               : fmt::format("temperature {} (greedy: the largest entry only), ", cfg.temperature);
  if (cfg.min_p_given)
    out += cfg.min_p > 0.0f ? fmt::format("min-p {}, ", cfg.min_p)
                            : fmt::format("min-p off ({}), ", cfg.min_p);
  return out + "top-k " + format_k(cfg.k, vocab) + ", top-p " + format_p(cfg.p);
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// An entry the mask kept: a candidate, bitwise unchanged.
bool kept(const float* in, const float* out, std::int64_t i) {
  return qrita::oracle::is_candidate(in[i]) && same_bits(in[i], out[i]);
}

// The filters of every row, as the oracle takes them.
qrita::oracle::RowFilters row_filters(const Config& cfg) {
  qrita::oracle::RowFilters f;
  f.k = cfg.k;
  f.p = cfg.p;
  f.min_p = cfg.min_p_given ? cfg.min_p : 0.0f;
  f.temperature = cfg.temperature_given ? cfg.temperature : 1.0f;
  return f;
}

// A drawn token must be one the row's mask kept (the mask itself is checked
// against the oracle); -1 only for a row without a candidate.
std::string check_token(const float* in, const float* out, std::int64_t vocab, int token) {
  if (token == -1) {
    for (std::int64_t i = 0; i < vocab; ++i)
      if (qrita::oracle::is_candidate(in[i]))
        return "sample_tokens gave -1 (no candidate), but the row has candidates";
    return {};
  }
  if (token < 0 || token >= vocab)
    return fmt::format("sample_tokens gave {}, outside the row", token);
  if (!kept(in, out, token))
    return fmt::format("sample_tokens gave {} (value {}), which is not in the kept set", token,
                       in[token]);
  return {};
}

// One row of a candidate list and its count.
struct ListRow {
  const int* ids;
  const float* probs;
  const float* logprobs;
  int count;
  int capacity;
};

// The list must be the first min(C, count) entries of the definition's
// order and count the size of the row's kept set, as the (verified) mask
// kept it; the probabilities must be the oracle's over that set within
// 1e-6, the log-probabilities within 1e-5 relative (where finite).
std::string check_list(const float* in, const float* out, std::int64_t vocab,
                       const qrita::oracle::RowFilters& filters, const ListRow& l) {
  std::int64_t kept_count = 0;
  for (std::int64_t i = 0; i < vocab; ++i) kept_count += kept(in, out, i) ? 1 : 0;
  if (l.count != kept_count)
    return fmt::format("candidate_list counted {} kept entries; the mask kept {}", l.count,
                       kept_count);
  std::vector<std::int64_t> order = qrita::oracle::order(in, vocab);
  order.resize(std::size_t(l.count));
  const int listed = std::min(l.count, l.capacity);
  for (int j = 0; j < l.capacity; ++j) {
    const std::int64_t want = j < listed ? order[std::size_t(j)] : -1;
    if (l.ids[j] != want)
      return fmt::format("candidate_list entry {} is id {}; the definition's order has {}", j,
                         l.ids[j], want);
    if (j >= listed && (l.probs[j] != 0.0f || l.logprobs[j] != -INFINITY))
      return fmt::format("candidate_list slot {} past the list holds prob {}, logprob {}", j,
                         l.probs[j], l.logprobs[j]);
  }
  const bool greedy = qrita::oracle::is_greedy(filters.temperature);
  const qrita::oracle::Distribution d = qrita::oracle::distribution_over(
      in, std::move(order), greedy ? 1.0 : double(filters.temperature));
  for (std::size_t j = 0; j < std::size_t(listed); ++j) {
    if (!(std::fabs(double(l.probs[j]) - d.prob[j]) <= 1e-6))
      return fmt::format("candidate_list entry {} (id {}) has probability {}; the oracle's is {}",
                         j, l.ids[j], l.probs[j], d.prob[j]);
    const double logprob = d.logprob[j];
    if (std::isfinite(logprob) &&
        !(std::fabs(double(l.logprobs[j]) - logprob) <= 1e-5 * std::max(1.0, std::fabs(logprob))))
      return fmt::format(
          "candidate_list entry {} (id {}) has log-probability {}; the oracle's is {}", j,
          l.ids[j], l.logprobs[j], logprob);
  }
  return {};
}

// The Batch's entries as T: the float values, or the 16-bit patterns.
template <class T>
void store(const Batch& in, T* out) {
  if constexpr (std::is_same<T, float>::value) {
    std::copy(in.values.begin(), in.values.end(), out);
  } else {
    static_assert(sizeof(T) == sizeof(std::uint16_t), "16-bit logits");
    for (std::size_t i = 0; i < in.bits.size(); ++i) out[i] = T{in.bits[i]};
  }
}

template <class T>
void write_npy(const std::string& path, Dtype dtype, const T* data, std::int64_t rows,
               std::int64_t cols) {
  if constexpr (std::is_same<T, float>::value) {
    qrita::npy::write_float32_2d(path, data, rows, cols);
  } else {
    std::vector<std::uint16_t> bits(std::size_t(rows * cols));
    for (std::size_t i = 0; i < bits.size(); ++i) bits[i] = data[i].bits;
    qrita::npy::write_bits16_2d(path, dtype, bits.data(), rows, cols);
  }
}

template <class View, class Values>
void copy_to_device(const View& view, const Values& values) {
  auto h = Kokkos::create_mirror_view(view);
  std::copy(values.begin(), values.end(), h.data());
  Kokkos::deep_copy(view, h);
}

// Runs the calls on logits stored as T (float, qrita::float16 or
// qrita::bfloat16), prints, times and checks them.
template <class T>
int run(const Config& cfg, const Batch& in) {
  using Logits = Kokkos::View<T**, Kokkos::LayoutRight, Memory>;
  const Space space;
  const std::int64_t batch = in.rows;
  const std::int64_t vocab = in.cols;
  // Options the library refuses (a team larger than the backend runs, ...)
  // are bad options, as the ones refused while parsing.
  qrita::LaunchPlan plan;
  try {
    plan = qrita::plan(space, batch, vocab, cfg.opts);
  } catch (const std::invalid_argument& e) {
    throw UsageError(fmt::format("the options are refused: {}", e.what()));
  }
  // A list longer than a team holds is refused by candidate_list; say so
  // first, as a bad option, with the limit (it depends on the backend).
  // A list longer than the row has nothing past the row's end: C is capped
  // at the vocabulary.
  const int list_size = int(std::min<std::int64_t>(cfg.candidates, vocab));
  const int list_limit = plan.candidate_capacity + plan.tier_capacity;
  if (list_size > list_limit)
    throw UsageError(fmt::format(
        "--candidates {} is more than a team holds here ({}: {} on chip + {} in the workspace)",
        cfg.candidates, list_limit, plan.candidate_capacity, plan.tier_capacity));

  // What runs: the version, the backend, the batch and the filters.
  fmt::print("qrita-cli {}.{}.{}, Kokkos {}.{}.{:02}, {} ({} thread{})\n", QRITA_VERSION_MAJOR,
             QRITA_VERSION_MINOR, QRITA_VERSION_PATCH, KOKKOS_VERSION / 10000,
             KOKKOS_VERSION / 100 % 100, KOKKOS_VERSION % 100, Space::name(),
             space.concurrency(), space.concurrency() == 1 ? "" : "s");
  fmt::print("input:   batch {} x vocab {}, {}, {}\n", batch, vocab, qrita::npy::name(in.dtype),
             in.origin);
  fmt::print("filters: {} (the same on every row)\n", describe_filters(cfg, vocab));
  if (cfg.verbose) {
    fmt::print("options: sigma truncation {}, {} search, {} ties\n",
               cfg.opts.sigma_truncation ? "on" : "off",
               cfg.opts.search == qrita::Search::binary ? "binary" : "quaternary",
               cfg.opts.ties == qrita::Ties::keep_all ? "keep-all" : "exact");
    fmt::print("launch:  {} teams x {} threads{}, {} candidates ({} B of scratch) per team, {} B "
               "of workspace\n",
               plan.league_size, plan.team_size,
               plan.teams_per_row > 1
                   ? fmt::format(" ({} teams of {} threads per row)", plan.teams_per_row,
                                 plan.split_team_size)
                   : std::string(),
               plan.candidate_capacity, plan.team_scratch_bytes, plan.workspace_bytes);
  }
  if (!cfg.save_input.empty()) {
    if (in.dtype == Dtype::float32)
      qrita::npy::write_float32_2d(cfg.save_input, in.values.data(), batch, vocab);
    else
      qrita::npy::write_bits16_2d(cfg.save_input, in.dtype, in.bits.data(), batch, vocab);
    fmt::print("saved the input to {}\n", cfg.save_input);
  }

  const std::vector<int> k_host(std::size_t(batch), cfg.k);
  const std::vector<float> p_host(std::size_t(batch), cfg.p);
  Logits pristine("qrita-cli::pristine", batch, vocab);
  Logits work("qrita-cli::logits", batch, vocab);
  Kokkos::View<int*, Memory> k("qrita-cli::k", batch);
  Kokkos::View<float*, Memory> p("qrita-cli::p", batch);
  Kokkos::View<float*, Memory> temperature("qrita-cli::temperature", batch);
  Kokkos::View<float*, Memory> min_p("qrita-cli::min_p", batch);
  Kokkos::View<qrita::RowStats*, Memory> stats("qrita-cli::stats", batch);
  {
    auto h = Kokkos::create_mirror_view(pristine);
    store(in, h.data());
    Kokkos::deep_copy(pristine, h);
  }
  copy_to_device(k, k_host);
  copy_to_device(p, p_host);
  Kokkos::deep_copy(temperature, cfg.temperature);
  Kokkos::deep_copy(min_p, cfg.min_p);
  // The same filters on every row; temperature and min-p only when given,
  // so that a plain run calls sample_mask with top-k and top-p alone.
  qrita::SamplingParams<Memory> params;
  params.k = k;
  params.p = p;
  if (cfg.temperature_given) params.temperature = temperature;
  if (cfg.min_p_given) params.min_p = min_p;

  // Every timed call has an untimed warm-up call first (first touch of the
  // memory, team scratch sized, threads started), so a median of one call
  // is not a cold start.
  const auto copy = [&] { Kokkos::deep_copy(space, work, pristine); };
  const qrita::Workspace<Space> workspace(space, batch, vocab, cfg.opts);
  const auto mask = [&] { qrita::sample_mask(space, work, params, cfg.opts, workspace, stats); };
  time_calls(space, 1, [] {}, copy);
  const Timing copy_time = time_calls(space, cfg.repeat, [] {}, copy);
  time_calls(space, 1, copy, mask);
  const Timing mask_time = time_calls(space, cfg.repeat, copy, mask);

  // Draws and lists read the unmasked logits (never written).
  Kokkos::View<std::uint64_t*, Memory> seeds("qrita-cli::seeds", cfg.sample ? batch : 0);
  Kokkos::View<std::uint64_t*, Memory> offsets("qrita-cli::offsets", cfg.sample ? batch : 0);
  Kokkos::View<int*, Memory> tokens("qrita-cli::tokens", cfg.sample ? batch : 0);
  Timing sample_time;
  if (cfg.sample) {
    Kokkos::deep_copy(seeds, cfg.seed);
    std::vector<std::uint64_t> row_index(static_cast<std::size_t>(batch));
    for (std::size_t r = 0; r < row_index.size(); ++r) row_index[r] = r;
    copy_to_device(offsets, row_index);
    const auto sample = [&] {
      qrita::sample_tokens(space, pristine, params, seeds, offsets, tokens, cfg.opts, workspace);
    };
    time_calls(space, 1, [] {}, sample);
    sample_time = time_calls(space, cfg.repeat, [] {}, sample);
  }
  Kokkos::View<int**, Kokkos::LayoutRight, Memory> ids("qrita-cli::ids", list_size ? batch : 0,
                                                       list_size);
  Kokkos::View<float**, Kokkos::LayoutRight, Memory> probs("qrita-cli::probs",
                                                           list_size ? batch : 0, list_size);
  Kokkos::View<float**, Kokkos::LayoutRight, Memory> logprobs("qrita-cli::logprobs",
                                                              list_size ? batch : 0, list_size);
  Kokkos::View<int*, Memory> counts("qrita-cli::counts", list_size ? batch : 0);
  Timing list_time;
  if (list_size > 0) {
    const auto list = [&] {
      qrita::candidate_list(space, pristine, params, ids, probs, logprobs, counts, cfg.opts,
                            workspace);
    };
    time_calls(space, 1, [] {}, list);
    list_time = time_calls(space, cfg.repeat, [] {}, list);
  }

  const auto result = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), work);
  const auto row_stats = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), stats);
  const auto tokens_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tokens);
  const auto ids_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ids);
  const auto probs_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), probs);
  const auto logprobs_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), logprobs);
  const auto counts_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), counts);
  // The masked logits as floats (exact), for the tables and the oracle.
  std::vector<float> masked(std::size_t(batch * vocab));
  for (std::size_t i = 0; i < masked.size(); ++i) masked[i] = qrita::to_float(result.data()[i]);
  const auto row_of = [vocab](const auto* data, std::int64_t b) { return data + b * vocab; };
  const std::int64_t shown = std::min(batch, cfg.rows);
  const auto more_rows = [&] {
    if (batch > shown)
      fmt::print("... ({} more row{})\n", batch - shown, batch - shown == 1 ? "" : "s");
  };

  // Each row's kept entries: the candidates the mask left in place.
  std::vector<std::int64_t> kept_per_row(static_cast<std::size_t>(batch));
  for (std::int64_t b = 0; b < batch; ++b) {
    const float* after = row_of(masked.data(), b);
    std::int64_t kept = 0;
    for (std::int64_t i = 0; i < vocab; ++i) kept += qrita::oracle::is_candidate(after[i]) ? 1 : 0;
    kept_per_row[std::size_t(b)] = kept;
  }

  if (cfg.verbose && shown > 0) {
    // Per row: the filters, what was kept, and where each filter's boundary
    // was searched (RowPath) in how many pivot-search passes.
    fmt::print("\n{:>5} {:>7} {:>7} {:>7} {:>10} {:>10}  {:<9}  {:<9}  {}\n", "row", "k", "p",
               "kept", "largest", "min kept", "top-k", "top-p", "passes k/p");
    for (std::int64_t b = 0; b < shown; ++b) {
      const float* before = row_of(in.values.data(), b);
      const float* after = row_of(masked.data(), b);
      float largest = -std::numeric_limits<float>::infinity();
      float smallest_kept = std::numeric_limits<float>::infinity();
      for (std::int64_t i = 0; i < vocab; ++i) {
        if (qrita::oracle::is_candidate(before[i])) largest = std::max(largest, before[i]);
        if (qrita::oracle::is_candidate(after[i]))
          smallest_kept = std::min(smallest_kept, after[i]);
      }
      const qrita::RowStats& s = row_stats(b);
      const std::int64_t kept = kept_per_row[std::size_t(b)];
      fmt::print("{:>5} {:>7} {:>7} {:>7} {:>10.4f} {:>10}  {:<9}  {:<9}  {}/{}\n", b,
                 format_k(k_host[std::size_t(b)], vocab), format_p(p_host[std::size_t(b)]), kept,
                 largest, kept ? fmt::format("{:.4f}", smallest_kept) : std::string("-"),
                 path_name(s.topk_path), path_name(s.topp_path), s.topk_passes, s.topp_passes);
    }
    more_rows();
  }
  if (cfg.verbose) {
    // Every row, summarised: which way each stage went, passes, outliers.
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
    const double rows = double(batch);
    fmt::print("\npaths (rows): top-k {} | top-p {}\n", paths(topk_paths), paths(topp_paths));
    fmt::print("row passes (reads + writes): mean {:.2f}, max {}; rows using the workspace "
               "tier: {}\n",
               double(row_passes) / rows, max_row_passes, tier_rows);
    fmt::print("pivot-search passes (mean): top-k {:.1f}, top-p {:.1f}; outliers (entries above "
               "the truncation threshold): mean {:.0f}, max {}\n",
               double(k_passes) / rows, double(p_passes) / rows, double(outliers) / rows,
               max_outliers);
  }

  // An entry's value for the tables below; "-" for id -1.
  const auto value_at = [&](std::int64_t b, int id) {
    return id >= 0 && id < vocab ? fmt::format("{:.6g}", row_of(in.values.data(), b)[id])
                                 : std::string("-");
  };
  if (cfg.verbose && cfg.sample && shown > 0) {
    fmt::print("\nsample_tokens: seed {} on every row, offset = row index\n", cfg.seed);
    fmt::print("{:>5} {:>9} {:>12}\n", "row", "token", "value");
    for (std::int64_t b = 0; b < shown; ++b)
      fmt::print("{:>5} {:>9} {:>12}\n", b, tokens_host(b), value_at(b, tokens_host(b)));
    more_rows();
  }
  if (cfg.verbose && list_size > 0 && shown > 0) {
    fmt::print("\ncandidate_list: each row's first {} kept entries, by descending value\n",
               list_size);
    fmt::print("{:>5} {:>7} {:>5} {:>9} {:>12} {:>12} {:>12}\n", "row", "kept", "rank", "id",
               "value", "prob", "logprob");
    for (std::int64_t b = 0; b < shown; ++b) {
      const int listed = std::min(counts_host(b), list_size);
      if (listed == 0) fmt::print("{:>5} {:>7} {:>5}\n", b, counts_host(b), "-");
      for (int j = 0; j < listed; ++j)  // row and count on the row's first line only
        fmt::print("{:>5} {:>7} {:>5} {:>9} {:>12} {:>12.6f} {:>12.6f}\n",
                   j == 0 ? std::to_string(b) : std::string(),
                   j == 0 ? std::to_string(counts_host(b)) : std::string(), j, ids_host(b, j),
                   value_at(b, ids_host(b, j)), probs_host(b, j), logprobs_host(b, j));
    }
    more_rows();
  }
  if (cfg.verbose) fmt::print("\n");

  // The results, in short.
  {
    std::vector<std::int64_t> sorted = kept_per_row;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    const double median = n % 2 ? double(sorted[n / 2])
                                : (double(sorted[n / 2 - 1]) + double(sorted[n / 2])) / 2;
    if (batch == 1)
      fmt::print("kept:    {} of {} entries\n", sorted.front(), vocab);
    else
      fmt::print("kept:    entries per row: min {}, median {}, max {} (of {})\n", sorted.front(),
                 median, sorted.back(), vocab);
  }
  // A few rows' tokens and the first row's list; --verbose shows them all.
  const std::int64_t examples = std::min<std::int64_t>(shown, 8);
  if (cfg.sample) {
    std::string first;
    for (std::int64_t b = 0; b < examples; ++b)
      first += fmt::format("{}{}", b ? ", " : "", tokens_host(b));
    fmt::print("tokens:  one drawn per row (seed {}, offset = the row's index){}{}\n", cfg.seed,
               examples > 0 ? fmt::format("; rows 0-{}: ", examples - 1) : std::string(), first);
  }
  if (list_size > 0) {
    std::string first;
    const int listed = shown > 0 ? std::min({counts_host(0), list_size, 4}) : 0;
    for (int j = 0; j < listed; ++j)
      first += fmt::format("{}id {} (p {:.4f})", j ? ", " : "", ids_host(0, j), probs_host(0, j));
    fmt::print("lists:   each row's first {} kept entries, with probabilities{}{}{}\n", list_size,
               shown > 0 ? "; row 0: " : "", first,
               shown > 0 && std::min(counts_host(0), list_size) > listed ? ", ..." : "");
  }

  int status = 0;
  if (cfg.check) {
    // Kept sets must match the reference, up to the freedoms oracle::verify
    // allows (top-p: a prefix mass within rounding of p; min-p: entries
    // within an ulp of the cut). Tokens must lie in the kept set, lists
    // must follow the definition's order (check_token, check_list).
    const qrita::oracle::RowFilters filters = row_filters(cfg);
    std::vector<std::int64_t> differ;
    std::string first_problem;
    for (std::int64_t b = 0; b < batch; ++b) {
      const float* before = row_of(in.values.data(), b);
      const float* after = row_of(masked.data(), b);
      std::string problem = qrita::oracle::verify(before, after, vocab, filters);
      if (problem.empty() && cfg.sample)
        problem = check_token(before, after, vocab, tokens_host(b));
      if (problem.empty() && list_size > 0)
        problem = check_list(before, after, vocab, filters,
                             ListRow{&ids_host(b, 0), &probs_host(b, 0), &logprobs_host(b, 0),
                                     counts_host(b), list_size});
      if (problem.empty()) continue;
      if (differ.empty()) first_problem = fmt::format("row {}: {}", b, problem);
      differ.push_back(b);
    }
    fmt::print("check:   rows exact: {} of {} (each compared with the host reference, "
               "qrita::oracle)\n",
               batch - std::int64_t(differ.size()), batch);
    if (!differ.empty()) {
      const std::size_t listed = std::min<std::size_t>(differ.size(), 32);
      fmt::print("         rows that differ: {}{}\n",
                 fmt::join(differ.begin(), differ.begin() + std::ptrdiff_t(listed), ", "),
                 differ.size() > listed ? ", ..." : "");
      fmt::print("         {}\n", first_problem);
      status = 1;
    }
  } else {
    fmt::print("check:   skipped (--no-check)\n");
  }

  // Each call's median time against the copy's: how many copies of the
  // logits (one read and one write of every entry) a call costs.
  fmt::print("time:    per call, the median of {} call{} after one warm-up call that is not "
             "counted\n",
             cfg.repeat, cfg.repeat == 1 ? "" : "s");
  // --verbose: the fastest call and the rows per millisecond too.
  const auto detail = [&](const Timing& t) {
    return cfg.verbose ? fmt::format(" (min {} ms, {:.1f} rows/ms)", format_ms(t.min_ms),
                                     t.median_ms > 0 ? double(batch) / t.median_ms : 0.0)
                       : std::string();
  };
  const auto print_time = [&](const char* name, const Timing& t) {
    fmt::print("         {:<22} {:>9} ms", name, format_ms(t.median_ms));
    if (copy_time.median_ms > 0)
      fmt::print(" = {:.1f} times a read+write copy of the same logits",
                 t.median_ms / copy_time.median_ms);
    fmt::print("{}\n", detail(t));
  };
  print_time("qrita::sample_mask", mask_time);
  if (cfg.sample) print_time("qrita::sample_tokens", sample_time);
  if (list_size > 0) print_time("qrita::candidate_list", list_time);
  const double bytes = double(batch) * double(vocab) * sizeof(T);
  fmt::print("         {:<22} {:>9} ms ({:.1f} GB/s read+write){}\n", "copy (deep_copy)",
             format_ms(copy_time.median_ms),
             copy_time.median_ms > 0 ? 2 * bytes / copy_time.median_ms * 1e-6 : 0.0,
             detail(copy_time));
  if (cfg.verbose)
    fmt::print("         (sample_mask runs on a fresh copy of the input every call; the copy "
               "is not timed)\n");

  if (!cfg.output.empty()) {
    write_npy(cfg.output, in.dtype, result.data(), batch, vocab);
    fmt::print("wrote {}\n", cfg.output);
  }
  return status;
}

// An allocation failed: what the batch needs, then the allocator's words.
int out_of_memory(const std::string& size_note, std::string what) {
  what.erase(what.find_last_not_of(" \n") + 1);
  fmt::print(stderr, "qrita-cli: error: out of memory{}{}\n  ({})\n",
             size_note.empty() ? "" : ": ", size_note, what);
  return 3;
}

}  // namespace

int main(int argc, char** argv) {
  std::string size_note;  // what the batch needs, for an allocation failure
  try {
    const Config cfg = parse(argc, argv);
    if (cfg.help) {
      fmt::print("{}", cfg.help_text);
      return 0;
    }
    if (cfg.kokkos_help) {  // Kokkos::initialize prints it
      Kokkos::ScopeGuard kokkos(argc, argv);
      return 0;
    }
    // Files to write and the batch's size are checked before any work.
    check_writable("--save-input", cfg.save_input);
    check_writable("--output", cfg.output);
    const auto note = [](std::int64_t rows, std::int64_t cols, Dtype dtype) {
      return fmt::format("batch {} x vocab {} ({}) needs {}", rows, cols,
                         qrita::npy::name(dtype), describe_need(rows, cols, dtype));
    };
    if (cfg.input.empty()) {
      check_memory<UsageError>(fmt::format("--batch {} x --vocab {}", cfg.batch, cfg.vocab),
                               cfg.batch, cfg.vocab, cfg.dtype);
      size_note = note(cfg.batch, cfg.vocab, cfg.dtype);
    }
    const Batch input = load(cfg);
    size_note = note(input.rows, input.cols, input.dtype);
    if (!cfg.input.empty())
      check_memory<qrita::npy::Error>(
          fmt::format("{}: batch {} x vocab {}", cfg.input, input.rows, input.cols), input.rows,
          input.cols, input.dtype);
    // Views live in run(), so they are gone before the guard finalizes
    // Kokkos, on return and on an exception alike.
    Kokkos::ScopeGuard kokkos(argc, argv);
    switch (input.dtype) {
      case Dtype::float16: return run<qrita::float16>(cfg, input);
      case Dtype::bfloat16: return run<qrita::bfloat16>(cfg, input);
      case Dtype::float32: break;
    }
    return run<float>(cfg, input);
  } catch (const UsageError& e) {
    fmt::print(stderr, "qrita-cli: error: {}\ntry 'qrita-cli --help'\n", e.what());
    return 2;
  } catch (const qrita::npy::Error& e) {
    fmt::print(stderr, "qrita-cli: error: {}\n", e.what());
    return 2;
  } catch (const std::bad_alloc& e) {
    return out_of_memory(size_note, e.what());
  } catch (const std::exception& e) {
    // Kokkos reports a failed allocation as a std::runtime_error.
    if (std::strstr(e.what(), "failed to allocate") != nullptr)
      return out_of_memory(size_note, e.what());
    fmt::print(stderr, "qrita-cli: error: {}\n", e.what());
    return 3;
  }
}
