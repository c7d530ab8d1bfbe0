#pragma once
// Reader for the IDX files of MNIST and Fashion-MNIST, gzipped or plain (zlib's gzread passes plain files through).
// Layout (big-endian): magic = 0x00 0x00 <type> <rank>, then `rank` uint32 dims, then prod(dims) items, row-major.
// Only type 0x08 (unsigned byte) exists in these data sets, so that is all we accept:
//   images: magic 0x00000803, dims (count, rows, cols)
//   labels: magic 0x00000801, dims (count)
// Every defect (wrong magic, zero or huge dims, truncated data, trailing bytes, broken gzip) is an InputError
// that names the file; nothing here can crash on a bad file.
#include <cstdint>
#include <string>
#include <vector>

namespace lava {

struct IdxImages {
  int count = 0, rows = 0, cols = 0;
  std::vector<uint8_t> pixels;  // (count, rows, cols), 0 = background, 255 = ink
  const uint8_t* image(int i) const { return pixels.data() + size_t(i) * size_t(rows) * size_t(cols); }
};

IdxImages read_idx_images(const std::string& path);
std::vector<uint8_t> read_idx_labels(const std::string& path);

// Writes a gzipped IDX file of unsigned bytes (magic 0x0000 08 <rank>); for tests and small fixtures.
// Not atomic and not meant for large data.
void write_idx_gz(const std::string& path, const std::vector<uint32_t>& dims, const std::vector<uint8_t>& data);

}  // namespace lava
