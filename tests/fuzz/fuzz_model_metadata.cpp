// libFuzzer harness: the checks a model file passes before a model is built from it (tasks/model_file_checks.hpp), on
// the bytes of a whole safetensors file: the format tag, then the sizes a translation model's loader holds against
// the tensors (vocabulary, embedding, hidden size, layer count), taken from the metadata however large, negative
// or malformed, and against whatever shapes the header declares.
#include <cstdlib>
#include <string>

#include "fuzz_input.hpp"
#include "nn/safetensors.hpp"
#include "tasks/model_file_checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = "fuzz.safetensors";
  lava_fuzz::expect_clean([&] {
    const lava::SafetensorsFile file = lava::parse_safetensors(lava_fuzz::bytes(data, size), path);
    lava::expect_model_format(file.metadata, path);
    auto size_of = [&](const char* key) -> int64_t {
      const auto it = file.metadata.find(key);
      return it == file.metadata.end() ? 0 : std::strtoll(it->second.c_str(), nullptr, 10);
    };
    std::vector<lava::SizeInTensor> sizes = {{"src_vocab", size_of("src_vocab"), "src_emb", 0},
                                             {"emb", size_of("emb"), "src_emb", 1},
                                             {"hidden", size_of("hidden"), "decoder/l0/W_hh", 0},
                                             {"axis", size_of("emb"), "src_emb", int(size_of("axis") % 8)}};
    // The loaders name a layer count's last layer only for counts lava train accepts (from_metadata checks them).
    if (const int64_t layers = size_of("layers"); layers >= 1 && layers <= 16)
      sizes.push_back({"layers", layers, "decoder/l" + std::to_string(layers - 1) + "/W_hh", -1});
    lava::check_sizes_against_tensors(file, path, sizes);
  });
  return 0;
}
