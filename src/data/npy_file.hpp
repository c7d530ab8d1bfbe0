#pragma once
// NumPy .npy files of float32, the hand-over format for precomputed region features (images x regions x dims).
// Format (numpy/lib/format.py, "NEP 1"):
//   bytes 0-5  "\x93NUMPY"
//   bytes 6-7  version major, minor: 1.0 (header length uint16 LE), 2.0 or 3.0 (uint32 LE; 3.0 = UTF-8 header)
//   header     a Python dict literal, e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (100, 36, 2048), }
//              padded with spaces and a final '\n'
//   data       prod(shape) items, raw
// We accept exactly: descr '<f4' (little-endian float32), fortran_order False, a shape of non-negative ints, and a
// file whose size is header + 4 * prod(shape). Anything else (other dtypes such as '<f8', Fortran order, truncated
// or over-long data, a malformed dict) is an InputError naming the file. The reader never loads more than asked:
// rows along axis 0 are read with pread, so a 30 GB feature file costs no memory until used.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lava {

struct NpyHeader {
  std::vector<int64_t> shape;
  uint64_t data_offset = 0;  // byte offset of element 0
  uint64_t num_elements() const;
};

// Parses the first bytes of a .npy file (at least the whole header). `file_size` is checked against the shape;
// `path` only names the file in errors.
NpyHeader parse_npy_header(std::string_view bytes, uint64_t file_size, const std::string& path);

// An open float32 .npy file. Reads are thread-safe (pread on a shared descriptor). Move-only.
class NpyFile {
 public:
  static NpyFile open(const std::string& path);  // validates header and file size
  NpyFile(NpyFile&& other) noexcept;
  NpyFile& operator=(NpyFile&& other) noexcept;
  NpyFile(const NpyFile&) = delete;
  NpyFile& operator=(const NpyFile&) = delete;
  ~NpyFile();

  const std::string& path() const { return path_; }
  const std::vector<int64_t>& shape() const { return header_.shape; }
  int rank() const { return int(header_.shape.size()); }
  int64_t num_elements() const { return int64_t(header_.num_elements()); }
  int64_t row_elements() const;  // prod(shape[1:]); requires rank >= 1

  // out: (count, shape[1], ..., shape[rank-1]) = rows [first, first + count) along axis 0.
  void read_rows(int64_t first, int64_t count, float* out) const;
  void read_all(float* out) const;  // out: prod(shape) floats

 private:
  NpyFile(std::string path, int fd, NpyHeader header) : path_(std::move(path)), fd_(fd), header_(std::move(header)) {}
  void read_bytes(uint64_t offset, uint64_t n, void* out) const;
  std::string path_;
  int fd_ = -1;
  NpyHeader header_;
};

struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<float> data;  // row-major
};

// Whole file in memory; `expected_rank` >= 0 rejects other ranks.
NpyArray read_npy(const std::string& path, int expected_rank = -1);

// Writes version 1.0 (2.0 if the header needs it), '<f4', C order; atomically (temp file + rename).
void write_npy(const std::string& path, const std::vector<int64_t>& shape, const float* data);

// The header text numpy itself would write for this shape, e.g. "{'descr': '<f4', 'fortran_order': False,
// 'shape': (2, 3), }" (unpadded).
std::string npy_header_dict(const std::vector<int64_t>& shape);

}  // namespace lava
