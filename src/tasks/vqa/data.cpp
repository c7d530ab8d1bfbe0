#include "tasks/vqa/data.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/check.hpp"
#include "core/quote_input.hpp"
#include "core/utf8.hpp"
#include "core/rng.hpp"
#include "data/batcher.hpp"
#include "data/scenes.hpp"
#include "core/parallel.hpp"

namespace lava {

namespace {

bool is_directory(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// "a/{split}.tsv" with split "valid" -> "a/valid.tsv" (every occurrence).
std::string substitute_split(std::string path, const std::string& split) {
  const std::string key = "{split}";
  for (size_t at = path.find(key); at != std::string::npos; at = path.find(key, at + split.size()))
    path.replace(at, key.size(), split);
  return path;
}

}  // namespace

VqaSplit load_vqa_split(const VqaDataOptions& o, const std::string& split,
                        std::shared_ptr<const RegionFeatures> shared) {
  const bool scenes = !o.data_dir.empty(), user = !o.features.empty() || !o.questions.empty();
  if (scenes == user)
    throw UsageError("give either --data DIR (a `lava data scenes` directory) or --features FILE.npy --questions Q");
  if (user && (o.features.empty() || o.questions.empty()))
    throw UsageError("user data needs both --features FILE.npy and --questions (a directory or a path with {split})");
  VqaSplit s;
  s.name = split;
  if (scenes) {
    s.features_path = o.data_dir;
    s.questions_path = o.data_dir + "/" + split + ".questions.tsv";
    s.features = std::make_shared<SceneSet>(SceneSet::load(o.data_dir, split, o.mnist_dir));
    s.scenes = true;
  } else {
    s.features_path = substitute_split(o.features, split);
    const bool dir = is_directory(o.questions);
    if (!dir && o.questions.find("{split}") == std::string::npos)
      throw UsageError(fmt::format("--questions {} is neither a directory nor a path containing {{split}}",
                                   quote_input(o.questions)));
    s.questions_path = dir ? o.questions + "/" + split + ".questions.tsv" : substitute_split(o.questions, split);
    const bool per_split = o.features.find("{split}") != std::string::npos;
    s.features = shared && !per_split ? shared : std::make_shared<NpyRegionFeatures>(s.features_path);
  }
  s.questions = read_vqa_questions(s.questions_path, s.features->num_images(), s.features->num_regions());
  if (s.questions.empty()) throw input_error(s.questions_path, 0, "no questions (an empty " + split + " split)");
  return s;
}

AnswerVocab AnswerVocab::build(const std::vector<VqaQuestion>& train) {
  std::map<std::string, int64_t> counts;  // ordered: ties keep the bytes order through the stable sort
  for (const VqaQuestion& q : train) ++counts[q.answer];
  std::vector<std::pair<std::string, int64_t>> sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  AnswerVocab v;
  for (auto& [answer, n] : sorted) {
    v.ids_[answer] = int(v.answers_.size());
    v.answers_.push_back(answer);
  }
  return v;
}

int AnswerVocab::id(std::string_view answer) const {
  auto it = ids_.find(answer);
  return it == ids_.end() ? -1 : it->second;
}

std::string AnswerVocab::to_text() const {
  std::string out;
  for (const std::string& a : answers_) out += a + "\n";
  return out;
}

AnswerVocab AnswerVocab::from_text(std::string_view text, const std::string& source) {
  AnswerVocab v;
  long line = 0;
  while (!text.empty()) {
    ++line;
    const size_t nl = text.find('\n');
    if (nl == std::string_view::npos)
      throw input_error(source, 0, fmt::format("answer list line {} lacks its newline", line));
    const std::string answer(text.substr(0, nl));
    text.remove_prefix(nl + 1);
    if (answer.empty() || answer.find_first_of("\t\r") != std::string::npos)
      throw input_error(source, 0, fmt::format("answer list line {} is empty or holds a tab", line));
    if (const size_t bad = first_invalid_utf8(answer); bad != std::string::npos)
      throw input_error(source, 0, fmt::format("answer list line {}: invalid UTF-8 at byte {}", line, bad + 1));
    if (!v.ids_.emplace(answer, v.size()).second)
      throw input_error(source, 0, fmt::format("answer list line {} repeats {}", line, quote_input(answer)));
    v.answers_.push_back(answer);
  }
  if (v.answers_.empty()) throw input_error(source, 0, "the answer list is empty");
  return v;
}

Vocab build_question_vocab(const std::vector<VqaQuestion>& train) {
  TokenCounter counts;
  for (const VqaQuestion& q : train)
    for (const std::string& w : q.words) counts.add(w);
  return Vocab::build(counts, VocabOptions{});
}

VqaEncoded encode_vqa(const std::vector<VqaQuestion>& questions, const Vocab& words, const AnswerVocab& answers) {
  VqaEncoded e;
  e.words.reserve(questions.size());
  e.answer.reserve(questions.size());
  for (const VqaQuestion& q : questions) {
    std::vector<int32_t> ids;
    ids.reserve(q.words.size());
    for (const std::string& w : q.words) ids.push_back(words.id(w));
    e.words.push_back(std::move(ids));
    e.answer.push_back(answers.id(q.answer));
  }
  return e;
}

VqaBatch make_vqa_batch(const VqaSplit& split, const VqaEncoded& encoded, std::span<const int> index) {
  VqaBatch b;
  b.B = int(index.size());
  b.R = split.features->num_regions();
  b.D = split.features->dim();
  b.index.assign(index.begin(), index.end());
  for (int i : index) {
    LAVA_CHECK(i >= 0 && size_t(i) < encoded.words.size() && !encoded.words[size_t(i)].empty(), "question {}", i);
    b.L = std::max(b.L, int(encoded.words[size_t(i)].size()));
  }
  b.words.assign(size_t(b.B) * size_t(b.L), int32_t(Vocab::kPad));
  b.lengths.resize(size_t(b.B));
  b.answer.resize(size_t(b.B));
  b.known.resize(size_t(b.B));
  for (int k = 0; k < b.B; ++k) {
    const std::vector<int32_t>& w = encoded.words[size_t(index[size_t(k)])];
    std::copy(w.begin(), w.end(), b.words.begin() + ptrdiff_t(k) * b.L);
    b.lengths[size_t(k)] = int32_t(w.size());
    const int32_t a = encoded.answer[size_t(index[size_t(k)])];
    b.answer[size_t(k)] = std::max(a, 0);
    b.known[size_t(k)] = a >= 0 ? 1.f : 0.f;
  }
  // features: (B, R, D); row k is question k's image. Errors are collected per row (an exception must not leave
  // the parallel region) and the first one in row order is thrown.
  const int64_t row = int64_t(b.R) * b.D;
  b.features.resize(size_t(b.B) * size_t(row));
  std::vector<std::string> errors(size_t(b.B));
#pragma omp parallel for schedule(static) if (b.B * row >= kParallelMin)
  for (int k = 0; k < b.B; ++k) {
    const VqaQuestion& q = split.questions[size_t(index[size_t(k)])];
    float* out = b.features.data() + size_t(k) * size_t(row);
    try {
      split.features->get(q.image, out);
      for (int64_t j = 0; j < row; ++j)
        if (!std::isfinite(out[j])) {
          errors[size_t(k)] = fmt::format("image {} region {} feature {} is not finite", q.image, j / b.D, j % b.D);
          break;
        }
    } catch (const std::exception& e) {
      errors[size_t(k)] = e.what();
    }
  }
  for (const std::string& e : errors)
    if (!e.empty()) throw input_error(split.features_path, 0, e);
  return b;
}

std::vector<std::vector<int>> vqa_train_batches(int count, int batch_size, uint64_t seed, int64_t epoch) {
  return shuffled_batches(count, batch_size, seed, "vqa/shuffle", epoch);
}

std::vector<std::vector<int>> vqa_eval_batches(int count, int batch_size) {
  std::vector<std::vector<int>> batches;
  for (int at = 0; at < count; at += batch_size) {
    std::vector<int> b;
    for (int i = at; i < std::min(count, at + batch_size); ++i) b.push_back(i);
    batches.push_back(std::move(b));
  }
  return batches;
}

}  // namespace lava
