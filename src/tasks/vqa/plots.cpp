#include "tasks/vqa/plots.hpp"

#include <cmath>
#include <filesystem>

#include "core/check.hpp"
#include "report/svg.hpp"

namespace lava {

RegionImage region_image(const VqaSplit& split, int image) {
  const RegionFeatures& f = *split.features;
  const int R = f.num_regions(), D = f.dim();
  RegionImage out;
  int side = 0;  // scenes: D = side² (+ 6 position features); side² + 6 is never a square, so this is unambiguous
  if (split.scenes && R == 9)
    for (int s = 1; s * s <= D; ++s)
      if (s * s == D || s * s + 6 == D) side = s;
  if (side == 0) {  // no pixels: blank cells on a near-square grid
    for (int r = 1; r * r <= R; ++r)
      if (R % r == 0) out.grid_rows = r;
    out.grid_cols = R / out.grid_rows;
    out.H = 8 * out.grid_rows, out.W = 8 * out.grid_cols;
    out.pixels.assign(size_t(out.H) * size_t(out.W), 1.f);
    return out;
  }
  // pixel (y, x) of the 3x3 scene = pooled pixel (y % side, x % side) of region (y / side) * 3 + x / side, inverted
  std::vector<float> feats(size_t(R) * size_t(D));  // (R, D)
  f.get(image, feats.data());
  out.grid_rows = out.grid_cols = 3;
  out.H = out.W = 3 * side;
  out.pixels.resize(size_t(out.H) * size_t(out.W));
  for (int y = 0; y < out.H; ++y)
    for (int x = 0; x < out.W; ++x) {
      const int r = (y / side) * 3 + x / side;
      const float v = feats[size_t(r) * size_t(D) + size_t((y % side) * side + x % side)];
      out.pixels[size_t(y) * size_t(out.W) + size_t(x)] = 1.f - std::clamp(v, 0.f, 1.f);
    }
  return out;
}

void write_vqa_attention_plots(const std::string& dir, VqaModel& model, const VqaSplit& split,
                               const VqaEncoded& encoded, const AnswerVocab& answers, int count,
                               std::string_view caption) {
  count = std::min(count, int(split.questions.size()));
  if (count <= 0) return;
  std::filesystem::create_directories(dir);
  std::vector<int> index(static_cast<size_t>(count));
  for (int k = 0; k < count; ++k) index[size_t(k)] = k;
  const VqaBatch batch = make_vqa_batch(split, encoded, index);
  Tape<float> tape;
  Ctx c{tape, model.ps, false, CounterRng(0, stream_id("vqa/plot")), 0.f};
  const VqaScores s = model.scores(c, batch);
  const AttnVariant v = model.config().attn;
  const int R = s.R, V = s.V;
  std::vector<double> predictive(static_cast<size_t>(V));
  for (int b = 0; b < count; ++b) {
    const VqaQuestion& q = split.questions[size_t(b)];
    const float* lp = s.log_prior.data() + size_t(b) * size_t(R);
    std::vector<double> prior(static_cast<size_t>(R)), posterior(static_cast<size_t>(R));
    for (int i = 0; i < R; ++i) prior[size_t(i)] = std::exp(double(lp[i]));
    std::vector<std::vector<double>> panels = {prior};
    std::vector<std::string> titles = {"prior p(z | x, x̃)"};
    vqa_predictive(v, s, b, predictive.data());
    const std::string guess = answers.answer(first_argmax(predictive.data(), V));
    const int y = encoded.answer[size_t(b)];
    if (y >= 0) {  // the exact posterior ∝ p_i f_i(y), normalised in double
      double m = -INFINITY, z = 0;
      const float* lf = s.log_f.data() + size_t(b) * size_t(R) * size_t(V);  // (R, V)
      for (int i = 0; i < R; ++i) posterior[size_t(i)] = double(lp[i]) + double(lf[size_t(i) * size_t(V) + size_t(y)]);
      for (double x : posterior) m = std::max(m, x);
      for (double& x : posterior) z += (x = std::exp(x - m));
      for (double& x : posterior) x /= z;
      panels.push_back(posterior);
      titles.emplace_back("posterior p(z | x, x̃, y)");
      if (!s.log_q.empty()) {
        std::vector<double> qz(static_cast<size_t>(R));
        for (int i = 0; i < R; ++i) qz[size_t(i)] = std::exp(double(s.log_q[size_t(b) * size_t(R) + size_t(i)]));
        panels.push_back(qz);
        titles.emplace_back("q(z | x, x̃, y)");
      }
    }
    std::string question;
    for (const std::string& w : q.words) question += (question.empty() ? "" : " ") + w;
    const std::string regions = q.regions.empty() ? "none" : join_fields(q.regions, ",");
    const std::string title = fmt::format("{} ({}), {} question {}: \"{}\" answer \"{}\"{}, model \"{}\"; regions {}",
                                          variant_info(v).name, caption, split.name, b + 1, question, q.answer,
                                          y < 0 ? " (unseen in training)" : "", guess, regions);
    const RegionImage img = region_image(split, q.image);
    write_image_attention(fmt::format("{}/question-{}.svg", dir, b + 1), title, img.pixels, img.H, img.W,
                          img.grid_rows, img.grid_cols, panels, titles);
  }
}

}  // namespace lava
