// libFuzzer harness: the Pharaoh alignment reader (data/alignment.hpp), alone and against three sentence pairs of
// 4 source and 5 target tokens (as `lava align --gold` checks the links against the corpus).
#include "data/alignment.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = lava_fuzz::scratch_file("in.align", lava_fuzz::bytes(data, size));
  lava_fuzz::expect_clean([&] { (void)lava::read_alignments(path); });
  const lava::SentenceLengths lengths[3] = {{4, 5}, {4, 5}, {4, 5}};
  lava_fuzz::expect_clean([&] { (void)lava::read_alignments(path, lengths); });
  return 0;
}
