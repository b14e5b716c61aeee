// SPDX-License-Identifier: Apache-2.0
#include "npy.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <utility>

namespace qrita {
namespace npy {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicSize = sizeof kMagic - 1;
constexpr std::size_t kAlignment = 64;
// numpy itself refuses headers over 10 000 bytes unless told otherwise; a
// generous cap still keeps a hostile length field from costing gigabytes.
constexpr std::uint32_t kMaxHeader = 1u << 20;
// Nested tuples in a hostile header must not exhaust the stack.
constexpr int kMaxDepth = 32;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw Error(path + ": " + what);
}

bool host_is_little_endian() {
  const std::uint32_t one = 1;
  unsigned char first = 0;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

// Reverses the bytes of each of n elements of `size` bytes.
void swap_bytes(void* data, std::size_t n, std::size_t size) {
  auto* bytes = static_cast<unsigned char*>(data);
  for (std::size_t i = 0; i < n; ++i) std::reverse(bytes + i * size, bytes + (i + 1) * size);
}

std::string shape_text(const std::vector<std::int64_t>& dims) {
  std::string s = "(";
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + (dims.size() == 1 ? ",)" : ")");
}

// Header text for messages: printable, and short enough for one line.
std::string excerpt(const std::string& text) {
  std::string s;
  for (char c : text.substr(0, 120)) s += (c >= ' ' && c <= '~') ? c : '?';
  return text.size() > 120 ? s + "..." : s;
}

// "'<f8' (float64)", "'>f4' (big-endian float32)", or just the quoted descr
// when it is not a simple type.
std::string describe_dtype(const std::string& descr) {
  const bool has_order = !descr.empty() && std::string("<>=|").find(descr[0]) != std::string::npos;
  const char order = has_order ? descr[0] : '=';
  const bool big = order == '>' || (order == '=' && !host_is_little_endian());
  std::string quoted = "'" + descr + "'";
  const std::size_t i = has_order ? 1 : 0;
  if (i >= descr.size()) return quoted;
  const char kind = descr[i];
  const std::string digits = descr.substr(i + 1);
  if (digits.empty() || digits.size() > 3 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return quoted;
  const std::string bits = std::to_string(std::stoi(digits) * 8);
  std::string name;
  switch (kind) {
    case 'f': name = "float" + bits; break;
    case 'i': name = "int" + bits; break;
    case 'u': name = "uint" + bits; break;
    case 'c': name = "complex" + bits; break;
    case 'b': name = "bool"; break;
    case 'U': name = "unicode string"; break;
    case 'S': name = "byte string"; break;
    case 'O': name = "Python object"; break;
    case 'V': name = "raw bytes"; break;
    case 'M': name = "datetime64"; break;
    case 'm': name = "timedelta64"; break;
    default: return quoted;
  }
  const bool numeric = std::string("fiuc").find(kind) != std::string::npos && digits != "1";
  return quoted + " (" + (big && numeric ? "big-endian " : "") + name + ")";
}

// The subset of Python literals a .npy header uses: a dict of strings,
// booleans, None, integers, tuples and lists.
struct Value {
  enum class Kind { string, boolean, none, integer, tuple, list } kind = Kind::none;
  std::string text;          // a string's contents
  bool flag = false;         // a boolean
  std::int64_t number = 0;   // an integer, when it fits
  bool fits = true;          // the integer fits in 64 bits
  std::vector<Value> items;  // a tuple or a list
  std::string source;        // as written, for messages
};

class HeaderParser {
 public:
  HeaderParser(const std::string& path, const std::string& text) : path_(path), s_(text) {}

  std::vector<std::pair<std::string, Value>> dict() {
    std::vector<std::pair<std::string, Value>> entries;
    skip_space();
    expect('{');
    for (;;) {
      skip_space();
      if (eat('}')) break;
      if (peek() != '\'' && peek() != '"') error("expected a quoted key");
      std::string key = string_literal();
      for (const auto& e : entries)
        if (e.first == key) error("key '" + key + "' appears twice");
      skip_space();
      expect(':');
      entries.emplace_back(std::move(key), value(1));
      skip_space();
      if (!eat(',')) {
        expect('}');
        break;
      }
    }
    skip_space();
    if (pos_ != s_.size()) error("unexpected text after the closing '}'");
    return entries;
  }

 private:
  [[noreturn]] void error(const std::string& what) const {
    fail(path_, "header is not parseable: " + what + " at byte " + std::to_string(pos_) +
                    " of \"" + excerpt(s_) + "\"");
  }

  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }

  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\r' ||
                                s_[pos_] == '\n'))
      ++pos_;
  }

  bool eat(char c) {
    if (pos_ >= s_.size() || s_[pos_] != c) return false;
    ++pos_;
    return true;
  }

  void expect(char c) {
    if (!eat(c)) error(std::string("expected '") + c + "'");
  }

  // Escapes keep the escaped character as is: good enough to read any
  // descr numpy writes, and anything else is rejected as a dtype later.
  std::string string_literal() {
    const char quote = s_[pos_++];
    std::string out;
    for (;;) {
      if (pos_ >= s_.size() || s_[pos_] == '\n') error("unterminated string");
      const char c = s_[pos_++];
      if (c == quote) return out;
      if (c == '\\' && pos_ < s_.size()) {
        out += s_[pos_++];
      } else {
        out += c;
      }
    }
  }

  Value integer() {
    Value v;
    v.kind = Value::Kind::integer;
    const bool negative = peek() == '-';
    if (peek() == '-' || peek() == '+') ++pos_;
    if (!(peek() >= '0' && peek() <= '9')) error("expected a digit");
    std::uint64_t magnitude = 0;
    const std::uint64_t limit =
        std::uint64_t(std::numeric_limits<std::int64_t>::max()) + (negative ? 1 : 0);
    while (peek() >= '0' && peek() <= '9') {
      const auto digit = std::uint64_t(s_[pos_++] - '0');
      if (magnitude > (limit - digit) / 10) v.fits = false;
      if (v.fits) magnitude = magnitude * 10 + digit;
    }
    if (peek() == 'L' || peek() == 'l') ++pos_;  // Python 2 longs, in old files
    if (v.fits) v.number = negative ? std::int64_t(0 - magnitude) : std::int64_t(magnitude);
    return v;
  }

  // Python's rule: "(x)" is x itself, "(x,)" and "()" are tuples.
  Value sequence(int depth) {
    Value v;
    const char close = s_[pos_++] == '(' ? ')' : ']';
    v.kind = close == ')' ? Value::Kind::tuple : Value::Kind::list;
    bool comma = false;
    for (;;) {
      skip_space();
      if (eat(close)) break;
      v.items.push_back(value(depth + 1));
      skip_space();
      comma = eat(',');
      if (!comma) {
        expect(close);
        break;
      }
    }
    if (v.kind == Value::Kind::tuple && v.items.size() == 1 && !comma)
      return std::move(v.items.front());
    return v;
  }

  Value value(int depth) {
    if (depth > kMaxDepth) error("nested too deeply");
    skip_space();
    const std::size_t start = pos_;
    Value v;
    const char c = peek();
    if (c == '\'' || c == '"') {
      v.kind = Value::Kind::string;
      v.text = string_literal();
    } else if (c == '(' || c == '[') {
      v = sequence(depth);
    } else if (c == '-' || c == '+' || (c >= '0' && c <= '9')) {
      v = integer();
    } else {
      std::size_t end = pos_;
      while (end < s_.size() && std::isalpha(static_cast<unsigned char>(s_[end]))) ++end;
      const std::string word = s_.substr(pos_, end - pos_);
      if (word == "True" || word == "False") {
        v.kind = Value::Kind::boolean;
        v.flag = word == "True";
      } else if (word == "None") {
        v.kind = Value::Kind::none;
      } else {
        error("expected a value");
      }
      pos_ = end;
    }
    v.source = s_.substr(start, pos_ - start);
    return v;
  }

  const std::string& path_;
  const std::string& s_;
  std::size_t pos_ = 0;
};

// Reads up to n bytes; a short count means the file ended.
std::size_t read_bytes(std::istream& in, const std::string& path, char* out, std::size_t n) {
  errno = 0;
  in.read(out, std::streamsize(n));
  if (in.bad()) fail(path, std::string("cannot read: ") + std::strerror(errno));
  return std::size_t(in.gcount());
}

std::uint32_t little_endian(const unsigned char* bytes, std::size_t n) {
  std::uint32_t v = 0;
  for (std::size_t i = n; i-- > 0;) v = (v << 8) | bytes[i];
  return v;
}

struct Header {
  std::vector<std::int64_t> shape;
  Dtype dtype = Dtype::float32;
  std::size_t element_bytes = sizeof(float);
  std::uint64_t data_bytes = 0;
};

// The element type a descr names, if it is one qrita reads. '=' and no
// order character mean the host's byte order. A 2-byte void ('|V2') has no
// byte order: its bytes are taken as little-endian bfloat16 bits, the way
// ml_dtypes stores them (numpy saves an ml_dtypes.bfloat16 array as '<V2').
bool dtype_of(const std::string& descr, bool any_dtype, Dtype& dtype) {
  const auto little = [&descr](const char* type) {
    return descr == std::string("<") + type ||
           ((descr == std::string("=") + type || descr == type) && host_is_little_endian());
  };
  if (little("f4")) {
    dtype = Dtype::float32;
  } else if (any_dtype && little("f2")) {
    dtype = Dtype::float16;
  } else if (any_dtype && (little("u2") || descr == "|V2" || descr == "<V2" || descr == "=V2" ||
                           descr == "V2")) {
    dtype = Dtype::bfloat16;
  } else {
    return false;
  }
  return true;
}

Header interpret(const std::string& path, const std::string& text, bool any_dtype) {
  const auto entries = HeaderParser(path, text).dict();
  const Value* descr = nullptr;
  const Value* fortran = nullptr;
  const Value* shape = nullptr;
  for (const auto& e : entries) {
    if (e.first == "descr") {
      descr = &e.second;
    } else if (e.first == "fortran_order") {
      fortran = &e.second;
    } else if (e.first == "shape") {
      shape = &e.second;
    } else {
      fail(path, "header has an unexpected key '" + e.first +
                     "' (a .npy header has exactly 'descr', 'fortran_order' and 'shape')");
    }
  }
  if (!descr) fail(path, "header has no 'descr' key");
  if (!fortran) fail(path, "header has no 'fortran_order' key");
  if (!shape) fail(path, "header has no 'shape' key");

  const std::string needed =
      any_dtype ? "; qrita reads '<f4' (float32), '<f2' (float16), and bfloat16 as raw bits "
                  "'<u2' or '<V2'"
                : "; qrita needs '<f4' (float32)";
  if (descr->kind != Value::Kind::string)
    fail(path, "dtype is " + descr->source + ", not a simple type" + needed);
  Header h;
  if (!dtype_of(descr->text, any_dtype, h.dtype))
    fail(path, "dtype is " + describe_dtype(descr->text) + needed);
  h.element_bytes = h.dtype == Dtype::float32 ? sizeof(float) : sizeof(std::uint16_t);

  if (fortran->kind != Value::Kind::boolean)
    fail(path, "fortran_order is " + fortran->source + "; expected True or False");
  if (fortran->flag)
    fail(path, "fortran_order is True (column-major data); qrita needs C order "
               "(fortran_order False)");

  if (shape->kind != Value::Kind::tuple)
    fail(path, "shape " + shape->source + " is not a tuple");
  for (const Value& d : shape->items) {
    if (d.kind != Value::Kind::integer)
      fail(path, "shape " + shape->source + " holds a non-integer " + d.source);
    if (!d.fits) fail(path, "shape " + shape->source + " has a dimension too large for 64 bits");
    h.shape.push_back(d.number);
  }
  const std::string written = shape_text(h.shape);
  if (h.shape.size() != 2)
    fail(path, "shape " + written + " has " + std::to_string(h.shape.size()) +
                   (h.shape.size() == 1 ? " dimension" : " dimensions") +
                   "; expected 2 (batch, vocab)");
  for (std::int64_t d : h.shape)
    if (d < 0) fail(path, "shape " + written + " has a negative dimension");

  const auto rows = std::uint64_t(h.shape[0]);
  const auto cols = std::uint64_t(h.shape[1]);
  const std::uint64_t max_bytes =
      std::min<std::uint64_t>(std::numeric_limits<std::int64_t>::max(),
                              std::numeric_limits<std::size_t>::max());
  if (cols != 0 && rows > max_bytes / h.element_bytes / cols)
    fail(path, "shape " + written + " is too large: its size overflows");
  h.data_bytes = rows * cols * h.element_bytes;
  return h;
}

// The header, then the data, in host order, into `f32` or `bits16` (by the
// dtype; resized to hold it). Only float32 unless `any_dtype`.
Header read_2d(const std::string& path, bool any_dtype, std::vector<float>& f32,
               std::vector<std::uint16_t>& bits16) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, std::string("cannot open: ") + std::strerror(errno));

  // Magic, version, and a 2-byte (1.0) or 4-byte (2.0, 3.0) header length.
  unsigned char pre[kMagicSize + 6];
  std::size_t got = read_bytes(in, path, reinterpret_cast<char*>(pre), kMagicSize + 2);
  if (got < kMagicSize || std::memcmp(pre, kMagic, kMagicSize) != 0)
    fail(path, "not a .npy file (bad magic)");
  if (got < kMagicSize + 2) fail(path, "file ends inside the .npy preamble");
  const int major = pre[kMagicSize], minor = pre[kMagicSize + 1];
  if (major < 1 || major > 3 || minor != 0)
    fail(path, "unsupported .npy format version " + std::to_string(major) + "." +
                   std::to_string(minor) + "; qrita reads 1.0, 2.0 and 3.0");
  const std::size_t len_size = major == 1 ? 2 : 4;
  got += read_bytes(in, path, reinterpret_cast<char*>(pre) + got, len_size);
  const std::size_t preamble = kMagicSize + 2 + len_size;
  if (got < preamble) fail(path, "file ends inside the .npy preamble");
  const std::uint32_t header_len = little_endian(pre + kMagicSize + 2, len_size);

  in.seekg(0, std::ios::end);
  const std::streamoff file_size = in.tellg();
  if (file_size < 0) fail(path, "cannot determine the file size (not a regular file?)");
  in.seekg(std::streamoff(preamble));
  const auto after_preamble = std::uint64_t(file_size) - preamble;

  if (header_len > after_preamble)
    fail(path, "file ends after " + std::to_string(after_preamble) + " of " +
                   std::to_string(header_len) + " header bytes");
  if (header_len > kMaxHeader)
    fail(path, "header is " + std::to_string(header_len) + " bytes; at most " +
                   std::to_string(kMaxHeader) + " are supported");
  std::string text(header_len, '\0');
  read_bytes(in, path, &text[0], header_len);

  Header h = interpret(path, text, any_dtype);
  const std::uint64_t available = after_preamble - header_len;
  if (h.data_bytes > available)
    fail(path, "file ends after " + std::to_string(available) + " of " +
                   std::to_string(h.data_bytes) + " data bytes");

  const auto count = std::size_t(h.data_bytes / h.element_bytes);
  char* data = nullptr;
  if (h.dtype == Dtype::float32) {
    f32.resize(count);
    data = reinterpret_cast<char*>(f32.data());
  } else {
    bits16.resize(count);
    data = reinterpret_cast<char*>(bits16.data());
  }
  const std::size_t read = read_bytes(in, path, data, std::size_t(h.data_bytes));
  if (read < h.data_bytes)  // the file shrank while we read it
    fail(path, "file ends after " + std::to_string(read) + " of " +
                   std::to_string(h.data_bytes) + " data bytes");
  if (!host_is_little_endian()) swap_bytes(data, count, h.element_bytes);
  return h;
}

void write_2d(const std::string& path, const char* descr, const void* data,
              std::size_t element_bytes, std::int64_t rows, std::int64_t cols) {
  const std::vector<std::int64_t> shape{rows, cols};
  if (rows < 0 || cols < 0)
    fail(path, "cannot write shape " + shape_text(shape) + ": negative dimension");
  const std::uint64_t max_count = std::numeric_limits<std::size_t>::max() / element_bytes;
  if (cols != 0 && std::uint64_t(rows) > max_count / std::uint64_t(cols))
    fail(path, "cannot write shape " + shape_text(shape) + ": its size overflows");
  const auto count = std::size_t(rows) * std::size_t(cols);
  if (count > 0 && data == nullptr) fail(path, "cannot write: no data");

  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': " + shape_text(shape) + ", }";
  const std::size_t preamble = kMagicSize + 4;
  const std::size_t unpadded = preamble + header.size() + 1;  // + '\n'
  header.append((kAlignment - unpadded % kAlignment) % kAlignment, ' ');
  header += '\n';
  const auto header_len = std::uint16_t(header.size());
  const unsigned char version_and_len[4] = {1, 0, static_cast<unsigned char>(header_len & 0xFF),
                                            static_cast<unsigned char>(header_len >> 8)};

  errno = 0;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) fail(path, std::string("cannot open for writing: ") + std::strerror(errno));
  out.write(kMagic, std::streamsize(kMagicSize));
  out.write(reinterpret_cast<const char*>(version_and_len), sizeof version_and_len);
  out.write(header.data(), std::streamsize(header.size()));
  const auto bytes = static_cast<const char*>(data);
  if (host_is_little_endian()) {
    out.write(bytes, std::streamsize(count * element_bytes));
  } else {
    std::vector<char> swapped(bytes, bytes + count * element_bytes);
    swap_bytes(swapped.data(), count, element_bytes);
    out.write(swapped.data(), std::streamsize(swapped.size()));
  }
  out.close();
  if (!out) {
    const int err = errno;
    std::remove(path.c_str());
    fail(path, std::string("write failed") + (err ? std::string(": ") + std::strerror(err) : ""));
  }
}

}  // namespace

const char* name(Dtype dtype) {
  switch (dtype) {
    case Dtype::float32: return "float32";
    case Dtype::float16: return "float16";
    case Dtype::bfloat16: return "bfloat16";
  }
  return "?";
}

Array read_float32_2d(const std::string& path) {
  Array a;
  std::vector<std::uint16_t> unused;  // float32 only: stays empty
  a.shape = read_2d(path, false, a.data, unused).shape;
  return a;
}

LogitsArray read_logits_2d(const std::string& path) {
  LogitsArray a;
  Header h = read_2d(path, true, a.f32, a.bits16);
  a.shape = std::move(h.shape);
  a.dtype = h.dtype;
  return a;
}

void write_float32_2d(const std::string& path, const float* data, std::int64_t rows,
                      std::int64_t cols) {
  write_2d(path, "<f4", data, sizeof(float), rows, cols);
}

void write_bits16_2d(const std::string& path, Dtype dtype, const std::uint16_t* bits,
                     std::int64_t rows, std::int64_t cols) {
  if (dtype == Dtype::float32)
    fail(path, "cannot write float32 data as 16-bit patterns (use write_float32_2d)");
  write_2d(path, dtype == Dtype::float16 ? "<f2" : "<u2", bits, sizeof(std::uint16_t), rows,
           cols);
}

}  // namespace npy
}  // namespace qrita
