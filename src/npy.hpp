#ifndef QRITA_SRC_NPY_HPP
#define QRITA_SRC_NPY_HPP

// Reads and writes NumPy .npy files holding a float32 [batch, vocab] array:
// the way logits travel between a Python serving stack and qrita-cli (not
// installed). Format: numpy.org/doc/stable/reference/generated/numpy.lib.format.html

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

// Versions 1.0, 2.0 and 3.0; dtype little-endian float32, C order, two
// dimensions. Zero-size dimensions are fine (batch 0 is an empty batch).
// Bytes after the array are ignored, as numpy.load does: several arrays may
// be saved one after another into one file.
Array read_float32_2d(const std::string& path);

// Version 1.0, '<f4', C order; the data starts at a multiple of 64 bytes.
void write_float32_2d(const std::string& path, const float* data,
                      std::int64_t rows, std::int64_t cols);

}  // namespace npy
}  // namespace qrita

#endif  // QRITA_SRC_NPY_HPP
