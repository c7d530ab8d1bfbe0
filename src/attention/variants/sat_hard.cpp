#include "attention/variants/sat_hard.hpp"

#include <vector>

#include "attention/attention_variant.hpp"

namespace lava {

ObjectiveTerms sat_hard_objective(Ctx& c, const OutputHead& head, Var<float> log_prior, const int32_t* y,
                                  const float* token_mask, float baseline, const SatHardOptions& opt) {
  Tape<float>& tape = c.tape;
  const Shape sdist = log_prior.shape();  // (B, T, S)
  const int64_t B = sdist[0], S = sdist[-1], N = sdist.numel() / S, T = N / B;
  const Shape stok = sdist.without(-1);
  // Sentence b uses the expected context when its coin u_b < p_expected.
  const CounterRng coins = c.next_rng();
  std::vector<uint8_t> expected(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b) expected[size_t(b)] = coins.uniform(uint64_t(b)) < double(opt.p_expected);
  std::vector<int32_t> z(static_cast<size_t>(N));
  sample_categorical(log_prior.val(), N, S, c.next_rng(), 1, 0, z.data());

  // The weights the head reads: α_t itself (with its gradient) for the expected sentences, the one-hot e_{s_t}
  // (constant) for the sampled ones. soft_rows (B, T, S) is 1 on the expected sentences' rows.
  std::vector<float> soft_rows(static_cast<size_t>(N * S), 0.f), one_hot(static_cast<size_t>(N * S), 0.f);
  std::vector<float> sampled_mask(static_cast<size_t>(N), 0.f);
  for (int64_t n = 0; n < N; ++n) {
    if (expected[size_t(n / T)]) {
      std::fill_n(soft_rows.begin() + n * S, S, 1.f);
    } else {
      one_hot[size_t(n * S + z[size_t(n)])] = 1.f;
      sampled_mask[size_t(n)] = token_mask[n];
    }
  }
  Var<float> alpha = exp(log_prior);
  Var<float> w = add(mul(alpha, tape.input(sdist, soft_rows.data())), tape.input(sdist, one_hot.data()));
  Var<float> lf = head.log_f_weighted(c, w, y);  // (B, T)

  ObjectiveTerms out;
  // The score-function term through a surrogate whose value is λ_r (log f − b) log α_{t,s_t} on sampled words.
  std::vector<float> advantage(static_cast<size_t>(N), 0.f);
  for (int64_t n = 0; n < N; ++n)
    if (sampled_mask[size_t(n)] != 0.f) {
      advantage[size_t(n)] = opt.reinforce * (lf.val()[n] - baseline);
      out.sampled_words += 1, out.sampled_log_lik += double(lf.val()[n]);
    }
  Var<float> per_token = add(lf, mul(tape.input(stok, advantage.data()), pick(log_prior, z.data())));
  if (opt.entropy != 0.f) {  // + λ_e H[α_t] = −λ_e Σ_i α_ti log α_ti on sampled words
    Var<float> neg_entropy = sum(mul(alpha, log_prior), -1);  // (B, T)
    per_token = add(per_token, mul(affine(neg_entropy, -opt.entropy, 0.f), tape.input(stok, sampled_mask.data())));
  }
  out.objective = sum_all(mul(per_token, tape.input(stok, token_mask)));
  for (int64_t n = 0; n < N; ++n) out.value_sum += double(token_mask[n]) * lf.val()[n];
  return out;
}

namespace {

class SatHard : public AttentionVariant {
 public:
  using AttentionVariant::AttentionVariant;
  ObjectiveTerms objective(Ctx& c, const OutputHead& head, const AttentionDists& d, const ObjectiveTargets& t,
                           const ObjectiveOptions& opt) const override {
    return sat_hard_objective(c, head, d.log_prior, t.y, t.token_mask, opt.baseline, opt.sat);
  }
};

}  // namespace

const AttentionVariant& hard_sample_attention();  // attention/variants/score_function.cpp

const AttentionVariant& sat_hard_attention() {
  static const SatHard v({.name = "sat-hard",
                          .summary = "SAT's hard attention: z ~ p, REINFORCE with a moving-average baseline",
                          .tasks = "caption",
                          .options = "sat-reinforce sat-entropy sat-expected sat-baseline-decay",
                          .latent = true,
                          .moving_baseline = true,
                          .stored_as = hard_sample_attention().info().name,
                          .flag = "sat_hard"});
  return v;
}

}  // namespace lava
