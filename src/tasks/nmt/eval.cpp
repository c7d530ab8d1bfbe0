#include "tasks/nmt/eval.hpp"

#include <cmath>

namespace lava {

NmtEvalFigures nmt_figures(const AttentionEvalSums& s) {
  NmtEvalFigures f;
  const double n = std::max(1.0, s.tokens);
  f.tokens = s.tokens;
  f.nll = -s.log_lik / n;
  f.ppl = std::exp(f.nll);
  f.elbo = s.elbo / n;
  f.kl = s.kl / n;
  f.kl_gap = (s.log_lik - s.elbo) / n;
  f.kl_posterior = s.kl_posterior / n;
  f.identity_error = s.identity_error();
  f.entropy = s.entropy / n;
  if (s.support > 0) f.support = s.support / n;
  f.q_mass_cut = s.q_mass_cut / n;
  if (s.sampled) {
    f.kl_posterior = NAN;
    f.nll_mean_attn = -s.mean_attn_log_lik / n;
  }
  return f;
}

NmtEvalFigures evaluate_nmt(Seq2Seq& model, const ParallelSplit& split, int batch_size, int kmax, uint64_t seed,
                            bool with_accuracy) {
  Tape<float> tape;
  AttentionEvalSums sums;
  double correct = 0;
  ParamStore<float>& ps = model.ps;
  uint64_t batch_no = 0;
  for (const std::vector<int>& idx : eval_batches(split.pairs, batch_size)) {
    tape.reset();
    // Each batch its own stream (the sampled variants draw their importance samples from it).
    Ctx c{tape, ps, false, CounterRng(seed, stream_id("eval")).child(batch_no++), 0.f};
    const Batch batch = make_batch(split.pairs, idx);
    sums.add(model.evaluate(c, batch, kmax));
    if (with_accuracy) correct += double(model.count_correct(c, batch, kmax));
  }
  NmtEvalFigures f = nmt_figures(sums);
  if (with_accuracy) f.accuracy = correct / std::max(1.0, sums.tokens);
  return f;
}

}  // namespace lava
