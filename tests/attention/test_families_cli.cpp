// The wider family of attention variants (var-dirichlet, gauss-ctx, bam-*, structured, sigmoid) end to end through
// the `lava` binary ($LAVA_BIN) on a tiny synthetic translation corpus and a tiny VQA data set: each trains a few
// steps without NaN, saves, and `lava eval` reads the model back with finite figures; the model file carries the
// variant's hyperparameters (lava eval equals the in-memory model, which differs from one with default
// hyperparameters); bad values are usage errors naming their option.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "attention/attention_weights.hpp"
#include "cli/commands.hpp"
#include "core/atomic_file.hpp"
#include "core/check.hpp"
#include "core/json.hpp"
#include "data/npy_file.hpp"
#include "data/synth_task.hpp"
#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"
#include "tasks/nmt/eval.hpp"
#include "tasks/nmt/model_file.hpp"
#include "tasks/vqa/eval.hpp"
#include "tasks/vqa/model_file.hpp"

using namespace lava;

namespace {

const AttnVariant kNew[] = {parse_attn_variant("var-dirichlet", "nmt"), parse_attn_variant("gauss-ctx", "nmt"),
                            parse_attn_variant("bam-weibull", "nmt"),   parse_attn_variant("bam-lognormal", "nmt"),
                            parse_attn_variant("structured", "nmt"),    parse_attn_variant("sigmoid", "nmt")};

// A synthetic corpus (24/6/6 pairs) and a VQA data set of 8 images × 3 regions × 4 features whose answer is a
// function of one region's first feature (as in tests/tasks/vqa/vqa_fixture.hpp), built once.
struct Fixture {
  TempDir tmp{"families"};
  std::string corpus = tmp.file("synth"), features = tmp.file("feats.npy"), questions = tmp.file("q");
  ParallelCorpus nmt;
  VqaSplit vqa_train, vqa_test;
  Vocab words;
  AnswerVocab answers;
  VqaEncoded vqa_test_enc;

  Fixture() {
    SynthOptions o;
    o.out_dir = corpus;
    o.train = 24, o.valid = 6, o.test = 6, o.min_len = 3, o.max_len = 6, o.vocab = 20, o.quiet = true;
    build_synth_task(o);
    CorpusOptions co;
    co.dir = corpus;
    nmt = load_parallel_corpus(co, VocabOptions{}, VocabOptions{});

    const int images = 8, regions = 3, dim = 4;
    std::vector<float> f(size_t(images * regions * dim));
    const CounterRng rng(7, 1);
    for (size_t i = 0; i < f.size(); ++i) f[i] = float(rng.uniform(i));
    write_npy(features, {images, regions, dim}, f.data());
    std::filesystem::create_directories(questions);
    const char* colours[] = {"red", "blue", "green"};
    for (auto [split, n] : {std::pair<const char*, int>{"train", 24}, {"valid", 6}, {"test", 6}}) {
      std::string text = "# image\tquestion\tanswer\tcounts\ttype\tregions\n";
      for (int k = 0; k < n; ++k) {
        const int image = (k + 3 * (split[0] != 't')) % images, region = k / images % regions;
        text += fmt::format("{}\twhat is in region {} ?\t{}\t\t\t{}\n", image, region,
                            colours[int(f[size_t((image * regions + region) * dim)] * 3)], region);
      }
      write_file_atomic(questions + "/" + split + ".questions.tsv", text);
    }
    const VqaDataOptions d{"", features, questions, ""};
    vqa_train = load_vqa_split(d, "train"), vqa_test = load_vqa_split(d, "test");
    words = build_question_vocab(vqa_train.questions);
    answers = AnswerVocab::build(vqa_train.questions);
    vqa_test_enc = encode_vqa(vqa_test.questions, words, answers);
  }
  std::string vqa_data() const { return "--task vqa --features " + features + " --questions " + questions; }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

JsonValue last_json_line(const std::string& out) {
  REQUIRE(!out.empty());
  const size_t end = out.find_last_not_of('\n'), newline = out.rfind('\n', end);
  const size_t begin = newline == std::string::npos ? 0 : newline + 1;
  return parse_json(out.substr(begin, end + 1 - begin), "stdout");
}

// The figures every evaluation of variant v must print.
void check_eval_row(const JsonValue& e, AttnVariant v, double eval_samples) {
  for (const char* key : {"nll", "elbo", "kl", "kl_gap", "entropy"}) {
    CAPTURE(key);
    REQUIRE(e.at(key).is_number());
    CHECK(std::isfinite(e.at(key).number()));
  }
  const double nll = e.at("nll").number(), elbo = e.at("elbo").number(), kl = e.at("kl").number();
  CHECK(e.at("likelihood").str() == likelihood_kind(v));
  CHECK(e.at("kl_gap").number() == doctest::Approx(-nll - elbo).epsilon(1e-9));
  if (variant_info(v).sampled) {
    CHECK(kl >= 0);
    CHECK(e.at("kl_posterior").is_null());  // no exact posterior behind an importance-weighted estimate
    CHECK(std::isfinite(e.at("nll_mean_attn").number()));
    CHECK(e.at("eval_samples").number() == eval_samples);
  } else {  // a deterministic attention: the likelihood is direct and there is no latent to bound
    CHECK(elbo == -nll);
    CHECK(kl == 0);
  }
}

}  // namespace

TEST_CASE("families cli: each new variant trains (nmt, vqa) without NaN, saves, and lava eval reads it back") {
  const Fixture& f = fixture();
  for (AttnVariant v : kNew) {
    const std::string name = variant_info(v).name, model = f.tmp.file(name + ".safetensors");
    CAPTURE(name);
    // --eval-samples and --warm-start where the variant reads them (lava train refuses them elsewhere).
    std::string common = " --attn " + name + " --epochs 1 --batch-size 8 --emb-size 4 --hidden-size 6 "
                         "--attn-size 4 --save " + model + " --format json -q";
    for (const char* option : {"--eval-samples 5", "--warm-start 1"})
      if (reads_option(v, std::string(option + 2, std::strchr(option, ' ')))) common += std::string(" ") + option;
    CliResult r = run_lava("train --data " + f.corpus + " --max-steps 3 --inf-hidden 4 --dropout 0" + common);
    REQUIRE(r.code == 0);
    JsonValue done = last_json_line(r.out);
    CHECK(done.at("event").str() == "done");
    CHECK(done.at("nan").boolean() == false);
    CHECK(std::isfinite(done.at("valid_elbo").number()));
    r = run_lava("eval --data " + f.corpus + " --model " + model + " --format json -q");
    REQUIRE(r.code == 0);
    check_eval_row(last_json_line(r.out), v, 5);

    r = run_lava("train " + f.vqa_data() + " --max-steps 2 --mlp-size 6 --answer-emb 3" + common);
    REQUIRE(r.code == 0);
    CHECK(last_json_line(r.out).at("event").str() == "done");
    r = run_lava("eval " + f.vqa_data() + " --model " + model + " --format json -q");
    REQUIRE(r.code == 0);
    const JsonValue e = last_json_line(r.out);
    check_eval_row(e, v, 5);
    CHECK(std::isfinite(e.at("accuracy").number()));
  }
}

TEST_CASE("families cli: the model file carries the variant's hyperparameters (lava eval equals the in-memory model)") {
  const Fixture& f = fixture();
  struct Case {
    AttnVariant v;
    VariantConfig cfg;
  };
  std::vector<Case> cases;
  VariantConfig c;
  c.k_weibull = 5, c.bam_prior = "fixed", c.alpha_gamma = 2, c.beta_gamma = 3, c.eval_samples = 7;
  cases.push_back({parse_attn_variant("bam-weibull", "nmt"), c});
  c = VariantConfig{};
  c.sigma_q = 0.3f, c.sigma_p = 2, c.eval_samples = 4;
  cases.push_back({parse_attn_variant("bam-lognormal", "nmt"), c});
  c = VariantConfig{};
  c.alpha_transform = "softplus", c.eval_samples = 3;
  cases.push_back({parse_attn_variant("var-dirichlet", "nmt"), c});
  c = VariantConfig{};
  c.gauss_prior = "zero";
  cases.push_back({parse_attn_variant("gauss-ctx", "nmt"), c});
  c = VariantConfig{};
  c.crf_lambda = 1.3f;
  cases.push_back({parse_attn_variant("structured", "nmt"), c});
  auto same_config = [](const VariantConfig& a, const VariantConfig& b) {
    return a.alpha_transform == b.alpha_transform && a.k_weibull == b.k_weibull && a.bam_prior == b.bam_prior &&
           a.alpha_gamma == b.alpha_gamma && a.beta_gamma == b.beta_gamma && a.sigma_q == b.sigma_q &&
           a.sigma_p == b.sigma_p && a.gauss_prior == b.gauss_prior && a.crf_lambda == b.crf_lambda &&
           a.eval_samples == b.eval_samples;
  };
  for (const Case& k : cases) {
    const std::string name = variant_info(k.v).name, path = f.tmp.file("hyper-" + name + ".safetensors");
    CAPTURE(name);
    // Translation: a random tiny model with these hyperparameters, and the same parameters with the defaults.
    Seq2SeqConfig cfg;
    cfg.attn = k.v, cfg.variant = k.cfg;
    cfg.src_vocab = f.nmt.src_vocab.size(), cfg.tgt_vocab = f.nmt.tgt_vocab.size();
    cfg.emb = 4, cfg.hidden = 6, cfg.attn_size = 4, cfg.inf_hidden = 4, cfg.dropout = 0.f;
    Seq2Seq model(cfg);
    model.ps.init_uniform(0.5f, 3);
    cfg.variant = VariantConfig{};
    Seq2Seq plain(cfg);
    plain.ps.init_uniform(0.5f, 3);
    save_nmt(path, model, f.nmt.src_vocab, f.nmt.tgt_vocab, {});
    CHECK(same_config(load_nmt(path).model->config().variant, k.cfg));
    const NmtEvalFigures mem = evaluate_nmt(model, f.nmt.test, 32, 0, 1, true);
    const NmtEvalFigures def = evaluate_nmt(plain, f.nmt.test, 32, 0, 1, true);
    CHECK(std::abs(mem.nll - def.nll) > 1e-6);  // so the comparison below can tell
    CliResult r = run_lava("eval --data " + f.corpus + " --model " + path + " --format json -q --seed 1");
    REQUIRE(r.code == 0);
    JsonValue e = last_json_line(r.out);
    CHECK(e.at("nll").number() == doctest::Approx(mem.nll).epsilon(1e-12));
    CHECK(e.at("elbo").number() == doctest::Approx(mem.elbo).epsilon(1e-12));
    CHECK(e.at("kl").number() == doctest::Approx(mem.kl).epsilon(1e-12).scale(1e-12));
    if (variant_info(k.v).sampled) {
      CHECK(e.at("eval_samples").number() == k.cfg.eval_samples);
      r = run_lava("eval --data " + f.corpus + " --model " + path + " --format json -q --seed 1 --eval-samples 2");
      REQUIRE(r.code == 0);
      CHECK(last_json_line(r.out).at("eval_samples").number() == 2);
      CHECK(last_json_line(r.out).at("nll").number() != mem.nll);
    }

    // VQA: the same round trip.
    VqaConfig vc;
    vc.attn = k.v, vc.variant = k.cfg;
    vc.words = f.words.size(), vc.answers = f.answers.size();
    vc.regions = f.vqa_train.features->num_regions(), vc.feature_dim = f.vqa_train.features->dim();
    vc.emb = 4, vc.hidden = 5, vc.attn_size = 4, vc.mlp = 6, vc.answer_emb = 3, vc.dropout = 0.f;
    VqaModel vqa(vc);
    vqa.ps.init_uniform(0.8f, 4);
    vc.variant = VariantConfig{};
    VqaModel vqa_plain(vc);
    vqa_plain.ps.init_uniform(0.8f, 4);
    save_vqa(path, vqa, f.words, f.answers, {});
    CHECK(same_config(load_vqa(path).model->config().variant, k.cfg));
    const VqaEvalFigures vm = evaluate_vqa(vqa, f.vqa_test, f.vqa_test_enc, f.answers, 256);
    const VqaEvalFigures vd = evaluate_vqa(vqa_plain, f.vqa_test, f.vqa_test_enc, f.answers, 256);
    CHECK(std::abs(vm.nll - vd.nll) > 1e-6);
    r = run_lava("eval " + f.vqa_data() + " --model " + path + " --format json -q");
    REQUIRE(r.code == 0);
    e = last_json_line(r.out);
    CHECK(e.at("nll").number() == doctest::Approx(vm.nll).epsilon(1e-12));
    CHECK(e.at("elbo").number() == doctest::Approx(vm.elbo).epsilon(1e-12));
    if (variant_info(k.v).sampled) {  // --seed picks the importance samples: another seed, another estimate
      r = run_lava("eval " + f.vqa_data() + " --model " + path + " --format json -q --seed 2");
      REQUIRE(r.code == 0);
      const double nll2 = last_json_line(r.out).at("nll").number();
      CHECK(nll2 != e.at("nll").number());
      CHECK(nll2 == doctest::Approx(evaluate_vqa(vqa, f.vqa_test, f.vqa_test_enc, f.answers, 256, 0, 2).nll).epsilon(1e-12));
    }
  }
}

TEST_CASE("families cli: a bad variant hyperparameter is a usage error: exit 2, one line naming the option") {
  const Fixture& f = fixture();
  const char* bad[][2] = {{"--k-weibull", "0"},     {"--k-weibull", "x"},      {"--bam-prior", "foo"},
                          {"--alpha-transform", "relu"}, {"--sigma-q", "0"}, {"--sigma-p", "-1"},
                          {"--crf-lambda", "0"},    {"--gauss-prior", "one"},  {"--eval-samples", "0"},
                          {"--alpha-gamma", "0"},   {"--beta-gamma", "-2"},    {"--att-kl", "-2"},
                          {"--att-kl-anneal", "-1"}, {"--crf-l2", "-1"},       {"--warm-start", "-1"},
                          {"--k-weibull", "nan"}};
  // In process (every option, both tasks): a UsageError of one line naming the option.
  for (const std::string& data : {"--data=" + f.corpus, "--features=" + f.features}) {
    for (const auto& [option, value] : bad) {
      std::vector<std::string> args = {"train",    data,     "--questions=" + f.questions, "--attn", "bam-weibull",
                                       "-q",       "--max-steps=1", "--epochs=1", "--hidden-size=4", "--emb-size=4",
                                       "--attn-size=4", option, value};
      if (data[2] == 'd') args.erase(args.begin() + 2);
      else args.insert(args.begin() + 1, {"--task", "vqa"});
      CAPTURE(data);
      CAPTURE(option);
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      std::string what;
      try {
        cmd_train(int(argv.size()), argv.data());
      } catch (const UsageError& e) {
        what = e.what();
      }
      CHECK(what.find(option) != std::string::npos);
      CHECK(what.find('\n') == std::string::npos);
    }
  }
  // Through the binary: exit 2 and one stderr line.
  for (const std::string& data : {"--data " + f.corpus, f.vqa_data()}) {
    const CliResult r = run_lava("train " + data + " --attn bam-weibull -q --k-weibull 0");
    CHECK(r.code == 2);
    CHECK(r.err_lines() == 1);
    CHECK(r.err.find("--k-weibull") != std::string::npos);
  }
  Seq2SeqConfig cfg;
  cfg.attn = parse_attn_variant("bam-weibull", "nmt");
  cfg.src_vocab = f.nmt.src_vocab.size(), cfg.tgt_vocab = f.nmt.tgt_vocab.size();
  cfg.emb = 4, cfg.hidden = 6, cfg.attn_size = 4, cfg.inf_hidden = 4;
  const std::string model = f.tmp.file("bad-options.safetensors");
  save_nmt(model, Seq2Seq(cfg), f.nmt.src_vocab, f.nmt.tgt_vocab, {});
  VqaConfig vc;
  vc.attn = parse_attn_variant("bam-weibull", "nmt"), vc.words = f.words.size(), vc.answers = f.answers.size();
  vc.regions = f.vqa_train.features->num_regions(), vc.feature_dim = f.vqa_train.features->dim();
  vc.emb = vc.hidden = vc.attn_size = vc.mlp = vc.answer_emb = 4;
  const std::string vqa_model = f.tmp.file("bad-options-vqa.safetensors");
  save_vqa(vqa_model, VqaModel(vc), f.words, f.answers, {});
  for (const std::string& args : {"eval --data " + f.corpus + " --model " + model + " --eval-samples 0",
                                  "eval " + f.vqa_data() + " --model " + vqa_model + " --eval-samples 0"}) {
    CAPTURE(args);
    const CliResult r = run_lava(args);
    CHECK(r.code == 2);
    CHECK(r.err_lines() == 1);
    CHECK(r.err.find("--eval-samples") != std::string::npos);
  }
}

TEST_CASE("families cli: the best checkpoint follows the bound each variant trains; --encoder embedding round-trips") {
  // log p for the variants that train the likelihood itself, the ELBO for the rest.
  for (AttnVariant v :
       {parse_attn_variant("none", "nmt"), parse_attn_variant("soft", "nmt"), parse_attn_variant("marginal", "nmt"),
        parse_attn_variant("structured", "nmt"), parse_attn_variant("sigmoid", "nmt")})
    CHECK(valid_criterion(v, 2.5, -3.0) == -2.5);
  for (AttnVariant v : {parse_attn_variant("hard-enum", "nmt"), parse_attn_variant("var-enum", "nmt"),
                        parse_attn_variant("var-dirichlet", "nmt"), parse_attn_variant("bam-weibull", "nmt")})
    CHECK(valid_criterion(v, 2.5, -3.0) == -3.0);

  const Fixture& f = fixture();
  const std::string model = f.tmp.file("embedding-encoder.safetensors");
  CliResult r = run_lava("train --data " + f.corpus + " --attn marginal --encoder embedding --epochs 2 --batch-size 8 "
                         "--emb-size 4 --hidden-size 6 --attn-size 4 --save " + model + " --format json -q");
  REQUIRE(r.code == 0);
  // Every epoch line that improved log p is marked best, and only those (the ELBO is the Jensen bound here).
  double best_nll = INFINITY;
  for (size_t pos = 0; (pos = r.out.find("\"event\":\"epoch\"", pos)) != std::string::npos; ++pos) {
    const size_t begin = r.out.rfind('\n', pos) == std::string::npos ? 0 : r.out.rfind('\n', pos) + 1;
    const JsonValue e = parse_json(r.out.substr(begin, r.out.find('\n', pos) - begin), "stdout");
    CHECK(e.at("best").boolean() == (e.at("valid_nll").number() < best_nll));
    best_nll = std::min(best_nll, e.at("valid_nll").number());
  }
  const LoadedNmt m = load_nmt(model);
  CHECK(m.model->config().encoder == NmtEncoder::embedding);
  CHECK(m.model->ps.find("encoder/embedding/W") >= 0);
  r = run_lava("train --data " + f.corpus + " --encoder lstm --save " + model + " -q");
  CHECK(r.code == 2);
}
