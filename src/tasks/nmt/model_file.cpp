#include "tasks/nmt/model_file.hpp"

#include "core/check.hpp"
#include "nn/checkpoint.hpp"
#include "nn/safetensors.hpp"

namespace lava {

void save_nmt(const std::string& path, const Seq2Seq& model, const Vocab& src, const Vocab& tgt,
              std::map<std::string, std::string> extra) {
  std::map<std::string, std::string> meta = model.config().to_metadata();
  meta["src_vocab_tokens"] = src.to_text();
  meta["tgt_vocab_tokens"] = tgt.to_text();
  meta["format"] = "lava-model-1";
  for (auto& [k, v] : extra) meta[k] = v;
  save_params(path, model.ps, meta);
}

LoadedNmt load_nmt(const std::string& path) {
  LoadedNmt m;
  // The metadata decides the architecture; the parameters are then checked against it by name and shape.
  const SafetensorsFile file = load_safetensors(path);
  m.metadata = file.metadata;
  if (m.metadata["format"] != "lava-model-1") throw input_error(path, 0, "not a LAVA model file (no format tag)");
  Seq2SeqConfig cfg = Seq2SeqConfig::from_metadata(m.metadata, path);
  m.src_vocab = Vocab::from_text(m.metadata["src_vocab_tokens"], path);
  m.tgt_vocab = Vocab::from_text(m.metadata["tgt_vocab_tokens"], path);
  if (m.src_vocab.size() != cfg.src_vocab || m.tgt_vocab.size() != cfg.tgt_vocab)
    throw input_error(path, 0, "vocabulary sizes do not match the model's embedding tables");
  m.model = std::make_unique<Seq2Seq>(cfg);
  assign_params(file, path, m.model->ps);
  return m;
}

}  // namespace lava
