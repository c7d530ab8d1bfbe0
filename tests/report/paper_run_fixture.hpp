#pragma once
// Run folders with known figures for `lava report --tables paper` tests: what `lava sweep` writes (config.ini,
// run.json, status.json, metrics.jsonl) plus eval/NAME.jsonl, one `lava eval --format json` output each.
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "support/cli_runner.hpp"

struct PaperRunSpec {
  std::string task = "nmt", attn = "soft", data = "corpus";
  int seed = 1;
  // metrics.jsonl's done line (without the braces' "event"); empty: no done line.
  std::string done = R"("steps":100,"epochs":2,"best_epoch":1,"stop":"patience","seconds":60,"valid_ppl":9.5,"nan":false)";
  std::string epochs = R"({"event":"epoch","epoch":1,"steps":50,"valid_ppl":9.5,"valid_nll":1.5,"best":true})";
  std::string extra_config;  // more "key = value\n" lines
  std::string state = "finished";  // status.json's
};

// Writes the run into DIR/NAME and returns its folder.
inline std::string write_paper_run(const std::string& dir, const std::string& name, const PaperRunSpec& s) {
  const std::string run = dir + "/" + name;
  std::filesystem::create_directories(run + "/eval");
  write_text(run + "/config.ini", fmt::format("task = {}\ndata = {}\n{}attn = {}\nseed = {}\n", s.task, s.data,
                                              s.extra_config, s.attn, s.seed));
  write_text(run + "/run.json", fmt::format(R"({{"id":"{}","index":0,"sweep":"/none/{}.ini","task":"{}","seed":{},"grid":{{"attn":"{}"}}}})",
                                            name, s.task, s.task, s.seed, s.attn) + "\n");
  write_text(run + "/status.json", fmt::format(R"({{"state":"{}","exit":0,"sessions":1,"host":""}})", s.state) + "\n");
  std::string metrics = s.epochs.empty() ? "" : s.epochs + "\n";
  if (!s.done.empty()) metrics += R"({"event":"done",)" + s.done + "}\n";
  write_text(run + "/metrics.jsonl", metrics);
  return run;
}

// A translation evaluation's result row (kmax 0 = exact attention; bleu < 0: none).
inline std::string nmt_eval_row(double ppl, double bleu, int kmax = 0, double kl = 0.5, double entropy = 1.0) {
  std::string row = fmt::format(R"({{"attn":"x","split":"test","tokens":1000,"nll":1,"ppl":{},"elbo":-2.5,"kl":{},)"
                                R"("kl_gap":0.25,"entropy":{},"accuracy":0.5,"kmax":{},"likelihood":"exact")",
                                ppl, kl, entropy, kmax);
  if (bleu >= 0) row += fmt::format(R"(,"bleu":{},"beam":10)", bleu);
  return row + "}\n";
}

// A VQA evaluation: two question types, the single-region subset and the result row.
inline std::string vqa_eval_rows(double accuracy, double nll, double entropy) {
  return fmt::format(
      R"({{"event":"qtype","split":"test","subset":"single_region","qtype":"where","questions":40,"nll":{0},"accuracy":{1},"elbo":-{0},"kl":0,"kl_gap":0,"entropy":{2},"region_acc_posterior":0.5}})" "\n"
      R"({{"event":"qtype","split":"test","subset":"multi_region","qtype":"how_many","questions":60,"nll":{0},"accuracy":{1},"elbo":-{0},"kl":0,"kl_gap":0,"entropy":{2},"region_acc_posterior":0.1}})" "\n"
      R"({{"event":"subset","split":"test","subset":"single_region","qtype":"where","questions":40,"nll":{0},"accuracy":{1},"elbo":-{0},"kl":0,"kl_gap":0.01,"entropy":{2},"region_acc_posterior":0.5}})" "\n"
      R"({{"split":"test","questions":100,"nll":{0},"accuracy":{1},"vqa_score":null,"elbo":-{0},"kl":0,"kl_gap":0.02,"entropy":{2},"likelihood":"exact"}})" "\n",
      nll, accuracy, entropy);
}
