// libFuzzer harness: the safetensors reader (nn/safetensors.hpp), on the bytes of a whole file.
#include "fuzz_input.hpp"
#include "nn/safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  lava_fuzz::expect_clean([&] { (void)lava::parse_safetensors(lava_fuzz::bytes(data, size), "fuzz.safetensors"); });
  return 0;
}
