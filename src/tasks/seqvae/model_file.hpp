#pragma once
// The sequence VAE's model file (tasks/model_file.hpp): its parameters and, in the metadata, its configuration, the
// vocabulary and the language.
#include <map>
#include <memory>
#include <string>

#include "data/vocab.hpp"
#include "tasks/seqvae/model.hpp"

namespace lava {

// A trained model with its vocabulary, from a checkpoint: the safetensors file with the configuration, the
// vocabulary and the language in its metadata, tagged "format": "lava-model-1", "task": "seqvae".
struct LoadedSeqVae {
  std::unique_ptr<SeqVae> model;
  Vocab vocab;
  std::string lang;
  std::map<std::string, std::string> metadata;
};
LoadedSeqVae load_seqvae(const std::string& path);
// Written atomically; `extra` entries are added to the metadata (epoch, validation figures, ...).
void save_seqvae(const std::string& path, const SeqVae& model, const Vocab& vocab, const std::string& lang,
                 const std::map<std::string, std::string>& extra);

}  // namespace lava
