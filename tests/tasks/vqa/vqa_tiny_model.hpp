#pragma once
// The tiny VQA data set (vqa_fixture.hpp) loaded and encoded, and a small model configuration for it: the setting of
// tests/tasks/vqa/test_vqa_model.cpp and tests/tasks/vqa/test_vqa_eval.cpp.
#include <vector>

#include "attention/variant.hpp"
#include "tasks/vqa/data.hpp"
#include "tasks/vqa/model.hpp"
#include "vqa_fixture.hpp"

namespace vqa_test {

using namespace lava;

struct Loaded {
  VqaSplit train, test;
  Vocab words;
  AnswerVocab answers;
  VqaEncoded train_enc, test_enc;
};

inline Loaded load(const TinyVqa& d) {
  Loaded l{load_vqa_split(d.data(), "train"), load_vqa_split(d.data(), "test"), {}, {}, {}, {}};
  l.words = build_question_vocab(l.train.questions);
  l.answers = AnswerVocab::build(l.train.questions);
  l.train_enc = encode_vqa(l.train.questions, l.words, l.answers);
  l.test_enc = encode_vqa(l.test.questions, l.words, l.answers);
  return l;
}

inline VqaConfig tiny_config(const Loaded& l, AttnVariant v) {
  VqaConfig c;
  c.attn = v;
  c.words = l.words.size(), c.answers = l.answers.size();
  c.regions = l.train.features->num_regions(), c.feature_dim = l.train.features->dim();
  c.emb = 5, c.hidden = 7, c.attn_size = 4, c.mlp = 6, c.answer_emb = 3, c.dropout = 0.f;
  return c;
}

inline std::vector<int> first(int n) {
  std::vector<int> idx(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) idx[size_t(i)] = i;
  return idx;
}

}  // namespace vqa_test
