#include "tasks/vqa/trainer.hpp"

#include <cmath>
#include <filesystem>
#include <numeric>
#include <system_error>

#include "attention/collapse_monitor.hpp"
#include "tasks/vqa/model_file.hpp"
#include "tasks/vqa/plots.hpp"
#include "core/check.hpp"
#include "core/stop_signal.hpp"
#include "train/learning_curves.hpp"
#include "train/loop.hpp"

namespace lava {

const OptionTable<VqaConfig>& vqa_model_options() {
  using C = VqaConfig;
  static const OptionTable<C> table = {
      {"emb-size", &C::emb, 1, 65536, "question word embedding size"},
      {"hidden-size", &C::hidden, 1, 65536, "question LSTM and region projection size"},
      {"attn-size", &C::attn_size, 1, 65536, "hidden size of the prior's and q's MLP scorers"},
      {"mlp-size", &C::mlp, 1, 65536, "hidden size of the answer MLP"},
      {"answer-emb", &C::answer_emb, 1, 65536, "q: answer embedding size"},
      {"dropout", &C::dropout, 0, 0.95, "dropout on the answer MLP's hidden layer"},
  };
  return table;
}

const ChoiceTable<VqaConfig>& vqa_choice_options() {
  static const ChoiceTable<VqaConfig> table = {attn_choice_row(&VqaConfig::attn, "vqa")};
  return table;
}

double vqa_valid_criterion(AttnVariant v, const VqaEvalFigures& f) {
  if (std::isnan(f.nll)) return f.accuracy;  // no validation answer was seen in training: nothing has a likelihood
  return valid_criterion(v, f.nll, f.elbo);
}

namespace {

// The scalar figures of VqaEvalFigures, by name, for the resume state and back (per-type accuracies stay out).
std::vector<std::pair<const char*, double*>> figure_fields(VqaEvalFigures& f) {
  return {{"questions", &f.questions},
          {"unseen", &f.unseen},
          {"nll", &f.nll},
          {"accuracy", &f.accuracy},
          {"vqa_score", &f.vqa_score},
          {"elbo", &f.elbo},
          {"kl", &f.kl},
          {"kl_gap", &f.kl_gap},
          {"kl_posterior", &f.kl_posterior},
          {"identity_error", &f.identity_error},
          {"entropy", &f.entropy},
          {"region_questions", &f.region_questions},
          {"region_acc_prior", &f.region_acc_prior},
          {"region_acc_posterior", &f.region_acc_posterior},
          {"region_acc_q", &f.region_acc_q},
          {"nll_mean_attn", &f.nll_mean_attn},
          {"support", &f.support}};
}

VqaEvalFigures vqa_figures_of(const Figures& figures) {
  VqaEvalFigures f;
  for (const auto& [name, value] : figure_fields(f)) *value = figure(figures, name);
  return f;
}

// Sums of a training step: the objective, KL(q‖p), H(q) and H(p) (summed over questions; the last three 0 without
// q, and over the questions with a known answer only), the questions with a known answer, all questions and, for the
// sparse variants only, the support sizes.
enum VqaSum { kObj, kKl, kQEntropy, kPriorEntropy, kKnown, kQuestions, kSupport };

class VqaTask final : public TrainTask {
 public:
  explicit VqaTask(const VqaTrainOptions& opt)
      : opt_(opt),
        train_(load_vqa_split(opt.data, "train")),
        valid_(load_vqa_split(opt.data, "valid", train_.features)),
        words_(build_question_vocab(train_.questions)),
        answers_(AnswerVocab::build(train_.questions)),
        train_enc_(encode_vqa(train_.questions, words_, answers_)),
        valid_enc_(encode_vqa(valid_.questions, words_, answers_)),
        cfg_(config(opt.model, train_, words_, answers_)),
        model_(cfg_) {
    if (valid_.features->num_regions() != train_.features->num_regions() ||
        valid_.features->dim() != train_.features->dim())
      throw input_error(valid_.features_path, 0,
                        fmt::format("{} regions of {} features; the train split has {} of {}",
                                    valid_.features->num_regions(), valid_.features->dim(),
                                    train_.features->num_regions(), train_.features->dim()));
    model_.ps.init_uniform(float(opt.loop.init), opt.loop.seed);
  }

  ParamStore<float>& params() override { return model_.ps; }
  std::vector<std::string> sum_names() const override {
    // The support sum only for the sparse variants, so that the other variants' resume states keep their sums.
    if (variant_info(cfg_.attn).sparse)
      return {"objective", "kl", "q_entropy", "prior_entropy", "known", "questions", "support"};
    return {"objective", "kl", "q_entropy", "prior_entropy", "known", "questions"};
  }
  std::vector<std::vector<int>> epoch_batches(int epoch) override {
    return vqa_train_batches(int(train_.questions.size()), opt_.loop.batch_size, opt_.loop.seed, epoch);
  }

  StepResult step(const std::vector<int>& index, int64_t step) override {
    const VqaBatch batch = make_vqa_batch(train_, train_enc_, index);
    tape_.reset();
    Ctx c{tape_, model_.ps, true, CounterRng(opt_.loop.seed, stream_id("vqa/train")).child(uint64_t(step)),
          cfg_.dropout};
    ObjectiveOptions objective = opt_.objective;
    objective.step = step;
    ObjectiveTerms terms = model_.objective(c, batch, objective);
    Var<float> loss = affine(terms.objective, -1.f / float(batch.B), 0.f);  // normalised per question
    if (std::isfinite(loss.item())) tape_.backward(loss);  // into zeros: the last Adam step consumed the gradients
    const double known = std::accumulate(batch.known.begin(), batch.known.end(), 0.0);
    std::vector<double> sums{terms.value_sum, terms.kl_sum, terms.q_entropy_sum, terms.prior_entropy_sum, known,
                             double(batch.B)};
    if (variant_info(cfg_.attn).sparse) sums.push_back(terms.support_sum);
    return {loss.item(), sums, double(batch.B)};
  }

  Validation validate() override {
    VqaEvalFigures v = evaluate_vqa(model_, valid_, valid_enc_, answers_, opt_.eval_batch_size, 0, opt_.loop.seed);
    Validation out;
    out.criterion = vqa_valid_criterion(cfg_.attn, v);
    for (const auto& [name, value] : figure_fields(v)) out.figures.emplace_back(name, *value);
    return out;
  }

  void save_best(const std::string& path, const ValidationRecord& r) override {
    best_params_.assign(model_.ps.values(), model_.ps.values() + model_.ps.size());  // for the attention pictures
    best_epoch_ = r.epoch;
    if (path.empty()) return;
    save_vqa(path, model_, words_, answers_,
             {{"epoch", std::to_string(r.epoch)},
              {"steps", std::to_string(r.steps)},
              {"valid_nll", fmt::format("{}", figure(r.valid.figures, "nll"))},
              {"valid_accuracy", fmt::format("{}", figure(r.valid.figures, "accuracy"))}});
  }

  ReportLine report(const ValidationRecord& r, const std::vector<ValidationRecord>&) override {
    const VqaEvalFigures v = vqa_figures_of(r.valid.figures);
    const double questions = std::max(1.0, r.train[kQuestions]), train_objective = r.train[kObj] / questions;
    const double train_kl = r.train[kKl] / questions;
    ReportLine line;
    JsonLine& j = line.json;
    j.add("event", "epoch").add("task", "vqa").add("attn", variant_info(cfg_.attn).name);
    j.add("epoch", r.position);
    add_progress_fields(j, r);
    j.add("train_objective", train_objective).add("train_kl", train_kl);
    j.add("valid_nll", v.nll).add("valid_accuracy", v.accuracy).add("valid_elbo", v.elbo).add("valid_kl", v.kl);
    j.add("valid_kl_gap", v.kl_gap).add("valid_entropy", v.entropy);
    j.add("valid_region_acc_prior", v.region_acc_prior).add("valid_region_acc_posterior", v.region_acc_posterior);
    j.add("best", r.best);
    if (variant_info(cfg_.attn).sparse)  // mean support size per known question, training batches and validation
      j.add("support", r.train[kSupport] / std::max(1.0, r.train[kKnown])).add("valid_support", v.support);
    if (r.partial) j.add("partial", true);
    if (variant_info(cfg_.attn).uses_q && !r.partial)
      report_collapse(j, r.train[kKl], r.train[kQEntropy], r.train[kPriorEntropy], r.train[kKnown], r.epoch);
    line.text = fmt::format(
        "epoch {:.2f}  steps {}  {:.0f}s  lr {:.2e}  train obj {:.4f} kl {:.4f} | valid nll {:.4f} acc {:.4f} elbo "
        "{:.4f} kl {:.4f} gap {:.4f} H(p) {:.3f} region p {:.3f} post {:.3f}{}",
        r.position, r.steps, r.seconds, r.lr, train_objective, train_kl, v.nll, v.accuracy, v.elbo, v.kl, v.kl_gap,
        v.entropy, v.region_acc_prior, v.region_acc_posterior, r.best ? "  (best)" : "");
    return line;
  }

  void write_plots(const ValidationRecord&, const std::vector<ValidationRecord>& history) override {
    if (opt_.plot_dir.empty()) return;
    write_learning_curves(opt_.plot_dir, fmt::format("vqa {}", variant_info(cfg_.attn).name), sum_names(), history,
                          learning_curves());
  }

  std::string progress_text(const std::vector<double>& sums, int64_t, double units_per_second) const override {
    return fmt::format("obj {:.3f} | {:.0f} q/s", sums[kObj] / sums[kQuestions], units_per_second);
  }

  RunIdentity identity() const override;

  // learning-curves.svg and accuracy.svg (tasks/vqa/plots.hpp).
  static const std::vector<CurvePicture>& learning_curves() {
    static const std::vector<CurvePicture> pictures = {
        {"learning-curves.svg", "bounds per question", "nats",
         {train_curve("train −objective", "objective", "questions", -1), valid_curve("valid −log p(y|x)", "nll"),
          valid_curve("valid −ELBO", "elbo", -1)}},
        {"accuracy.svg", "validation accuracy", "share",
         {valid_curve("valid accuracy", "accuracy"), valid_curve("valid region acc (prior)", "region_acc_prior"),
          valid_curve("valid region acc (posterior)", "region_acc_posterior")}}};
    return pictures;
  }

  // The attention pictures of the best model (the one this session kept, else the best-model file's).
  void plot_best(int kept_epoch) {
    if (opt_.plot_dir.empty()) return;
    if (best_params_.empty()) {
      std::error_code ec;
      if (opt_.loop.save.empty() || !std::filesystem::exists(opt_.loop.save, ec)) return;
      LoadedVqa saved = load_vqa(opt_.loop.save);
      if (saved.model->ps.size() != model_.ps.size()) return;
      best_params_.assign(saved.model->ps.values(), saved.model->ps.values() + saved.model->ps.size());
      best_epoch_ = kept_epoch;
    }
    std::copy(best_params_.begin(), best_params_.end(), model_.ps.values());
    SaveShield shield;
    write_vqa_attention_plots(opt_.plot_dir, model_, valid_, valid_enc_, answers_, opt_.plot_questions,
                              fmt::format("best epoch {}", best_epoch_));
  }

 private:
  static VqaConfig config(VqaConfig cfg, const VqaSplit& train, const Vocab& words, const AnswerVocab& answers) {
    cfg.words = words.size(), cfg.answers = answers.size();
    cfg.regions = train.features->num_regions(), cfg.feature_dim = train.features->dim();
    return cfg;
  }

  const VqaTrainOptions& opt_;
  const VqaSplit train_, valid_;
  const Vocab words_;
  const AnswerVocab answers_;
  const VqaEncoded train_enc_, valid_enc_;
  const VqaConfig cfg_;
  VqaModel model_;
  Tape<float> tape_;
  std::vector<float> best_params_;
  int best_epoch_ = 0;
};

RunIdentity VqaTask::identity() const {
  // The data: vocabularies, every train and valid question as encoded, and the features' shape and the first and
  // last image's values (all of them would mean computing every scene's features at each start).
  Fingerprint h;
  h.add(words_.to_text()).add(answers_.to_text());
  for (const auto* split : {&train_, &valid_}) {
    const VqaEncoded& enc = split == &train_ ? train_enc_ : valid_enc_;
    for (size_t i = 0; i < enc.words.size(); ++i) {
      const int32_t image_answer[2] = {split->questions[i].image, enc.answer[i]};
      h.add(image_answer, sizeof image_answer).add_vector(enc.words[i]);
    }
    const RegionFeatures& f = *split->features;
    const int32_t shape[3] = {f.num_images(), f.num_regions(), f.dim()};
    h.add(shape, sizeof shape);
    std::vector<float> values(size_t(f.num_regions()) * size_t(f.dim()));
    for (int image : {0, f.num_images() - 1}) {
      f.get(image, values.data());
      h.add_vector(values);
    }
  }
  const VqaConfig& m = opt_.model;
  RunIdentity id = choice_identity(vqa_choice_options(), m);
  const RunIdentity sizes = option_identity(vqa_model_options(), m);
  id.insert(id.end(), sizes.begin(), sizes.end());
  const RunIdentity objective = objective_identity(opt_.objective), variant = variant_identity(m.attn, m.variant);
  id.insert(id.end(), objective.begin(), objective.end());
  id.push_back({"--eval-batch-size", exact(opt_.eval_batch_size)});
  id.insert(id.end(), variant.begin(), variant.end());
  id.push_back({"data", fmt::format("{} train and {} valid questions, {} words, {} answers, hash {}",
                                    train_.questions.size(), valid_.questions.size(), words_.size(), answers_.size(),
                                    h.hex())});
  return id;
}

}  // namespace

TrainResult train_vqa(const VqaTrainOptions& opt) {
  const SaveLock lock(opt.loop.save);
  VqaTask task(opt);
  const LoopSummary s = train_loop("vqa", opt.loop, task, lock);
  task.plot_best(s.kept_epoch);
  TrainResult r("vqa", s);
  r.about = {{"attn", JsonValue(variant_info(opt.model.attn).name)}};
  r.best_epoch = s.kept_position, r.units = "questions";
  const Figures& kept = s.kept.figures;
  r.best = {{"valid_nll", figure(kept, "nll")}, {"valid_accuracy", figure(kept, "accuracy")},
            {"valid_elbo", figure(kept, "elbo")}, {"valid_kl_gap", figure(kept, "kl_gap")}};
  return r;
}

}  // namespace lava
