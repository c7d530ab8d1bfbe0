// Decoding the translation model: the incremental decoder steps reproduce the exact evaluation when fed the reference
// (so greedy and beam search rank words by the very distribution `lava eval` scores), each step's distribution is
// normalised, beam 1 is greedy, a wider beam never finds a worse model score, and `lava translate` handles its inputs.
#include <doctest/doctest.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "data/synth_task.hpp"
#include "nn/optim.hpp"
#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"
#include "tasks/nmt/beam_search.hpp"
#include "tasks/nmt/trainer.hpp"

using namespace lava;

namespace {

const std::string& decode_corpus() {
  static const TempDir tmp("decode");  // removed at exit
  static const std::string dir = [] {
    SynthOptions o;
    o.out_dir = tmp.file("synth");
    o.train = 64, o.valid = 16, o.test = 16, o.min_len = 3, o.max_len = 7, o.vocab = 30, o.quiet = true;
    build_synth_task(o);
    return o.out_dir;
  }();
  return dir;
}

ParallelCorpus load_decode_corpus() {
  CorpusOptions co;
  co.dir = decode_corpus();
  co.keep_target_tokens = true;
  return load_parallel_corpus(co, VocabOptions{}, VocabOptions{});
}

Seq2SeqConfig small_config(const ParallelCorpus& c, AttnVariant v, int layers = 1) {
  Seq2SeqConfig cfg;
  cfg.attn = v;
  cfg.src_vocab = c.src_vocab.size(), cfg.tgt_vocab = c.tgt_vocab.size();
  cfg.emb = 8, cfg.hidden = 12, cfg.attn_size = 6, cfg.inf_hidden = 6, cfg.layers = layers;
  cfg.dropout = 0.f;
  return cfg;
}

// A few Adam steps on the training pairs, so that distributions are peaked and decoding has something to find.
void train_briefly(Seq2Seq& model, const ParallelCorpus& corpus, int steps) {
  model.ps.init_uniform(0.3f, 11);
  Adam<float> adam;
  adam.lr = 0.03f;
  Tape<float> tape;
  for (int step = 0; step < steps; ++step) {
    std::vector<int> idx;
    for (int k = 0; k < 16; ++k) idx.push_back((step * 16 + k) % int(corpus.train.pairs.size()));
    tape.reset();
    Ctx c{tape, model.ps, true, CounterRng(3, uint64_t(step)), 0.f};
    Var<float> loss =
        affine(model.objective(c, make_batch(corpus.train.pairs, idx), ObjectiveOptions{}).objective, -1.f / 16, 0.f);
    tape.backward(loss);
    adam.step(model.ps, clip_factor(grad_norm(model.ps), 5.f));
  }
}

// log p(y | x) of given outputs, by the exact evaluation (teacher forcing through the whole batch at once).
std::vector<double> scored_by_evaluation(Seq2Seq& model, const std::vector<std::vector<int32_t>>& src,
                                         const std::vector<Translation>& out, int kmax) {
  std::vector<double> lp;
  Tape<float> tape;
  for (size_t i = 0; i < src.size(); ++i) {
    std::vector<SentencePair> one = {SentencePair{src[i], out[i].tokens, 1}};
    tape.reset();
    Ctx c{tape, model.ps, false, CounterRng(1, 1), 0.f};
    lp.push_back(model.evaluate(c, make_batch(one, std::vector<int>{0}), kmax).log_lik);
  }
  return lp;
}

// Greedy decoding written out plainly, one sentence at a time: each step takes the argmax (lowest id on ties) of the
// step's distribution with the EOS penalty, never <pad> or <bos>, and only </s> once max_output_words are out.
Translation greedy_reference(Seq2Seq& model, const std::vector<int32_t>& src, const DecodeOptions& opt) {
  const std::vector<SentencePair> one = {SentencePair{src, {}, 1}};
  Tape<float> tape;
  NoGrad<float> no_grad(tape);
  Ctx c{tape, model.ps, false, CounterRng(0, 0), 0.f};
  const EncodedSource enc = model.encode(c, make_batch(one, std::vector<int>{0}));
  DecoderState state = model.initial_state(c, 1);
  const int V = model.config().tgt_vocab, max_words = max_output_words(int(src.size()), opt);
  std::vector<float> logp(size_t(V), 0.f);
  Translation t;
  double score = 0;
  int32_t prev = Vocab::kBos;
  for (int j = 1;; ++j) {
    const DecoderStep step = model.decoder_step(c, enc, 1, state, &prev);
    model.next_word_log_probs(c, enc, 1, step, opt.kmax, nullptr, logp.data());
    state = step.state;
    int best = -1;
    double best_value = -INFINITY;
    for (int v = 0; v < V; ++v) {
      if (v == Vocab::kPad || v == Vocab::kBos || (int(t.tokens.size()) >= max_words && v != Vocab::kEos)) continue;
      const double x = logp[size_t(v)] - (v == Vocab::kEos ? eos_penalty(opt.eos_norm, int(src.size()), j) : 0.0);
      if (x > best_value) best = v, best_value = x;
    }
    score += best_value;
    t.log_prob += logp[size_t(best)];
    if (best == Vocab::kEos) break;
    t.tokens.push_back(best);
    prev = best;
  }
  t.score = score / length_penalty(int(t.tokens.size()) + 1, opt.alpha);
  return t;
}

std::vector<std::vector<int32_t>> sources_of(const ParallelSplit& split, size_t n) {
  std::vector<std::vector<int32_t>> s;
  for (size_t i = 0; i < n && i < split.pairs.size(); ++i) s.push_back(split.pairs[i].src);
  return s;
}

}  // namespace

TEST_CASE("decode: the mixture word distribution matches a double-precision log-space reference, tail included") {
  // Hypotheses with 4, 1 and 3 rows; chunks of at most 4 rows; logits spread over hundreds of nats, so that some words
  // of a hypothesis are below e^-80 under every row (the log-space fallback) and others are not.
  const int64_t Hd = 5, V = 300, nh = 3;
  const std::vector<int64_t> row_begin = {0, 4, 5, 8};
  const std::vector<int32_t> hyps = {2, 0, 1};
  const int64_t R = row_begin.back();
  CounterRng rng(9, 9);
  uint64_t draw = 0;
  auto uniform = [&](double lo, double hi) { return float(lo + (hi - lo) * rng.uniform(draw++)); };
  std::vector<float> o(size_t(R * Hd), 0.f), W(size_t(Hd * V), 0.f), b(size_t(V), 0.f), logw(size_t(R), 0.f);
  for (float& x : o) x = uniform(-1, 1);
  for (float& x : W) x = uniform(-40, 40);
  for (float& x : b) x = uniform(-5, 5);
  for (int64_t k = 0; k < nh; ++k) {  // a normalised log prior per hypothesis, one position far below the others
    double z = 0;
    for (int64_t r = row_begin[size_t(k)]; r < row_begin[size_t(k) + 1]; ++r) {
      logw[size_t(r)] = r == 2 ? -95.f : uniform(-3, 0);
      z += std::exp(double(logw[size_t(r)]));
    }
    for (int64_t r = row_begin[size_t(k)]; r < row_begin[size_t(k) + 1]; ++r) logw[size_t(r)] -= float(std::log(z));
  }
  std::vector<float> out(size_t(nh * V), 0.f), scratch(size_t(4 * V));
  mixture_log_softmax(out.data(), scratch.data(), o.data(), logw.data(), row_begin.data(), hyps.data(), nh, W.data(),
                      b.data(), Hd, V, 4);
  double worst = 0;
  int tail = 0;  // words with log p < −80: their linear-space sums underflow, so the fallback computed them
  for (int64_t k = 0; k < nh; ++k) {
    std::vector<std::vector<double>> lp;  // log softmax per row, in double
    for (int64_t r = row_begin[size_t(k)]; r < row_begin[size_t(k) + 1]; ++r) {
      std::vector<double> l(size_t(V), 0.0);
      double m = -INFINITY, z = 0;
      for (int64_t v = 0; v < V; ++v) {
        l[size_t(v)] = b[size_t(v)];
        for (int64_t h = 0; h < Hd; ++h) l[size_t(v)] += double(o[size_t(r * Hd + h)]) * W[size_t(h * V + v)];
        m = std::max(m, l[size_t(v)]);
      }
      for (double x : l) z += std::exp(x - m);
      for (double& x : l) x = x - m - std::log(z) + logw[size_t(r)];
      lp.push_back(l);
    }
    for (int64_t v = 0; v < V; ++v) {
      double m = -INFINITY, z = 0;
      for (const auto& l : lp) m = std::max(m, l[size_t(v)]);
      for (const auto& l : lp) z += std::exp(l[size_t(v)] - m);
      const double expect = m + std::log(z), got = out[size_t(hyps[size_t(k)] * V + v)];
      worst = std::max(worst, std::abs(got - expect) / (1 + std::abs(expect)));
      tail += expect < -80;
    }
  }
  CHECK(worst < 2e-6);
  CHECK(tail > 20);
}

TEST_CASE("decode: steps fed the reference reproduce the exact evaluation, and every step's distribution sums to 1") {
  ParallelCorpus corpus = load_decode_corpus();
  struct Case {
    AttnVariant v;
    const char* score;
    int layers, kmax;
  };
  for (Case cs :
       {Case{parse_attn_variant("marginal", "nmt"), "mlp", 2, 0},
        Case{parse_attn_variant("marginal", "nmt"), "general", 1, 2},
        Case{parse_attn_variant("var-enum", "nmt"), "dot", 1, 0},
        Case{parse_attn_variant("marginal", "nmt"), "mlp", 1, 1},
        Case{parse_attn_variant("hard-enum", "nmt"), "mlp", 1, 3}, Case{parse_attn_variant("soft", "nmt"), "mlp", 2, 0},
        Case{parse_attn_variant("soft", "nmt"), "mlp", 1, 2}, Case{parse_attn_variant("none", "nmt"), "mlp", 1, 0}}) {
    Seq2SeqConfig cfg = small_config(corpus, cs.v, cs.layers);
    cfg.score = *enum_from_name(kNmtScoreNames, cs.score);
    Seq2Seq model(cfg);
    model.ps.init_uniform(0.8f, 5);  // large enough for peaked, position-dependent distributions
    const Batch batch = make_batch(corpus.valid.pairs, std::vector<int>{0, 1, 2, 3, 4, 5});
    Tape<float> tape;
    Ctx c{tape, model.ps, false, CounterRng(1, 2), 0.f};
    const AttentionEvalSums exact = model.evaluate(c, batch, cs.kmax);
    tape.reset();
    NoGrad<float> no_grad(tape);
    const EncodedSource enc = model.encode(c, batch);
    DecoderState state = model.initial_state(c, batch.B);
    const int V = cfg.tgt_vocab;
    std::vector<float> logp(size_t(batch.B) * V);
    double stepped = 0, worst_norm = 0;
    int64_t stepped_correct = 0;  // reference tokens that are the argmax of the stepped distribution
    for (int t = 0; t < batch.T; ++t) {
      std::vector<int32_t> in(size_t(batch.B));
      for (int b = 0; b < batch.B; ++b) in[size_t(b)] = batch.tgt_in[size_t(b * batch.T + t)];
      const DecoderStep step = model.decoder_step(c, enc, 1, state, in.data());
      model.next_word_log_probs(c, enc, 1, step, cs.kmax, nullptr, logp.data());
      state = step.state;
      for (int b = 0; b < batch.B; ++b) {
        double total = 0;
        for (int v = 0; v < V; ++v) total += std::exp(double(logp[size_t(b * V + v)]));
        worst_norm = std::max(worst_norm, std::abs(total - 1));
        if (t >= batch.tgt_len[size_t(b)]) continue;
        const int32_t ref = batch.tgt_out[size_t(b * batch.T + t)];
        stepped += logp[size_t(b * V + ref)];
        const float* row = logp.data() + size_t(b) * V;
        stepped_correct += std::max_element(row, row + V) - row == ref;
      }
    }
    const std::string name = variant_info(cs.v).name;
    CAPTURE(name);
    CAPTURE(cs.kmax);
    CHECK(worst_norm < 1e-5);
    CHECK(stepped == doctest::Approx(exact.log_lik).epsilon(1e-5));
    CHECK(exact.log_lik < -1.0);  // not a degenerate model
    // Token accuracy (lava eval) scores the teacher-forced batch through the other code path, forward().
    tape.reset();
    CHECK(model.count_correct(c, batch, cs.kmax) == stepped_correct);
  }
}

TEST_CASE("decode: token accuracy of a briefly trained model counts the argmax words of the stepped decoder") {
  ParallelCorpus corpus = load_decode_corpus();
  for (AttnVariant v : {parse_attn_variant("marginal", "nmt"), parse_attn_variant("soft", "nmt")}) {
    Seq2Seq model(small_config(corpus, v));
    train_briefly(model, corpus, 40);
    const Batch batch = make_batch(corpus.train.pairs, std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
    Tape<float> tape;
    Ctx c{tape, model.ps, false, CounterRng(1, 2), 0.f};
    const int64_t correct = model.count_correct(c, batch, 0);
    tape.reset();
    NoGrad<float> no_grad(tape);
    const EncodedSource enc = model.encode(c, batch);
    DecoderState state = model.initial_state(c, batch.B);
    const int V = model.config().tgt_vocab;
    std::vector<float> logp(size_t(batch.B) * V);
    int64_t stepped_correct = 0, tokens = 0;
    for (int t = 0; t < batch.T; ++t) {
      std::vector<int32_t> in(size_t(batch.B));
      for (int b = 0; b < batch.B; ++b) in[size_t(b)] = batch.tgt_in[size_t(b * batch.T + t)];
      const DecoderStep step = model.decoder_step(c, enc, 1, state, in.data());
      model.next_word_log_probs(c, enc, 1, step, 0, nullptr, logp.data());
      state = step.state;
      for (int b = 0; b < batch.B; ++b) {
        if (t >= batch.tgt_len[size_t(b)]) continue;
        const float* row = logp.data() + size_t(b) * V;
        stepped_correct += std::max_element(row, row + V) - row == batch.tgt_out[size_t(b * batch.T + t)];
        ++tokens;
      }
    }
    CAPTURE(variant_info(v).name);
    CHECK(correct == stepped_correct);
    CHECK(correct > 0);       // training made some words predictable ...
    CHECK(correct < tokens);  // ... but not all of them
  }
}

TEST_CASE("decode: beam 1 is greedy, a wider beam never scores lower, and the reported scores are the model's") {
  ParallelCorpus corpus = load_decode_corpus();
  for (AttnVariant v : {parse_attn_variant("marginal", "nmt"), parse_attn_variant("soft", "nmt")}) {
    Seq2Seq model(small_config(corpus, v));
    train_briefly(model, corpus, 28);  // short of convergence: greedy's choices are often not the best
    const auto src = sources_of(corpus.valid, 12);
    const std::string name = variant_info(v).name;
    CAPTURE(name);

    DecodeOptions opt;  // the paper's settings: length penalty and EOS normalisation on
    opt.beam = 1;
    const std::vector<Translation> beam1 = beam_search(model, src, opt);
    for (size_t i = 0; i < src.size(); ++i) {
      const Translation greedy = greedy_reference(model, src[i], opt);
      CHECK(beam1[i].tokens == greedy.tokens);
      CHECK(beam1[i].score == doctest::Approx(greedy.score).epsilon(1e-6));
      CHECK(beam1[i].log_prob == doctest::Approx(greedy.log_prob).epsilon(1e-6));
      CHECK(int(greedy.tokens.size()) <= max_output_words(int(src[i].size()), opt));
    }

    opt.alpha = 0, opt.eos_norm = 0;  // rank by the model score alone
    const std::vector<Translation> g = beam_search(model, src, opt);
    opt.beam = 5;
    const std::vector<Translation> wide = beam_search(model, src, opt);
    const std::vector<double> g_eval = scored_by_evaluation(model, src, g, 0);
    const std::vector<double> w_eval = scored_by_evaluation(model, src, wide, 0);
    int better = 0;
    for (size_t i = 0; i < src.size(); ++i) {
      CAPTURE(i);
      CHECK(wide[i].log_prob >= g[i].log_prob - 1e-9);
      CHECK(wide[i].score == wide[i].log_prob);  // no penalties: the score is log p(y | x)
      CHECK(g[i].log_prob == doctest::Approx(g_eval[i]).epsilon(1e-5));
      CHECK(wide[i].log_prob == doctest::Approx(w_eval[i]).epsilon(1e-5));
      better += wide[i].log_prob > g[i].log_prob + 1e-6;
    }
    MESSAGE(name, ": beam 5 beats greedy on ", better, " of ", src.size(), " sentences");
    CHECK(better > 0);  // the search is not greedy in disguise

    // Batching does not change a sentence's result: one at a time through translate_corpus gives the same output.
    // Nor does the thread count, to the bit.
    opt.batch_size = 1;
    const std::vector<Translation> single = translate_corpus(model, src, opt);
    for (size_t i = 0; i < src.size(); ++i) CHECK(single[i].tokens == wide[i].tokens);
    const int saved = omp_get_max_threads();
    omp_set_num_threads(saved == 1 ? 2 : 1);
    const std::vector<Translation> other = beam_search(model, src, opt);
    omp_set_num_threads(saved);
    for (size_t i = 0; i < src.size(); ++i) {
      CHECK(other[i].tokens == wide[i].tokens);
      CHECK(other[i].log_prob == wide[i].log_prob);
    }
  }
}

TEST_CASE("decode: translate_corpus keeps the input order and gives empty lines for empty sources") {
  ParallelCorpus corpus = load_decode_corpus();
  Seq2Seq model(small_config(corpus, parse_attn_variant("marginal", "nmt")));
  train_briefly(model, corpus, 20);
  std::vector<std::vector<int32_t>> src = sources_of(corpus.valid, 5);
  src.insert(src.begin() + 2, std::vector<int32_t>{});
  DecodeOptions opt;
  opt.beam = 3, opt.batch_size = 2;
  const std::vector<Translation> out = translate_corpus(model, src, opt);
  REQUIRE(out.size() == src.size());
  CHECK(out[2].tokens.empty());
  const std::vector<Translation> direct = beam_search(model, {src[4], src[5]}, opt);
  CHECK(out[4].tokens == direct[0].tokens);
  CHECK(out[5].tokens == direct[1].tokens);
  Translation t;
  t.tokens = {corpus.tgt_vocab.id("soolack"), Vocab::kUnk};
  CHECK(translation_text(t, corpus.tgt_vocab).find(" <unk>") != std::string::npos);
}

TEST_CASE("decode: lava translate writes one line per input line and rejects bad input with file:line") {
  ParallelCorpus corpus = load_decode_corpus();
  Seq2Seq model(small_config(corpus, parse_attn_variant("marginal", "nmt")));
  train_briefly(model, corpus, 10);
  const std::string model_path = temp_path("decode_model.safetensors");
  save_nmt(model_path, model, corpus.src_vocab, corpus.tgt_vocab, {});
  const std::string input = temp_path("decode_in.txt"), output = temp_path("decode_out.txt");
  std::string text;
  for (int i = 0; i < 3; ++i) {
    for (const int32_t id : corpus.valid.pairs[size_t(i)].src) text += corpus.src_vocab.token(id) + " ";
    text += i == 1 ? "\n\nnot-a-known-word\n" : "\n";
  }
  write_text(input, text);  // 5 lines: sentence, sentence, empty, an unknown word, sentence

  CliResult r = run_lava("translate -q --beam 3 --model " + model_path + " --input " + input + " --output " + output);
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  const std::string got = slurp(output);
  CHECK(std::count(got.begin(), got.end(), '\n') == 5);
  CHECK(got.find("\n\n") != std::string::npos);  // the empty line stays empty
  r = run_lava("translate -q --beam 3 --model " + model_path + " --input " + input);
  CHECK(r.code == 0);
  CHECK(r.out == got);

  r = run_lava("translate --model /nonexistent/model.safetensors --input " + input);
  CHECK(r.code == 1);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find("/nonexistent/model.safetensors") != std::string::npos);
  r = run_lava("translate --model " + model_path + " --input /nonexistent/input.txt");
  CHECK(r.code == 1);
  CHECK(r.err.find("/nonexistent/input.txt") != std::string::npos);

  write_text(input, "a b\nc d\ne \xff f\n");
  r = run_lava("translate --model " + model_path + " --input " + input + " --output " + output);
  CHECK(r.code == 1);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.find(input + ":3") != std::string::npos);
  CHECK(slurp(output) == got);  // a failed run leaves the earlier output alone
  write_text(input, "a b\na b c d e\n");
  r = run_lava("translate --max-tokens 4 --model " + model_path + " --input " + input);
  CHECK(r.code == 1);
  CHECK(r.err.find(input + ":2") != std::string::npos);
  r = run_lava("translate --beam 0 --model " + model_path + " --input " + input);
  CHECK(r.code == 2);
  CHECK(r.err.find("--beam") != std::string::npos);

  // lava eval --bleu: a BLEU key in the JSON line, between 0 and 100.
  r = run_lava("eval -q --format json --bleu --beam 2 --split valid --model " + model_path + " --data " +
               decode_corpus());
  CHECK(r.code == 0);
  CHECK(r.out.find("\"bleu\":") != std::string::npos);
  for (const std::string& p : {model_path, input, output}) std::remove(p.c_str());
}
