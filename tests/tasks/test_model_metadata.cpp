// A model file's metadata is checked against lava train's limits and against the file's own tensor shapes before
// any model is built from it, for every task: a hand-edited size is one error naming the file, the entry and the
// tensor, never an allocation the file does not back or an internal check.
#include <doctest/doctest.h>

#include "nn/safetensors.hpp"
#include "support/check_input_error.hpp"
#include "support/cli_runner.hpp"
#include "support/tiny_nmt.hpp"
#include "tasks/model_metadata.hpp"
#include "tasks/caption/model_file.hpp"
#include "tasks/nmt/model_file.hpp"
#include "tasks/seqvae/model_file.hpp"
#include "tasks/vqa/model_file.hpp"

using namespace lava;

namespace {

// A copy of the model file at `path` with metadata entry `key` set to `value`.
std::string with_metadata(const std::string& path, const std::string& key, const std::string& value) {
  SafetensorsFile f = load_safetensors(path);
  f.metadata[key] = value;
  const std::string out = path + "." + key + ".safetensors";
  save_safetensors(out, f.tensors, f.metadata);
  return out;
}

// Small models of the four tasks, saved next to TinyNmt's translation model, with its source vocabulary.
struct FourModels {
  TinyNmt f;
  std::string nmt, vqa, caption, seqvae;
  FourModels() {
    const Vocab& words = f.corpus.src_vocab;
    nmt = f.model_path;
    VqaConfig v;
    v.attn = parse_attn_variant("var-enum", "vqa");
    v.words = words.size(), v.answers = 2, v.regions = 4, v.feature_dim = 5;
    v.emb = 5, v.hidden = 7, v.attn_size = 4, v.mlp = 6, v.answer_emb = 3;
    vqa = f.tmp.file("vqa.safetensors");
    save_vqa(vqa, VqaModel(v), words, AnswerVocab::from_text("yes\nno\n", "answers"), {});
    CaptionConfig c;
    c.words = words.size(), c.feature_dim = 5, c.emb = 4, c.hidden = 6, c.annotation = 5, c.attn_size = 3;
    caption = f.tmp.file("caption.safetensors");
    save_caption_model(caption, CaptionModel(c), words, {});
    SeqVaeConfig s;
    s.vocab = words.size(), s.emb = 4, s.hidden = 6, s.latent = 3, s.layers = 2, s.attn_size = 3;
    seqvae = f.tmp.file("seqvae.safetensors");
    save_seqvae(seqvae, SeqVae(s), words, "de", {});
  }
  void load(const std::string& task, const std::string& path) const {
    if (task == "nmt") (void)load_nmt(path);
    if (task == "vqa") (void)load_vqa(path);
    if (task == "caption") (void)load_caption_model(path);
    if (task == "seqvae") (void)load_seqvae(path);
  }
};

}  // namespace

TEST_CASE("model metadata: every task's sizes must match its tensors, and stay within lava train's limits") {
  FourModels m;
  const std::pair<std::string, std::string> models[] = {
      {"nmt", m.nmt}, {"vqa", m.vqa}, {"caption", m.caption}, {"seqvae", m.seqvae}};
  for (const auto& [task, path] : models) {
    CAPTURE(task);
    m.load(task, path);  // the untouched file loads
    const std::string hidden = load_safetensors(path).metadata.at("hidden-size");
    const std::string other = std::to_string(std::stoi(hidden) + 2);  // even, in range, and wrong
    check_input_error([&] { m.load(task, with_metadata(path, "hidden-size", other)); }, path,
                      "model metadata \"hidden-size\" = " + other + " does not match tensor");
    check_input_error([&] { m.load(task, with_metadata(path, "emb-size", "60000")); }, path, "\"emb-size\" = 60000");
    check_input_error([&] { m.load(task, with_metadata(path, "emb-size", "100000")); }, path,
                      "\"emb-size\" = 100000 is out of range [1, 65536]");
    check_input_error([&] { m.load(task, with_metadata(path, "format", "lava-model-99")); }, path,
                      "model format \"lava-model-99\" is not supported (this LAVA reads lava-model-1)");
  }
  for (const std::string& path : {m.nmt, m.seqvae}) {
    const std::string task = path == m.nmt ? "nmt" : "seqvae";
    check_input_error([&] { m.load(task, with_metadata(path, "layers", "100000")); }, path,
                      "\"layers\" = 100000 is out of range [1, 16]");
    check_input_error([&] { m.load(task, with_metadata(path, "layers", "3")); }, path,
                      "\"layers\" = 3 needs tensor \"decoder/l2/W_hh\", which the file lacks");
  }
  check_input_error([&] { m.load("nmt", with_metadata(m.nmt, "hidden-size", "17")); }, m.nmt, "must be even");
  check_input_error([&] { m.load("vqa", with_metadata(m.vqa, "answers", "3")); }, m.vqa,
                    "\"answers\" = 3 does not match tensor \"answer_mlp/out/W\"");
}

TEST_CASE("model metadata: keys are the command-line names, and files with the older keys load the same") {
  FourModels m;
  const std::pair<std::string, std::string> models[] = {
      {"nmt", m.nmt}, {"vqa", m.vqa}, {"caption", m.caption}, {"seqvae", m.seqvae}};
  for (const auto& [task, path] : models) {
    CAPTURE(task);
    const SafetensorsFile file = load_safetensors(path);
    CHECK(file.metadata.count("emb-size") == 1);
    CHECK(file.metadata.count("hidden-size") == 1);
    // The file as LAVA wrote it before: every key that has an older name under that name.
    SafetensorsFile old = file;
    old.metadata.clear();
    int renamed = 0;
    for (const auto& [key, value] : file.metadata) {
      // data sizes, vocabularies and the stored-as flag of sat-hard are no options
      const bool data_key = key.ends_with("vocab") || key.ends_with("_tokens") || key == "answer_list" ||
                            key == "feature_dim" || key == "sat_hard";
      CAPTURE(key);
      CHECK((key.find('_') == std::string::npos || data_key));  // no option's key has the old spelling
      const char* before = old_metadata_key(key);
      renamed += before != nullptr;
      old.metadata[before ? before : key] = value;
    }
    CHECK(renamed >= 3);
    CHECK(old.metadata.count("emb") == 1);
    const std::string old_path = path + ".old.safetensors";
    save_safetensors(old_path, old.tensors, old.metadata);
    std::map<std::string, std::string> now, then;
    if (task == "nmt") now = load_nmt(path).model->config().to_metadata(), then = load_nmt(old_path).model->config().to_metadata();
    if (task == "vqa") now = load_vqa(path).model->config().to_metadata(), then = load_vqa(old_path).model->config().to_metadata();
    if (task == "caption")
      now = load_caption_model(path).model->config().to_metadata(),
      then = load_caption_model(old_path).model->config().to_metadata();
    if (task == "seqvae") now = load_seqvae(path).model->config().to_metadata(), then = load_seqvae(old_path).model->config().to_metadata();
    CHECK(!now.empty());
    CHECK(now == then);
    // A wrong value under an old key is still named and refused.
    old.metadata["emb"] = "100000";
    save_safetensors(old_path, old.tensors, old.metadata);
    check_input_error([&] { m.load(task, old_path); }, old_path, "\"emb-size\" = 100000 is out of range");
  }
  CHECK(old_metadata_key("emb-size") == std::string("emb"));
  CHECK(old_metadata_key("layers") == nullptr);
}

TEST_CASE("model metadata cli: a hand-edited size is one line naming the file, before anything is allocated") {
  TinyNmt f;
  // 100,000 layers in a small file once allocated gigabytes before a tensor was found missing: under a 1 GB address
  // space and 20 s, only a check before allocating answers with the file's name.
  for (const auto& [key, value, problem] : {std::tuple<std::string, std::string, std::string>{"layers", "100000", "out of range"},
                                            {"hidden-size", "17", "must be even"},
                                            {"hidden-size", "4096", "does not match tensor"},
                                            {"format", "99", "model format \"99\" is not supported"}}) {
    CAPTURE(key);
    const std::string bad = with_metadata(f.model_path, key, value);
    const CliResult r = run_bash(memory_limit(1000000) + "timeout 20 " + lava_bin() + " " + f.eval(bad));
    INFO(r.err);
    CHECK(r.code == 1);
    CHECK(r.err_lines() == 1);
    CHECK(r.err.find(bad) != std::string::npos);
    CHECK(r.err.find(problem) != std::string::npos);
    CHECK(r.err.find("internal") == std::string::npos);
  }
}
