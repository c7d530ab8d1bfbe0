#pragma once
// The tiny translation run of the resume tests (tests/train/test_resume.cpp, tests/train/test_resume_signal.cpp): its
// corpus, its `lava train` flags, and the comparison of two resume states bit for bit.
#include <doctest/doctest.h>

#include <cstring>
#include <regex>
#include <string>
#include <vector>

#include "data/synth_task.hpp"
#include "nn/safetensors.hpp"
#include "support/temp_dir.hpp"

namespace resume_test {

using namespace lava;

// 32 training pairs: 4 batches of 8 per epoch.
inline const std::string& corpus_dir() {
  static const TempDir dir("resume_corpus");
  static const bool built = [] {
    SynthOptions o;
    o.out_dir = dir.dir.string();
    o.train = 32, o.valid = 6, o.test = 2, o.min_len = 3, o.max_len = 6, o.vocab = 20, o.quiet = true;
    build_synth_task(o);
    return true;
  }();
  (void)built;
  static const std::string path = dir.dir.string();
  return path;
}

// The same flags for build/lava.
inline std::string tiny_flags() {
  return "--data " + corpus_dir() +
         " --attn var-sample --emb-size 8 --hidden-size 12 --attn-size 6 --inf-hidden 6 --dropout 0.3 --batch-size 8 "
         "--lr 0.02 --seed 7 --format json -q";
}

// Two resume states hold the same bits: every tensor, and every metadata entry except the times (the training
// time, its CPU time, and each history line's fourth field).
inline void check_same_state(const std::string& a_path, const std::string& b_path) {
  const SafetensorsFile a = load_safetensors(a_path), b = load_safetensors(b_path);
  REQUIRE(a.tensors.size() == b.tensors.size());
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    CAPTURE(a.tensors[i].name);
    CHECK(a.tensors[i].name == b.tensors[i].name);
    REQUIRE(a.tensors[i].data.size() == b.tensors[i].data.size());
    CHECK(std::memcmp(a.tensors[i].data.data(), b.tensors[i].data.data(), a.tensors[i].data.size() * 4) == 0);
  }
  auto am = a.metadata, bm = b.metadata;
  am.erase("state.seconds"), bm.erase("state.seconds");
  am.erase("state.cpu_seconds"), bm.erase("state.cpu_seconds");
  const std::regex seconds("^(\\S+ \\S+ \\S+) \\S+", std::regex::multiline);
  for (auto* m : {&am, &bm}) (*m)["history"] = std::regex_replace((*m)["history"], seconds, "$1 _");
  CHECK(am == bm);
}

}  // namespace resume_test
