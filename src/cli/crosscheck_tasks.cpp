// lava crosscheck-dump for the VQA model and the sequence VAE (cmd_crosscheck.cpp has the command, the translation
// model and the file's layout).
#include <cstdio>

#include "cli/crosscheck_dump.hpp"
#include "tasks/seqvae/model.hpp"
#include "tasks/vqa/eval.hpp"
#include "tasks/vqa/model.hpp"

namespace lava::crosscheck {

// VQA on random questions: --batches batches of --batch-size questions of 1..--src-len words over --vocab words,
// --regions regions of --features standard-normal features each, answers 1..--answers−1 (the last question of each
// batch has an unseen answer: id 0, known 0). Evaluation: attention_eval's sums over the known answers, and the
// questions whose predictive argmax is the answer (`lava eval --task vqa`'s accuracy); no K-max.
int dump_vqa(const CommandLine& cl, const CrosscheckOptions& o, const std::string& out_path) {
  VqaConfig cfg;
  cfg.attn = parse_attn_variant(cl.get_string("attn"), "vqa");
  cfg.words = int(cl.get_int("vocab", 2, 1 << 20));
  cfg.answers = int(cl.get_int("answers", 2, 1 << 20));
  cfg.regions = int(cl.get_int("regions", 1, 1000));
  cfg.feature_dim = int(cl.get_int("features", 1, 100000));
  cfg.emb = int(cl.get_int("emb-size", 1, 4096));
  cfg.hidden = int(cl.get_int("hidden-size", 1, 4096));
  cfg.attn_size = int(cl.get_int("attn-size", 1, 4096));
  cfg.mlp = cfg.hidden + 1, cfg.answer_emb = cfg.emb - 1 > 0 ? cfg.emb - 1 : 1;  // sizes that differ, to catch swaps
  cfg.dropout = 0;
  cfg.variant.sparse_alpha = sparse_alpha(cl);
  check_covered(cl, "vqa", cfg.attn);
  ObjectiveOptions obj;
  obj.samples = int(cl.get_int("samples", 1, 1000));
  obj.temperature = float(cl.get_double("temperature", 1e-3, 1e3));
  refuse_unread_options(cl, cfg.attn, {"samples", "temperature", "alpha"});
  VqaModel model(cfg);
  model.ps.init_uniform(float(o.init), o.seed);
  std::vector<NamedTensor> out;
  add_params(out, "param/", model.ps, false);
  const CounterRng rng(o.seed, stream_id("crosscheck/vqa"));
  uint64_t k = 0;
  const auto draw = [&](int lo, int hi) { return lo + int(rng.uniform(k++) * (hi - lo + 1)); };
  std::vector<VqaBatch> batches(static_cast<size_t>(o.batches));
  for (int n = 0; n < o.batches; ++n) {
    VqaBatch& b = batches[size_t(n)];
    b.B = o.batch_size, b.L = o.src_len, b.R = cfg.regions, b.D = cfg.feature_dim;
    b.words.assign(size_t(b.B) * b.L, 0);
    for (int i = 0; i < b.B; ++i) {
      b.lengths.push_back(draw(1, b.L));
      for (int t = 0; t < b.lengths.back(); ++t) b.words[size_t(i) * b.L + t] = draw(1, cfg.words - 1);
      const bool seen = i + 1 < b.B || b.B == 1;
      b.answer.push_back(seen ? draw(1, cfg.answers - 1) : 0);
      b.known.push_back(seen ? 1.f : 0.f);
    }
    for (int i = 0; i < b.B * b.R * b.D; ++i) b.features.push_back(float(rng.normal(k++)));
    const std::string p = "batch" + std::to_string(n) + "/";
    add_ints(out, p + "words", {b.B, b.L}, b.words);
    add_ints(out, p + "lengths", {b.B}, b.lengths);
    add_tensor(out, p + "features", {b.B, b.R, b.D}, b.features.data());
    add_ints(out, p + "answer", {b.B}, b.answer);
    add_tensor(out, p + "known", {b.B}, b.known.data());
  }
  std::vector<int32_t> schedule;
  for (int t = 0; t < o.steps; ++t) schedule.push_back(t % o.batches);
  add_ints(out, "schedule", {int64_t(schedule.size())}, schedule);

  Tape<float> tape;
  std::map<std::string, std::string> meta = cfg.to_metadata();
  const auto evaluate = [&](const std::string& when) {
    AttentionEvalSums sums;
    int64_t correct = 0;
    std::vector<double> predictive(static_cast<size_t>(cfg.answers));
    for (const VqaBatch& b : batches) {
      tape.reset();
      Ctx c{tape, model.ps, false, CounterRng(o.seed, stream_id("crosscheck/eval")), 0.f};
      const VqaScores sc = model.scores(c, b);
      const int R = b.R, V = cfg.answers;
      std::vector<float> log_f_y(size_t(b.B) * R), soft_y(size_t(b.B), 0.f);
      for (int i = 0; i < b.B; ++i) {
        for (int r = 0; r < R; ++r)
          log_f_y[size_t(i) * R + r] = sc.log_f[(size_t(i) * R + r) * V + size_t(b.answer[size_t(i)])];
        if (!sc.log_soft.empty()) soft_y[size_t(i)] = sc.log_soft[size_t(i) * V + size_t(b.answer[size_t(i)])];
        vqa_predictive(cfg.attn, sc, i, predictive.data());
        correct += b.known[size_t(i)] > 0 && first_argmax(predictive.data(), V) == b.answer[size_t(i)];
      }
      sums.add(attention_eval(cfg.attn, sc.log_prior.data(), sc.log_q.empty() ? nullptr : sc.log_q.data(),
                              log_f_y.data(), soft_y.data(), b.known.data(), b.B, R, 0));
    }
    meta["eval/" + when + "/k0"] = eval_json(sums, correct);
  };
  evaluate("init");
  const std::vector<float> loss = train_and_record(out, model.ps, tape, o, obj, [&](Ctx& c, int t) {
    const VqaBatch& b = batches[size_t(schedule[size_t(t)])];
    return std::make_pair(model.objective(c, b, obj), b.B);
  });
  add_params(out, "trained/", model.ps, false);
  evaluate("trained");
  meta["crosscheck/batches"] = std::to_string(batches.size());
  meta["crosscheck/eval_batches"] = "0";  // the training batches
  meta["crosscheck/kmax"] = "0";
  write_dump(cl, o, obj, out_path, out, meta, loss);
  return 0;
}

// The sequence VAE (BiLSTM encoder, soft additive attention decoder, KL weight 1, no free bits) on random
// sentences (--batches of --batch-size, 1..--src-len words over --vocab): each step's ε ~ N(0, I) (B, Z) is dumped
// as noise/<t>; evaluation: Σ log p(X | z) at z = μ + σ ε with the dumped evalnoise/<k>, and Σ KL(q(z|X) ‖ N(0, I)),
// as the eval sums' log_lik and kl (elbo = log_lik − kl).
int dump_seqvae(const CommandLine& cl, const CrosscheckOptions& o, const std::string& out_path) {
  SeqVaeConfig cfg;
  cfg.vocab = int(cl.get_int("vocab", Vocab::kNumSpecial + 1, 1 << 20));
  cfg.emb = int(cl.get_int("emb-size", 1, 4096));
  cfg.hidden = int(cl.get_int("hidden-size", 2, 4096));
  cfg.layers = int(cl.get_int("layers", 1, 8));
  cfg.attn_size = int(cl.get_int("attn-size", 1, 4096));
  cfg.latent = int(cl.get_int("latent-size", 1, 4096));
  if (cfg.hidden % 2) cl.fail("--hidden must be even");
  cfg.dropout = 0;
  SeqVae model(cfg);
  model.init(float(o.init), o.seed);
  std::vector<NamedTensor> out;
  add_params(out, "param/", model.ps, false);
  std::vector<SentencePair> pairs = random_pairs(o.batches * o.batch_size, o.src_len, o.src_len, cfg.vocab,
                                                 cfg.vocab, CounterRng(o.seed, stream_id("crosscheck/pairs")));
  for (SentencePair& p : pairs) p.tgt = p.src;
  std::vector<Batch> batches;
  for (int k = 0; k < o.batches; ++k) {
    std::vector<int> idx(size_t(o.batch_size));
    for (int i = 0; i < o.batch_size; ++i) idx[size_t(i)] = k * o.batch_size + i;
    batches.push_back(make_batch(pairs, idx));
    const Batch& b = batches.back();
    add_batch(out, "batch" + std::to_string(k) + "/", b);
  }
  std::vector<int32_t> schedule;
  for (int t = 0; t < o.steps; ++t) schedule.push_back(t % o.batches);
  add_ints(out, "schedule", {int64_t(schedule.size())}, schedule);
  const auto epsilon = [&](const CounterRng& rng, int B) {  // gaussian_sample's draws: ε_i = normal(i)
    std::vector<float> e(size_t(B) * cfg.latent);
    for (size_t i = 0; i < e.size(); ++i) e[i] = float(rng.normal(uint64_t(i)));
    return e;
  };
  const CounterRng eval_rng(o.seed, stream_id("crosscheck/seqvae_eval")), train_rng(o.seed, stream_id("crosscheck/z"));
  for (int k = 0; k < o.batches; ++k)
    add_tensor(out, "evalnoise/" + std::to_string(k), {batches[size_t(k)].B, cfg.latent},
               epsilon(eval_rng.child(uint64_t(k)), batches[size_t(k)].B).data());

  Tape<float> tape;
  std::map<std::string, std::string> meta = cfg.to_metadata();
  meta["task"] = "seqvae";
  meta["attn"] = enum_name(kDecoderAttentionNames, cfg.dec_attn);  // the decoder's attention, the dump's label
  const auto evaluate = [&](const std::string& when) {
    AttentionEvalSums sums;
    for (int k = 0; k < o.batches; ++k) {
      tape.reset();
      Ctx c{tape, model.ps, false, CounterRng(o.seed, stream_id("crosscheck/eval")), 0.f};
      NoGrad<float> no_grad(tape);
      const SeqVaeTerms t = model.terms(c, batches[size_t(k)], eval_rng.child(uint64_t(k)), KlOptions{});
      sums.tokens += double(t.tokens), sums.log_lik += t.recon, sums.kl += t.kl, sums.elbo += t.recon - t.kl;
    }
    meta["eval/" + when + "/k0"] = eval_json(sums, 0);
  };
  evaluate("init");
  ObjectiveOptions obj;
  std::vector<float> eps;
  const std::vector<float> loss = train_and_record(out, model.ps, tape, o, obj, [&](Ctx& c, int t) {
    const Batch& b = batches[size_t(schedule[size_t(t)])];
    const SeqVaeTerms terms = model.terms(c, b, train_rng.child(uint64_t(t)), KlOptions{});
    *obj.noise_out = epsilon(train_rng.child(uint64_t(t)), b.B);
    ObjectiveTerms ot;  // the objective to maximise: −loss
    ot.objective = affine(terms.loss, -1.f, 0.f);
    ot.value_sum = terms.recon - terms.kl, ot.kl_sum = terms.kl;
    return std::make_pair(ot, b.B);
  });
  add_params(out, "trained/", model.ps, false);
  evaluate("trained");
  meta["crosscheck/batches"] = std::to_string(batches.size());
  meta["crosscheck/eval_batches"] = "0";
  meta["crosscheck/kmax"] = "0";
  write_dump(cl, o, obj, out_path, out, meta, loss);
  return 0;
}

}  // namespace lava::crosscheck
