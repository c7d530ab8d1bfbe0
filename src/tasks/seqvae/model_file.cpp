#include "tasks/seqvae/model_file.hpp"

#include "core/check.hpp"
#include "tasks/model_file.hpp"

namespace lava {

void save_seqvae(const std::string& path, const SeqVae& model, const Vocab& vocab, const std::string& lang,
                 const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> meta = model.config().to_metadata();
  meta["vocab_tokens"] = vocab.to_text();
  meta["lang"] = lang;
  save_model_file(path, model.ps, std::move(meta), extra);
}

LoadedSeqVae load_seqvae(const std::string& path) {
  LoadedSeqVae m;
  // The metadata decides the architecture; the parameters are then checked against it by name and shape.
  const ModelFile file(path);
  m.metadata = file.metadata();
  const SeqVaeConfig cfg = SeqVaeConfig::from_metadata(m.metadata, path);
  m.vocab = Vocab::from_text(m.metadata["vocab_tokens"], path);
  m.lang = m.metadata["lang"];
  if (m.vocab.size() != cfg.vocab) throw input_error(path, 0, "the vocabulary size does not match the embedding table");
  m.model = std::make_unique<SeqVae>(cfg);
  file.assign(m.model->ps);
  return m;
}

}  // namespace lava
