// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_PYTHON_ARRAYS_HPP
#define QRITA_PYTHON_ARRAYS_HPP

// The extension's view of an array from Python: a pointer, a type, a device,
// a shape and strides in elements, as the Python layer describes a tensor
// (qrita/_arrays.py) or DLPack does (describe() in module.cpp). Every check
// of an argument lives here and raises a Python TypeError or ValueError
// naming the argument before anything is written.

#include <qrita/qrita.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>

namespace qrita_python {

using Space  = Kokkos::DefaultExecutionSpace;
using Memory = Space::memory_space;

// Element types, as the Python layer numbers them (qrita/_arrays.py).
enum class DType : int {
  float32 = 0, bfloat16 = 1, float16 = 2, int32 = 3, int64 = 4, uint64 = 5, uint8 = 6,
  float64 = 7, other = 99
};

// DLPack's device types.
enum class DeviceType : int { cpu = 1, cuda = 2, rocm = 10 };

// (pointer, dtype, device type, device index, ndim, shape0, shape1,
// stride0, stride1): strides in elements, unused dimensions 0.
using ArrayTuple = std::tuple<std::uintptr_t, int, int, int, int, std::int64_t,
                              std::int64_t, std::int64_t, std::int64_t>;

struct Array {
  std::uintptr_t ptr = 0;
  DType dtype        = DType::other;
  int device_type    = 0;
  int device_id      = 0;
  int ndim           = 0;
  std::int64_t shape[2]  = {0, 0};
  std::int64_t stride[2] = {0, 0};
  const char* name       = "";

  template <class T>
  T* data() const { return reinterpret_cast<T*>(ptr); }
};

// A Python TypeError (nanobind translates it).
struct type_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// ValueError: std::invalid_argument, which nanobind maps to ValueError.
[[noreturn]] inline void value_error(std::string const& what) {
  throw std::invalid_argument(what);
}

const char* dtype_name(DType d);

// The device this build computes on, and its DLPack type.
int space_device_type();
int space_device_id();
const char* space_device_name();

Array to_array(ArrayTuple const& t, const char* name);
std::optional<Array> to_array(std::optional<ArrayTuple> const& t, const char* name);

// Checks: the array is on this build's device, of one of the given types,
// of the given rank (and, for rank 1, of `rows` entries).
void check_device(Array const& a);
void check_dtype(Array const& a, std::initializer_list<DType> allowed);
void check_rows(Array const& a, int ndim, std::int64_t rows);

}  // namespace qrita_python

#endif  // QRITA_PYTHON_ARRAYS_HPP
