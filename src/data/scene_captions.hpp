#pragma once
// Reference captions of the 3x3 scenes (data/scenes.hpp), from a small grammar, for Show, Attend and Tell
// (lava train --task caption). Every item word is tagged with the region it names, so that a captioner's attention
// can be scored against it.
//
// The grammar (item N_r = the class name of cell r, "a" or "an" before it; P_r = its position, "top left", ...):
//   caption := clause | clause "and" clause | clause "," clause "and" clause      (1 to 3 clauses)
//   clause  := "a N_r at the P_r"                    (item first)
//            | "the P_r holds a N_r"                 (position first)
//            | "a N_r at the P_r REL a N_s"          (a relation; s is r's neighbour: REL ∈ left of, right of,
//                                                   above, below, read as "N_r is REL N_s")
// The clauses of one caption name distinct cells. A scene's references (2 to 5) draw the number of clauses, the
// cells and each clause's form uniformly, and are distinct from each other.
//
// File format ({train,valid,test}.captions.tsv; '#' lines and blank lines skipped):
//   scene<TAB>caption<TAB>caption[...]      2 to 5 captions, words separated by single spaces
// An item word carries its region as a suffix "@r" (0 <= r < 9, row-major from the top left):
//   0	a bag@0 at the top left above a sneaker@3	the center holds two ...
// A bad scene index (not counting up from 0, or past the scene count), a caption count outside 2..5, an empty
// caption or word, or a bad region tag is an InputError "FILE:LINE: what".
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "data/scenes.hpp"

namespace lava {

constexpr int kMinCaptions = 2, kMaxCaptions = 5;

struct Caption {
  std::vector<std::string> words;  // without the region tags
  std::vector<int8_t> region;      // per word: the region an item word names, −1 for other words
};

struct SceneCaptions {
  int scene = 0;
  std::vector<Caption> refs;  // 2 to 5
};

// The references of every scene (scene i's from stream (seed, "scenes/captions/<split>", i)).
std::vector<SceneCaptions> caption_scenes(const std::vector<Scene>& scenes, uint64_t seed, std::string_view split);

// The number of distinct captions the grammar can produce over all scenes (a caption fixes the class of every cell
// it names, and any such assignment extends to a valid scene).
double grammar_caption_count();

std::string format_caption(const Caption& c);  // "a bag@0 at the top left"
void write_scene_captions(const std::string& path, const std::vector<SceneCaptions>& captions);  // atomic
// num_scenes: scene indices must count up from 0 and stay below it.
std::vector<SceneCaptions> read_scene_captions(const std::string& path, int num_scenes);

}  // namespace lava
