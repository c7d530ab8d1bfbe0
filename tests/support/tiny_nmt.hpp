#pragma once
// A synthetic corpus (lava data synth's generator, with gold alignments) and a small untrained var-enum model saved
// beside it, for tests that drive `lava eval`, `translate` and `align` from the command line.
#include <string>

#include "data/parallel_corpus.hpp"
#include "data/synth_task.hpp"
#include "tasks/nmt/model_file.hpp"
#include "tasks/nmt/seq2seq.hpp"
#include "temp_dir.hpp"

namespace lava {

struct TinyNmt {
  TempDir tmp{"eval_cli"};
  std::string corpus_dir, model_path;
  ParallelCorpus corpus;
  TinyNmt() {
    SynthOptions o;
    o.out_dir = corpus_dir = tmp.file("synth");
    o.train = 48, o.valid = 12, o.test = 12, o.min_len = 3, o.max_len = 12, o.vocab = 30, o.quiet = true;
    build_synth_task(o);
    CorpusOptions co;
    co.dir = corpus_dir;
    corpus = load_parallel_corpus(co, VocabOptions{}, VocabOptions{});
    Seq2SeqConfig cfg;
    cfg.attn = parse_attn_variant("var-enum", "nmt");
    cfg.src_vocab = corpus.src_vocab.size(), cfg.tgt_vocab = corpus.tgt_vocab.size();
    cfg.emb = 8, cfg.hidden = 12, cfg.attn_size = 6, cfg.inf_hidden = 6, cfg.dropout = 0.f;
    Seq2Seq model(cfg);
    model.ps.init_uniform(0.5f, 3);
    model_path = tmp.file("model.safetensors");
    save_nmt(model_path, model, corpus.src_vocab, corpus.tgt_vocab, {});
  }
  std::string eval(const std::string& model, const std::string& extra = "") const {
    return "eval -q --format json --split test --model " + model + " --data " + corpus_dir + " " + extra;
  }
};

}  // namespace lava
