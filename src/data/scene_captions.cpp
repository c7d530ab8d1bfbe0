#include "data/scene_captions.hpp"

#include <array>
#include <set>

#include "core/atomic_file.hpp"
#include "core/check.hpp"
#include "core/read_file.hpp"
#include "core/rng.hpp"

namespace lava {

namespace {

// The four relations and the neighbour's offset (row, column) from the item named first.
struct Relation {
  std::string_view phrase;
  int drow, dcol;
};
constexpr std::array<Relation, 4> kRelations = {{{"left of", 0, 1}, {"right of", 0, -1}, {"above", 1, 0}, {"below", -1, 0}}};

// The cell at offset (drow, dcol) from r, or −1 off the grid.
int neighbour(int r, const Relation& rel) {
  const int row = r / kSceneGrid + rel.drow, col = r % kSceneGrid + rel.dcol;
  return row < 0 || row >= kSceneGrid || col < 0 || col >= kSceneGrid ? -1 : row * kSceneGrid + col;
}

// Sequential draws from one counter stream.
struct Draws {
  CounterRng rng;
  uint64_t next = 0;
  int below(int n) { return int(rng.below(next++, uint64_t(n))); }
};

void add_words(Caption& c, std::string_view text, int region) {
  size_t at = 0;
  while (at <= text.size()) {
    size_t end = text.find(' ', at);
    if (end == std::string_view::npos) end = text.size();
    c.words.emplace_back(text.substr(at, end - at));
    c.region.push_back(int8_t(region));
    at = end + 1;
  }
}

// "a N_r" with N_r's words tagged r.
void add_item(Caption& c, const Scene& s, int r) {
  const std::string_view name = fashion_class_name(s.label[size_t(r)]);
  add_words(c, name[0] == 'a' ? "an" : "a", -1);
  add_words(c, name, r);
}

// One clause about cell r (and its neighbour for a relation), marking the cells it names in `used`.
void add_clause(Caption& c, const Scene& s, int r, std::array<bool, kSceneRegions>& used, Draws& d) {
  used[size_t(r)] = true;
  std::vector<int> relations;  // the relations whose neighbour is on the grid and still unnamed
  for (int k = 0; k < int(kRelations.size()); ++k) {
    const int n = neighbour(r, kRelations[size_t(k)]);
    if (n >= 0 && !used[size_t(n)]) relations.push_back(k);
  }
  const int form = d.below(relations.empty() ? 2 : 3);
  const std::string position(grid_position_name(r));
  if (form == 1) {
    add_words(c, "the " + position + " holds", -1);
    add_item(c, s, r);
    return;
  }
  add_item(c, s, r);
  add_words(c, "at the " + position, -1);
  if (form == 2) {
    const Relation& rel = kRelations[size_t(relations[size_t(d.below(int(relations.size())))])];
    const int n = neighbour(r, rel);
    used[size_t(n)] = true;
    add_words(c, rel.phrase, -1);
    add_item(c, s, n);
  }
}

Caption draw_caption(const Scene& s, Draws& d) {
  Caption c;
  std::array<bool, kSceneRegions> used{};
  const int clauses = 1 + d.below(3);
  for (int k = 0; k < clauses; ++k) {
    std::vector<int> free;
    for (int r = 0; r < kSceneRegions; ++r)
      if (!used[size_t(r)]) free.push_back(r);
    if (free.empty()) break;
    if (k > 0) add_words(c, k + 1 == clauses ? "and" : ",", -1);
    add_clause(c, s, free[size_t(d.below(int(free.size())))], used, d);
  }
  return c;
}

}  // namespace

std::vector<SceneCaptions> caption_scenes(const std::vector<Scene>& scenes, uint64_t seed, std::string_view split) {
  std::vector<SceneCaptions> out;
  for (size_t i = 0; i < scenes.size(); ++i) {
    Draws d{CounterRng(seed, stream_id(fmt::format("scenes/captions/{}", split))).child(i)};
    SceneCaptions sc;
    sc.scene = int(i);
    const int want = kMinCaptions + d.below(kMaxCaptions - kMinCaptions + 1);
    std::set<std::vector<std::string>> seen;
    for (int attempt = 0; int(sc.refs.size()) < want && attempt < 100; ++attempt) {
      Caption c = draw_caption(scenes[i], d);
      if (seen.insert(c.words).second) sc.refs.push_back(std::move(c));
    }
    LAVA_CHECK(int(sc.refs.size()) >= kMinCaptions, "scene {}: fewer than 2 distinct captions", i);
    out.push_back(std::move(sc));
  }
  return out;
}

double grammar_caption_count() {
  // A clause is fixed by its cells, their classes and its form: "a N at the P" and "the P holds a N" name one cell
  // (2 · 10 strings per cell), a relation names an ordered pair of neighbours (10 · 10 strings per pair and
  // relation). ways[k][mask] counts the sequences of k clauses naming exactly the cells of mask, so a caption of
  // k clauses is any sequence with disjoint cells; the connectors are fixed by k.
  constexpr int kMasks = 1 << kSceneRegions;
  struct ClauseCells {
    int mask;
    double strings;
  };
  std::vector<ClauseCells> clauses;
  for (int r = 0; r < kSceneRegions; ++r) {
    clauses.push_back({1 << r, 2.0 * kFashionClasses});
    for (const Relation& rel : kRelations)
      if (const int n = neighbour(r, rel); n >= 0)
        clauses.push_back({(1 << r) | (1 << n), double(kFashionClasses) * kFashionClasses});
  }
  std::vector<double> ways(kMasks, 0.0), next(kMasks);
  ways[0] = 1;
  double total = 0;
  for (int k = 1; k <= 3; ++k) {
    std::fill(next.begin(), next.end(), 0.0);
    for (int mask = 0; mask < kMasks; ++mask)
      if (ways[size_t(mask)] > 0)
        for (const ClauseCells& c : clauses)
          if ((mask & c.mask) == 0) next[size_t(mask | c.mask)] += ways[size_t(mask)] * c.strings;
    ways.swap(next);
    for (double w : ways) total += w;
  }
  return total;
}

std::string format_caption(const Caption& c) {
  std::string out;
  for (size_t i = 0; i < c.words.size(); ++i) {
    if (i) out += ' ';
    out += c.words[i];
    if (c.region[i] >= 0) out += fmt::format("@{}", c.region[i]);
  }
  return out;
}

void write_scene_captions(const std::string& path, const std::vector<SceneCaptions>& captions) {
  std::string text = "# scene\tcaptions (2 to 5; an item word carries its region as @r, cells 0..8 row-major)\n";
  for (const SceneCaptions& sc : captions) {
    text += std::to_string(sc.scene);
    for (const Caption& c : sc.refs) {  // two appends: "\t" + s trips GCC 12's -Wstringop-overflow false alarm
      text += '\t';
      text += format_caption(c);
    }
    text += "\n";
  }
  write_file_atomic(path, text);
}

std::vector<SceneCaptions> read_scene_captions(const std::string& path, int num_scenes) {
  const std::string text = read_file(path, kTextDataLimit);
  std::vector<SceneCaptions> out;
  long lineno = 0;
  for (std::string_view line : split_fields(text, '\n')) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string_view> f = split_fields(line, '\t');
    SceneCaptions sc;
    sc.scene = int(parse_index(f[0], num_scenes, path, lineno, "scene index"));
    if (sc.scene != int(out.size()))
      throw input_error(path, lineno, fmt::format("scene {} where scene {} was due (indices count up from 0)",
                                                  sc.scene, out.size()));
    const int n = int(f.size()) - 1;
    if (n < kMinCaptions || n > kMaxCaptions)
      throw input_error(path, lineno, fmt::format("{} captions; a scene needs {} to {}", n, kMinCaptions, kMaxCaptions));
    for (int k = 1; k <= n; ++k) {
      Caption c;
      if (f[size_t(k)].empty()) throw input_error(path, lineno, fmt::format("caption {} is empty", k));
      for (std::string_view w : split_fields(f[size_t(k)], ' ')) {
        if (w.empty()) throw input_error(path, lineno, fmt::format("caption {} has an empty word (two spaces?)", k));
        const size_t at = w.find('@');
        int region = -1;
        if (at != std::string_view::npos) {
          region = int(parse_index(w.substr(at + 1), kSceneRegions, path, lineno, "region tag"));
          w = w.substr(0, at);
          if (w.empty()) throw input_error(path, lineno, fmt::format("caption {}: a region tag without its word", k));
        }
        c.words.emplace_back(w);
        c.region.push_back(int8_t(region));
      }
      sc.refs.push_back(std::move(c));
    }
    out.push_back(std::move(sc));
  }
  if (int(out.size()) != num_scenes)
    throw input_error(path, 0, fmt::format("{} scenes captioned, the split has {}", out.size(), num_scenes));
  return out;
}

}  // namespace lava
