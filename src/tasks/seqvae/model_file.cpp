#include "tasks/seqvae/model_file.hpp"

#include "core/check.hpp"
#include "tasks/model_file.hpp"
#include "tasks/model_file_checks.hpp"

namespace lava {

namespace {

// The sizes the constructor allocates by, each where the file's tensors hold it (SeqVae's parameter names).
std::vector<SizeInTensor> sizes_in_tensors(const SeqVaeConfig& c) {
  std::vector<SizeInTensor> s = {
      {"vocab", c.vocab, "emb", 0},
      {"emb-size", c.emb, "emb", 1},
      {"hidden-size", c.hidden, "decoder/l0/W_hh", 0},
      {"latent-size", c.latent, "posterior/mu/W", 1},
      {"layers", c.layers, "decoder/l" + std::to_string(c.layers - 1) + "/W_hh", -1},
  };
  if (c.dec_attn == DecoderAttention::soft && c.score == SeqVaeScore::additive)
    s.push_back({"attn-size", c.attn_size, "score/W_q", 1});
  if (c.encoder == SeqVaeEncoder::transformer) {
    s.push_back({"tf-layers", c.tf_layers, "encoder/l" + std::to_string(c.tf_layers - 1) + "/qkv/W", -1});
    if (c.ff > 0) s.push_back({"ff-size", c.ff, "encoder/l0/ff1/W", 1});
  }
  return s;
}

}  // namespace

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
  check_sizes_against_tensors(file.safetensors(), path, sizes_in_tensors(cfg));
  m.vocab = Vocab::from_text(m.metadata["vocab_tokens"], path);
  m.lang = m.metadata["lang"];
  if (m.vocab.size() != cfg.vocab) throw input_error(path, 0, "the vocabulary size does not match the embedding table");
  m.model = std::make_unique<SeqVae>(cfg);
  file.assign(m.model->ps);
  return m;
}

}  // namespace lava
