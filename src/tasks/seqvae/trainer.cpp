#include "tasks/seqvae/trainer.hpp"

#include <algorithm>
#include <cmath>

#include "core/json.hpp"
#include "tasks/seqvae/model_file.hpp"
#include "train/loop.hpp"

namespace lava {

const OptionTable<SeqVaeConfig>& seqvae_model_options() {
  using C = SeqVaeConfig;
  static const OptionTable<C> table = {
      {"latent-size", &C::latent, 1, 65536, "dimensions of z"},
      {"emb-size", &C::emb, 1, 65536, "word embedding size"},
      {"hidden-size", &C::hidden, 2, 65536, "encoder memory and decoder state size (even: two directions)"},
      {"attn-size", &C::attn_size, 1, 65536, "additive score hidden size"},
      {"layers", &C::layers, 1, 16, "LSTM layers (BiLSTM encoder and decoder)"},
      {"heads", &C::heads, 1, 1024, "transformer: attention heads (divide --hidden-size)"},
      {"tf-layers", &C::tf_layers, 1, 64, "transformer: encoder layers"},
      {"ff-size", &C::ff, 0, 1 << 20, "transformer: feed-forward size (0 = 4 x hidden)"},
      {"dropout", &C::dropout, 0, 0.95, "dropout on embeddings, between layers, before the output"},
  };
  return table;
}

Figures seqvae_line_figures(const SeqVaeEvalFigures& f) {
  return {{"elbo", f.elbo},
          {"recon", f.recon},
          {"kl", f.kl},
          {"elbo_per_token", f.elbo_per_token},
          {"recon_per_token", f.recon_per_token},
          {"kl_per_token", f.kl_per_token},
          {"ppl_bound", f.ppl_bound},
          {"iw", f.iw},
          {"ppl_iw", f.ppl_iw},
          {"active_units", double(f.active_units)},
          {"latent", double(f.latent)},
          {"sentences", double(f.sentences)},
          {"tokens", double(f.tokens)},
          {"samples", double(f.samples)}};
}

const ChoiceTable<SeqVaeConfig>& seqvae_choice_options() {
  using C = SeqVaeConfig;
  static const ChoiceTable<C> table = {
      choice_row("encoder", &C::encoder, kSeqVaeEncoderNames, "{}"),
      choice_row("dec-attn", &C::dec_attn, kDecoderAttentionNames, "decoder attention to the encoder states: {}"),
      choice_row("score", &C::score, kSeqVaeScoreNames, "attention score: {}"),
  };
  return table;
}

namespace {

// SeqVaeEvalFigures as named scalars for the resume state and back; the per-dimension vectors as kl_per_dim.d and
// mu_variance.d.
Figures figures_of(const SeqVaeEvalFigures& f) {
  // The line's figures with its last three, the counts (sentences, tokens, samples), first: the resume state's order.
  const Figures line = seqvae_line_figures(f);
  Figures out(line.end() - 3, line.end());
  out.insert(out.end(), line.begin(), line.end() - 3);
  for (size_t d = 0; d < f.kl_per_dim.size(); ++d) out.emplace_back(fmt::format("kl_per_dim.{}", d), f.kl_per_dim[d]);
  for (size_t d = 0; d < f.mu_variance.size(); ++d)
    out.emplace_back(fmt::format("mu_variance.{}", d), f.mu_variance[d]);
  return out;
}

SeqVaeEvalFigures seqvae_figures_of(const Figures& figures) {
  SeqVaeEvalFigures f;
  if (figures.empty()) return f;
  f.sentences = int64_t(figure(figures, "sentences")), f.tokens = int64_t(figure(figures, "tokens"));
  f.samples = int(figure(figures, "samples"));
  f.elbo = figure(figures, "elbo"), f.recon = figure(figures, "recon"), f.kl = figure(figures, "kl");
  f.elbo_per_token = figure(figures, "elbo_per_token"), f.recon_per_token = figure(figures, "recon_per_token");
  f.kl_per_token = figure(figures, "kl_per_token"), f.ppl_bound = figure(figures, "ppl_bound");
  f.iw = figure(figures, "iw"), f.ppl_iw = figure(figures, "ppl_iw");
  f.active_units = int(figure(figures, "active_units")), f.latent = int(figure(figures, "latent"));
  for (const auto& [name, value] : figures) {
    if (name.starts_with("kl_per_dim.")) f.kl_per_dim.push_back(value);
    if (name.starts_with("mu_variance.")) f.mu_variance.push_back(value);
  }
  return f;
}

// One validation: where the run stood, its training averages since the previous validation, and the figures.
struct SeqVaeEpochRecord {
  double epoch = 0;  // (e − 1) + batches done / batches in epoch e
  int64_t steps = 0;
  double seconds = 0, lr = 0, kl_weight = 0;
  double train_loss = 0, train_recon = 0, train_kl = 0;  // per sentence
  SeqVaeEvalFigures valid;
  bool best = false, partial = false;
};

// Sums of a training step: the loss, reconstruction and KL (summed over sentences) and the sentences.
enum SeqVaeSum { kLoss, kRecon, kKl, kSentences };

SeqVaeEpochRecord epoch_record(const ValidationRecord& r, int64_t kl_anneal) {
  SeqVaeEpochRecord e;
  e.valid = seqvae_figures_of(r.valid.figures);
  e.epoch = r.position, e.steps = r.steps, e.lr = r.lr, e.partial = r.partial;
  e.seconds = r.seconds;
  e.best = r.best;
  e.kl_weight = kl_weight(std::max<int64_t>(0, r.steps - 1), kl_anneal);  // of the last update before it
  const double n = std::max(1.0, r.train[kSentences]);
  e.train_loss = r.train[kLoss] / n, e.train_recon = r.train[kRecon] / n, e.train_kl = r.train[kKl] / n;
  return e;
}

class SeqVaeTask final : public TrainTask {
 public:
  // load_parallel_corpus builds the vocabulary from train (both "sides" are the same file, so src_vocab == tgt_vocab).
  explicit SeqVaeTask(const SeqVaeTrainOptions& opt)
      : opt_(opt),
        corpus_(load_parallel_corpus(seqvae_corpus_options(opt.data), opt.vocab, opt.vocab)),
        cfg_(config(opt.model, corpus_.tgt_vocab)),
        model_(cfg_) {
    model_.init(float(opt.loop.init), opt.loop.seed);
    eval_ = opt.eval;
    eval_.seed = opt.loop.seed;
    bopt_.batch_size = opt.loop.batch_size;
  }

  ParamStore<float>& params() override { return model_.ps; }
  std::vector<std::string> sum_names() const override { return {"loss", "recon", "kl", "sentences"}; }
  std::vector<std::vector<int>> epoch_batches(int epoch) override {
    return train_batches(corpus_.train.pairs, bopt_, opt_.loop.seed, epoch);
  }

  StepResult step(const std::vector<int>& pairs, int64_t step) override {
    const Batch batch = make_batch(corpus_.train.pairs, pairs);
    tape_.reset();
    // Every random draw of update t comes from streams keyed by t: dropout and the posterior sample.
    const uint64_t t = uint64_t(step);
    Ctx c{tape_, model_.ps, true, CounterRng(opt_.loop.seed, stream_id("seqvae/train")).child(t), cfg_.dropout};
    KlOptions klo;
    klo.weight = float(kl_weight(step, opt_.kl_anneal));
    klo.free_bits = float(opt_.free_bits);
    const SeqVaeTerms terms = model_.terms(c, batch, CounterRng(opt_.loop.seed, stream_id("seqvae/z")).child(t), klo);
    Var<float> loss = affine(terms.loss, 1.f / float(batch.B), 0.f);  // per sentence
    if (std::isfinite(loss.item())) tape_.backward(loss);  // into zeros: the last Adam step consumed the gradients
    return {loss.item(), {double(loss.item()) * batch.B, terms.recon, terms.kl, double(batch.B)}, double(terms.tokens)};
  }

  Validation validate() override {
    const SeqVaeEvalFigures v = evaluate_seqvae(model_, corpus_.valid, eval_);
    return {v.elbo, figures_of(v)};
  }

  void save_best(const std::string& path, const ValidationRecord& r) override {
    if (path.empty()) return;
    save_seqvae(path, model_, corpus_.tgt_vocab, opt_.data.lang,
                {{"epoch", fmt::format("{}", r.position)},
                 {"steps", std::to_string(r.steps)},
                 {"valid_elbo", fmt::format("{}", figure(r.valid.figures, "elbo"))},
                 {"valid_kl", fmt::format("{}", figure(r.valid.figures, "kl"))},
                 {"valid_active_units", std::to_string(int(figure(r.valid.figures, "active_units")))}});
  }

  ReportLine report(const ValidationRecord& r, const std::vector<ValidationRecord>&) override {
    const SeqVaeEpochRecord e = epoch_record(r, opt_.kl_anneal);
    const SeqVaeEvalFigures& v = e.valid;
    ReportLine line;
    JsonLine& j = line.json;
    j.add("event", "epoch").add("task", "seqvae").add("encoder", enum_name(kSeqVaeEncoderNames, cfg_.encoder))
        .add("dec_attn", enum_name(kDecoderAttentionNames, cfg_.dec_attn));
    j.add("epoch", e.epoch);
    add_progress_fields(j, r);
    j.add("kl_weight", e.kl_weight).add("free_bits", opt_.free_bits);
    j.add("train_loss", e.train_loss).add("train_recon", e.train_recon).add("train_kl", e.train_kl);
    for (const auto& [name, value] : seqvae_line_figures(v)) j.add(name, value);
    j.add("kl_per_dim", v.kl_per_dim).add("best", e.best);
    if (e.partial) j.add("partial", true);
    line.text = fmt::format(
        "epoch {:.2f}  steps {}  {:.0f}s  lr {:.2e}  β {:.3f} | train loss {:.3f} recon {:.3f} kl {:.3f} | valid elbo "
        "{:.3f} recon {:.3f} kl {:.3f} (per sentence)  ppl ≤ {:.6g}  active units {}/{}{}",
        e.epoch, e.steps, e.seconds, e.lr, e.kl_weight, e.train_loss, e.train_recon, e.train_kl, v.elbo, v.recon, v.kl,
        v.ppl_bound, v.active_units, v.latent, e.best ? "  (best)" : "");
    return line;
  }

  std::string progress_text(const std::vector<double>& sums, int64_t step, double units_per_second) const override {
    const double n = sums[kSentences];
    return fmt::format("-elbo {:.2f} kl {:.2f} β {:.2f} | {:.0f} tok/s", (sums[kKl] - sums[kRecon]) / n, sums[kKl] / n,
                       kl_weight(std::max<int64_t>(0, step - 1), opt_.kl_anneal), units_per_second);
  }

  RunIdentity identity() const override {
    Fingerprint h;
    h.add(corpus_.tgt_vocab.to_text());
    for (const auto* pairs : {&corpus_.train.pairs, &corpus_.valid.pairs})
      for (const SentencePair& p : *pairs) h.add_vector(p.tgt);
    const SeqVaeConfig& m = opt_.model;
    RunIdentity id = choice_identity(seqvae_choice_options(), m);
    const RunIdentity sizes = option_identity(seqvae_model_options(), m);
    id.insert(id.end(), sizes.begin(), sizes.end());
    id.insert(id.end(), {{"--kl-anneal", exact(opt_.kl_anneal)},
                         {"--free-bits", exact(opt_.free_bits)},
                         {"--eval-batch-size", exact(opt_.eval.batch_size)},
                         {"--valid-samples", exact(opt_.eval.samples)},
                         {"--au-threshold", exact(opt_.eval.au_threshold)},
                         {"--lang", opt_.data.lang},
                         {"--max-len", exact(opt_.data.max_len)},
                         {"--min-freq", exact(opt_.vocab.min_freq)},
                         {"--max-vocab", exact(opt_.vocab.max_vocab)},
                         {"data", fmt::format("{} train and {} valid sentences, vocabulary {}, hash {}",
                                              corpus_.train.pairs.size(), corpus_.valid.pairs.size(),
                                              corpus_.tgt_vocab.size(), h.hex())}});
    return id;
  }

 private:
  static SeqVaeConfig config(SeqVaeConfig cfg, const Vocab& vocab) {
    cfg.vocab = vocab.size();
    return cfg;
  }

  const SeqVaeTrainOptions& opt_;
  const ParallelCorpus corpus_;
  const SeqVaeConfig cfg_;
  SeqVae model_;
  SeqVaeEvalOptions eval_;
  BatchOptions bopt_;
  Tape<float> tape_;
};

}  // namespace

TrainResult train_seqvae(const SeqVaeTrainOptions& opt) {
  const SaveLock lock(opt.loop.save);
  SeqVaeTask task(opt);
  const LoopSummary s = train_loop("seqvae", opt.loop, task, lock);
  TrainResult r("seqvae", s);
  const SeqVaeConfig& m = opt.model;
  r.about = {{"encoder", JsonValue(enum_name(kSeqVaeEncoderNames, m.encoder))},
             {"dec_attn", JsonValue(enum_name(kDecoderAttentionNames, m.dec_attn))},
             {"kl_anneal", JsonValue(opt.kl_anneal)},
             {"free_bits", JsonValue(opt.free_bits)}};
  r.best_epoch = s.kept_position;
  r.best = seqvae_line_figures(seqvae_figures_of(s.kept.figures));
  return r;
}

}  // namespace lava
