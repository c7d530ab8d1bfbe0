#include "tasks/vqa/trainer.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "attention/collapse_monitor.hpp"
#include "tasks/vqa/model_file.hpp"
#include "tasks/vqa/plots.hpp"
#include "nn/optim.hpp"
#include "core/json.hpp"
#include "report/progress.hpp"

namespace lava {

namespace {

void print_epoch(const VqaTrainOptions& opt, const VqaEpochRecord& r, const VqaEvalFigures& v, bool best,
                 const CollapseVerdict& collapse) {
  if (opt.format == OutputFormat::json) {
    JsonLine j;
    j.add("event", "epoch").add("task", "vqa").add("attn", variant_info(opt.model.attn).name);
    j.add("epoch", r.epoch).add("steps", r.steps).add("seconds", r.seconds).add("lr", r.lr);
    j.add("train_objective", r.train_objective).add("train_kl", r.train_kl);
    j.add("valid_nll", v.nll).add("valid_accuracy", v.accuracy).add("valid_elbo", v.elbo).add("valid_kl", v.kl);
    j.add("valid_kl_gap", v.kl_gap).add("valid_entropy", v.entropy);
    j.add("valid_region_acc_prior", v.region_acc_prior).add("valid_region_acc_posterior", v.region_acc_posterior);
    j.add("best", best);
    if (collapse.tokens > 0) j.add("q_collapsed", collapse.collapsed);  // attention/collapse_monitor.hpp
    std::printf("%s\n", j.str().c_str());
  } else {
    std::fprintf(stderr,
                 "epoch %.2f  steps %lld  %.0fs  lr %.2e  train obj %.4f kl %.4f | valid nll %.4f acc %.4f elbo %.4f "
                 "kl %.4f gap %.4f H(p) %.3f region p %.3f post %.3f%s\n",
                 r.epoch, (long long)r.steps, r.seconds, r.lr, r.train_objective, r.train_kl, v.nll, v.accuracy,
                 v.elbo, v.kl, v.kl_gap, v.entropy, v.region_acc_prior, v.region_acc_posterior,
                 best ? "  (best)" : "");
  }
  std::fflush(stdout);
}

}  // namespace

double vqa_valid_criterion(AttnVariant v, const VqaEvalFigures& f) {
  if (std::isnan(f.nll)) return f.accuracy;  // no validation answer was seen in training: nothing has a likelihood
  return valid_criterion(v, f.nll, f.elbo);
}

VqaTrainSummary train_vqa(const VqaTrainOptions& opt) {
  const VqaSplit train = load_vqa_split(opt.data, "train");
  const VqaSplit valid = load_vqa_split(opt.data, "valid", train.features);
  if (valid.features->num_regions() != train.features->num_regions() || valid.features->dim() != train.features->dim())
    throw input_error(valid.features_path, 0,
                      fmt::format("{} regions of {} features; the train split has {} of {}",
                                  valid.features->num_regions(), valid.features->dim(), train.features->num_regions(),
                                  train.features->dim()));
  const Vocab words = build_question_vocab(train.questions);
  const AnswerVocab answers = AnswerVocab::build(train.questions);
  const VqaEncoded train_enc = encode_vqa(train.questions, words, answers);
  const VqaEncoded valid_enc = encode_vqa(valid.questions, words, answers);

  VqaConfig cfg = opt.model;
  cfg.words = words.size(), cfg.answers = answers.size();
  cfg.regions = train.features->num_regions(), cfg.feature_dim = train.features->dim();
  VqaModel model(cfg);
  model.ps.init_uniform(float(opt.init), opt.seed);
  Adam<float> adam;
  adam.lr = float(opt.lr);
  Tape<float> tape;
  VqaTrainSummary summary;
  double best_criterion = -INFINITY;
  std::vector<float> best_params;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  int64_t questions_seen = 0;
  int stale_epochs = 0;
  bool stop = false;
  const std::string title = fmt::format("vqa {}", variant_info(cfg.attn).name);
  for (int epoch = 1; epoch <= opt.epochs && !stop; ++epoch) {
    const auto batches = vqa_train_batches(int(train.questions.size()), opt.batch_size, opt.seed, epoch);
    Progress progress(int64_t(batches.size()), fmt::format("epoch {}", epoch));
    double obj_sum = 0, kl_sum = 0, n_sum = 0;
    CollapseMonitor collapse;  // this epoch's KL(q‖p), H(q), H(p) over the questions with a known answer
    size_t done = 0;
    for (; done < batches.size(); ++done) {
      const VqaBatch batch = make_vqa_batch(train, train_enc, batches[done]);
      tape.reset();
      Ctx c{tape, model.ps, true, CounterRng(opt.seed, stream_id("vqa/train")).child(uint64_t(summary.steps)),
            cfg.dropout};
      ObjectiveOptions objective = opt.objective;
      objective.step = summary.steps;
      ObjectiveTerms terms = model.objective(c, batch, objective);
      Var<float> loss = affine(terms.objective, -1.f / float(batch.B), 0.f);  // normalised per question
      if (!std::isfinite(loss.item())) {
        std::fprintf(stderr, "lava train: the loss became %f at step %lld; stopping (the last checkpoint is kept)\n",
                     double(loss.item()), (long long)summary.steps);
        summary.stopped_on_nan = true;
        stop = true;
        break;
      }
      tape.backward(loss);  // accumulates into zeros: the last Adam step consumed the gradients
      adam.step(model.ps, clip_factor(grad_norm(model.ps), float(opt.clip)));
      ++summary.steps;
      questions_seen += batch.B;
      obj_sum += terms.value_sum, kl_sum += terms.kl_sum, n_sum += batch.B;
      if (variant_info(cfg.attn).uses_q)
        collapse.add(terms.kl_sum, terms.q_entropy_sum, terms.prior_entropy_sum,
                     std::accumulate(batch.known.begin(), batch.known.end(), 0.0));
      progress.update(int64_t(done + 1),
                      fmt::format("obj {:.3f} | {:.0f} q/s", obj_sum / n_sum, double(questions_seen) / elapsed()));
      if ((opt.max_steps > 0 && summary.steps >= opt.max_steps) ||
          (opt.max_minutes > 0 && elapsed() >= 60 * opt.max_minutes)) {
        ++done;
        stop = true;
        break;
      }
    }
    progress.finish();
    if (summary.stopped_on_nan) break;
    const VqaEvalFigures v = evaluate_vqa(model, valid, valid_enc, answers, opt.eval_batch_size, 0, opt.seed);
    const double criterion = vqa_valid_criterion(cfg.attn, v);
    const bool best = criterion > best_criterion;
    VqaEpochRecord r;
    r.epoch = epoch - 1 + double(done) / double(std::max<size_t>(1, batches.size()));
    r.steps = summary.steps, r.seconds = elapsed(), r.lr = adam.lr;
    r.train_objective = obj_sum / std::max(1.0, n_sum), r.train_kl = kl_sum / std::max(1.0, n_sum);
    r.valid_nll = v.nll, r.valid_accuracy = v.accuracy, r.valid_elbo = v.elbo, r.valid_kl = v.kl;
    r.valid_kl_gap = v.kl_gap, r.valid_region_acc_prior = v.region_acc_prior;
    r.valid_region_acc_posterior = v.region_acc_posterior;
    summary.history.push_back(r);
    if (best) {
      best_criterion = criterion;
      summary.best_valid = v;
      summary.best_epoch = epoch;
      stale_epochs = 0;
      best_params.assign(model.ps.values(), model.ps.values() + model.ps.size());
      if (!opt.save.empty())
        save_vqa(opt.save, model, words, answers,
                 {{"epoch", std::to_string(epoch)},
                  {"steps", std::to_string(summary.steps)},
                  {"valid_nll", fmt::format("{}", v.nll)},
                  {"valid_accuracy", fmt::format("{}", v.accuracy)}});
    } else {
      ++stale_epochs;
      if (epoch >= opt.start_decay_at) adam.lr *= float(opt.lr_decay);
    }
    summary.epochs = epoch;
    const CollapseVerdict verdict = done == batches.size() ? collapse.end_epoch() : CollapseVerdict{};  // whole epochs
    if (verdict.collapsed) std::fprintf(stderr, "%s\n", collapse_warning(verdict, epoch).c_str());
    print_epoch(opt, r, v, best, verdict);
    if (!opt.plot_dir.empty()) write_vqa_learning_curves(opt.plot_dir, title, summary.history);
    if (opt.patience > 0 && stale_epochs >= opt.patience) break;
  }
  summary.seconds = elapsed();
  summary.questions_per_second = double(questions_seen) / std::max(1e-9, summary.seconds);
  if (!opt.plot_dir.empty() && !best_params.empty()) {
    std::copy(best_params.begin(), best_params.end(), model.ps.values());
    write_vqa_attention_plots(opt.plot_dir, model, valid, valid_enc, answers, opt.plot_questions,
                              fmt::format("best epoch {}", summary.best_epoch));
  }
  return summary;
}

}  // namespace lava
