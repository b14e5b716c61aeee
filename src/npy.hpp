// SPDX-License-Identifier: Apache-2.0
#ifndef QRITA_SRC_NPY_HPP
#define QRITA_SRC_NPY_HPP

// Reads and writes NumPy .npy files holding a [batch, vocab] array of logits:
// the way logits travel between a Python serving stack and qrita-cli (not
// installed). Format: numpy.org/doc/stable/reference/generated/numpy.lib.format.html
//
// Element types, and how each is stored:
//   float32   '<f4'
//   float16   '<f2' (numpy's float16: IEEE binary16)
//   bfloat16  '<u2' raw bits (numpy has no bfloat16): what
//             torch_tensor.view(torch.uint16).numpy() gives, and what
//             np.load(f).view(ml_dtypes.bfloat16) or
//             torch.from_numpy(a).view(torch.bfloat16) turns back into
//             bfloat16. Read also as '<V2' (how numpy saves an
//             ml_dtypes.bfloat16 array) or '|V2'.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace qrita {
namespace npy {

// Every failure: the message starts with the file name and says what was
// expected and what was found.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Array {
  std::vector<std::int64_t> shape;
  std::vector<float> data;  // row-major (C order)
};

enum class Dtype { float32, float16, bfloat16 };

// "float32", "float16", "bfloat16".
const char* name(Dtype dtype);

// An array of any of the three element types, as stored: float32 values in
// `f32`, or the 16-bit patterns of float16 / bfloat16 values in `bits16`.
struct LogitsArray {
  std::vector<std::int64_t> shape;
  Dtype dtype = Dtype::float32;
  std::vector<float> f32;             // dtype float32, row-major
  std::vector<std::uint16_t> bits16;  // dtype float16 or bfloat16, row-major
};

// Versions 1.0, 2.0 and 3.0; dtype little-endian float32, C order, two
// dimensions. Zero-size dimensions are fine (batch 0 is an empty batch).
// Bytes after the array are ignored, as numpy.load does: several arrays may
// be saved one after another into one file.
Array read_float32_2d(const std::string& path);

// As read_float32_2d, for any of the three element types (see the top).
LogitsArray read_logits_2d(const std::string& path);

// Version 1.0, '<f4', C order; the data starts at a multiple of 64 bytes.
void write_float32_2d(const std::string& path, const float* data,
                      std::int64_t rows, std::int64_t cols);

// As write_float32_2d, for 16-bit patterns: '<f2' for float16, '<u2' for
// bfloat16 (Dtype::float32 is rejected: use write_float32_2d).
void write_bits16_2d(const std::string& path, Dtype dtype, const std::uint16_t* bits,
                     std::int64_t rows, std::int64_t cols);

}  // namespace npy
}  // namespace qrita

#endif  // QRITA_SRC_NPY_HPP
