#include "data/vqa_questions.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <map>

#include "core/atomic_file.hpp"
#include "core/check.hpp"
#include "core/quote_input.hpp"
#include "core/read_file.hpp"
#include "core/utf8.hpp"
#include "data/scenes.hpp"

namespace lava {

std::vector<std::string_view> split_fields(std::string_view line, char sep) {
  std::vector<std::string_view> out;
  size_t begin = 0;
  while (true) {
    size_t end = line.find(sep, begin);
    if (end == std::string_view::npos) {
      out.push_back(line.substr(begin));
      return out;
    }
    out.push_back(line.substr(begin, end - begin));
    begin = end + 1;
  }
}

int64_t parse_index(std::string_view text, int64_t limit, const std::string& path, long line, const char* what) {
  bool ok = !text.empty() && text.size() <= 18;  // 18 digits cannot overflow int64
  int64_t v = 0;
  for (size_t i = 0; ok && i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') ok = false;
    else v = v * 10 + (text[i] - '0');
  }
  if (!ok) throw input_error(path, line, fmt::format("bad {} {}: expected a non-negative integer", what, quote_input(text)));
  if (v >= limit) throw input_error(path, line, fmt::format("{} {} out of range [0, {})", what, v, limit));
  return v;
}

namespace {

std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> words;
  for (std::string_view w : split_fields(text, ' '))
    if (!w.empty()) words.emplace_back(w);
  return words;
}

VqaQuestion parse_question_line(std::string_view line, int num_images, int num_regions, const std::string& path,
                                long lineno) {
  std::vector<std::string_view> f = split_fields(line, '\t');
  if (f.size() < 3)
    throw input_error(path, lineno, fmt::format("{} column(s); need at least image, question, answer", f.size()));
  if (f.size() > 6) throw input_error(path, lineno, fmt::format("{} columns; at most 6 are defined", f.size()));
  VqaQuestion q;
  q.image = int(parse_index(f[0], num_images, path, lineno, "image index"));
  q.words = split_words(f[1]);
  if (q.words.empty()) throw input_error(path, lineno, "empty question");
  if (f[2].empty()) throw input_error(path, lineno, "empty answer");
  q.answer = std::string(f[2]);
  if (f.size() > 3 && !f[3].empty()) {
    for (std::string_view item : split_fields(f[3], ',')) {
      size_t colon = item.rfind(':');
      if (colon == std::string_view::npos || colon == 0)
        throw input_error(path, lineno, fmt::format("bad answer count {}: expected answer:count", quote_input(item)));
      int count = int(parse_index(item.substr(colon + 1), int64_t(1) << 30, path, lineno, "answer count"));
      q.answer_counts.emplace_back(std::string(item.substr(0, colon)), count);
    }
  }
  if (f.size() > 4) q.qtype = std::string(f[4]);
  if (f.size() > 5 && !f[5].empty()) {
    int64_t limit = num_regions >= 0 ? num_regions : int64_t(1) << 30;
    for (std::string_view r : split_fields(f[5], ','))
      q.regions.push_back(int(parse_index(r, limit, path, lineno, "region")));
  }
  return q;
}

void check_tsv_safe(std::string_view s, const char* what) {
  LAVA_CHECK(s.find_first_of("\t\n\r") == std::string_view::npos, "{} '{}' contains a tab or newline", what, s);
}

}  // namespace

std::vector<VqaQuestion> read_vqa_questions(const std::string& path, int num_images, int num_regions) {
  std::string text = read_file(path, kTextDataLimit);
  std::vector<VqaQuestion> out;
  long lineno = 0;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + begin, end - begin);
    begin = end + 1;
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line[0] == '#') continue;
    // As the corpus reader does: a byte that is not UTF-8 would be a word that no other reader of the file sees.
    if (const size_t bad = first_invalid_utf8(line); bad != std::string_view::npos)
      throw input_error(path, lineno, fmt::format("invalid UTF-8 at byte {} of the line", bad + 1));
    out.push_back(parse_question_line(line, num_images, num_regions, path, lineno));
  }
  return out;
}

void write_vqa_questions(const std::string& path, const std::vector<VqaQuestion>& questions) {
  std::string text = "# image\tquestion\tanswer\tanswer_counts\tqtype\tregions\n";
  for (const VqaQuestion& q : questions) {
    for (const std::string& w : q.words) {
      check_tsv_safe(w, "question word");
      LAVA_CHECK(!w.empty() && w.find(' ') == std::string::npos, "question word '{}' is empty or has a space", w);
    }
    check_tsv_safe(q.answer, "answer");
    check_tsv_safe(q.qtype, "question type");
    std::vector<std::string> counts;
    for (const auto& [answer, n] : q.answer_counts) {
      check_tsv_safe(answer, "answer");
      LAVA_CHECK(answer.find(',') == std::string::npos, "counted answer '{}' contains ','", answer);
      counts.push_back(fmt::format("{}:{}", answer, n));
    }
    text += fmt::format("{}\t{}\t{}\t{}\t{}\t{}\n", q.image, join_fields(q.words, " "), q.answer,
                        join_fields(counts, ","), q.qtype, join_fields(q.regions, ","));
  }
  write_file_atomic(path, text);
}

NpyRegionFeatures::NpyRegionFeatures(const std::string& path) : file_(NpyFile::open(path)) {
  if (file_.rank() != 3)
    throw input_error(path, 0, fmt::format("region features must have shape (images, regions, dim); got rank {}",
                                           file_.rank()));
  for (int64_t d : file_.shape())
    if (d < 1 || d > (int64_t(1) << 30))
      throw input_error(path, 0, fmt::format("region feature shape ({}) has a dimension outside 1..2^30",
                                             join_fields(file_.shape(), ", ")));
}

void NpyRegionFeatures::get(int image, float* out) const {
  LAVA_CHECK(image >= 0 && image < num_images(), "image {} of {}", image, num_images());
  file_.read_rows(image, 1, out);
}

std::unique_ptr<RegionFeatures> open_region_features(const std::string& path, const std::string& split) {
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    return std::make_unique<SceneSet>(SceneSet::load(path, split));
  return std::make_unique<NpyRegionFeatures>(path);
}

AnswerBaselines answer_baselines(const std::vector<VqaQuestion>& train, const std::vector<VqaQuestion>& test) {
  // std::map keeps every iteration order fixed, so ties break the same way on every run (smallest string).
  auto most_frequent = [](const std::map<std::string, int>& counts) {
    std::string best;
    int best_n = -1;
    for (const auto& [answer, n] : counts)
      if (n > best_n) best = answer, best_n = n;
    return best;
  };
  std::map<std::string, int> answer_counts;
  std::map<std::string, std::map<std::string, int>> by_question;
  for (const VqaQuestion& q : train) {
    ++answer_counts[q.answer];
    ++by_question[join_fields(q.words, " ")][q.answer];
  }
  AnswerBaselines b;
  b.majority_answer = most_frequent(answer_counts);
  std::map<std::string, std::string> oracle;
  for (const auto& [text, counts] : by_question) oracle[text] = most_frequent(counts);

  std::map<std::string, AnswerBaselines::PerType> per_type;
  double majority_hits = 0, oracle_hits = 0;
  for (const VqaQuestion& q : test) {
    auto it = oracle.find(join_fields(q.words, " "));
    const std::string& guess = it == oracle.end() ? b.majority_answer : it->second;
    bool maj = q.answer == b.majority_answer, orc = q.answer == guess;
    majority_hits += maj;
    oracle_hits += orc;
    AnswerBaselines::PerType& t = per_type[q.qtype];
    t.qtype = q.qtype;
    ++t.count;
    t.majority += maj;
    t.oracle += orc;
  }
  b.test_count = int(test.size());
  if (!test.empty()) b.majority = majority_hits / double(test.size()), b.oracle = oracle_hits / double(test.size());
  for (auto& [name, t] : per_type) {
    t.majority /= t.count;
    t.oracle /= t.count;
    b.per_type.push_back(t);
  }
  return b;
}

}  // namespace lava
