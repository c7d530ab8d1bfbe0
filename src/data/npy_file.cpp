#include "data/npy_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "core/atomic_file.hpp"
#include "core/check.hpp"
#include "core/quote_input.hpp"

namespace lava {

static_assert(std::endian::native == std::endian::little, "the .npy reader assumes a little-endian host ('<f4')");

namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr uint64_t kMaxHeaderBytes = uint64_t(1) << 20;  // numpy's own limit is 10 kB by default
constexpr int kMaxRank = 32;                              // numpy's NPY_MAXDIMS
constexpr uint64_t kMaxElements = uint64_t(1) << 60;      // 4 * 2^60 bytes still fits in uint64

std::string shape_text(const std::vector<int64_t>& shape) {  // "(2, 3)"
  std::string s;
  for (int64_t d : shape) s += (s.empty() ? "" : ", ") + std::to_string(d);
  return "(" + s + ")";
}

// Byte offset of the data (= bytes taken by magic, version, length field and header), from the first 12 bytes.
uint64_t npy_data_offset(std::string_view b, const std::string& path) {
  if (b.size() < 10 || b.substr(0, 6) != kMagic) throw input_error(path, 0, "not a .npy file (no \\x93NUMPY magic)");
  auto u8 = [&](size_t i) { return uint64_t(uint8_t(b[i])); };
  int major = int(u8(6)), minor = int(u8(7));
  if (minor != 0 || major < 1 || major > 3)
    throw input_error(path, 0, fmt::format(".npy version {}.{} unsupported (1.0, 2.0 and 3.0 are)", major, minor));
  if (major == 1) return 10 + (u8(8) | u8(9) << 8);
  if (b.size() < 12) throw input_error(path, 0, "truncated .npy header");
  uint64_t len = u8(8) | u8(9) << 8 | u8(10) << 16 | u8(11) << 24;
  if (len > kMaxHeaderBytes) throw input_error(path, 0, fmt::format(".npy header of {} bytes is too long", len));
  return 12 + len;
}

// A parser for the one Python dict literal numpy writes: string keys; values are strings, True/False, int tuples.
class HeaderDictParser {
 public:
  HeaderDictParser(std::string_view text, const std::string& path) : s_(text), path_(path) {}

  NpyHeader parse() {
    NpyHeader h;
    bool have_descr = false, have_order = false, have_shape = false;
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      std::string key = parse_string();
      expect(':');
      if (key == "descr") {
        if (have_descr) fail("duplicate key 'descr'");
        have_descr = true;
        std::string descr = parse_string();
        if (descr != "<f4")
          fail(fmt::format("dtype {} is not supported; features must be little-endian float32 ('<f4')", quote_input(descr)));
      } else if (key == "fortran_order") {
        if (have_order) fail("duplicate key 'fortran_order'");
        have_order = true;
        if (parse_bool()) fail("fortran_order is True; only C order is supported (use np.ascontiguousarray)");
      } else if (key == "shape") {
        if (have_shape) fail("duplicate key 'shape'");
        have_shape = true;
        h.shape = parse_shape();
      } else {
        fail(fmt::format("unexpected key {} in the header", quote_input(key)));
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != '}') fail("expected ',' or '}' in the header dict");
    }
    ++pos_;  // '}'
    skip_space();
    if (pos_ != s_.size()) fail("unexpected text after the header dict");
    if (!have_descr || !have_order || !have_shape) fail("header must have the keys 'descr', 'fortran_order', 'shape'");
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw input_error(path_, 0, ".npy header: " + what); }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\t' || s_[pos_] == '\r')) ++pos_;
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) fail(fmt::format("expected '{}'", c));
    ++pos_;
  }
  std::string parse_string() {
    skip_space();
    char quote = peek();
    if (quote != '\'' && quote != '"') fail("expected a quoted string");
    size_t end = s_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string out(s_.substr(pos_ + 1, end - pos_ - 1));
    if (out.find('\\') != std::string::npos) fail("escape sequences are not supported");
    pos_ = end + 1;
    return out;
  }
  bool parse_bool() {
    skip_space();
    if (s_.substr(pos_, 4) == "True") return pos_ += 4, true;
    if (s_.substr(pos_, 5) == "False") return pos_ += 5, false;
    fail("expected True or False");
  }
  std::vector<int64_t> parse_shape() {
    std::vector<int64_t> shape;
    expect('(');
    bool trailing_comma = false;
    while (true) {
      skip_space();
      if (peek() == ')') break;
      if (peek() < '0' || peek() > '9') fail("shape must be a tuple of non-negative integers");
      int64_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        if (v > (int64_t(1) << 56)) fail("shape dimension too large");
        v = v * 10 + (s_[pos_++] - '0');
      }
      if (peek() == 'L') ++pos_;  // Python 2 longs, as old numpy wrote them
      shape.push_back(v);
      if (int(shape.size()) > kMaxRank) fail("shape has too many dimensions");
      skip_space();
      trailing_comma = peek() == ',';
      if (trailing_comma) ++pos_;
      else if (peek() != ')') fail("expected ',' or ')' in the shape tuple");
    }
    ++pos_;  // ')'
    if (shape.size() == 1 && !trailing_comma) fail("a 1-d shape must be written '(n,)'");
    return shape;
  }

  std::string_view s_;
  const std::string& path_;
  size_t pos_ = 0;
};

}  // namespace

uint64_t NpyHeader::num_elements() const {
  uint64_t n = 1;
  for (int64_t d : shape) n *= uint64_t(d);
  return n;
}

NpyHeader parse_npy_header(std::string_view bytes, uint64_t file_size, const std::string& path) {
  uint64_t offset = npy_data_offset(bytes, path);
  if (bytes.size() < offset || file_size < offset) throw input_error(path, 0, "truncated .npy header");
  size_t dict_begin = uint8_t(bytes[6]) == 1 ? 10 : 12;
  NpyHeader h = HeaderDictParser(bytes.substr(dict_begin, offset - dict_begin), path).parse();
  h.data_offset = offset;
  uint64_t n = 1;
  for (int64_t d : h.shape) {
    if (d != 0 && n > kMaxElements / uint64_t(d)) throw input_error(path, 0, ".npy shape has too many elements");
    n *= uint64_t(d);
  }
  uint64_t want = offset + 4 * n;
  if (file_size < want)
    throw input_error(path, 0, fmt::format("truncated .npy data: shape {} needs {} bytes, file has {}",
                                           shape_text(h.shape), want, file_size));
  if (file_size > want)
    throw input_error(path, 0, fmt::format("{} trailing bytes after the .npy data", file_size - want));
  return h;
}

NpyFile NpyFile::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw input_error(path, 0, fmt::format("cannot open: {}", std::strerror(errno)));
  NpyFile file(path, fd, NpyHeader{});  // owns fd from here on, closes it if parsing throws
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) throw input_error(path, 0, "not a regular file");
  uint64_t size = uint64_t(st.st_size);
  std::string prefix(std::min<uint64_t>(size, 12), '\0');
  file.read_bytes(0, prefix.size(), prefix.data());
  uint64_t offset = npy_data_offset(prefix, path);
  std::string head(std::min<uint64_t>(size, offset), '\0');
  file.read_bytes(0, head.size(), head.data());
  file.header_ = parse_npy_header(head, size, path);
  return file;
}

NpyFile::NpyFile(NpyFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)), header_(std::move(other.header_)) {}

NpyFile& NpyFile::operator=(NpyFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    header_ = std::move(other.header_);
  }
  return *this;
}

NpyFile::~NpyFile() {
  if (fd_ >= 0) ::close(fd_);
}

int64_t NpyFile::row_elements() const {
  LAVA_CHECK(rank() >= 1, "row access to a rank-0 array in {}", path_);
  int64_t n = 1;
  for (int d = 1; d < rank(); ++d) n *= header_.shape[size_t(d)];
  return n;
}

void NpyFile::read_bytes(uint64_t offset, uint64_t n, void* out) const {
  auto* p = static_cast<char*>(out);
  while (n > 0) {
    ssize_t got = ::pread(fd_, p, std::min<uint64_t>(n, uint64_t(1) << 30), off_t(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw input_error(path_, 0, fmt::format("read failed: {}", std::strerror(errno)));
    if (got == 0) throw input_error(path_, 0, "file ended early (was it changed while open?)");
    p += got;
    offset += uint64_t(got);
    n -= uint64_t(got);
  }
}

void NpyFile::read_rows(int64_t first, int64_t count, float* out) const {
  LAVA_CHECK(rank() >= 1 && first >= 0 && count >= 0 && first + count <= header_.shape[0],
             "rows [{}, {}) outside {} rows of {}", first, first + count, rank() ? header_.shape[0] : 0, path_);
  uint64_t row_bytes = 4 * uint64_t(row_elements());
  read_bytes(header_.data_offset + uint64_t(first) * row_bytes, uint64_t(count) * row_bytes, out);
}

void NpyFile::read_all(float* out) const { read_bytes(header_.data_offset, 4 * header_.num_elements(), out); }

NpyArray read_npy(const std::string& path, int expected_rank) {
  NpyFile file = NpyFile::open(path);
  if (expected_rank >= 0 && file.rank() != expected_rank)
    throw input_error(path, 0, fmt::format(".npy array has rank {} (shape {}), expected rank {}", file.rank(),
                                           shape_text(file.shape()), expected_rank));
  NpyArray a;
  a.shape = file.shape();
  a.data.resize(size_t(file.num_elements()));
  file.read_all(a.data.data());
  return a;
}

std::string npy_header_dict(const std::vector<int64_t>& shape) {
  std::string dims;
  for (int64_t d : shape) dims += fmt::format("{}, ", d);
  if (shape.size() >= 2) dims.resize(dims.size() - 2);    // (2, 3)
  else if (shape.size() == 1) dims.resize(dims.size() - 1);  // (5,)
  return fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': ({}), }}", dims);
}

void write_npy(const std::string& path, const std::vector<int64_t>& shape, const float* data) {
  uint64_t n = 1;
  for (int64_t d : shape) {
    LAVA_CHECK(d >= 0, "negative dimension {} for {}", d, path);
    n *= uint64_t(d);
  }
  // Pad with spaces so that the data starts on a 64-byte boundary, as numpy >= 1.22 does; '\n' ends the header.
  std::string dict = npy_header_dict(shape);
  bool v2 = (10 + dict.size() + 1 + 63) / 64 * 64 - 10 > 65535;  // v1 stores the length in 16 bits
  size_t fixed = v2 ? 12 : 10;
  size_t total = (fixed + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - fixed - dict.size() - 1, ' ');
  dict.push_back('\n');
  std::string head(kMagic);
  head.push_back(char(v2 ? 2 : 1));
  head.push_back(0);
  uint64_t len = dict.size();
  for (size_t i = 0; i < (v2 ? 4u : 2u); ++i) head.push_back(char((len >> (8 * i)) & 0xFF));
  head += dict;

  write_file_atomic(path, [&](std::FILE* f) {
    std::fwrite(head.data(), 1, head.size(), f);
    if (n > 0) std::fwrite(data, 4, size_t(n), f);
  });
}

}  // namespace lava
