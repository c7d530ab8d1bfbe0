#include "models/nmt_trainer.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>

#include "nn/optim.hpp"
#include "report/json.hpp"
#include "report/progress.hpp"

namespace lava {

namespace {

void print_epoch(const NmtTrainOptions& opt, int epoch, int64_t steps, double seconds, double train_obj,
                 double train_kl, double lr, const NmtEvalFigures& v, bool best) {
  if (opt.format == OutputFormat::json) {
    JsonLine j;
    j.add("event", "epoch").add("attn", variant_info(opt.model.attn).name).add("epoch", epoch).add("steps", steps);
    j.add("seconds", seconds).add("lr", lr).add("train_objective", train_obj).add("train_kl", train_kl);
    j.add("valid_nll", v.nll).add("valid_ppl", v.ppl).add("valid_elbo", v.elbo).add("valid_kl", v.kl);
    j.add("valid_kl_gap", v.kl_gap).add("valid_entropy", v.entropy).add("best", best);
    std::printf("%s\n", j.str().c_str());
  } else {
    std::fprintf(stderr,
                 "epoch %d  steps %lld  %.0fs  lr %.2e  train obj/tok %.4f kl %.4f | valid ppl %.3f elbo %.4f kl %.4f "
                 "gap %.4f H(p) %.3f%s\n",
                 epoch, (long long)steps, seconds, lr, train_obj, train_kl, v.ppl, v.elbo, v.kl, v.kl_gap, v.entropy,
                 best ? "  (best)" : "");
  }
  std::fflush(stdout);
}

}  // namespace

NmtTrainSummary train_nmt(const NmtTrainOptions& opt) {
  ParallelCorpus corpus = load_parallel_corpus(opt.corpus, opt.src_vocab, opt.tgt_vocab);
  Seq2SeqConfig cfg = opt.model;
  cfg.src_vocab = corpus.src_vocab.size();
  cfg.tgt_vocab = corpus.tgt_vocab.size();
  Seq2Seq model(cfg);
  model.ps.init_uniform(float(opt.init), opt.seed);
  Adam<float> adam;
  adam.lr = float(opt.lr);
  Tape<float> tape;
  NmtTrainSummary summary;
  summary.best_valid.elbo = -INFINITY;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  BatchOptions bopt;
  bopt.batch_size = opt.batch_size;
  int64_t tokens_seen = 0;
  int stale_epochs = 0;
  bool stop = false;
  for (int epoch = 1; epoch <= opt.epochs && !stop; ++epoch) {
    const auto batches = train_batches(corpus.train.pairs, bopt, opt.seed, epoch);
    Progress progress(int64_t(batches.size()), fmt::format("epoch {}", epoch));
    double obj_sum = 0, kl_sum = 0, tok_sum = 0;
    for (size_t bi = 0; bi < batches.size(); ++bi) {
      const Batch batch = make_batch(corpus.train.pairs, batches[bi]);
      tape.reset();
      Ctx c{tape, model.ps, true, CounterRng(opt.seed, stream_id("train")).child(uint64_t(summary.steps)),
            cfg.dropout};
      ObjectiveTerms terms = model.objective(c, batch, opt.objective);
      Var<float> loss = affine(terms.objective, -1.f / float(batch.B), 0.f);  // normalised per sentence
      if (!std::isfinite(loss.item())) {
        std::fprintf(stderr, "lava train: the loss became %f at step %lld; stopping (the last checkpoint is kept)\n",
                     double(loss.item()), (long long)summary.steps);
        summary.stopped_on_nan = true;
        stop = true;
        break;
      }
      model.ps.zero_grad();
      tape.backward(loss);
      clip_grad_norm(model.ps, float(opt.clip));
      adam.step(model.ps);
      ++summary.steps;
      const int64_t ntok = batch.target_tokens();
      tokens_seen += ntok;
      obj_sum += terms.value_sum, kl_sum += terms.kl_sum, tok_sum += double(ntok);
      progress.update(int64_t(bi + 1), fmt::format("obj/tok {:.3f} | {:.0f} tok/s", obj_sum / tok_sum,
                                                    double(tokens_seen) / elapsed()));
      if ((opt.max_steps > 0 && summary.steps >= opt.max_steps) ||
          (opt.max_minutes > 0 && elapsed() >= 60 * opt.max_minutes)) {
        stop = true;
        break;
      }
    }
    progress.finish();
    if (summary.stopped_on_nan) break;
    const NmtEvalFigures v = evaluate_nmt(model, corpus.valid, 32, 0, opt.seed);
    const bool best = v.elbo > summary.best_valid.elbo;
    if (best) {
      summary.best_valid = v;
      stale_epochs = 0;
      if (!opt.save.empty())
        save_nmt(opt.save, model, corpus.src_vocab, corpus.tgt_vocab,
                 {{"epoch", std::to_string(epoch)}, {"valid_ppl", fmt::format("{}", v.ppl)}});
    } else {
      ++stale_epochs;
      if (epoch >= opt.start_decay_at) adam.lr *= float(opt.lr_decay);
    }
    summary.epochs = epoch;
    print_epoch(opt, epoch, summary.steps, elapsed(), obj_sum / std::max(1.0, tok_sum), kl_sum / std::max(1.0, tok_sum),
                adam.lr, v, best);
    if (opt.patience > 0 && stale_epochs >= opt.patience) break;
  }
  summary.seconds = elapsed();
  summary.tokens_per_second = double(tokens_seen) / std::max(1e-9, summary.seconds);
  return summary;
}

}  // namespace lava
