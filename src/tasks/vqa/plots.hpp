#pragma once
// Pictures of a VQA run (`lava train --task vqa --plot DIR`, `lava eval --task vqa --plot DIR`), each an SVG written
// atomically (report/svg.hpp):
//   DIR/learning-curves.svg  per question against epochs: train −objective (−log p or −ELBO, as the variant trains),
//                            valid −log p(y|x) and valid −ELBO
//   DIR/accuracy.svg         against epochs: valid answer accuracy and the share of single-region questions whose
//                            prior / exact posterior argmax is the annotated region
//   DIR/question-K.svg       question K = 1.. of the split (file order): the image with its regions tinted by the
//                            prior p(z | x, x̃), the exact posterior p(z | x, x̃, y) ∝ p(z) f(x, z)_y and, for the
//                            variants with q, q(z | x, x̃, y); the title holds the question, its answer, the model's
//                            answer and the annotated regions
// The image of a Fashion-MNIST scene is rebuilt from its region features, whose first (28/pool)² values are the
// item's pooled pixels (scenes.hpp): the 3x3 grid at pooled resolution, inverted (ink dark on white). Other region
// features have no pixels: their regions are drawn as blank cells of a near-square grid.
#include <string>
#include <string_view>
#include <vector>

#include "tasks/vqa/model.hpp"
#include "tasks/vqa/eval.hpp"

namespace lava {

// The first `count` questions of the split, under the model's current parameters (no dropout); `caption` says
// which model (e.g. "best epoch 3").
void write_vqa_attention_plots(const std::string& dir, VqaModel& model, const VqaSplit& split,
                               const VqaEncoded& encoded, const AnswerVocab& answers, int count,
                               std::string_view caption);

// The picture of image `image` of the split and its region grid: pixels (H, W) in [0, 1], grid rows and columns.
struct RegionImage {
  std::vector<float> pixels;
  int H = 0, W = 0, grid_rows = 1, grid_cols = 1;
};
RegionImage region_image(const VqaSplit& split, int image);

}  // namespace lava
