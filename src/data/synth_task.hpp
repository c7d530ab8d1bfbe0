#pragma once
// `lava data synth`: a synthetic translation task with known word alignments, for checking that attention learns
// the alignment (alignment error rate) and for fast experiments.
//
// The source language ("de") comes from a small grammar: determiners, adjectives, nouns, transitive and
// intransitive verbs, adverbs, prepositional phrases, a discourse particle and subordinate clauses
// (complementiser + verb-final clause). Each source word has one fixed target rendering, which may be
//   one word, two words (some nouns split like German compounds, some verbs take an auxiliary, some adverbs take
//   an intensifier), or nothing (one determiner and the particle are dropped);
// one preposition followed by the definite determiner contracts to a single target word aligned to both.
// The target language ("en") orders words differently: noun before its adjectives, adverb before the verb, and
// subordinate clauses verb-second instead of verb-final. So the alignment is non-monotone but deterministic and
// learnable.
//
// Files in OUT_DIR: {train,valid,test}.{de,en} (space-separated tokens, one sentence a line) and
// {train,valid,test}.align (Pharaoh format "i-j ...", SOURCE index first, 0-based; every target word is aligned
// to exactly the source word(s) it came from; dropped source words are unaligned).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace lava {

struct SynthOptions {
  std::string out_dir;
  uint64_t seed = 1;
  int train = 20000, valid = 500, test = 500;  // sentence pairs per split
  int min_len = 4, max_len = 14;               // source length in tokens, final "." included
  int vocab = 400;                             // source content words (nouns, verbs, adjectives, adverbs)
  bool quiet = false;
};

struct SynthPair {
  std::vector<std::string> src, tgt;
  std::vector<std::pair<int, int>> align;  // (source index, target index), sorted by target then source index
};

// All pairs: the train pairs, then valid, then test. No source sentence occurs twice. The same options give the
// same pairs on every run and platform (counter-based Philox draws, no std:: distributions).
// Throws UsageError for impossible options.
std::vector<SynthPair> generate_synth_pairs(const SynthOptions& options);

// generate_synth_pairs, written to OUT_DIR with atomic writes.
void build_synth_task(const SynthOptions& options);

// "0-0 1-2 2-1": Pharaoh format of one pair's alignment.
std::string pharaoh_line(const std::vector<std::pair<int, int>>& align);

}  // namespace lava
