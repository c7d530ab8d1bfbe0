// libFuzzer harness: the VQA questions TSV reader (data/vqa_questions.hpp), for 8 images of 4 regions each.
#include "data/vqa_questions.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = lava_fuzz::scratch_file("in.questions.tsv", lava_fuzz::bytes(data, size));
  lava_fuzz::expect_clean([&] { (void)lava::read_vqa_questions(path, 8, 4); });
  return 0;
}
