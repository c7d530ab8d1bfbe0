// libFuzzer harness: the .npy reader (data/npy_file.hpp) on a file, header and data, as `--features` reads it.
#include "data/npy_file.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = lava_fuzz::scratch_file("in.npy", lava_fuzz::bytes(data, size));
  lava_fuzz::expect_clean([&] { (void)lava::read_npy(path); });
  return 0;
}
