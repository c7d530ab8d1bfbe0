#include "data/idx_reader.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include "core/check.hpp"

namespace lava {

namespace {

constexpr uint64_t kMaxIdxBytes = uint64_t(1) << 32;  // 4 GiB: far above any MNIST-like file, below any overflow

// Owns a gzFile and turns every zlib failure into an InputError naming the file.
class GzReader {
 public:
  explicit GzReader(const std::string& path) : path_(path), f_(gzopen(path.c_str(), "rb")) {
    if (!f_) throw input_error(path_, 0, fmt::format("cannot open: {}", std::strerror(errno)));
    gzbuffer(f_, 1 << 17);
  }
  ~GzReader() {
    if (f_) gzclose(f_);
  }
  GzReader(const GzReader&) = delete;
  GzReader& operator=(const GzReader&) = delete;

  // Reads up to n bytes; returns how many were read (less than n only at the end of the data).
  uint64_t read_some(void* dst, uint64_t n) {
    auto* p = static_cast<unsigned char*>(dst);
    uint64_t done = 0;
    while (done < n) {
      unsigned chunk = unsigned(std::min<uint64_t>(n - done, uint64_t(1) << 30));
      int got = gzread(f_, p + done, chunk);
      if (got < 0) fail_with_zlib_error();
      if (got == 0) break;
      done += uint64_t(got);
    }
    int err = 0;
    gzerror(f_, &err);
    if (err != Z_OK && err != Z_STREAM_END) fail_with_zlib_error();
    return done;
  }
  void read_exactly(void* dst, uint64_t n, const char* what) {
    uint64_t got = read_some(dst, n);
    if (got != n) throw input_error(path_, 0, fmt::format("truncated: {} needs {} bytes, file has {}", what, n, got));
  }
  // n bytes into a vector that grows with the data actually read (1 MiB at a time): the header's sizes are not
  // trusted for the allocation, so a 12-byte file that declares 4 GiB fails as truncated instead of allocating it.
  std::vector<uint8_t> read_vector(uint64_t n, const char* what) {
    constexpr uint64_t kChunk = uint64_t(1) << 20;
    std::vector<uint8_t> out;
    while (out.size() < n) {
      const uint64_t want = std::min(kChunk, n - out.size());
      const size_t at = out.size();
      out.resize(at + want);
      const uint64_t got = read_some(out.data() + at, want);
      if (got != want)
        throw input_error(path_, 0, fmt::format("truncated: {} needs {} bytes, file has {}", what, n, at + got));
    }
    return out;
  }
  // The data must end exactly where the header says it does.
  void expect_end() {
    unsigned char extra;
    if (read_some(&extra, 1) != 0) throw input_error(path_, 0, "trailing bytes after the data the header declares");
  }

 private:
  [[noreturn]] void fail_with_zlib_error() {
    int err = 0;
    const char* msg = gzerror(f_, &err);
    throw input_error(path_, 0, fmt::format("corrupt or truncated gzip data ({})", msg ? msg : "unknown zlib error"));
  }
  std::string path_;
  gzFile f_;
};

uint32_t big_endian_u32(const unsigned char b[4]) {
  return uint32_t(b[0]) << 24 | uint32_t(b[1]) << 16 | uint32_t(b[2]) << 8 | uint32_t(b[3]);
}

// Reads magic and dims, checks them against the expected rank, returns the dims.
std::vector<uint32_t> read_idx_header(GzReader& in, const std::string& path, int expected_rank) {
  unsigned char magic[4];
  in.read_exactly(magic, 4, "the IDX magic number");
  uint32_t expected_magic = 0x00000800u | uint32_t(expected_rank);
  if (big_endian_u32(magic) != expected_magic)
    throw input_error(path, 0,
                      fmt::format("bad IDX magic 0x{:08x}, expected 0x{:08x} (unsigned bytes, rank {})",
                                  big_endian_u32(magic), expected_magic, expected_rank));
  std::vector<uint32_t> dims(static_cast<size_t>(expected_rank));
  uint64_t total = 1;
  for (int d = 0; d < expected_rank; ++d) {
    unsigned char b[4];
    in.read_exactly(b, 4, "the IDX dimensions");
    dims[size_t(d)] = big_endian_u32(b);
    if (dims[size_t(d)] == 0 || dims[size_t(d)] > uint32_t(std::numeric_limits<int>::max()))
      throw input_error(path, 0, fmt::format("IDX dimension {} is {}, expected 1..2^31-1", d, dims[size_t(d)]));
    total *= dims[size_t(d)];
    if (total > kMaxIdxBytes) throw input_error(path, 0, "IDX dimensions declare more than 4 GiB of data");
  }
  return dims;
}

}  // namespace

IdxImages read_idx_images(const std::string& path) {
  GzReader in(path);
  std::vector<uint32_t> dims = read_idx_header(in, path, 3);
  IdxImages out;
  out.count = int(dims[0]);
  out.rows = int(dims[1]);
  out.cols = int(dims[2]);
  out.pixels = in.read_vector(uint64_t(dims[0]) * dims[1] * dims[2], "the image data");
  in.expect_end();
  return out;
}

std::vector<uint8_t> read_idx_labels(const std::string& path) {
  GzReader in(path);
  std::vector<uint32_t> dims = read_idx_header(in, path, 1);
  std::vector<uint8_t> labels = in.read_vector(dims[0], "the label data");
  in.expect_end();
  return labels;
}

void write_idx_gz(const std::string& path, const std::vector<uint32_t>& dims, const std::vector<uint8_t>& data) {
  LAVA_CHECK(!dims.empty() && dims.size() < 256, "IDX rank {}", dims.size());
  std::string bytes = {0, 0, 0x08, char(dims.size())};
  for (uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(char((d >> shift) & 0xFF));
  bytes.append(reinterpret_cast<const char*>(data.data()), data.size());
  gzFile f = gzopen(path.c_str(), "wb");
  if (!f) throw input_error(path, 0, fmt::format("cannot create: {}", std::strerror(errno)));
  int wrote = gzwrite(f, bytes.data(), unsigned(bytes.size()));
  int closed = gzclose(f);
  if (wrote != int(bytes.size()) || closed != Z_OK) throw input_error(path, 0, "write failed");
}

}  // namespace lava
