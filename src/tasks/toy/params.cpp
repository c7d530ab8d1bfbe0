#include "tasks/toy/params.hpp"

#include <algorithm>
#include <cmath>

#include "core/check.hpp"
#include "core/quote_input.hpp"
#include "core/read_file.hpp"
#include "core/rng.hpp"
#include "core/json.hpp"

namespace lava {

namespace {

// Reads a JSON array of n numbers into out; a JSON matrix of rows×cols when cols > 0.
void read_numbers(const JsonValue& v, std::vector<double>& out, size_t rows, size_t cols, const std::string& what) {
  const auto fail = [&](const JsonValue& at, const std::string& msg) {
    throw input_error(at.file(), at.line(), what + ": " + msg);
  };
  if (!v.is_array()) fail(v, "expected an array");
  if (v.size() != rows) fail(v, fmt::format("expected {} entries, got {}", rows, v.size()));
  for (size_t r = 0; r < rows; ++r) {
    if (cols == 0) {
      out.push_back(v[r].number());
      if (!std::isfinite(out.back())) fail(v[r], "not a finite number");
      continue;
    }
    const JsonValue& row = v[r];
    if (!row.is_array() || row.size() != cols) fail(row, fmt::format("row {} must have {} numbers", r, cols));
    for (size_t c = 0; c < cols; ++c) out.push_back(row[c].number());
  }
}

size_t array_len(const JsonValue& v, const std::string& what) {
  if (!v.is_array() || v.size() == 0) throw input_error(v.file(), v.line(), what + ": expected a non-empty array");
  return v.size();
}

}  // namespace

ToyParams toy_params_from_json(const std::string& path) { return toy_params_from_text(read_file(path, kSettingsLimit), path); }

ToyParams toy_params_from_text(const std::string& text, const std::string& path) {
  const JsonValue root = parse_json(text, path);
  if (!root.is_object()) throw input_error(path, root.line(), "expected a JSON object");
  for (const auto& member : root.members()) {  // (not a structured binding: clang 14 cannot capture one)
    static const char* known[] = {"features", "scores", "W1", "b1", "W2", "b2", "label"};
    const std::string& key = member.first;
    if (std::find_if(std::begin(known), std::end(known), [&](const char* k) { return key == k; }) == std::end(known))
      throw input_error(path, member.second.line(),
                        fmt::format("unknown key {} (expected features, scores, W1, b1, W2, b2, label)",
                                    quote_input(key, '"')));
  }
  ToyParams p;
  const JsonValue& feats = root.at("features");
  p.K = int(array_len(feats, "features"));
  p.D = int(array_len(feats[0], "features[0]"));
  const JsonValue& W1 = root.at("W1");
  p.H = int(array_len(W1, "W1"));
  const JsonValue& W2 = root.at("W2");
  p.C = int(array_len(W2, "W2"));
  read_numbers(feats, p.features, size_t(p.K), size_t(p.D), "features");
  read_numbers(root.at("scores"), p.scores, size_t(p.K), 0, "scores (one per feature row)");
  read_numbers(W1, p.W1, size_t(p.H), size_t(p.D), "W1 (H rows of D)");
  read_numbers(root.at("b1"), p.b1, size_t(p.H), 0, "b1 (one per W1 row)");
  read_numbers(W2, p.W2, size_t(p.C), size_t(p.H), "W2 (C rows of H)");
  read_numbers(root.at("b2"), p.b2, size_t(p.C), 0, "b2 (one per W2 row)");
  const JsonValue& label = root.at("label");
  const int64_t y = label.as_int();
  if (y < 0 || y >= p.C) throw input_error(path, label.line(), fmt::format("label {} outside [0, {})", y, p.C));
  p.label = int(y);
  return p;
}

ToyParams toy_params_random(uint64_t seed, int K, int D, int H, int C) {
  ToyParams p;
  p.K = K, p.D = D, p.H = H, p.C = C;
  auto draw = [&](std::vector<double>& v, size_t n, const char* name, double scale) {
    CounterRng rng(seed, stream_id(name));
    for (size_t i = 0; i < n; ++i) v.push_back(scale * rng.normal(i));
  };
  draw(p.features, size_t(K * D), "toy/features", 1.0);
  draw(p.scores, size_t(K), "toy/scores", 1.0);
  draw(p.W1, size_t(H * D), "toy/W1", 1.5);
  draw(p.b1, size_t(H), "toy/b1", 0.5);
  draw(p.W2, size_t(C * H), "toy/W2", 1.5);
  draw(p.b2, size_t(C), "toy/b2", 0.5);
  p.label = int(CounterRng(seed, stream_id("toy/label")).below(0, uint64_t(C)));
  return p;
}

}  // namespace lava
