#pragma once
// The VQA experiment's inputs (lava train/eval --task vqa): splits of questions with their region features, the
// question-word and answer vocabularies, and padded mini-batches.
//
// Where the splits come from (VqaDataOptions):
//   scenes      --data DIR: a `lava data scenes` directory; split S reads DIR/S.questions.tsv and the SceneSet of
//               split S (features computed from the Fashion-MNIST images on the fly)
//   user data   --features F --questions Q: questions TSV (vqa_questions.hpp) and a float32 .npy of shape
//               (images, regions, dim). Q is either a directory holding S.questions.tsv, or a path containing
//               "{split}", which is replaced by train, valid or test. F may contain "{split}" too (one features
//               file per split); without it every split indexes the same file.
// A split without questions is an InputError naming its file; a --questions that is neither a directory nor a path
// with {split} is a UsageError (one file cannot hold three splits).
//
// Vocabularies are built from the training questions only: words as a data/vocab.hpp Vocab (unknown words map to
// <unk>), answers as AnswerVocab (most frequent first, ties by the answer's bytes). An answer of another split that
// training never saw has no id (-1): such a question has no likelihood under the model, so evaluation leaves it
// out of the likelihood figures and counts it as answered wrongly.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "data/vocab.hpp"
#include "data/vqa_questions.hpp"

namespace lava {

struct VqaDataOptions {
  std::string data_dir;   // a `lava data scenes` directory, or ""
  std::string features;   // user data: .npy path, may contain {split}
  std::string questions;  // user data: directory, or a path containing {split}
  std::string mnist_dir;  // scenes: overrides the image directory recorded in meta.tsv ("" = keep)
};

struct VqaSplit {
  std::string name;            // train | valid | test
  std::string questions_path;  // for messages
  std::string features_path;
  std::shared_ptr<const RegionFeatures> features;
  std::vector<VqaQuestion> questions;
  bool scenes = false;  // features are a SceneSet (region features start with pooled pixels: see vqa_plots)
};

// Throws UsageError when neither or both of --data and --features/--questions are given, InputError for a missing
// or bad file, and InputError "FILE: no questions" for an empty split. `shared` (optional) is a features file the
// caller already opened for another split, reused when the features path has no {split}.
VqaSplit load_vqa_split(const VqaDataOptions& options, const std::string& split,
                        std::shared_ptr<const RegionFeatures> shared = nullptr);

// Answers as class ids. Answers may contain spaces ("top left"); they never contain tabs or newlines.
class AnswerVocab {
 public:
  static AnswerVocab build(const std::vector<VqaQuestion>& train);
  int id(std::string_view answer) const;  // -1 when unseen
  const std::string& answer(int id) const { return answers_[size_t(id)]; }
  int size() const { return int(answers_.size()); }
  const std::vector<std::string>& answers() const { return answers_; }
  // One answer per line, each ending in '\n'; from_text rejects empty or duplicate answers (InputError naming source).
  std::string to_text() const;
  static AnswerVocab from_text(std::string_view text, const std::string& source);

 private:
  std::vector<std::string> answers_;
  std::unordered_map<std::string, int, StringViewHash, std::equal_to<>> ids_;
};

// The training questions' words; unknown words map to <unk> later.
Vocab build_question_vocab(const std::vector<VqaQuestion>& train);

// A split's questions as ids.
struct VqaEncoded {
  std::vector<std::vector<int32_t>> words;  // per question: word ids
  std::vector<int32_t> answer;              // per question: answer id, -1 when unseen in training
};
VqaEncoded encode_vqa(const std::vector<VqaQuestion>& questions, const Vocab& words, const AnswerVocab& answers);

struct VqaBatch {
  int B = 0, L = 0, R = 0, D = 0;  // questions; longest question; regions; feature size
  std::vector<int32_t> words;      // (B, L) word ids, <pad> after each question's end
  std::vector<int32_t> lengths;    // (B) question lengths (>= 1)
  std::vector<float> features;     // (B, R, D) region features of each question's image
  std::vector<int32_t> answer;     // (B) answer id; 0 where the answer is unseen (then known = 0)
  std::vector<float> known;        // (B) 1 when the answer has an id, else 0: the likelihood mask
  std::vector<int> index;          // (B) which questions of the split
};

// The questions split.questions[index[k]]. Region features are read in parallel (each row is written by one
// thread: same bits for any thread count); a non-finite feature is an InputError naming the features file.
VqaBatch make_vqa_batch(const VqaSplit& split, const VqaEncoded& encoded, std::span<const int> index);

// Training order: every question once per epoch, shuffled (Fisher-Yates on stream "vqa/shuffle", child = epoch),
// cut into batches of at most batch_size. Evaluation order: in file order.
std::vector<std::vector<int>> vqa_train_batches(int count, int batch_size, uint64_t seed, int64_t epoch);
std::vector<std::vector<int>> vqa_eval_batches(int count, int batch_size);

}  // namespace lava
