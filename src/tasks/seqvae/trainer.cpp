#include "tasks/seqvae/trainer.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>

#include "core/check.hpp"
#include "core/stop_signal.hpp"
#include "nn/optim.hpp"
#include "core/json.hpp"
#include "report/progress.hpp"

namespace lava {

void add_seqvae_figures(JsonLine& j, const SeqVaeEvalFigures& f) {
  j.add("elbo", f.elbo).add("recon", f.recon).add("kl", f.kl);
  j.add("elbo_per_token", f.elbo_per_token).add("recon_per_token", f.recon_per_token);
  j.add("kl_per_token", f.kl_per_token).add("ppl_bound", f.ppl_bound);
  j.add("iw", f.iw).add("ppl_iw", f.ppl_iw).add("active_units", f.active_units).add("latent", f.latent);
  j.add("sentences", f.sentences).add("tokens", f.tokens).add("samples", f.samples);
}

namespace {

void print_record(const SeqVaeTrainOptions& opt, const SeqVaeEpochRecord& r) {
  const SeqVaeEvalFigures& v = r.valid;
  if (opt.format == OutputFormat::json) {
    JsonLine j;
    j.add("event", "epoch").add("task", "seqvae").add("encoder", opt.model.encoder).add("dec_attn", opt.model.dec_attn);
    j.add("epoch", r.epoch).add("steps", r.steps).add("seconds", r.seconds).add("lr", r.lr);
    j.add("kl_weight", r.kl_weight).add("free_bits", opt.free_bits);
    j.add("train_loss", r.train_loss).add("train_recon", r.train_recon).add("train_kl", r.train_kl);
    add_seqvae_figures(j, v);
    j.add("kl_per_dim", v.kl_per_dim).add("best", r.best);
    if (r.partial) j.add("partial", true);
    std::printf("%s\n", j.str().c_str());
  } else {
    std::fprintf(stderr,
                 "epoch %.2f  steps %lld  %.0fs  lr %.2e  β %.3f | train loss %.3f recon %.3f kl %.3f | valid elbo "
                 "%.3f recon %.3f kl %.3f (per sentence)  ppl ≤ %.2f  active units %d/%d%s\n",
                 r.epoch, (long long)r.steps, r.seconds, r.lr, r.kl_weight, r.train_loss, r.train_recon, r.train_kl,
                 v.elbo, v.recon, v.kl, v.ppl_bound, v.active_units, v.latent, r.best ? "  (best)" : "");
  }
  std::fflush(stdout);
}

}  // namespace

SeqVaeTrainSummary train_seqvae(const SeqVaeTrainOptions& opt) {
  const CorpusOptions co = seqvae_corpus_options(opt.data);
  // load_parallel_corpus builds the vocabulary from train (both "sides" are the same file, so src_vocab == tgt_vocab).
  const ParallelCorpus corpus = load_parallel_corpus(co, opt.vocab, opt.vocab);
  const Vocab& vocab = corpus.tgt_vocab;
  SeqVaeConfig cfg = opt.model;
  cfg.vocab = vocab.size();
  SeqVae model(cfg);
  model.init(float(opt.init), opt.seed);
  Adam<float> adam;
  adam.lr = float(opt.lr);
  Tape<float> tape;
  SeqVaeEvalOptions eval_opt = opt.eval;
  eval_opt.seed = opt.seed;
  BatchOptions bopt;
  bopt.batch_size = opt.batch_size;

  SeqVaeTrainSummary summary;
  double best_elbo = -INFINITY;
  int stale_epochs = 0;
  int64_t tokens_seen = 0;
  double loss_sum = 0, recon_sum = 0, kl_sum = 0, sent_sum = 0;  // since the last validation
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  auto bound_reached = [&] {
    return (opt.max_steps > 0 && summary.steps >= opt.max_steps) ||
           (opt.max_minutes > 0 && elapsed() >= 60 * opt.max_minutes);
  };

  // Validates, keeps the best model, prints the line; returns whether it was the best so far.
  auto validate = [&](double epoch, bool partial) {
    SeqVaeEpochRecord r;
    r.valid = evaluate_seqvae(model, corpus.valid, eval_opt);
    r.epoch = epoch, r.steps = summary.steps, r.seconds = elapsed(), r.lr = adam.lr, r.partial = partial;
    r.kl_weight = kl_weight(std::max<int64_t>(0, summary.steps - 1), opt.kl_anneal);
    const double n = std::max(1.0, sent_sum);
    r.train_loss = loss_sum / n, r.train_recon = recon_sum / n, r.train_kl = kl_sum / n;
    loss_sum = recon_sum = kl_sum = sent_sum = 0;
    r.best = r.valid.elbo > best_elbo;
    if (r.best) {
      best_elbo = r.valid.elbo;
      summary.best_valid = r.valid;
      summary.best_epoch = epoch;
      if (!opt.save.empty()) {
        SaveShield shield;
        save_seqvae(opt.save, model, vocab, opt.data.lang,
                    {{"epoch", fmt::format("{}", epoch)},
                     {"steps", std::to_string(summary.steps)},
                     {"valid_elbo", fmt::format("{}", r.valid.elbo)},
                     {"valid_kl", fmt::format("{}", r.valid.kl)},
                     {"valid_active_units", std::to_string(r.valid.active_units)}});
      }
    }
    summary.history.push_back(r);
    print_record(opt, r);
    return r.best;
  };

  StopSignalGuard guard;  // SIGINT/SIGTERM: stop after the update in progress
  bool stop = false;
  int64_t validated_at = -1;  // the update count of the last validation
  for (int epoch = 1; epoch <= opt.epochs && !stop; ++epoch) {
    const auto batches = train_batches(corpus.train.pairs, bopt, opt.seed, epoch);
    std::optional<Progress> progress;  // made at the first update after the start or a validation
    size_t done = 0;
    for (; done < batches.size(); ++done) {
      if (bound_reached() || stop_signal_received()) {
        stop = true;
        break;
      }
      if (!progress)
        progress.emplace(int64_t(batches.size()),
                         done == 0 ? fmt::format("epoch {}", epoch) : fmt::format("epoch {} (from {})", epoch, done));
      const Batch batch = make_batch(corpus.train.pairs, batches[done]);
      tape.reset();
      // Every random draw of update t comes from streams keyed by t: dropout and the posterior sample.
      const uint64_t t = uint64_t(summary.steps);
      Ctx c{tape, model.ps, true, CounterRng(opt.seed, stream_id("seqvae/train")).child(t), cfg.dropout};
      KlOptions klo;
      klo.weight = float(kl_weight(summary.steps, opt.kl_anneal));
      klo.free_bits = float(opt.free_bits);
      const SeqVaeTerms terms = model.terms(c, batch, CounterRng(opt.seed, stream_id("seqvae/z")).child(t), klo);
      Var<float> loss = affine(terms.loss, 1.f / float(batch.B), 0.f);  // per sentence
      float norm = 0;
      if (std::isfinite(loss.item())) {
        tape.backward(loss);  // accumulates into zeros: the last Adam step consumed the gradients
        norm = grad_norm(model.ps);
      }
      if (!std::isfinite(loss.item()) || !std::isfinite(norm)) {
        std::fprintf(stderr, "lava train: the %s became %f at step %lld; stopping before that update\n",
                     std::isfinite(loss.item()) ? "gradient norm" : "loss",
                     double(std::isfinite(loss.item()) ? norm : loss.item()), (long long)summary.steps);
        summary.stopped_on_nan = stop = true;
        break;
      }
      adam.step(model.ps, clip_factor(norm, float(opt.clip)));
      ++summary.steps;
      tokens_seen += terms.tokens;
      loss_sum += double(loss.item()) * batch.B, recon_sum += terms.recon, kl_sum += terms.kl, sent_sum += batch.B;
      progress->update(int64_t(done + 1),
                      fmt::format("-elbo {:.2f} kl {:.2f} β {:.2f} | {:.0f} tok/s", (kl_sum - recon_sum) / sent_sum,
                                  kl_sum / sent_sum, klo.weight, double(tokens_seen) / std::max(1e-9, elapsed())));
      if (opt.valid_every > 0 && summary.steps % opt.valid_every == 0 && done + 1 < batches.size()) {
        progress->finish();
        progress.reset();
        validate(epoch - 1 + double(done + 1) / double(batches.size()), true);
        validated_at = summary.steps;
      }
    }
    if (progress) progress->finish();
    if (summary.stopped_on_nan) break;
    summary.epochs = epoch;
    if (summary.steps == validated_at) break;  // stopped before any update since the last validation
    const bool complete = done == batches.size();
    const bool best = validate(epoch - 1 + double(done) / double(std::max<size_t>(1, batches.size())), !complete);
    validated_at = summary.steps;
    if (!complete) break;
    if (best) {
      stale_epochs = 0;
    } else {
      ++stale_epochs;
      if (epoch >= opt.start_decay_at) adam.lr *= float(opt.lr_decay);
    }
    if (opt.patience > 0 && stale_epochs >= opt.patience) break;
  }
  summary.stop_signal = stop_signal_received();
  summary.seconds = elapsed();
  summary.tokens_per_second = double(tokens_seen) / std::max(1e-9, summary.seconds);
  return summary;
}

}  // namespace lava
