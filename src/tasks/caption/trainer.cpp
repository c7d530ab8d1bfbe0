#include "tasks/caption/trainer.hpp"

#include <cmath>

#include "tasks/caption/model_file.hpp"
#include "train/loop.hpp"

namespace lava {

const OptionTable<CaptionConfig>& caption_model_options() {
  using C = CaptionConfig;
  static const OptionTable<C> table = {
      {"emb-size", &C::emb, 1, 65536, "word embedding size (= the deep output layer's width)"},
      {"hidden-size", &C::hidden, 1, 65536, "LSTM size"},
      {"annotation-size", &C::annotation, 1, 65536, "size of the region annotations a_i"},
      {"attn-size", &C::attn_size, 1, 65536, "hidden size of the attention and q scorers"},
      {"dropout", &C::dropout, 0, 0.95, "dropout on the word embeddings"},
  };
  return table;
}

const ChoiceTable<CaptionConfig>& caption_choice_options() {
  static const ChoiceTable<CaptionConfig> table = {attn_choice_row(&CaptionConfig::attn, "caption")};
  return table;
}

namespace {

std::vector<std::pair<const char*, double*>> figure_fields(CaptionEvalFigures& f) {
  return {{"captions", &f.captions}, {"words", &f.words},         {"nll", &f.nll},           {"bound", &f.bound},
          {"kl", &f.kl},             {"item_words", &f.item_words}, {"attn_acc", &f.attn_acc}};
}

CaptionEvalFigures figures_of(const Figures& figures) {
  CaptionEvalFigures f;
  for (const auto& [name, value] : figure_fields(f)) *value = figure(figures, name);
  return f;
}

// Sums of a training step: the objective's value, KL(q‖p), the penalty, the real words and the captions.
enum CaptionSum { kValue, kKl, kPenalty, kWords, kCaptions };

class CaptionTask final : public TrainTask {
 public:
  explicit CaptionTask(const CaptionTrainOptions& opt)
      : opt_(opt),
        train_(load_caption_split(opt.data_dir, "train", opt.mnist_dir)),
        valid_(load_caption_split(opt.data_dir, "valid", opt.mnist_dir)),
        vocab_(build_caption_vocab(train_)),
        cfg_(config(opt.model, train_, vocab_)),
        model_(cfg_) {
    if (valid_.scenes->dim() != train_.scenes->dim())
      throw input_error(valid_.captions_path, 0, "the valid scenes' features differ from the train scenes'");
    model_.ps.init_uniform(float(opt.loop.init), opt.loop.seed);
    model_.set_sat_baseline(0.f);
  }

  ParamStore<float>& params() override { return model_.ps; }
  std::vector<std::string> sum_names() const override { return {"value", "kl", "penalty", "words", "captions"}; }
  std::vector<std::vector<int>> epoch_batches(int epoch) override {
    return caption_train_batches(int(train_.examples.size()), opt_.loop.batch_size, opt_.loop.seed, epoch);
  }

  StepResult step(const std::vector<int>& index, int64_t step) override {
    const CaptionBatch batch = make_caption_batch(train_, vocab_, index);
    tape_.reset();
    Ctx c{tape_, model_.ps, true, CounterRng(opt_.loop.seed, stream_id("caption/train")).child(uint64_t(step)),
          cfg_.dropout};
    CaptionObjective objective = opt_.objective;
    objective.objective.step = step;
    const CaptionTerms terms = model_.objective(c, batch, objective);
    double words = 0;
    for (float m : batch.mask) words += m;
    Var<float> loss = affine(terms.objective, -1.f / float(words), 0.f);  // per word
    if (std::isfinite(loss.item())) {
      tape_.backward(loss);
      // b_k = decay · b_{k−1} + (1 − decay) · mean log f of this batch's sampled words (gradient 0: Adam leaves it)
      if (variant_info(cfg_.attn).moving_baseline)
        model_.set_sat_baseline(
            moving_baseline_update(model_.sat_baseline(), terms.attention, opt_.objective.sat.baseline_decay));
    }
    return {loss.item(), {terms.value_sum, terms.kl_sum, terms.penalty, words, double(batch.B)}, words};
  }

  Validation validate() override {
    CaptionEvalOptions eo;
    eo.batch_size = opt_.eval_batch_size, eo.decode = false;
    CaptionEvalFigures v = evaluate_caption(model_, valid_, vocab_, eo);
    Validation out;
    out.criterion = valid_criterion(cfg_.attn, v.nll, -v.bound);
    for (const auto& [name, value] : figure_fields(v)) out.figures.emplace_back(name, *value);
    return out;
  }

  void save_best(const std::string& path, const ValidationRecord& r) override {
    if (path.empty()) return;
    save_caption_model(path, model_, vocab_,
                       {{"epoch", std::to_string(r.epoch)},
                        {"steps", std::to_string(r.steps)},
                        {"valid_nll", fmt::format("{}", figure(r.valid.figures, "nll"))}});
  }

  ReportLine report(const ValidationRecord& r, const std::vector<ValidationRecord>&) override {
    const CaptionEvalFigures v = figures_of(r.valid.figures);
    const double words = std::max(1.0, r.train[kWords]);
    ReportLine line;
    JsonLine& j = line.json;
    j.add("event", "epoch").add("task", "caption").add("attn", cfg_.attn_name());
    j.add("epoch", r.position);
    add_progress_fields(j, r);
    j.add("train_objective", r.train[kValue] / words).add("train_kl", r.train[kKl] / words);
    j.add("train_penalty", r.train[kPenalty] / std::max(1.0, r.train[kCaptions]));
    if (variant_info(cfg_.attn).moving_baseline) j.add("sat_baseline", double(model_.sat_baseline()));
    j.add("valid_nll", v.nll).add("valid_bound", v.bound).add("valid_kl", v.kl).add("valid_attn_acc", v.attn_acc);
    j.add("best", r.best);
    if (r.partial) j.add("partial", true);
    line.text = fmt::format(
        "epoch {:.2f}  steps {}  {:.0f}s  lr {:.2e}  train obj {:.4f} | valid nll {:.4f} bound {:.4f} kl {:.4f} "
        "attn acc {:.3f}{}",
        r.position, r.steps, r.seconds, r.lr, r.train[kValue] / words, v.nll, v.bound, v.kl, v.attn_acc,
        r.best ? "  (best)" : "");
    return line;
  }

  std::string progress_text(const std::vector<double>& sums, int64_t, double units_per_second) const override {
    return fmt::format("obj {:.3f} | {:.0f} words/s", sums[kValue] / std::max(1.0, sums[kWords]), units_per_second);
  }

  RunIdentity identity() const override {
    Fingerprint h;
    h.add(vocab_.to_text());
    for (const CaptionSplit* s : {&train_, &valid_}) {
      for (const SceneCaptions& sc : s->captions)
        for (const Caption& c : sc.refs) h.add(format_caption(c));
      for (const Scene& scene : s->scenes->scenes()) h.add(scene.image.data(), sizeof scene.image);
    }
    const CaptionConfig& m = opt_.model;
    const SatHardOptions& sat = opt_.objective.sat;
    RunIdentity id = choice_identity(caption_choice_options(), m);
    const RunIdentity sizes = option_identity(caption_model_options(), m);
    id.insert(id.end(), sizes.begin(), sizes.end());
    id.insert(id.end(), {{"--alpha-reg", exact(opt_.objective.alpha_reg)},
                         {"--sat-reinforce", exact(sat.reinforce)},
                         {"--sat-entropy", exact(sat.entropy)},
                         {"--sat-expected", exact(sat.p_expected)},
                         {"--sat-baseline-decay", exact(sat.baseline_decay)}});
    const RunIdentity objective = objective_identity(opt_.objective.objective);
    id.insert(id.end(), objective.begin(), objective.end());
    id.push_back({"--eval-batch-size", exact(opt_.eval_batch_size)});
    id.push_back({"data", fmt::format("{} train and {} valid captions, {} words, hash {}", train_.examples.size(),
                                      valid_.examples.size(), vocab_.size(), h.hex())});
    return id;
  }

 private:
  static CaptionConfig config(CaptionConfig cfg, const CaptionSplit& train, const Vocab& vocab) {
    cfg.words = vocab.size(), cfg.feature_dim = train.scenes->dim();
    return cfg;
  }

  const CaptionTrainOptions& opt_;
  const CaptionSplit train_, valid_;
  const Vocab vocab_;
  const CaptionConfig cfg_;
  CaptionModel model_;
  Tape<float> tape_;
};

}  // namespace

TrainResult train_caption(const CaptionTrainOptions& opt) {
  const SaveLock lock(opt.loop.save);
  CaptionTask task(opt);
  const LoopSummary s = train_loop("caption", opt.loop, task, lock);
  TrainResult r("caption", s);
  r.about = {{"attn", JsonValue(opt.model.attn_name())}};
  r.best_epoch = s.kept_position, r.units = "words";
  const Figures& kept = s.kept.figures;
  r.best = {{"valid_nll", figure(kept, "nll")}, {"valid_bound", figure(kept, "bound")},
            {"valid_attn_acc", figure(kept, "attn_acc")}};
  return r;
}

}  // namespace lava
