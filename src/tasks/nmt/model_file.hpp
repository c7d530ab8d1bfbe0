#pragma once
// A translation model on disk: the safetensors checkpoint with the architecture (Seq2SeqConfig) and both
// vocabularies in its metadata, tagged "format": "lava-model-1". Loading checks the tag, rebuilds the model from
// the metadata and then checks every parameter by name and shape, so a foreign, truncated or mismatched file is
// one InputError naming the file.
#include <map>
#include <memory>
#include <string>

#include "data/corpus_tokenization.hpp"
#include "data/vocab.hpp"
#include "tasks/nmt/seq2seq.hpp"

namespace lava {

// A trained model with its vocabularies, from a checkpoint.
struct LoadedNmt {
  std::unique_ptr<Seq2Seq> model;
  Vocab src_vocab, tgt_vocab;
  CorpusTokenization tokenization;  // how the training corpus was tokenised; nothing recorded for older files
  std::map<std::string, std::string> metadata;
};
LoadedNmt load_nmt(const std::string& path);
// Written atomically; `extra` entries are added to the metadata (epoch, validation figures, ...).
void save_nmt(const std::string& path, const Seq2Seq& model, const Vocab& src, const Vocab& tgt,
              const std::map<std::string, std::string>& extra);

}  // namespace lava
