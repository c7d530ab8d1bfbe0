// lava data gettext|synth|scenes|bpe: build the data sets LAVA trains on, offline, from Debian packages or a seed.
#include <cstdio>
#include <cstring>

#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "core/check.hpp"
#include "data/gettext_corpus.hpp"
#include "data/scenes.hpp"
#include "data/subword_corpus.hpp"
#include "data/vqa_questions.hpp"
#include "data/synth_task.hpp"

namespace lava {

namespace {

int data_gettext(int argc, char** argv) {
  CommandLine cl("data gettext", "lava data gettext [--lang de] --out DIR",
                 "Builds a German-English (or other language) parallel corpus from the human translations in\n"
                 "Debian's gettext catalogs: downloads a pinned package list with apt-get download, extracts,\n"
                 "cleans, tokenises, deduplicates and splits it (2.5% valid, 2.5% test by a hash of the source).\n"
                 "Writes DIR/{train,valid,test}.{LANG,en}, DIR/tokenizer (the word tokeniser, which a model trained on\n"
                 "DIR keeps, so that lava translate takes raw text) and DIR/manifest.tsv. A second run does nothing.");
  cl.options().add_options()                                                       //
      ("lang", po::value<std::string>()->default_value("de"), "source language")   //
      ("out", po::value<std::string>(), "output directory")                        //
      ("cache", po::value<std::string>(), "where .deb files are kept (default OUT/cache)");
  if (!cl.parse(argc, argv)) return 0;
  GettextOptions o;
  o.lang = cl.get_string("lang");
  o.out_dir = cl.get_string("out");
  if (cl.has("cache")) o.cache_dir = cl.get_string("cache");
  o.seed = cl.common().seed;
  o.quiet = cl.common().quiet;
  const GettextSummary s = build_gettext_corpus(o);
  std::printf("%s: %zu train, %zu valid, %zu test pairs%s\n", o.out_dir.c_str(), s.train, s.valid, s.test,
              s.cached ? " (already built)" : "");
  return 0;
}

int data_synth(int argc, char** argv) {
  CommandLine cl("data synth", "lava data synth --out DIR [options]",
                 "Generates a synthetic translation task from the seed: reordering (adjective-noun swaps,\n"
                 "verb-final clauses), one-to-many words and dropped function words, with gold alignments.\n"
                 "Writes DIR/{train,valid,test}.{de,en} and DIR/{train,valid,test}.align (Pharaoh i-j, source first).");
  cl.options().add_options()                                                             //
      ("out", po::value<std::string>(), "output directory")                              //
      ("train", po::value<std::string>()->default_value("20000"), "training pairs")      //
      ("valid", po::value<std::string>()->default_value("500"), "validation pairs")      //
      ("test", po::value<std::string>()->default_value("500"), "test pairs")             //
      ("min-len", po::value<std::string>()->default_value("4"), "shortest source sentence")  //
      ("max-len", po::value<std::string>()->default_value("14"), "longest source sentence")  //
      ("vocab", po::value<std::string>()->default_value("400"), "source content words");
  if (!cl.parse(argc, argv)) return 0;
  SynthOptions o;
  o.out_dir = cl.get_string("out");
  o.seed = cl.common().seed;
  o.train = int(cl.get_int("train", 1, 100000000));
  o.valid = int(cl.get_int("valid", 1, 100000000));
  o.test = int(cl.get_int("test", 1, 100000000));
  o.min_len = int(cl.get_int("min-len", 1, 1000));
  o.max_len = int(cl.get_int("max-len", o.min_len, 1000));
  o.vocab = int(cl.get_int("vocab", 10, 10000000));
  o.quiet = cl.common().quiet;
  build_synth_task(o);
  std::printf("%s: %d train, %d valid, %d test pairs\n", o.out_dir.c_str(), o.train, o.valid, o.test);
  return 0;
}

int data_scenes(int argc, char** argv) {
  CommandLine cl("data scenes", "lava data scenes --out DIR [options]",
                 "Builds a VQA-style set from Debian's Fashion-MNIST images: 3x3 scenes of items, questions (what is at\n"
                 "a position, where is an item, what is left of / right of / above / below an item, how many, is there,\n"
                 "and with --mix vqa2 is there an item at a position) with the regions that answer them, and 2 to 5\n"
                 "reference captions per scene from a small grammar (item words tagged with their region; lava train\n"
                 "--task caption). Train scenes use the training images, test scenes the t10k images, validation is\n"
                 "held out from train. Region features are computed from the images when read.");
  cl.options().add_options()                                                                           //
      ("out", po::value<std::string>(), "output directory")                                            //
      ("mnist", po::value<std::string>()->default_value("/usr/share/datasets/fashion-mnist"), "IDX files")  //
      ("train", po::value<std::string>()->default_value("50000"), "training scenes")                   //
      ("valid", po::value<std::string>()->default_value("5000"), "validation scenes")                  //
      ("test", po::value<std::string>()->default_value("10000"), "test scenes")                        //
      ("questions", po::value<std::string>()->default_value("5"), "questions per scene")               //
      ("mix", po::value<std::string>()->default_value("default"),
       "question mix: default (each question family equally likely: about 20% yes/no, 20% number, 60% other)\n"
       "| vqa2 (VQA 2.0's answer types: 38% yes/no, 12% number, 50% other; adds is_at, \"is there a bag at the\n"
       "top left ?\", a yes/no question one region answers)");
  if (!cl.parse(argc, argv)) return 0;
  ScenesOptions o;
  o.out_dir = cl.get_string("out");
  o.mnist_dir = cl.get_string("mnist");
  o.seed = cl.common().seed;
  o.train_scenes = int(cl.get_int("train", 1, 10000000));
  o.valid_scenes = int(cl.get_int("valid", 1, 10000000));
  o.test_scenes = int(cl.get_int("test", 1, 10000000));
  o.questions_per_scene = int(cl.get_int("questions", 1, 20));
  o.mix = cl.get_choice("mix", {"default", "vqa2"}) == "vqa2" ? QuestionMix::vqa2 : QuestionMix::default_mix;
  const ScenesReport r = build_scenes(o);
  std::printf("%s: %d/%d/%d scenes, %d/%d/%d questions, %d answers; test accuracy of the majority answer %.1f%%, "
              "of a question-only oracle %.1f%% (%.1f s)\n",
              o.out_dir.c_str(), r.scenes[0], r.scenes[1], r.scenes[2], r.questions[0], r.questions[1], r.questions[2],
              r.answer_vocab, 100 * r.baselines.majority, 100 * r.baselines.oracle, r.seconds);
  std::printf("%s: %d/%d/%d reference captions (2 to 5 per scene) from a grammar that can produce %.4g distinct "
              "captions\n",
              o.out_dir.c_str(), r.captions[0], r.captions[1], r.captions[2], r.grammar_captions);
  return 0;
}

int data_bpe(int argc, char** argv) {
  CommandLine cl("data bpe", "lava data bpe --data IN --out OUT [--types 14000]",
                 "Learns joint byte-pair subword units on both sides of IN's training split (Debian's sentencepiece,\n"
                 "BPE model type) and writes IN's {train,valid,test}.{SRC,TGT} to OUT with every word split into pieces\n"
                 "marked \"@@ \" (\"haus@@ boot@@ s\"), beside OUT/subword.model and a copy of IN/tokenizer. Train on OUT as\n"
                 "on any corpus: the model keeps the word tokeniser and the subword model, so lava translate cuts raw text\n"
                 "as OUT was cut, and BLEU and translations join the pieces back into words.");
  cl.options().add_options()                                                                //
      ("data", po::value<std::string>(), "tokenised corpus directory (e.g. from lava data gettext)")  //
      ("out", po::value<std::string>(), "output directory")                                 //
      ("src", po::value<std::string>()->default_value("de"), "source language suffix")      //
      ("tgt", po::value<std::string>()->default_value("en"), "target language suffix")      //
      ("types", po::value<std::string>()->default_value("14000"), "joint subword types");
  if (!cl.parse(argc, argv)) return 0;
  SubwordCorpusOptions o;
  o.in_dir = cl.get_string("data");
  o.out_dir = cl.get_string("out");
  o.src_lang = cl.get_string("src");
  o.tgt_lang = cl.get_string("tgt");
  o.types = int(cl.get_int("types", 8, 1000000));
  o.quiet = cl.common().quiet;
  const SubwordCorpusSummary s = build_subword_corpus(o);
  std::printf("%s: %d subword types; training split %lld words -> %lld pieces (%.3f a word)\n", o.out_dir.c_str(),
              s.types, (long long)s.train_words, (long long)s.train_pieces,
              s.train_words ? double(s.train_pieces) / double(s.train_words) : 0.0);
  return 0;
}

}  // namespace

int cmd_data(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::printf("usage: lava data gettext|synth|scenes|bpe [options]\n\n"
                "  gettext  German-English corpus from Debian's translation catalogs\n"
                "  synth    synthetic translation task with gold alignments\n"
                "  scenes   VQA-style questions about 3x3 scenes of Fashion-MNIST items\n"
                "  bpe      a corpus in joint BPE subword units (sentencepiece), from a tokenised one\n");
    return argc < 2 ? 2 : 0;
  }
  const std::string what = argv[1];
  if (what == "gettext") return data_gettext(argc - 1, argv + 1);
  if (what == "synth") return data_synth(argc - 1, argv + 1);
  if (what == "scenes") return data_scenes(argc - 1, argv + 1);
  if (what == "bpe") return data_bpe(argc - 1, argv + 1);
  throw UsageError("lava data: unknown data set '" + what + "' (gettext|synth|scenes|bpe)");
}

}  // namespace lava
