#pragma once
// The captioning data of lava train --task caption: a `lava data scenes` directory's scenes (region features
// computed from the Fashion-MNIST images) with their reference captions (data/scene_captions.hpp). A training
// example is one (scene, reference) pair; evaluation scores every reference of a scene.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "data/scene_captions.hpp"
#include "data/scenes.hpp"
#include "data/vocab.hpp"

namespace lava {

struct CaptionSplit {
  std::string name;           // train | valid | test
  std::string captions_path;  // for messages
  std::shared_ptr<const SceneSet> scenes;
  std::vector<SceneCaptions> captions;            // one entry per scene
  std::vector<std::pair<int, int>> examples;      // (scene, reference), scene-major
};

// InputError for a missing or bad file. mnist_dir "" = the one in meta.tsv.
CaptionSplit load_caption_split(const std::string& dir, const std::string& split, const std::string& mnist_dir = "");

// The caption words of the train split (item words without their tags), every word kept.
Vocab build_caption_vocab(const CaptionSplit& train);

// A batch of (scene, reference) pairs, padded to the longest caption + </s>.
struct CaptionBatch {
  int B = 0, T = 0, R = kSceneRegions, D = 0;
  std::vector<float> features;   // (B, R, D)
  std::vector<int32_t> tgt_in;   // (B, T): <bos> w_1 .. w_n, then <pad>
  std::vector<int32_t> tgt_out;  // (B, T): w_1 .. w_n </s>, then <pad>
  std::vector<float> mask;       // (B, T): 1 for the n + 1 real targets
  std::vector<int8_t> region;    // (B, T): the region item word t names, −1 otherwise
  std::vector<int> lengths;      // (B): n + 1
};

CaptionBatch make_caption_batch(const CaptionSplit& split, const Vocab& vocab, const std::vector<int>& examples);

// The batches of training epoch e: a seeded shuffle of the examples, a function of (seed, e) only.
std::vector<std::vector<int>> caption_train_batches(int count, int batch_size, uint64_t seed, int64_t epoch);

}  // namespace lava
