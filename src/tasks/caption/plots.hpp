#pragma once
// Attention pictures of a captioner (`lava eval --task caption --plot DIR`), as in Xu et al.'s figures: for each of
// the first scenes of the split, DIR/scene-K-ATTN.svg shows the scene once per word of its beam-decoded caption,
// side by side, each region tinted by the attention α_t with which that word was produced (report/svg.hpp's
// write_image_attention; the scene is rebuilt from its pooled pixels as for VQA, tasks/vqa/plots.hpp). Pictures of
// two models written into one DIR (e.g. soft and hard attention) sit beside each other by name.
#include <string>
#include <vector>

#include "tasks/caption/decode.hpp"

namespace lava {

void write_caption_attention_plots(const std::string& dir, const CaptionSplit& split, const Vocab& vocab,
                                   const std::vector<DecodedCaption>& decoded, const std::string& attn_name,
                                   int count);

}  // namespace lava
