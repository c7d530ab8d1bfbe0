#include "tasks/nmt/model_file.hpp"

#include "core/check.hpp"
#include "tasks/model_file.hpp"
#include "tasks/model_file_checks.hpp"

namespace lava {

namespace {

// The sizes the constructor allocates by, each where the file's tensors hold it (Seq2Seq's parameter names).
std::vector<SizeInTensor> sizes_in_tensors(const Seq2SeqConfig& c) {
  std::vector<SizeInTensor> s = {
      {"src_vocab", c.src_vocab, "src_emb", 0},
      {"emb-size", c.emb, "src_emb", 1},
      {"tgt_vocab", c.tgt_vocab, "tgt_emb", 0},
      {"hidden-size", c.hidden, "decoder/l0/W_hh", 0},
      {"layers", c.layers, "decoder/l" + std::to_string(c.layers - 1) + "/W_hh", -1},
  };
  if (variant_info(c.attn).attends && c.score == NmtScore::mlp) s.push_back({"attn-size", c.attn_size, "score/W_q", 1});
  if (variant_info(c.attn).uses_q) s.push_back({"inf-hidden", c.inf_hidden, "inference/W", 0});
  return s;
}

}  // namespace

void save_nmt(const std::string& path, const Seq2Seq& model, const Vocab& src, const Vocab& tgt,
              const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> meta = model.config().to_metadata();
  meta["src_vocab_tokens"] = src.to_text();
  meta["tgt_vocab_tokens"] = tgt.to_text();
  save_model_file(path, model.ps, std::move(meta), extra);
}

LoadedNmt load_nmt(const std::string& path) {
  LoadedNmt m;
  // The metadata decides the architecture; the parameters are then checked against it by name and shape.
  const ModelFile file(path);
  m.metadata = file.metadata();
  Seq2SeqConfig cfg = Seq2SeqConfig::from_metadata(m.metadata, path);
  check_sizes_against_tensors(file.safetensors(), path, sizes_in_tensors(cfg));
  m.src_vocab = Vocab::from_text(m.metadata["src_vocab_tokens"], path);
  m.tgt_vocab = Vocab::from_text(m.metadata["tgt_vocab_tokens"], path);
  m.tokenization = tokenization_from_metadata(m.metadata, path);
  if (m.src_vocab.size() != cfg.src_vocab || m.tgt_vocab.size() != cfg.tgt_vocab)
    throw input_error(path, 0, "vocabulary sizes do not match the model's embedding tables");
  m.model = std::make_unique<Seq2Seq>(cfg);
  file.assign(m.model->ps);
  return m;
}

}  // namespace lava
