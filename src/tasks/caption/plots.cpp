#include "tasks/caption/plots.hpp"

#include <filesystem>

#include "report/svg.hpp"
#include "tasks/vqa/plots.hpp"

namespace lava {

void write_caption_attention_plots(const std::string& dir, const CaptionSplit& split, const Vocab& vocab,
                                   const std::vector<DecodedCaption>& decoded, const std::string& attn_name,
                                   int count) {
  count = std::min(count, int(decoded.size()));
  if (count <= 0) return;
  std::filesystem::create_directories(dir);
  VqaSplit scenes;  // region_image reads the scene's pixels from its features
  scenes.name = split.name, scenes.features = split.scenes, scenes.scenes = true;
  for (int s = 0; s < count; ++s) {
    const DecodedCaption& d = decoded[size_t(s)];
    std::vector<std::vector<double>> panels;
    std::vector<std::string> titles;
    std::string caption;
    for (size_t t = 0; t < d.tokens.size(); ++t) {
      panels.emplace_back(d.attention[t].begin(), d.attention[t].end());
      titles.push_back(vocab.token(d.tokens[t]));
      caption += (t ? " " : "") + vocab.token(d.tokens[t]);
    }
    const RegionImage img = region_image(scenes, s);
    write_image_attention(fmt::format("{}/scene-{}-{}.svg", dir, s + 1, attn_name),
                          fmt::format("{}, {} scene {}: \"{}\"", attn_name, split.name, s + 1, caption), img.pixels,
                          img.H, img.W, img.grid_rows, img.grid_cols, panels, titles);
  }
}

}  // namespace lava
