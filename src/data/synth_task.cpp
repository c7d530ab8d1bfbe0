#include "data/synth_task.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <unordered_set>

#include "core/atomic_file.hpp"
#include "core/check.hpp"
#include "core/rng.hpp"

namespace lava {

namespace {

// Sequential draws from the counter-based generator: draw k is a pure function of (seed, stream, k).
struct Draws {
  CounterRng rng;
  uint64_t index = 0;
  uint64_t below(uint64_t n) { return rng.below(index++, n); }
  bool chance(double p) { return rng.uniform(index++) < p; }
  template <class T>
  const T& pick(const std::vector<T>& items) {
    return items[below(items.size())];
  }
};

// One word of a category: its source form and its target rendering (0, 1 or 2 words).
struct Word {
  std::string src;
  std::vector<std::string> tgt;
};

struct Lexicon {
  std::vector<Word> nouns, adjectives, transitive, intransitive, adverbs;
  std::vector<Word> determiners;   // [0] definite, [1] indefinite, [2] demonstrative, [3] dropped in the target
  std::vector<Word> prepositions;  // [0] contracts with the definite determiner
  std::vector<Word> complementisers;
  Word particle;            // no target
  std::string contraction;  // target of prepositions[0] + determiners[0]
};

// Pronounceable pseudo-words, distinct within each language. Source and target use different sound inventories
// so that no source word is copied into the target by accident.
struct WordMaker {
  std::vector<std::string> onsets, nuclei, codas;
  std::unordered_set<std::string> used;
  std::string make(Draws& draws, int syllables) {
    for (int attempt = 0;; ++attempt) {
      std::string w;
      for (int s = 0; s < syllables; ++s) w += draws.pick(onsets) + draws.pick(nuclei);
      w += draws.pick(codas);
      if (used.insert(w).second) return w;
      if (attempt > 50) ++syllables;  // the short forms are used up
    }
  }
};

Lexicon make_lexicon(Draws& draws, int vocab) {
  WordMaker src{{"b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "sch", "st", "pf"},
                {"a", "e", "i", "o", "u", "ei", "au", "ü", "ö"},
                {"", "", "n", "r", "s", "t", "ch"},
                {}};
  WordMaker tgt{{"b", "c", "d", "f", "g", "h", "j", "l", "m", "n", "p", "r", "s", "t", "w", "th", "sh", "qu"},
                {"a", "e", "i", "o", "u", "y", "ea", "oo"},
                {"", "", "ck", "x", "ng", "ll", "m"},
                {}};
  Lexicon lex;
  auto word = [&](int src_syllables, int tgt_words) {
    Word w{src.make(draws, src_syllables), {}};
    for (int k = 0; k < tgt_words; ++k) w.tgt.push_back(tgt.make(draws, k == 0 ? 1 + int(draws.below(2)) : 2));
    return w;
  };
  for (int k = 0; k < 4; ++k) lex.determiners.push_back(word(1, k == 3 ? 0 : 1));
  for (int k = 0; k < 6; ++k) lex.prepositions.push_back(word(1, 1));
  for (int k = 0; k < 2; ++k) lex.complementisers.push_back(word(1, 1));
  lex.particle = word(1, 0);
  lex.contraction = tgt.make(draws, 1);
  // Content words: 40% nouns, 25% verbs (half transitive), 20% adjectives, 15% adverbs. Every 5th noun splits
  // into two target words, every 3rd verb and every 4th adverb too.
  const int nouns = std::max(2, vocab * 40 / 100), verbs = std::max(2, vocab * 25 / 100);
  const int adjectives = std::max(1, vocab * 20 / 100);
  const int adverbs = std::max(1, vocab - nouns - verbs - adjectives);
  for (int k = 0; k < nouns; ++k) lex.nouns.push_back(word(2 + int(draws.below(2)), k % 5 == 4 ? 2 : 1));
  for (int k = 0; k < verbs; ++k)
    (k % 2 ? lex.intransitive : lex.transitive).push_back(word(2 + int(draws.below(2)), k % 3 == 2 ? 2 : 1));
  for (int k = 0; k < adjectives; ++k) lex.adjectives.push_back(word(2, 1));
  for (int k = 0; k < adverbs; ++k) lex.adverbs.push_back(word(2 + int(draws.below(2)), k % 4 == 3 ? 2 : 1));
  return lex;
}

// Builds one pair: source words are emitted first (their indices recorded), then the target in target order.
struct PairBuilder {
  SynthPair pair;
  int src(const std::string& w) {
    pair.src.push_back(w);
    return int(pair.src.size()) - 1;
  }
  void tgt(const std::vector<std::string>& words, std::initializer_list<int> from) {
    for (const auto& w : words) {
      int j = int(pair.tgt.size());
      pair.tgt.push_back(w);
      for (int i : from) pair.align.emplace_back(i, j);
    }
  }
};

struct Placed {  // a word and where its source form went
  const Word* word = nullptr;
  int at = -1;
};

struct NounPhrase {
  Placed det, noun;
  std::vector<Placed> adjectives;
};

struct Grammar {
  const Lexicon& lex;
  Draws& draws;
  PairBuilder& b;

  Placed place(const Word& w) { return {&w, b.src(w.src)}; }
  void render(const Placed& p) { b.tgt(p.word->tgt, {p.at}); }

  // Source: DET ADJ* NOUN. Target: DET NOUN ADJ* (the determiner may render as nothing).
  NounPhrase noun_phrase() {
    NounPhrase np;
    np.det = place(draws.pick(lex.determiners));
    int adjectives = draws.chance(0.5) ? 0 : (draws.chance(0.7) ? 1 : 2);
    for (int k = 0; k < adjectives; ++k) np.adjectives.push_back(place(draws.pick(lex.adjectives)));
    np.noun = place(draws.pick(lex.nouns));
    return np;
  }
  void render(const NounPhrase& np, bool skip_det = false) {
    if (!skip_det) render(np.det);
    render(np.noun);
    for (const auto& a : np.adjectives) render(a);
  }

  struct PrepPhrase {
    Placed prep;
    NounPhrase np;
  };
  PrepPhrase prep_phrase() {
    PrepPhrase pp;
    pp.prep = place(draws.pick(lex.prepositions));
    pp.np = noun_phrase();
    return pp;
  }
  void render(const PrepPhrase& pp) {
    if (pp.prep.word == &lex.prepositions[0] && pp.np.det.word == &lex.determiners[0]) {
      b.tgt({lex.contraction}, {pp.prep.at, pp.np.det.at});  // two source words -> one target word
      render(pp.np, /*skip_det=*/true);
      return;
    }
    render(pp.prep);
    render(pp.np);
  }

  // Main clause, source: SUBJ VERB [PARTICLE] [OBJ] [ADV] [PP]; target: SUBJ [ADV] VERB [OBJ] [PP].
  // Subordinate clause, source: COMP SUBJ [OBJ] [ADV] VERB (verb-final); target: COMP SUBJ [ADV] VERB [OBJ].
  void clause(bool subordinate) {
    Placed comp;
    if (subordinate) comp = place(draws.pick(lex.complementisers));
    const bool transitive = draws.chance(0.5);
    const Word& verb_word = draws.pick(transitive ? lex.transitive : lex.intransitive);
    NounPhrase subj = noun_phrase();
    Placed verb, adv;
    NounPhrase obj;
    bool with_particle = false, with_adv = false, with_pp = false;
    PrepPhrase pp;
    if (subordinate) {
      if (transitive) obj = noun_phrase();
      if ((with_adv = draws.chance(0.3))) adv = place(draws.pick(lex.adverbs));
      verb = place(verb_word);
    } else {
      verb = place(verb_word);
      if ((with_particle = draws.chance(0.2))) place(lex.particle);
      if (transitive) obj = noun_phrase();
      if ((with_adv = draws.chance(0.4))) adv = place(draws.pick(lex.adverbs));
      if ((with_pp = draws.chance(0.4))) pp = prep_phrase();
    }
    if (subordinate) render(comp);
    render(subj);
    if (with_adv) render(adv);
    render(verb);
    if (transitive) render(obj);
    if (with_pp) render(pp);
  }
};

// Target-major order: sorted by target index, then source index.
void sort_alignment(SynthPair& pair) {
  std::sort(pair.align.begin(), pair.align.end(), [](const auto& x, const auto& y) {
    return x.second != y.second ? x.second < y.second : x.first < y.first;
  });
}

SynthPair sentence(const Lexicon& lex, Draws& draws) {
  PairBuilder b;
  Grammar g{lex, draws, b};
  g.clause(false);
  if (draws.chance(0.35)) {
    // The main clause's source words are all placed before the subordinate clause starts, and its target words
    // are rendered before the subordinate clause's too, so the clauses stay in order on both sides.
    g.clause(true);
  }
  int stop = b.src(".");
  b.tgt({"."}, {stop});
  sort_alignment(b.pair);
  return b.pair;
}

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (size_t k = 0; k < words.size(); ++k) {
    if (k) out += ' ';
    out += words[k];
  }
  return out;
}

}  // namespace

std::string pharaoh_line(const std::vector<std::pair<int, int>>& align) {
  std::string out;
  for (size_t k = 0; k < align.size(); ++k) {
    if (k) out += ' ';
    out += fmt::format("{}-{}", align[k].first, align[k].second);
  }
  return out;
}

std::vector<SynthPair> generate_synth_pairs(const SynthOptions& o) {
  if (o.train < 0 || o.valid < 0 || o.test < 0) throw UsageError("synth: split sizes must not be negative");
  if (o.min_len < 1 || o.max_len < o.min_len || o.max_len > 60)
    throw UsageError(fmt::format("synth: length range {}..{}: need 1 <= min <= max <= 60", o.min_len, o.max_len));
  if (o.vocab < 20 || o.vocab > 1000000) throw UsageError(fmt::format("synth: --vocab {}: need 20..1000000", o.vocab));

  Draws lexicon_draws{CounterRng(o.seed, stream_id("synth/lexicon"))};
  const Lexicon lex = make_lexicon(lexicon_draws, o.vocab);
  Draws draws{CounterRng(o.seed, stream_id("synth/sentences"))};

  const size_t total = size_t(o.train) + size_t(o.valid) + size_t(o.test);
  std::vector<SynthPair> pairs;
  pairs.reserve(total);
  std::unordered_set<std::string> seen;
  constexpr int kMaxAttempts = 100000;  // per pair: length rejections and duplicates together
  while (pairs.size() < total) {
    for (int attempt = 0;; ++attempt) {
      if (attempt == kMaxAttempts)
        throw UsageError(fmt::format(
            "synth: could not make {} distinct sentences of {}..{} tokens (made {}); widen the length range or "
            "raise --vocab",
            total, o.min_len, o.max_len, pairs.size()));
      SynthPair pair = sentence(lex, draws);
      int n = int(pair.src.size());
      if (n < o.min_len || n > o.max_len) continue;
      if (!seen.insert(join(pair.src)).second) continue;
      pairs.push_back(std::move(pair));
      break;
    }
  }
  return pairs;
}

void build_synth_task(const SynthOptions& o) {
  if (o.out_dir.empty()) throw UsageError("synth: --out: an output folder is required");
  std::vector<SynthPair> pairs = generate_synth_pairs(o);
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec) throw input_error(o.out_dir, 0, "cannot create the output folder: " + ec.message());

  const std::array<std::pair<const char*, int>, 3> splits = {
      {{"train", o.train}, {"valid", o.valid}, {"test", o.test}}};
  size_t begin = 0;
  for (const auto& [name, count] : splits) {
    std::string src, tgt, align;
    for (size_t k = begin; k < begin + size_t(count); ++k) {
      src += join(pairs[k].src) + '\n';
      tgt += join(pairs[k].tgt) + '\n';
      align += pharaoh_line(pairs[k].align) + '\n';
    }
    begin += size_t(count);
    write_file_atomic(fmt::format("{}/{}.de", o.out_dir, name), src);
    write_file_atomic(fmt::format("{}/{}.en", o.out_dir, name), tgt);
    write_file_atomic(fmt::format("{}/{}.align", o.out_dir, name), align);
  }
  if (!o.quiet)
    fmt::print(stderr, "synth: wrote {}: {} train, {} valid, {} test pairs (seed {}, {}..{} tokens, vocab {})\n",
               o.out_dir, o.train, o.valid, o.test, o.seed, o.min_len, o.max_len, o.vocab);
}

}  // namespace lava
