// SPDX-License-Identifier: Apache-2.0
// The .npy reader and writer behind qrita-cli --input / --output.

#include "npy.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using qrita::npy::Error;
using ::testing::HasSubstr;

constexpr float kInf = std::numeric_limits<float>::infinity();

// Little-endian float32 bytes, whatever the host's byte order.
std::string le_bytes(const std::vector<float>& values) {
  std::string out;
  for (float f : values) {
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    for (int i = 0; i < 4; ++i) out += static_cast<char>((u >> (8 * i)) & 0xFFu);
  }
  return out;
}

// A .npy file written by hand: magic, version major.0, the header length
// field (2 bytes for 1.0, 4 otherwise), `dict` padded as numpy pads it, then
// `data`.
std::string npy_bytes(int major, const std::string& dict, const std::string& data = "") {
  const std::size_t len_size = major == 1 ? 2 : 4;
  std::string header = dict;
  const std::size_t unpadded = 8 + len_size + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  for (std::size_t i = 0; i < len_size; ++i)
    out += static_cast<char>((header.size() >> (8 * i)) & 0xFFu);
  return out + header + data;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

class Npy : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
    dir_ = fs::path(::testing::TempDir()) / ("qrita_npy_" + name + "_" + std::to_string(stamp));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  static void write_file(const std::string& p, const std::string& bytes) {
    std::ofstream out(p, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    ASSERT_TRUE(out.good()) << p;
  }

  static std::string read_file(const std::string& p) {
    std::ostringstream out;
    out << std::ifstream(p, std::ios::binary).rdbuf();
    return out.str();
  }

  // The message of the Error that reading `p` throws; it must start with
  // the file's name.
  static std::string read_error(const std::string& p) {
    try {
      qrita::npy::read_float32_2d(p);
    } catch (const Error& e) {
      std::string what = e.what();
      EXPECT_EQ(what.rfind(p + ": ", 0), 0u) << what;
      return what;
    }
    ADD_FAILURE() << "reading " << p << " threw no qrita::npy::Error";
    return {};
  }

  std::string error_for(const std::string& bytes) {
    const std::string p = path("bad.npy");
    write_file(p, bytes);
    return read_error(p);
  }

  // A version 1.0 file with this header and 2 x 3 floats of data.
  std::string header_error(const std::string& dict) {
    return error_for(npy_bytes(1, dict, le_bytes({1, 2, 3, 4, 5, 6})));
  }

  fs::path dir_;
};

TEST_F(Npy, RoundTripIsBitwise) {
  std::uint32_t payload_nan_bits = 0x7FC01234u;
  float payload_nan;
  std::memcpy(&payload_nan, &payload_nan_bits, sizeof payload_nan);
  const std::vector<float> values{
      1.5f, -kInf, kInf, std::numeric_limits<float>::quiet_NaN(), -0.0f,
      std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max(),
      -std::numeric_limits<float>::max(), payload_nan, 0.0f, 3.25f, -7.0f, 1e-30f, 42.0f, -1.0f};
  const std::string p = path("logits.npy");
  qrita::npy::write_float32_2d(p, values.data(), 3, 5);
  const auto a = qrita::npy::read_float32_2d(p);
  EXPECT_EQ(a.shape, (std::vector<std::int64_t>{3, 5}));
  EXPECT_TRUE(same_bits(a.data, values));
}

TEST_F(Npy, RoundTripEmptyBatch) {
  const std::string p = path("empty.npy");
  qrita::npy::write_float32_2d(p, nullptr, 0, 5);
  const auto a = qrita::npy::read_float32_2d(p);
  EXPECT_EQ(a.shape, (std::vector<std::int64_t>{0, 5}));
  EXPECT_TRUE(a.data.empty());
}

TEST_F(Npy, WritesVersion1WithDataAlignedTo64Bytes) {
  const std::vector<float> values{1, 2, 3, 4, 5, 6};
  const std::string p = path("aligned.npy");
  qrita::npy::write_float32_2d(p, values.data(), 2, 3);
  const std::string bytes = read_file(p);
  ASSERT_GE(bytes.size(), 10u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const std::size_t header_len = static_cast<unsigned char>(bytes[8]) +
                                 256u * static_cast<unsigned char>(bytes[9]);
  const std::size_t data_start = 10 + header_len;
  EXPECT_EQ(data_start % 64, 0u);
  EXPECT_EQ(bytes[data_start - 1], '\n');
  EXPECT_THAT(bytes.substr(10, header_len), HasSubstr("'shape': (2, 3)"));
  EXPECT_EQ(bytes.substr(data_start), le_bytes(values));
}

TEST_F(Npy, ReadsVersion2Header) {
  const std::vector<float> values{1, -kInf, 3, 4, 5, 6};
  const std::string p = path("v2.npy");
  write_file(p, npy_bytes(2, "{'shape': (2,3,), 'fortran_order': False, 'descr': '<f4'}",
                          le_bytes(values)));
  const auto a = qrita::npy::read_float32_2d(p);
  EXPECT_EQ(a.shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_TRUE(same_bits(a.data, values));
}

TEST_F(Npy, ReadsVersion3Header) {
  const std::vector<float> values{1, 2, 3, 4, 5, 6};
  const std::string p = path("v3.npy");
  write_file(p, npy_bytes(3, "{ \"descr\" : \"<f4\" ,\n 'fortran_order':False,'shape':( 3 , 2 ) , }",
                          le_bytes(values)));
  const auto a = qrita::npy::read_float32_2d(p);
  EXPECT_EQ(a.shape, (std::vector<std::int64_t>{3, 2}));
  EXPECT_TRUE(same_bits(a.data, values));
}

TEST_F(Npy, ReadsHeaderVariants) {
  const std::vector<float> values{1, 2, 3, 4, 5, 6};
  for (const char* dict : {
           "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
           "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}",
           "{'fortran_order': False, 'shape': (2,3,), 'descr': '<f4'}",
           "{\t'shape' :(2 ,3),\n'descr':\"<f4\",'fortran_order' : False ,}",
           "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }",  // Python 2
       }) {
    SCOPED_TRACE(dict);
    const std::string p = path("variant.npy");
    write_file(p, npy_bytes(1, dict, le_bytes(values)));
    const auto a = qrita::npy::read_float32_2d(p);
    EXPECT_EQ(a.shape, (std::vector<std::int64_t>{2, 3}));
    EXPECT_TRUE(same_bits(a.data, values));
  }
}

TEST_F(Npy, ReadsNativeOrderFloat32OnLittleEndianHost) {
  const std::uint32_t one = 1;
  unsigned char first;
  std::memcpy(&first, &one, 1);
  if (first != 1) GTEST_SKIP() << "'=f4' is big-endian here";
  const std::vector<float> values{1, 2, 3, 4, 5, 6};
  for (const char* descr : {"=f4", "f4"}) {
    SCOPED_TRACE(descr);
    const std::string p = path("native.npy");
    write_file(p, npy_bytes(1,
                            std::string("{'descr': '") + descr +
                                "', 'fortran_order': False, 'shape': (3, 2), }",
                            le_bytes(values)));
    EXPECT_TRUE(same_bits(qrita::npy::read_float32_2d(p).data, values));
  }
}

TEST_F(Npy, IgnoresBytesAfterTheArray) {
  const std::vector<float> values{1, 2, 3, 4, 5, 6};
  const std::string p = path("two.npy");
  const std::string one =
      npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", le_bytes(values));
  write_file(p, one + one);
  EXPECT_TRUE(same_bits(qrita::npy::read_float32_2d(p).data, values));
}

TEST_F(Npy, MissingFile) {
  EXPECT_THAT(read_error(path("absent.npy")), HasSubstr("cannot open: No such file or directory"));
}

TEST_F(Npy, Directory) { EXPECT_THAT(read_error(dir_.string()), HasSubstr(": cannot")); }

TEST_F(Npy, BadMagic) {
  EXPECT_THAT(error_for("PK\x03\x04 a zip file"), HasSubstr("not a .npy file (bad magic)"));
  EXPECT_THAT(error_for(""), HasSubstr("not a .npy file (bad magic)"));
}

TEST_F(Npy, TruncatedPreamble) {
  EXPECT_THAT(error_for(std::string("\x93NUMPY\x01\x00\x10", 9)),
              HasSubstr("file ends inside the .npy preamble"));
}

TEST_F(Npy, UnsupportedVersion) {
  std::string bytes = npy_bytes(2, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }");
  bytes[6] = 4;
  EXPECT_THAT(error_for(bytes), HasSubstr("unsupported .npy format version 4.0; qrita reads "
                                          "1.0, 2.0 and 3.0"));
}

TEST_F(Npy, Float64) {
  EXPECT_THAT(header_error("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }"),
              HasSubstr("dtype is '<f8' (float64); qrita needs '<f4' (float32)"));
}

TEST_F(Npy, BigEndianFloat32) {
  EXPECT_THAT(header_error("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }"),
              HasSubstr("dtype is '>f4' (big-endian float32); qrita needs '<f4' (float32)"));
}

TEST_F(Npy, Int32) {
  EXPECT_THAT(header_error("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }"),
              HasSubstr("dtype is '<i4' (int32); qrita needs '<f4'"));
}

TEST_F(Npy, StructuredDtype) {
  EXPECT_THAT(header_error("{'descr': [('x', '<f4')], 'fortran_order': False, 'shape': (2, 3), }"),
              HasSubstr("dtype is [('x', '<f4')], not a simple type; qrita needs '<f4'"));
}

TEST_F(Npy, FortranOrder) {
  EXPECT_THAT(header_error("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }"),
              HasSubstr("fortran_order is True"));
  EXPECT_THAT(header_error("{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 3), }"),
              HasSubstr("fortran_order is 0; expected True or False"));
}

TEST_F(Npy, OneDimension) {
  EXPECT_THAT(header_error("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }"),
              HasSubstr("shape (4,) has 1 dimension; expected 2 (batch, vocab)"));
}

TEST_F(Npy, ThreeDimensions) {
  EXPECT_THAT(header_error("{'descr': '<f4', 'fortran_order': False, 'shape': (1,2,3), }"),
              HasSubstr("shape (1, 2, 3) has 3 dimensions; expected 2 (batch, vocab)"));
  EXPECT_THAT(header_error("{'descr': '<f4', 'fortran_order': False, 'shape': (), }"),
              HasSubstr("shape () has 0 dimensions"));
}

TEST_F(Npy, ShapeNotATupleOfIntegers) {
  EXPECT_THAT(header_error("{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3], }"),
              HasSubstr("shape [2, 3] is not a tuple"));
  EXPECT_THAT(header_error("{'descr': '<f4', 'fortran_order': False, 'shape': (6), }"),
              HasSubstr("shape (6) is not a tuple"));
  EXPECT_THAT(header_error("{'descr': '<f4', 'fortran_order': False, 'shape': (2, '3'), }"),
              HasSubstr("holds a non-integer '3'"));
}

TEST_F(Npy, NegativeDimension) {
  EXPECT_THAT(header_error("{'descr': '<f4', 'fortran_order': False, 'shape': (3, -5), }"),
              HasSubstr("shape (3, -5) has a negative dimension"));
}

TEST_F(Npy, SizeOverflows) {
  EXPECT_THAT(
      header_error("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }"),
      HasSubstr("is too large: its size overflows"));
  EXPECT_THAT(
      header_error("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999, 1), }"),
      HasSubstr("has a dimension too large for 64 bits"));
}

TEST_F(Npy, TruncatedData) {
  EXPECT_THAT(error_for(npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                                  le_bytes({1, 2}))),
              HasSubstr("file ends after 8 of 24 data bytes"));
}

// A hostile header must fail on the size check, before any allocation.
TEST_F(Npy, HugeShapeInSmallFile) {
  EXPECT_THAT(
      header_error("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000, 1000000), }"),
      HasSubstr("file ends after 24 of 4000000000000000 data bytes"));
}

TEST_F(Npy, HeaderLongerThanFile) {
  std::string bytes("\x93NUMPY\x02\x00\xF0\xFF\xFF\xFF{'descr'", 19);
  EXPECT_THAT(error_for(bytes), HasSubstr("file ends after 7 of 4294967280 header bytes"));
}

TEST_F(Npy, UnparseableHeader) {
  for (const std::string& dict : {
           std::string("descr = '<f4'"),
           std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)"),
           std::string("{'descr' '<f4', 'fortran_order': False, 'shape': (2, 3)}"),
           std::string("{'descr': '<f4, 'fortran_order': False, 'shape': (2, 3)}"),
           std::string("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2, 3)}"),
           std::string("{descr: '<f4', 'fortran_order': False, 'shape': (2, 3)}"),
           std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)} extra"),
           std::string("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}"),
           "{'descr': '<f4', 'fortran_order': False, 'shape': " + std::string(5000, '(') + "}",
       }) {
    SCOPED_TRACE(dict.substr(0, 80));
    EXPECT_THAT(header_error(dict), HasSubstr("header is not parseable"));
  }
}

TEST_F(Npy, MissingOrUnexpectedKey) {
  EXPECT_THAT(header_error("{'descr': '<f4', 'fortran_order': False}"),
              HasSubstr("header has no 'shape' key"));
  EXPECT_THAT(header_error("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}"),
              HasSubstr("header has an unexpected key 'x'"));
}

TEST_F(Npy, WriteFailures) {
  const float x = 0;
  const std::string p = path("missing_dir/out.npy");
  try {
    qrita::npy::write_float32_2d(p, &x, 1, 1);
    ADD_FAILURE() << "no Error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(p + ": cannot open for writing: No such file or directory"));
  }
  EXPECT_THROW(qrita::npy::write_float32_2d(path("neg.npy"), &x, -1, 1), Error);
}

}  // namespace
