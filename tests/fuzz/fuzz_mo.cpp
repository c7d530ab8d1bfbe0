// libFuzzer harness: the gettext .mo reader (data/mo_file.hpp) and the charset lookup of its header entry.
#include "data/mo_file.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  lava_fuzz::expect_clean([&] {
    const lava::MoCatalog catalog = lava::parse_mo(lava_fuzz::bytes(data, size), "fuzz.mo");
    (void)lava::mo_charset(catalog);
  });
  return 0;
}
