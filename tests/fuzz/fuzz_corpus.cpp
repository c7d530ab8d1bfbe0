// libFuzzer harness: the parallel-corpus reader (data/parallel_corpus.hpp). The input up to its first 0x01 byte is
// the source side, the rest the target side (all of it on both sides when there is none); every split gets the
// same pair of files, and the vocabularies are built from train as `lava train` builds them.
#include "data/parallel_corpus.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in = lava_fuzz::bytes(data, size);
  const size_t cut = in.find('\x01');
  const std::string_view src = cut == std::string_view::npos ? in : in.substr(0, cut);
  const std::string_view tgt = cut == std::string_view::npos ? in : in.substr(cut + 1);
  for (const char* split : {"train", "valid", "test"}) {
    lava_fuzz::scratch_file(std::string(split) + ".de", src);
    lava_fuzz::scratch_file(std::string(split) + ".en", tgt);
  }
  lava::CorpusOptions options;
  options.dir = lava_fuzz::scratch_dir();
  options.max_len = 50;
  options.keep_target_tokens = true;
  lava_fuzz::expect_clean([&] { (void)lava::load_parallel_corpus(options, lava::VocabOptions{}, lava::VocabOptions{}); });
  return 0;
}
