#include "tasks/nmt/trainer.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <system_error>

#include "attention/collapse_monitor.hpp"
#include "core/check.hpp"
#include "core/stop_signal.hpp"
#include "tasks/nmt/plots.hpp"
#include "tasks/nmt/train_state.hpp"
#include "nn/optim.hpp"
#include "core/json.hpp"
#include "report/progress.hpp"

namespace lava {

namespace {

void print_epoch(const NmtTrainOptions& opt, const EpochRecord& r, int epoch, double seconds, const NmtEvalFigures& v,
                 bool best, bool partial, const CollapseVerdict* collapse = nullptr) {
  if (opt.format == OutputFormat::json) {
    JsonLine j;
    j.add("event", "epoch").add("attn", variant_info(opt.model.attn).name).add("epoch", epoch).add("steps", r.steps);
    j.add("seconds", seconds).add("lr", r.lr).add("train_objective", r.train_objective).add("train_kl", r.train_kl);
    j.add("valid_nll", v.nll).add("valid_ppl", v.ppl).add("valid_elbo", v.elbo).add("valid_kl", v.kl);
    j.add("valid_kl_gap", v.kl_gap).add("valid_entropy", v.entropy).add("best", best);
    if (partial) j.add("partial", true);
    if (collapse && collapse->tokens > 0) j.add("q_collapsed", collapse->collapsed);  // attention/collapse_monitor.hpp
    std::printf("%s\n", j.str().c_str());
  } else {
    std::fprintf(stderr,
                 "epoch %d%s  steps %lld  %.0fs  lr %.2e  train obj/tok %.4f kl %.4f | valid ppl %.3f elbo %.4f kl %.4f "
                 "gap %.4f H(p) %.3f%s\n",
                 epoch, partial ? " (partial)" : "", (long long)r.steps, seconds, r.lr, r.train_objective, r.train_kl,
                 v.ppl, v.elbo, v.kl, v.kl_gap, v.entropy, best ? "  (best)" : "");
  }
  std::fflush(stdout);
}

// One training run: the model, Adam and the resume state, and the moves between them.
class NmtRun {
 public:
  explicit NmtRun(const NmtTrainOptions& opt)
      : opt_(opt),
        corpus_(load_parallel_corpus(opt.corpus, opt.src_vocab, opt.tgt_vocab)),
        cfg_(with_vocab_sizes(opt.model, corpus_)),
        model_(cfg_),
        run_(nmt_run_identity(opt, corpus_)),
        state_path_(opt.save.empty() ? "" : resume_state_path(opt.save)) {
    model_.ps.init_uniform(float(opt.init), opt.seed);
    adam_.lr = float(opt.lr);
    st_.lr = adam_.lr;
    if (!opt.resume.empty()) resume_from(opt.resume);
    if (!opt.plot_dir.empty()) prepare_plots();
    bopt_.batch_size = opt.batch_size;
  }

  NmtTrainSummary run();

 private:
  static Seq2SeqConfig with_vocab_sizes(Seq2SeqConfig cfg, const ParallelCorpus& corpus) {
    cfg.src_vocab = corpus.src_vocab.size();
    cfg.tgt_vocab = corpus.tgt_vocab.size();
    return cfg;
  }
  void resume_from(const std::string& path);
  void prepare_plots();
  // Training time over all sessions of the run.
  double elapsed() const {
    return seconds_before_ +
           std::chrono::duration<double>(std::chrono::steady_clock::now() - session_start_).count();
  }
  // v beats best on the variant's validation criterion (valid_criterion: log p or the ELBO it trains).
  bool better(const NmtEvalFigures& v, const NmtEvalFigures& best) const {
    return valid_criterion(cfg_.attn, v.nll, v.elbo) > valid_criterion(cfg_.attn, best.nll, best.elbo);
  }
  bool bound_reached() const {
    return (opt_.max_steps > 0 && st_.step >= opt_.max_steps) ||
           (opt_.max_minutes > 0 && elapsed() >= 60 * opt_.max_minutes);
  }
  bool train_step(const std::vector<int>& pairs);  // false: the loss or gradient was not finite (nothing changed)
  void end_epoch(size_t batches);
  void stop_mid_epoch(size_t batches);
  EpochRecord record(const NmtEvalFigures& v, double epoch) const;
  void write_state();
  void write_best_model(const Seq2Seq& model, std::map<std::string, std::string> extra);
  void write_plots(const std::vector<EpochRecord>& history, const std::string& caption);

  const NmtTrainOptions& opt_;
  ParallelCorpus corpus_;
  Seq2SeqConfig cfg_;
  Seq2Seq model_;
  Adam<float> adam_;
  Tape<float> tape_;
  BatchOptions bopt_;
  const RunIdentity run_;
  const std::string state_path_;
  NmtTrainState st_;
  AttentionExamples examples_;
  NmtTrainSummary summary_;
  CollapseMonitor collapse_;  // this epoch's KL and entropies (not in the resume state: a resumed epoch is judged
                              // on its batches after the resume)
  bool partial_best_ = false;  // the validation of a mid-epoch stop beat the run's best
  double seconds_before_ = 0;  // training time of the sessions before this one
  std::chrono::steady_clock::time_point session_start_;
};

void NmtRun::resume_from(const std::string& path) {
  st_ = load_train_state(path, run_, model_.ps, adam_);
  seconds_before_ = st_.seconds;
  if (st_.best_model && !opt_.save.empty()) {
    // The stopped run left an off-trajectory model in the best-model file; put the run's own best back.
    Seq2Seq best(cfg_);
    std::copy(st_.best_model->params.begin(), st_.best_model->params.end(), best.ps.values());
    write_best_model(best, st_.best_model->extra);
  }
  st_.best_model.reset();
}

void NmtRun::prepare_plots() {
  std::error_code ec;
  std::filesystem::create_directories(opt_.plot_dir, ec);
  if (ec) throw input_error(opt_.plot_dir, 0, "cannot create the plot directory: " + ec.message());
  CorpusOptions co = opt_.corpus;
  co.keep_source_tokens = co.keep_target_tokens = true;
  examples_ = attention_examples(read_parallel_split(co, CorpusSplit::valid, corpus_.src_vocab, corpus_.tgt_vocab), 4);
}

bool NmtRun::train_step(const std::vector<int>& pairs) {
  const Batch batch = make_batch(corpus_.train.pairs, pairs);
  tape_.reset();
  // Every random draw of step t comes from this stream: the resume state needs no generator state.
  Ctx c{tape_, model_.ps, true, CounterRng(opt_.seed, stream_id("train")).child(uint64_t(st_.step)), cfg_.dropout};
  ObjectiveOptions objective = opt_.objective;
  objective.step = st_.step;
  ObjectiveTerms terms = model_.objective(c, batch, objective);
  Var<float> loss = affine(terms.objective, -1.f / float(batch.B), 0.f);  // normalised per sentence
  float norm = 0;
  if (std::isfinite(loss.item())) {
    tape_.backward(loss);  // accumulates into zeros: the last Adam step consumed the gradients
    norm = grad_norm(model_.ps);
  }
  if (!std::isfinite(loss.item()) || !std::isfinite(norm)) {
    std::fprintf(stderr,
                 "lava train: the %s became %f at step %lld; stopping before that update (the best model and the "
                 "last resume state are kept)\n",
                 std::isfinite(loss.item()) ? "gradient norm" : "loss",
                 double(std::isfinite(loss.item()) ? norm : loss.item()), (long long)st_.step);
    return false;
  }
  adam_.step(model_.ps, clip_factor(norm, float(opt_.clip)));
  ++st_.step, ++st_.batch;
  const int64_t ntok = batch.target_tokens();
  st_.tokens_seen += ntok;
  st_.obj_sum += terms.value_sum, st_.kl_sum += terms.kl_sum, st_.tok_sum += double(ntok);
  if (variant_info(cfg_.attn).uses_q)
    collapse_.add(terms.kl_sum, terms.q_entropy_sum, terms.prior_entropy_sum, double(ntok));
  return true;
}

EpochRecord NmtRun::record(const NmtEvalFigures& v, double epoch) const {
  EpochRecord r;
  r.epoch = epoch, r.steps = st_.step, r.lr = adam_.lr;
  r.train_objective = st_.obj_sum / std::max(1.0, st_.tok_sum), r.train_kl = st_.kl_sum / std::max(1.0, st_.tok_sum);
  r.valid_nll = v.nll, r.valid_elbo = v.elbo, r.valid_kl = v.kl, r.valid_kl_gap = v.kl_gap;
  return r;
}

void NmtRun::write_state() {
  if (state_path_.empty()) return;
  st_.seconds = elapsed();
  SaveShield shield;
  save_train_state(state_path_, st_, run_, model_.ps, adam_);
  summary_.resume_state = state_path_;
}

void NmtRun::write_best_model(const Seq2Seq& model, std::map<std::string, std::string> extra) {
  if (opt_.save.empty()) return;
  SaveShield shield;
  save_nmt(opt_.save, model, corpus_.src_vocab, corpus_.tgt_vocab, std::move(extra));
}

void NmtRun::write_plots(const std::vector<EpochRecord>& history, const std::string& caption) {
  if (opt_.plot_dir.empty()) return;
  SaveShield shield;
  write_learning_curves(opt_.plot_dir, variant_info(cfg_.attn).name, history);
  write_attention_plots(opt_.plot_dir, model_, examples_, caption);
}

// Validation at the end of epoch st_.epoch: best model, learning-rate decay, the epoch line, then the state moves
// on to the next epoch and is written.
void NmtRun::end_epoch(size_t batches) {
  LAVA_CHECK(st_.batch == int64_t(batches), "end_epoch after {} of {} batches", st_.batch, batches);
  const NmtEvalFigures v = evaluate_nmt(model_, corpus_.valid, 32, 0, opt_.seed);
  const bool best = better(v, st_.best_valid);
  if (best) {
    st_.best_valid = v;
    st_.stale_epochs = 0;
    write_best_model(model_, {{"epoch", std::to_string(st_.epoch)},
                              {"steps", std::to_string(st_.step)},
                              {"valid_ppl", fmt::format("{}", v.ppl)}});
  } else {
    ++st_.stale_epochs;
    if (st_.epoch >= opt_.start_decay_at) adam_.lr *= float(opt_.lr_decay);
  }
  st_.lr = adam_.lr;
  st_.history.push_back(record(v, double(st_.epoch)));
  const CollapseVerdict collapse = collapse_.end_epoch();
  if (collapse.collapsed) std::fprintf(stderr, "%s\n", collapse_warning(collapse, st_.epoch).c_str());
  print_epoch(opt_, st_.history.back(), st_.epoch, elapsed(), v, best, false, &collapse);
  summary_.epochs = st_.epoch;
  ++st_.epoch;
  st_.batch = 0;
  st_.obj_sum = st_.kl_sum = st_.tok_sum = 0;
  write_state();
  write_plots(st_.history, fmt::format("after epoch {} (step {})", st_.epoch - 1, st_.step));
}

// max_steps or max_minutes stopped the run inside an epoch. The state written first is the run's trajectory; the
// validation after it is not part of it (an uninterrupted run validates only at epoch ends), so it changes neither
// the learning rate nor the best figures a resumed run compares against. If it beats the best epoch, its model
// becomes the best-model file, and the state then also carries the trajectory's best model for a resumed run to
// put back (train_state.hpp).
void NmtRun::stop_mid_epoch(size_t batches) {
  write_state();
  const NmtEvalFigures v = evaluate_nmt(model_, corpus_.valid, 32, 0, opt_.seed);
  const bool best = better(v, st_.best_valid);
  const EpochRecord r = record(v, double(st_.epoch - 1) + double(st_.batch) / double(batches));
  print_epoch(opt_, r, st_.epoch, elapsed(), v, best, true);
  summary_.epochs = st_.epoch;
  if (best) summary_.best_valid = v, partial_best_ = true;
  if (best && !opt_.save.empty()) {
    if (std::isfinite(valid_criterion(cfg_.attn, st_.best_valid.nll, st_.best_valid.elbo)) && !state_path_.empty()) {
      try {
        LoadedNmt old = load_nmt(opt_.save);
        BestModelBackup backup;
        backup.params.assign(old.model->ps.values(), old.model->ps.values() + old.model->ps.size());
        for (const char* key : {"epoch", "steps", "valid_ppl"})
          if (old.metadata.count(key)) backup.extra[key] = old.metadata[key];
        if (backup.params.size() != model_.ps.size()) throw input_error(opt_.save, 0, "not this run's model");
        st_.best_model = std::move(backup);
        write_state();
        st_.best_model.reset();
      } catch (const InputError& e) {
        std::fprintf(stderr, "lava train: warning: %s; a resumed run will not restore the best model\n", e.what());
      }
    }
    write_best_model(model_, {{"epoch", std::to_string(st_.epoch)},
                              {"steps", std::to_string(st_.step)},
                              {"valid_ppl", fmt::format("{}", v.ppl)}});
  }
  std::vector<EpochRecord> history = st_.history;
  history.push_back(r);
  write_plots(history, fmt::format("after step {} ({} of {} batches of epoch {})", st_.step, st_.batch, batches,
                                   st_.epoch));
}

NmtTrainSummary NmtRun::run() {
  session_start_ = std::chrono::steady_clock::now();
  summary_.epochs = st_.epoch - 1;
  StopSignalGuard guard;  // from here on SIGINT/SIGTERM stop after the step in progress
  std::vector<std::vector<int>> batches;
  int batches_epoch = 0;  // the epoch `batches` belongs to
  std::optional<Progress> progress;
  auto stop_here = [&] {
    summary_.stop_epoch = st_.epoch, summary_.stop_batch = st_.batch, summary_.stop_batches = int64_t(batches.size());
  };
  // Each pass makes one move from where the run stands (epoch st_.epoch, st_.batch of its batches done): stop,
  // validate a finished epoch, or train on the next batch. A signal is seen after the step it arrived in.
  while (st_.epoch <= opt_.epochs && !(opt_.patience > 0 && st_.stale_epochs >= opt_.patience)) {
    if (batches_epoch != st_.epoch) {
      batches = train_batches(corpus_.train.pairs, bopt_, opt_.seed, st_.epoch);
      batches_epoch = st_.epoch;
      if (st_.batch > int64_t(batches.size()))
        throw input_error(opt_.resume, 0, fmt::format("resume state at batch {} of an epoch of {}", st_.batch,
                                                      batches.size()));
      progress.emplace(int64_t(batches.size()), fmt::format("epoch {}", st_.epoch));
    }
    if (const int sig = stop_signal_received()) {
      progress.reset();
      stop_here();
      write_state();
      summary_.stop_signal = sig;
      break;
    }
    if (st_.batch == int64_t(batches.size())) {
      progress->finish();
      progress.reset();
      end_epoch(batches.size());
      continue;
    }
    if (bound_reached()) {
      progress.reset();
      stop_here();
      if (st_.batch > 0) stop_mid_epoch(batches.size());
      break;
    }
    if (!train_step(batches[size_t(st_.batch)])) {
      progress.reset();
      stop_here();
      summary_.stopped_on_nan = true;
      break;
    }
    progress->update(st_.batch, fmt::format("obj/tok {:.3f} | {:.0f} tok/s", st_.obj_sum / st_.tok_sum,
                                            double(st_.tokens_seen) / std::max(1e-9, elapsed())));
    if (opt_.checkpoint_every > 0 && st_.step % opt_.checkpoint_every == 0) write_state();
  }
  if (!partial_best_) summary_.best_valid = st_.best_valid;
  summary_.steps = st_.step;
  summary_.seconds = elapsed();
  summary_.tokens_per_second = double(st_.tokens_seen) / std::max(1e-9, summary_.seconds);
  return summary_;
}

}  // namespace

NmtTrainSummary train_nmt(const NmtTrainOptions& opt) { return NmtRun(opt).run(); }

}  // namespace lava
