// SPDX-License-Identifier: Apache-2.0
// qrita._qrita: the extension module. It holds no torch code: arrays come
// in as descriptions (pointer, type, device, shape, strides) that the
// Python layer makes from torch tensors, or that describe() makes from any
// DLPack array, and a stream handle; so one build serves every torch
// version. Its state: Kokkos, initialised on the first call (on the
// device of that call's logits) and finalised at exit, and one execution-
// space instance per CUDA/HIP stream, made on the stream's first call and
// kept (making one allocates).

#include "calls.hpp"
#include "sharded.hpp"

// Python's and nanobind's headers do not build under qrita's warnings.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wcast-align"
#pragma GCC diagnostic ignored "-Wnull-dereference"
#pragma GCC diagnostic ignored "-Wdouble-promotion"
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#pragma GCC diagnostic pop

#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace nb = nanobind;

namespace qrita_python {

const char* dtype_name(DType d) {
  switch (d) {
    case DType::float32: return "float32";
    case DType::bfloat16: return "bfloat16";
    case DType::float16: return "float16";
    case DType::int32: return "int32";
    case DType::int64: return "int64";
    case DType::uint64: return "uint64";
    case DType::uint8: return "uint8";
    case DType::float64: return "float64";
    default: return "an unsupported type";
  }
}

int space_device_type() {
#if defined(KOKKOS_ENABLE_CUDA)
  return int(DeviceType::cuda);
#elif defined(KOKKOS_ENABLE_HIP)
  return int(DeviceType::rocm);
#else
  return int(DeviceType::cpu);
#endif
}

const char* space_device_name() {
  switch (DeviceType(space_device_type())) {
    case DeviceType::cuda: return "cuda";
    case DeviceType::rocm: return "rocm";
    default: return "cpu";
  }
}

namespace {

std::mutex state_mutex;
int initialized_device = -1;  // the device Kokkos runs on; -1: not initialised
bool owns_kokkos        = false;  // this module initialised Kokkos (and finalises it)

#if defined(KOKKOS_ENABLE_CUDA)
using Stream = cudaStream_t;
#elif defined(KOKKOS_ENABLE_HIP)
using Stream = hipStream_t;
#endif
#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP)
std::map<std::uintptr_t, Space>& instances() {
  static std::map<std::uintptr_t, Space> cache;
  return cache;
}
#endif

void initialize(int device_id) {
  std::lock_guard<std::mutex> lock(state_mutex);
  if (initialized_device >= 0) return;
  if (!Kokkos::is_initialized()) {
    std::vector<std::string> args = {"qrita", "--kokkos-disable-warnings"};
    if (space_device_type() != int(DeviceType::cpu))
      args.push_back("--kokkos-device-id=" + std::to_string(device_id));
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    int argc = int(argv.size());
    Kokkos::initialize(argc, argv.data());
    owns_kokkos = true;
  }
  initialized_device = space_device_type() == int(DeviceType::cpu) ? 0 : device_id;
}

void finalize() {
  std::lock_guard<std::mutex> lock(state_mutex);
#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP)
  instances().clear();
#endif
  if (owns_kokkos && Kokkos::is_initialized()) Kokkos::finalize();
  owns_kokkos        = false;
  initialized_device = -1;
}

// The execution-space instance on `stream` (host backends: the default
// instance; the stream is ignored).
Space instance(std::uintptr_t stream) {
#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP)
  std::lock_guard<std::mutex> lock(state_mutex);
  auto& cache = instances();
  auto it     = cache.find(stream);
  if (it == cache.end())
    it = cache.emplace(stream, Space(reinterpret_cast<Stream>(stream))).first;
  return it->second;
#else
  (void)stream;
  return Space();
#endif
}

}  // namespace

int space_device_id() { return initialized_device < 0 ? 0 : initialized_device; }

Array to_array(ArrayTuple const& t, const char* name) {
  Array a;
  a.ptr         = std::get<0>(t);
  a.dtype       = DType(std::get<1>(t));
  a.device_type = std::get<2>(t);
  a.device_id   = std::get<3>(t);
  a.ndim        = std::get<4>(t);
  a.shape[0]    = std::get<5>(t);
  a.shape[1]    = std::get<6>(t);
  a.stride[0]   = std::get<7>(t);
  a.stride[1]   = std::get<8>(t);
  a.name        = name;
  return a;
}

std::optional<Array> to_array(std::optional<ArrayTuple> const& t, const char* name) {
  if (!t) return std::nullopt;
  return to_array(*t, name);
}

void check_device(Array const& a) {
  if (a.device_type != space_device_type())
    value_error(std::string("argument '") + a.name + "' is not on the " +
                space_device_name() + " device this build of qrita computes on (backend " +
                Space::name() + ")");
  if (initialized_device >= 0 && a.device_type != int(DeviceType::cpu) &&
      a.device_id != initialized_device)
    value_error(std::string("argument '") + a.name + "' is on device " +
                std::to_string(a.device_id) + "; qrita runs on device " +
                std::to_string(initialized_device) +
                " in this process (the device of its first call)");
}

void check_dtype(Array const& a, std::initializer_list<DType> allowed) {
  for (DType d : allowed)
    if (a.dtype == d) return;
  std::string names;
  std::size_t i = 0;
  for (DType d : allowed) {
    names += std::string(i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ") + dtype_name(d);
    ++i;
  }
  throw type_error(std::string("argument '") + a.name + "' must hold " + names + ", got " +
                   dtype_name(a.dtype));
}

void check_rows(Array const& a, int ndim, std::int64_t rows) {
  if (a.ndim != ndim)
    value_error(std::string("argument '") + a.name + "' must have " + std::to_string(ndim) +
                (ndim == 1 ? " dimension (one entry per row of 'logits')"
                           : " dimensions [batch][C]") +
                ", got " + std::to_string(a.ndim));
  if (a.shape[0] != rows)
    value_error(std::string("argument '") + a.name + "' has " + std::to_string(a.shape[0]) +
                (ndim == 1 ? " entries" : " rows") + ", expected " + std::to_string(rows) +
                " (one per row of 'logits')");
}

std::size_t workspace_bytes(std::int64_t batch, std::int64_t vocab, int device_id) {
  initialize(device_id);
  if (batch < 0) value_error("argument 'max_batch' must be >= 0, got " + std::to_string(batch));
  if (vocab < 0) value_error("argument 'vocab' must be >= 0, got " + std::to_string(vocab));
  return qrita::workspace_bytes(Space(), batch, vocab);
}

namespace {

// The logits, checked; initialises Kokkos on their device on the first call.
Array logits_of(ArrayTuple const& t) {
  Array a = to_array(t, "logits");
  if (a.device_type == space_device_type()) initialize(a.device_id);
  check_device(a);
  check_dtype(a, {DType::float32, DType::bfloat16, DType::float16});
  if (a.ndim != 2)
    value_error("argument 'logits' must have 2 dimensions [batch][vocab], got " +
                std::to_string(a.ndim));
  if (a.shape[1] > 1 && a.stride[1] != 1)
    value_error("argument 'logits' must have contiguous columns (column stride 1), got " +
                std::to_string(a.stride[1]));
  return a;
}

template <class T>
struct Tag {
  using type = T;
};

template <class F>
void by_logit_type(Array const& logits, F&& f) {
  switch (logits.dtype) {
    case DType::float32: return f(Tag<float>{});
    case DType::bfloat16: return f(Tag<qrita::bfloat16>{});
    default: return f(Tag<qrita::float16>{});
  }
}

using OptArray = std::optional<ArrayTuple>;

// Runs `call(Tag<T>{}, space)` for the logits' type T on the instance of
// `stream`, without the GIL (the arguments are checked inside, before any
// work).
template <class Call>
void run(Array const& logits, std::uintptr_t stream, Call&& call) {
  const Space space = instance(stream);
  by_logit_type(logits, [&](auto tag) {
    nb::gil_scoped_release release;
    call(tag, space);
  });
}

Filters filters(OptArray const& k, OptArray const& p, OptArray const& min_p,
                OptArray const& temperature) {
  Filters f;
  f.k           = to_array(k, "k");
  f.p           = to_array(p, "p");
  f.min_p       = to_array(min_p, "min_p");
  f.temperature = to_array(temperature, "temperature");
  return f;
}

// A list call's outputs.
struct ListArrays {
  Array ids;
  std::optional<Array> probs, logprobs;
  Array counts;
};

ListArrays list_arrays(ArrayTuple const& ids, OptArray const& probs, OptArray const& logprobs,
                       ArrayTuple const& counts) {
  return ListArrays{to_array(ids, "ids"), to_array(probs, "probs"),
                    to_array(logprobs, "logprobs"), to_array(counts, "counts")};
}

// A DLPack array (NumPy, CuPy, JAX, torch, ...) as the tuple the calls take.
ArrayTuple describe(nb::ndarray<> a) {
  const auto dt = a.dtype();
  DType d       = DType::other;
  using code    = nb::dlpack::dtype_code;
  if (dt.lanes == 1) {
    if (dt.code == uint8_t(code::Float) && dt.bits == 32) d = DType::float32;
    if (dt.code == uint8_t(code::Float) && dt.bits == 64) d = DType::float64;
    if (dt.code == uint8_t(code::Float) && dt.bits == 16) d = DType::float16;
    if (dt.code == uint8_t(code::Bfloat) && dt.bits == 16) d = DType::bfloat16;
    if (dt.code == uint8_t(code::Int) && dt.bits == 32) d = DType::int32;
    if (dt.code == uint8_t(code::Int) && dt.bits == 64) d = DType::int64;
    if (dt.code == uint8_t(code::UInt) && dt.bits == 64) d = DType::uint64;
    if (dt.code == uint8_t(code::UInt) && dt.bits == 8) d = DType::uint8;
  }
  const int ndim = int(a.ndim());
  std::int64_t shape[2] = {0, 0}, stride[2] = {0, 0};
  for (int i = 0; i < ndim && i < 2; ++i) {
    shape[i]  = std::int64_t(a.shape(i));
    stride[i] = std::int64_t(a.stride(i));
  }
  return ArrayTuple(reinterpret_cast<std::uintptr_t>(a.data()), int(d), a.device_type(),
                    a.device_id(), ndim, shape[0], shape[1], stride[0], stride[1]);
}

// A communication engine driven from Python (qrita/distributed.py): an
// object with `rank`, `size` and the methods allreduce_sum(address, n),
// allreduce_max(address, n) and allgather(send, recv, n) on buffers of n
// uint64 words named by address. The caller keeps it alive for the call;
// a collective runs with the GIL taken back, and an exception it raises
// becomes a RuntimeError of the call.
Collectives collectives(nb::handle ops) {
  Collectives c;
  c.rank      = nb::cast<int>(ops.attr("rank"));
  c.size      = nb::cast<int>(ops.attr("size"));
  PyObject* o = ops.ptr();
  c.run = [o](Collective kind, std::uint64_t* data, const std::uint64_t* send, std::size_t n) {
    nb::gil_scoped_acquire gil;
    const nb::handle h(o);
    const auto at = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p); };
    const char* name = kind == Collective::sum   ? "allreduce_sum"
                       : kind == Collective::max ? "allreduce_max"
                                                 : "allgather";
    try {
      if (kind == Collective::gather)
        h.attr(name)(at(send), at(data), n);
      else
        h.attr(name)(at(data), n);
    } catch (nb::python_error const& e) {
      throw std::runtime_error(std::string("qrita: the communicator's ") + name + " raised " +
                               e.what());
    }
  };
  return c;
}

// A sharded call on the instance of `stream`, without the GIL.
template <class Call>
void run_sharded(std::uintptr_t stream, Call&& call) {
  const Space space = instance(stream);
  nb::gil_scoped_release release;
  call(space);
}

}  // namespace
}  // namespace qrita_python

NB_MODULE(_qrita, m) {
  using namespace qrita_python;
  m.doc() = "qrita's extension module; use the qrita package instead.";
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const type_error& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    }
  });

  m.def("backend", [] { return std::string(Space::name()); },
        "Kokkos' default execution space in this build: OpenMP, Serial, Cuda or HIP.");
  m.def("device_type", &space_device_type,
        "The DLPack device type this build computes on (1 CPU, 2 CUDA, 10 ROCm).");
  m.def("finalize", &finalize, "Releases the stream instances and finalises Kokkos.");
  m.def("describe", &describe, nb::arg("array"),
        "A DLPack array as (pointer, dtype, device type, device id, ndim, shape0, shape1, "
        "stride0, stride1).");
  m.def("workspace_bytes", &workspace_bytes, nb::arg("max_batch"), nb::arg("vocab"),
        nb::arg("device_id") = 0,
        "Bytes of the workspace a call on at most max_batch x vocab logits may use.");

  m.def(
      "mask_",
      [](ArrayTuple const& logits_t, OptArray const& k, OptArray const& p,
         OptArray const& min_p, OptArray const& temperature, OptArray const& ws,
         std::uintptr_t stream) {
        const Array logits = logits_of(logits_t);
        const Filters f    = filters(k, p, min_p, temperature);
        const auto w       = to_array(ws, "workspace");
        run(logits, stream, [&](auto tag, Space const& space) {
          mask<typename decltype(tag)::type>(space, logits, f, w);
        });
      },
      nb::arg("logits"), nb::arg("k").none(), nb::arg("p").none(), nb::arg("min_p").none(),
      nb::arg("temperature").none(), nb::arg("workspace").none(), nb::arg("stream") = 0);

  m.def(
      "sample",
      [](ArrayTuple const& logits_t, OptArray const& k, OptArray const& p,
         OptArray const& min_p, OptArray const& temperature, ArrayTuple const& seeds,
         ArrayTuple const& offsets, ArrayTuple const& tokens, OptArray const& ws,
         std::uintptr_t stream) {
        const Array logits = logits_of(logits_t);
        const Filters f    = filters(k, p, min_p, temperature);
        const Array s = to_array(seeds, "seeds"), o = to_array(offsets, "offsets");
        const Array t      = to_array(tokens, "tokens");
        const auto w       = to_array(ws, "workspace");
        run(logits, stream, [&](auto tag, Space const& space) {
          sample<typename decltype(tag)::type>(space, logits, f, s, o, t, w);
        });
      },
      nb::arg("logits"), nb::arg("k").none(), nb::arg("p").none(), nb::arg("min_p").none(),
      nb::arg("temperature").none(), nb::arg("seeds"), nb::arg("offsets"), nb::arg("tokens"),
      nb::arg("workspace").none(), nb::arg("stream") = 0);

  m.def(
      "candidates",
      [](ArrayTuple const& logits_t, OptArray const& k, OptArray const& p,
         OptArray const& min_p, OptArray const& temperature, ArrayTuple const& ids,
         OptArray const& probs, OptArray const& logprobs, ArrayTuple const& counts,
         OptArray const& ws, std::uintptr_t stream) {
        const Array logits  = logits_of(logits_t);
        const Filters f     = filters(k, p, min_p, temperature);
        const ListArrays l  = list_arrays(ids, probs, logprobs, counts);
        const auto w        = to_array(ws, "workspace");
        run(logits, stream, [&](auto tag, Space const& space) {
          candidates<typename decltype(tag)::type>(space, logits, f, l.ids, l.probs, l.logprobs,
                                                   l.counts, w);
        });
      },
      nb::arg("logits"), nb::arg("k").none(), nb::arg("p").none(), nb::arg("min_p").none(),
      nb::arg("temperature").none(), nb::arg("ids"), nb::arg("probs").none(),
      nb::arg("logprobs").none(), nb::arg("counts"), nb::arg("workspace").none(),
      nb::arg("stream") = 0);

  // The sharded calls (qrita/sharded.hpp) over a communicator driven from
  // Python; qrita.distributed wraps them.
  nb::class_<ShardedWorkspace>(m, "ShardedWorkspace")
      .def_prop_ro("first_column", [](ShardedWorkspace const& w) { return w.shard.first_column; })
      .def_prop_ro("columns", [](ShardedWorkspace const& w) { return w.shard.columns; })
      .def_prop_ro("vocab", [](ShardedWorkspace const& w) { return w.shard.vocab; })
      .def_prop_ro("max_batch", [](ShardedWorkspace const& w) { return w.batch; })
      .def_prop_ro("list_capacity", [](ShardedWorkspace const& w) { return w.list_capacity; })
      .def_prop_ro("ranks", [](ShardedWorkspace const& w) { return w.ranks; });
  m.def(
      "sharded_workspace",
      [](nb::handle ops, std::int64_t first_column, std::int64_t columns, std::int64_t vocab,
         std::int64_t max_batch, int list_capacity, int device_id, std::uintptr_t stream) {
        initialize(device_id);
        const Collectives c = collectives(ops);
        ShardedWorkspace ws;
        run_sharded(stream, [&](Space const& space) {
          ws = make_sharded_workspace(space, c, ShardSpec{first_column, columns, vocab},
                                      max_batch, list_capacity);
        });
        return ws;
      },
      nb::arg("comm"), nb::arg("first_column"), nb::arg("columns"), nb::arg("vocab"),
      nb::arg("max_batch"), nb::arg("list_capacity"), nb::arg("device_id") = 0,
      nb::arg("stream") = 0);
  m.def(
      "sharded_announce_failure",
      [](nb::handle ops, int device_id, std::uintptr_t stream) {
        initialize(device_id);
        const Collectives c = collectives(ops);
        run_sharded(stream, [&](Space const& space) { announce_failure(space, c); });
      },
      nb::arg("comm"), nb::arg("device_id") = 0, nb::arg("stream") = 0,
      "Takes part in a sharded call's exchange of argument records as a rank whose "
      "arguments failed: every other rank's call raises.");
  m.def(
      "sharded_mask_",
      [](ArrayTuple const& logits_t, OptArray const& k, OptArray const& p,
         OptArray const& min_p, OptArray const& temperature, std::int64_t first_column,
         std::int64_t vocab, nb::handle ops, ShardedWorkspace const* ws, bool check_agreement,
         std::uintptr_t stream) {
        const Array logits   = logits_of(logits_t);
        const Filters f      = filters(k, p, min_p, temperature);
        const Collectives c  = collectives(ops);
        const ShardSpec s{first_column, logits.shape[1], vocab};
        run_sharded(stream, [&](Space const& space) {
          sharded_mask(space, c, logits, s, f, ws, check_agreement);
        });
      },
      nb::arg("logits"), nb::arg("k").none(), nb::arg("p").none(), nb::arg("min_p").none(),
      nb::arg("temperature").none(), nb::arg("first_column"), nb::arg("vocab"),
      nb::arg("comm"), nb::arg("workspace").none(), nb::arg("check_agreement"),
      nb::arg("stream") = 0);
  m.def(
      "sharded_sample",
      [](ArrayTuple const& logits_t, OptArray const& k, OptArray const& p,
         OptArray const& min_p, OptArray const& temperature, ArrayTuple const& seeds,
         ArrayTuple const& offsets, ArrayTuple const& tokens, std::int64_t first_column,
         std::int64_t vocab, nb::handle ops, ShardedWorkspace const* ws, bool check_agreement,
         std::uintptr_t stream) {
        const Array logits  = logits_of(logits_t);
        const Filters f     = filters(k, p, min_p, temperature);
        const Array sd = to_array(seeds, "seeds"), o = to_array(offsets, "offsets");
        const Array t       = to_array(tokens, "tokens");
        const Collectives c = collectives(ops);
        const ShardSpec s{first_column, logits.shape[1], vocab};
        run_sharded(stream, [&](Space const& space) {
          sharded_sample(space, c, logits, s, f, sd, o, t, ws, check_agreement);
        });
      },
      nb::arg("logits"), nb::arg("k").none(), nb::arg("p").none(), nb::arg("min_p").none(),
      nb::arg("temperature").none(), nb::arg("seeds"), nb::arg("offsets"), nb::arg("tokens"),
      nb::arg("first_column"), nb::arg("vocab"), nb::arg("comm"), nb::arg("workspace").none(),
      nb::arg("check_agreement"), nb::arg("stream") = 0);
  m.def(
      "sharded_candidates",
      [](ArrayTuple const& logits_t, OptArray const& k, OptArray const& p,
         OptArray const& min_p, OptArray const& temperature, ArrayTuple const& ids,
         OptArray const& probs, OptArray const& logprobs, ArrayTuple const& counts,
         std::int64_t first_column, std::int64_t vocab, nb::handle ops,
         ShardedWorkspace const* ws, bool check_agreement, std::uintptr_t stream) {
        const Array logits  = logits_of(logits_t);
        const Filters f     = filters(k, p, min_p, temperature);
        const ListArrays l  = list_arrays(ids, probs, logprobs, counts);
        const Collectives c = collectives(ops);
        const ShardSpec s{first_column, logits.shape[1], vocab};
        run_sharded(stream, [&](Space const& space) {
          sharded_candidates(space, c, logits, s, f, l.ids, l.probs, l.logprobs, l.counts, ws,
                             check_agreement);
        });
      },
      nb::arg("logits"), nb::arg("k").none(), nb::arg("p").none(), nb::arg("min_p").none(),
      nb::arg("temperature").none(), nb::arg("ids"), nb::arg("probs").none(),
      nb::arg("logprobs").none(), nb::arg("counts"), nb::arg("first_column"),
      nb::arg("vocab"), nb::arg("comm"), nb::arg("workspace").none(),
      nb::arg("check_agreement"), nb::arg("stream") = 0);
}
