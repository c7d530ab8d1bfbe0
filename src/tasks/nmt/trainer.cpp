#include "tasks/nmt/trainer.hpp"

#include <cmath>
#include <filesystem>
#include <system_error>

#include "attention/collapse_monitor.hpp"
#include "core/check.hpp"
#include "data/corpus_tokenization.hpp"
#include "tasks/nmt/plots.hpp"
#include "train/learning_curves.hpp"
#include "train/loop.hpp"

namespace lava {

const OptionTable<Seq2SeqConfig>& nmt_model_options() {
  using C = Seq2SeqConfig;
  static const OptionTable<C> table = {
      {"emb-size", &C::emb, 1, 65536, "word embedding size"},
      {"hidden-size", &C::hidden, 2, 65536, "encoder memory and decoder state size (even: two directions)"},
      {"attn-size", &C::attn_size, 1, 65536, "MLP scorer hidden size"},
      {"inf-hidden", &C::inf_hidden, 2, 65536, "inference network BiLSTM size (even: two directions)"},
      {"layers", &C::layers, 1, 16, "LSTM layers (encoder and decoder)"},
      {"dropout", &C::dropout, 0, 0.95, "dropout probability"},
  };
  return table;
}

const OptionTable<NmtCorpusOptions>& nmt_corpus_options() {
  using C = NmtCorpusOptions;
  static const OptionTable<C> table = {
      {"src", &C::src, 0, 0, "source language suffix"},
      {"tgt", &C::tgt, 0, 0, "target language suffix"},
      {"max-len", &C::max_len, 1, 100000, "skip train/valid pairs longer than this"},
      {"min-freq", &C::min_freq, 1, 9.3e18, "vocabulary: minimum count"},
      {"max-vocab", &C::max_vocab, 0, 10000000, "vocabulary: at most this many words per side"},
  };
  return table;
}

CorpusOptions NmtCorpusOptions::reader() const {
  CorpusOptions o;
  o.dir = dir, o.src_lang = src, o.tgt_lang = tgt, o.max_len = max_len;
  return o;
}

VocabOptions NmtCorpusOptions::vocab() const {
  VocabOptions o;
  o.min_freq = min_freq, o.max_vocab = max_vocab;
  return o;
}

const ChoiceTable<Seq2SeqConfig>& nmt_choice_options() {
  using C = Seq2SeqConfig;
  static const ChoiceTable<C> table = {
      attn_choice_row(&C::attn, "nmt"),
      choice_row("score", &C::score, kNmtScoreNames, "prior scorer: {}"),
      choice_row("encoder", &C::encoder, kNmtEncoderNames,
                 "{} (embedding: x_i = tanh(W e(x_i) + b), no context: a diagnostic for alignment studies)"),
  };
  return table;
}

namespace {

// The figures of NmtEvalFigures, by name, for the resume state and back.
std::vector<std::pair<const char*, double*>> figure_fields(NmtEvalFigures& f) {
  return {{"tokens", &f.tokens},       {"nll", &f.nll},
          {"ppl", &f.ppl},             {"elbo", &f.elbo},
          {"kl", &f.kl},               {"kl_gap", &f.kl_gap},
          {"kl_posterior", &f.kl_posterior}, {"identity_error", &f.identity_error},
          {"entropy", &f.entropy},     {"accuracy", &f.accuracy},
          {"nll_mean_attn", &f.nll_mean_attn}, {"support", &f.support}};
}

NmtEvalFigures nmt_figures_of(const Figures& figures) {
  NmtEvalFigures f;
  for (const auto& [name, value] : figure_fields(f)) *value = figure(figures, name);
  return f;
}

// Sums of a training step: the objective, KL(q‖p), H(q) and H(p) (summed over target tokens; the last three 0
// without q), the target tokens and, for the sparse variants only, the support sizes.
enum NmtSum { kObj, kKl, kQEntropy, kPriorEntropy, kTok, kSupport };

class NmtTask final : public TrainTask {
 public:
  explicit NmtTask(const NmtTrainOptions& opt)
      : opt_(opt),
        corpus_(load_parallel_corpus(opt.corpus.reader(), opt.corpus.vocab(), opt.corpus.vocab())),
        cfg_(with_vocab_sizes(opt.model, corpus_)),
        model_(cfg_),
        tokenization_(tokenization_metadata(read_corpus_tokenization(opt.corpus.dir))) {
    model_.ps.init_uniform(float(opt.loop.init), opt.loop.seed);
    bopt_.batch_size = opt.loop.batch_size;
    if (!opt.plot_dir.empty()) prepare_plots();
  }

  ParamStore<float>& params() override { return model_.ps; }
  std::vector<std::string> sum_names() const override {
    // The support sum only for the sparse variants, so that the other variants' resume states keep their sums.
    if (variant_info(cfg_.attn).sparse) return {"objective", "kl", "q_entropy", "prior_entropy", "tokens", "support"};
    return {"objective", "kl", "q_entropy", "prior_entropy", "tokens"};
  }
  std::vector<std::vector<int>> epoch_batches(int epoch) override {
    return train_batches(corpus_.train.pairs, bopt_, opt_.loop.seed, epoch);
  }

  StepResult step(const std::vector<int>& pairs, int64_t step) override {
    const Batch batch = make_batch(corpus_.train.pairs, pairs);
    tape_.reset();
    // Every random draw of step t comes from this stream: the resume state needs no generator state.
    Ctx c{tape_, model_.ps, true, CounterRng(opt_.loop.seed, stream_id("train")).child(uint64_t(step)), cfg_.dropout};
    ObjectiveOptions objective = opt_.objective;
    objective.step = step;
    ObjectiveTerms terms = model_.objective(c, batch, objective);
    Var<float> loss = affine(terms.objective, -1.f / float(batch.B), 0.f);  // normalised per sentence
    if (std::isfinite(loss.item())) tape_.backward(loss);  // into zeros: the last Adam step consumed the gradients
    const double ntok = double(batch.target_tokens());
    std::vector<double> sums{terms.value_sum, terms.kl_sum, terms.q_entropy_sum, terms.prior_entropy_sum, ntok};
    if (variant_info(cfg_.attn).sparse) sums.push_back(terms.support_sum);
    return {loss.item(), sums, ntok};
  }

  Validation validate() override {
    NmtEvalFigures v = evaluate_nmt(model_, corpus_.valid, 32, 0, opt_.loop.seed);
    Validation out;
    out.criterion = valid_criterion(cfg_.attn, v.nll, v.elbo);
    for (const auto& [name, value] : figure_fields(v)) out.figures.emplace_back(name, *value);
    return out;
  }

  void save_best(const std::string& path, const ValidationRecord& r) override {
    if (path.empty()) return;
    std::map<std::string, std::string> extra = tokenization_;  // how lava translate tokenises raw text
    extra.insert({{"epoch", std::to_string(r.epoch)},
                  {"steps", std::to_string(r.steps)},
                  {"valid_ppl", fmt::format("{}", figure(r.valid.figures, "ppl"))}});
    save_nmt(path, model_, corpus_.src_vocab, corpus_.tgt_vocab, extra);
  }

  ReportLine report(const ValidationRecord& r, const std::vector<ValidationRecord>&) override {
    const NmtEvalFigures v = nmt_figures_of(r.valid.figures);
    const double tokens = std::max(1.0, r.train[kTok]), train_objective = r.train[kObj] / tokens;
    const double train_kl = r.train[kKl] / tokens;
    ReportLine line;
    JsonLine& j = line.json;
    j.add("event", "epoch").add("task", "nmt").add("attn", variant_info(cfg_.attn).name).add("epoch", r.epoch);
    add_progress_fields(j, r);
    j.add("train_objective", train_objective).add("train_kl", train_kl);
    j.add("valid_nll", v.nll).add("valid_ppl", v.ppl).add("valid_elbo", v.elbo).add("valid_kl", v.kl);
    j.add("valid_kl_gap", v.kl_gap).add("valid_entropy", v.entropy).add("best", r.best);
    if (variant_info(cfg_.attn).sparse)  // mean support size per target token, training batches and validation
      j.add("support", r.train[kSupport] / tokens).add("valid_support", v.support);
    if (r.partial) j.add("partial", true);
    if (variant_info(cfg_.attn).uses_q && !r.partial)
      report_collapse(j, r.train[kKl], r.train[kQEntropy], r.train[kPriorEntropy], r.train[kTok], r.epoch);
    line.text = fmt::format(
        "epoch {}{}  steps {}  {:.0f}s  lr {:.2e}  train obj/tok {:.4f} kl {:.4f} | valid ppl {:.6g} elbo {:.4f} kl "
        "{:.4f} gap {:.4f} H(p) {:.3f}{}",
        r.epoch, r.partial ? " (partial)" : "", r.steps, r.seconds, r.lr, train_objective, train_kl, v.ppl, v.elbo,
        v.kl, v.kl_gap, v.entropy, r.best ? "  (best)" : "");
    return line;
  }

  void write_plots(const ValidationRecord& r, const std::vector<ValidationRecord>& history) override {
    if (opt_.plot_dir.empty()) return;
    write_learning_curves(opt_.plot_dir, variant_info(cfg_.attn).name, sum_names(), history, learning_curves());
    write_attention_plots(opt_.plot_dir, model_, examples_,
                          r.partial ? fmt::format("after step {} (epoch {:.2f})", r.steps, r.position)
                                    : fmt::format("after epoch {} (step {})", r.epoch, r.steps));
  }

  std::string progress_text(const std::vector<double>& sums, int64_t, double units_per_second) const override {
    return fmt::format("obj/tok {:.3f} | {:.0f} tok/s", sums[kObj] / sums[kTok], units_per_second);
  }

  RunIdentity identity() const override;

 private:
  static Seq2SeqConfig with_vocab_sizes(Seq2SeqConfig cfg, const ParallelCorpus& corpus) {
    cfg.src_vocab = corpus.src_vocab.size();
    cfg.tgt_vocab = corpus.tgt_vocab.size();
    return cfg;
  }
  void prepare_plots() {
    std::error_code ec;
    std::filesystem::create_directories(opt_.plot_dir, ec);
    if (ec) throw input_error(opt_.plot_dir, 0, "cannot create the plot directory: " + ec.message());
    CorpusOptions co = opt_.corpus.reader();
    co.keep_source_tokens = co.keep_target_tokens = true;
    examples_ =
        attention_examples(read_parallel_split(co, CorpusSplit::valid, corpus_.src_vocab, corpus_.tgt_vocab), 4);
  }
  // learning-curves.svg and kl.svg (tasks/nmt/plots.hpp), per target token.
  static const std::vector<CurvePicture>& learning_curves() {
    static const std::vector<CurvePicture> pictures = {
        {"learning-curves.svg", "bounds per target token", "nats",
         {train_curve("train −objective", "objective", "tokens", -1), valid_curve("valid −log p(y|x)", "nll"),
          valid_curve("valid −ELBO", "elbo", -1)}},
        {"kl.svg", "KL terms per target token", "nats",
         {valid_curve("valid KL gap (log p − ELBO)", "kl_gap"), valid_curve("valid KL(q‖p)", "kl"),
          train_curve("train KL(q‖p)", "kl", "tokens")}}};
    return pictures;
  }

  const NmtTrainOptions& opt_;
  ParallelCorpus corpus_;
  Seq2SeqConfig cfg_;
  Seq2Seq model_;
  std::map<std::string, std::string> tokenization_;  // the corpus's tokenisation record, as model-file metadata
  Tape<float> tape_;
  BatchOptions bopt_;
  AttentionExamples examples_;
};

RunIdentity NmtTask::identity() const {
  Fingerprint h;
  for (const Vocab* v : {&corpus_.src_vocab, &corpus_.tgt_vocab}) h.add(v->to_text());
  for (const auto* pairs : {&corpus_.train.pairs, &corpus_.valid.pairs})
    for (const SentencePair& p : *pairs) h.add_vector(p.src).add_vector(p.tgt);
  const Seq2SeqConfig& m = opt_.model;
  RunIdentity id = choice_identity(nmt_choice_options(), m);
  const RunIdentity sizes = option_identity(nmt_model_options(), m);
  id.insert(id.end(), sizes.begin(), sizes.end());
  const RunIdentity objective = objective_identity(opt_.objective), variant = variant_identity(m.attn, m.variant);
  id.insert(id.end(), objective.begin(), objective.end());
  const RunIdentity corpus = option_identity(nmt_corpus_options(), opt_.corpus);
  id.insert(id.end(), corpus.begin(), corpus.end());
  id.insert(id.end(), variant.begin(), variant.end());
  id.push_back({"data", fmt::format("{} train and {} valid pairs, vocabularies {} and {}, hash {}",
                                    corpus_.train.pairs.size(), corpus_.valid.pairs.size(), corpus_.src_vocab.size(),
                                    corpus_.tgt_vocab.size(), h.hex())});
  return id;
}

}  // namespace

TrainResult train_nmt(const NmtTrainOptions& opt) {
  const SaveLock lock(opt.loop.save);
  NmtTask task(opt);
  TrainResult r("nmt", train_loop("nmt", opt.loop, task, lock));
  r.about = {{"attn", JsonValue(variant_info(opt.model.attn).name)}};
  r.best_epoch = r.loop.kept_position;
  const Figures& kept = r.loop.kept.figures;
  r.best = {{"valid_ppl", figure(kept, "ppl")}, {"valid_elbo", figure(kept, "elbo")},
            {"valid_kl_gap", figure(kept, "kl_gap")}};
  return r;
}

}  // namespace lava
