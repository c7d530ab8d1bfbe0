// libFuzzer harness: the JSON of `lava toy --params` (tasks/toy/params.hpp), through the JSON reader.
#include "fuzz_input.hpp"
#include "tasks/toy/params.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  lava_fuzz::expect_clean(
      [&] { (void)lava::toy_params_from_text(std::string(lava_fuzz::bytes(data, size)), "fuzz.json"); });
  return 0;
}
