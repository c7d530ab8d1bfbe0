// The questions of data/scenes.hpp: what a scene allows asking (by family), the drawing of a question under
// either mix (default or vqa2), and the question put into words with its answer and annotated regions.
#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "data/scenes.hpp"
#include "data/scenes_detail.hpp"
#include "data/vqa_questions.hpp"

namespace lava {

namespace {

using namespace scenes_detail;

// The four relations: question phrase, qtype, and the neighbour's offset (row, column) from the named item.
struct Relation {
  std::string_view phrase, qtype;
  int drow, dcol;
};
constexpr std::array<Relation, 4> kRelations = {{{"left of", "left_of", 0, -1},
                                                 {"right of", "right_of", 0, 1},
                                                 {"above", "above", -1, 0},
                                                 {"below", "below", 1, 0}}};

std::vector<std::string> words_of(const std::string& sentence) {
  std::vector<std::string> words;
  for (std::string_view w : split_fields(sentence, ' ')) words.emplace_back(w);
  return words;
}

// The cells holding each class, ascending.
struct ClassCells {
  std::array<std::array<int, kSceneRegions>, kFashionClasses> cell{};
  std::array<int, kFashionClasses> count{};
  explicit ClassCells(const Scene& s) {
    for (int r = 0; r < kSceneRegions; ++r) {
      int c = s.label[size_t(r)];
      cell[size_t(c)][size_t(count[size_t(c)]++)] = r;
    }
  }
  std::vector<int> of(int c) const { return {cell[size_t(c)].begin(), cell[size_t(c)].begin() + count[size_t(c)]}; }
};

// The region next to r in direction rel, or -1 at the border.
int neighbour(int r, const Relation& rel) {
  int row = r / kSceneGrid + rel.drow, col = r % kSceneGrid + rel.dcol;
  return row < 0 || row >= kSceneGrid || col < 0 || col >= kSceneGrid ? -1 : row * kSceneGrid + col;
}

// A question a scene allows, before it is put into words. Equal candidates are equal questions.
struct Candidate {
  enum Kind : uint8_t { what_at, where, relation, how_many, is_there, is_at } kind;
  uint8_t subject;       // the region for what_at and is_at, else the class
  uint8_t rel = 0;       // index into kRelations; the class asked about for is_at
  bool operator==(const Candidate&) const = default;
};

// Everything one scene allows, by family; the generator draws a family, then a member.
struct SceneCandidates {
  std::vector<std::vector<Candidate>> families;      // what_at, where, relation, how_many; empty ones left out
  std::vector<Candidate> is_there_yes, is_there_no;  // the last family, is_there: a fair coin picks the list
};

SceneCandidates scene_candidates(const ClassCells& cells) {
  std::vector<Candidate> what_at, where, relation, how_many;
  SceneCandidates out;
  for (int r = 0; r < kSceneRegions; ++r) what_at.push_back({Candidate::what_at, uint8_t(r)});
  for (int c = 0; c < kFashionClasses; ++c) {
    int n = cells.count[size_t(c)];
    (n ? out.is_there_yes : out.is_there_no).push_back({Candidate::is_there, uint8_t(c)});
    if (n) how_many.push_back({Candidate::how_many, uint8_t(c)});
    if (n != 1) continue;
    where.push_back({Candidate::where, uint8_t(c)});
    for (size_t k = 0; k < kRelations.size(); ++k)
      if (neighbour(cells.cell[size_t(c)][0], kRelations[k]) >= 0)
        relation.push_back({Candidate::relation, uint8_t(c), uint8_t(k)});
  }
  for (auto* family : {&what_at, &where, &relation, &how_many})
    if (!family->empty()) out.families.push_back(std::move(*family));
  return out;
}

VqaQuestion put_into_words(Candidate q, const Scene& s, const ClassCells& cells, int image) {
  auto question = [&](const std::string& sentence, std::string_view answer, std::string_view qtype,
                      std::vector<int> regions) {
    return VqaQuestion{image, words_of(sentence), std::string(answer), {}, std::string(qtype), std::move(regions)};
  };
  std::string_view name = kClassNames[q.subject % kFashionClasses];
  switch (q.kind) {
    case Candidate::what_at:
      return question(fmt::format("what is at the {} ?", kPositionNames[q.subject]), kClassNames[s.label[q.subject]],
                      "what_at", {q.subject});
    case Candidate::where: {
      int r = cells.cell[q.subject][0];
      return question(fmt::format("where is the {} ?", name), kPositionNames[size_t(r)], "where", {r});
    }
    case Candidate::relation: {
      const Relation& rel = kRelations[q.rel];
      int n = neighbour(cells.cell[q.subject][0], rel);
      return question(fmt::format("what is {} the {} ?", rel.phrase, name), kClassNames[s.label[size_t(n)]],
                      rel.qtype, {n});
    }
    case Candidate::how_many:
      return question(fmt::format("how many {} are there ?", kClassPlurals[q.subject]),
                      std::to_string(cells.count[q.subject]), "how_many", cells.of(q.subject));
    case Candidate::is_there:
      return question(fmt::format("is there {} {} ?", name[0] == 'a' ? "an" : "a", name),
                      cells.count[q.subject] ? "yes" : "no", "is_there", cells.of(q.subject));
    case Candidate::is_at: {
      std::string_view asked = kClassNames[q.rel % kFashionClasses];
      return question(fmt::format("is there {} {} at the {} ?", asked[0] == 'a' ? "an" : "a", asked,
                                  kPositionNames[q.subject]),
                      s.label[q.subject] == q.rel ? "yes" : "no", "is_at", {q.subject});
    }
  }
  throw std::logic_error(fmt::format("unknown question kind {}", int(q.kind)));
}

}  // namespace

std::string_view question_mix_name(QuestionMix m) { return m == QuestionMix::vqa2 ? "vqa2" : "default"; }

namespace {

// is_at: a fair coin for the answer; "yes" asks a cell about its own class, "no" about one of the 9 others.
Candidate draw_is_at(const Scene& s, Draws& d) {
  const int r = d.below(kSceneRegions), own = s.label[size_t(r)];
  const int asked = d.below(2) == 0 ? own : (own + 1 + d.below(kFashionClasses - 1)) % kFashionClasses;
  return {Candidate::is_at, uint8_t(r), uint8_t(asked)};
}

Candidate draw_is_there(const SceneCandidates& pool, Draws& d) {
  return d.below(2) == 0 ? d.pick(pool.is_there_yes) : d.pick(pool.is_there_no);
}

// VQA 2.0's answer types (scenes.hpp): yes/no 38 %, number 12 %, other 50 %, then a family within the type. A
// question already asked is redrawn within its type (up to 20 times), so that the repeats of the small families do
// not move the type shares; only a type with nothing left to ask gives its turn back to a fresh type draw.
bool draw_vqa2(const Scene& s, const SceneCandidates& pool, const std::vector<Candidate>& asked, Draws& d,
               Candidate& q) {
  const int type = d.below(100);
  // families: what_at, where, relation, how_many with the empty ones left out; how_many (and what_at) is never
  // empty (every scene holds classes), so it is the last, and the others are "other"
  const int others = int(pool.families.size()) - 1;
  for (int attempt = 0; attempt < 20; ++attempt) {
    if (type < 38) q = d.below(2) == 0 ? draw_is_there(pool, d) : draw_is_at(s, d);
    else if (type < 50) q = d.pick(pool.families.back());
    else q = d.pick(pool.families[size_t(d.below(others))]);
    if (std::find(asked.begin(), asked.end(), q) == asked.end()) return true;
  }
  return false;
}

}  // namespace

std::vector<VqaQuestion> ask_scene_questions(const std::vector<Scene>& scenes, int per_scene, uint64_t seed,
                                             std::string_view split, QuestionMix mix) {
  std::vector<VqaQuestion> out;
  for (size_t i = 0; i < scenes.size(); ++i) {
    Draws d = scene_stream(seed, "questions", split, i);
    ClassCells cells(scenes[i]);
    SceneCandidates pool = scene_candidates(cells);
    std::vector<Candidate> asked;
    int families = int(pool.families.size()) + 1;  // + is_there
    for (int attempt = 0; int(asked.size()) < per_scene && attempt < 50 * per_scene; ++attempt) {
      Candidate q{};
      if (mix == QuestionMix::vqa2) {
        if (!draw_vqa2(scenes[i], pool, asked, d, q)) continue;
      } else {
        const int family = d.below(families);
        q = family + 1 < families ? d.pick(pool.families[size_t(family)]) : draw_is_there(pool, d);
      }
      if (std::find(asked.begin(), asked.end(), q) != asked.end()) continue;
      asked.push_back(q);
      out.push_back(put_into_words(q, scenes[i], cells, int(i)));
    }
  }
  return out;
}

}  // namespace lava
