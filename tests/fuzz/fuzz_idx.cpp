// libFuzzer harness: the IDX reader (data/idx_reader.hpp), gzip-compressed or plain, as images and as labels.
#include "data/idx_reader.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = lava_fuzz::scratch_file("in-idx.gz", lava_fuzz::bytes(data, size));
  lava_fuzz::expect_clean([&] { (void)lava::read_idx_images(path); });
  lava_fuzz::expect_clean([&] { (void)lava::read_idx_labels(path); });
  return 0;
}
