#include "tasks/nmt/beam_search.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <memory>
#include <numeric>

#include "core/check.hpp"
#include "tensor/kernels_mixture.hpp"
#include "core/parallel.hpp"

namespace lava {

double length_penalty(int output_tokens, double alpha) {
  return alpha == 0 ? 1.0 : std::pow((5.0 + output_tokens) / 6.0, alpha);
}

double eos_penalty(double eos_norm, int src_len, int j) { return eos_norm * src_len / (j + 1.0); }

int max_output_words(int src_len, const DecodeOptions& opt) {
  return int(std::floor(opt.max_len_ratio * src_len)) + opt.max_len_extra;
}

namespace {

// Rows rows[0], rows[1], ... of a row-major (n, width) buffer.
template <class T>
std::vector<T> gather_rows(const std::vector<T>& v, int64_t width, const std::vector<int32_t>& rows) {
  std::vector<T> out(rows.size() * size_t(width));
  for (size_t i = 0; i < rows.size(); ++i) std::copy_n(v.begin() + rows[i] * width, width, out.begin() + int64_t(i) * width);
  return out;
}

std::vector<float> values(Var<float> v) { return std::vector<float>(v.val(), v.val() + v.numel()); }

// The encoder's results for the sentences still being decoded, kept off the tape: the tape is rewound every step,
// so decoding memory stays that of one step however long the output grows.
struct HostSource {
  int B = 0, S = 0;
  int64_t H = 0, A = 0, Hd = 0;                 // widths of memory, keys, out_memory
  std::vector<float> memory, keys, out_memory;  // (B, S, H), (B, S, A) or empty, (B, S, Hd)
  std::vector<uint8_t> mask;                    // (B, S)
  std::vector<int32_t> lengths;                 // (B)

  explicit HostSource(const EncodedSource& e)
      : B(e.B), S(e.S), memory(values(e.memory)), out_memory(values(e.out_memory)), mask(e.mask), lengths(e.lengths) {
    H = e.memory.dim(2), Hd = e.out_memory.dim(2), A = e.keys.tape ? e.keys.dim(2) : 0;
    if (A) keys = values(e.keys);
  }
  EncodedSource on_tape(Tape<float>& t) const {
    EncodedSource e;
    e.B = B, e.S = S, e.mask = mask, e.lengths = lengths;
    e.memory = t.input(Shape{B, S, H}, memory.data());
    e.out_memory = t.input(Shape{B, S, Hd}, out_memory.data());
    if (A) e.keys = t.input(Shape{B, S, A}, keys.data());
    return e;
  }
  void keep(const std::vector<int32_t>& rows) {  // only these sentences, in this order
    memory = gather_rows(memory, S * H, rows), out_memory = gather_rows(out_memory, S * Hd, rows);
    mask = gather_rows(mask, S, rows), lengths = gather_rows(lengths, 1, rows);
    if (A) keys = gather_rows(keys, S * A, rows);
    B = int(rows.size());
  }
};

// Decoder state of N hypotheses off the tape: h and cell (N, Hd) of each layer, then the context (N, H).
struct HostState {
  std::vector<std::vector<float>> parts;  // h_0, cell_0, h_1, cell_1, ..., context
  std::vector<int64_t> widths;

  void take(const DecoderState& s) {
    parts.clear(), widths.clear();
    for (size_t l = 0; l < s.h.size(); ++l)
      for (Var<float> v : {s.h[l], s.cell[l]}) parts.push_back(values(v)), widths.push_back(v.dim(1));
    parts.push_back(values(s.context)), widths.push_back(s.context.dim(1));
  }
  DecoderState on_tape(Tape<float>& t) const {
    DecoderState s;
    std::vector<Var<float>> v;
    for (size_t p = 0; p < parts.size(); ++p)
      v.push_back(t.input(Shape{int64_t(parts[p].size()) / widths[p], widths[p]}, parts[p].data()));
    for (size_t l = 0; l + 1 < v.size(); l += 2) s.h.push_back(v[l]), s.cell.push_back(v[l + 1]);
    s.context = v.back();
    return s;
  }
  void gather(const std::vector<int32_t>& rows) {  // row n becomes row rows[n]
    for (size_t p = 0; p < parts.size(); ++p) parts[p] = gather_rows(parts[p], widths[p], rows);
  }
};

// Runs the model's decoder steps for a batch of sentences with K hypothesis slots each (hypothesis n = i·K + k of
// active sentence i), rewinding one tape per step.
class Stepper {
 public:
  Stepper(Seq2Seq& model, const std::vector<std::vector<int32_t>>& sources, int K, int kmax)
      : model_(model), K_(K), kmax_(kmax), V_(model.config().tgt_vocab) {
    Batch b;
    b.B = int(sources.size());
    for (const auto& s : sources) {
      LAVA_CHECK(!s.empty(), "decoding an empty source");
      b.S = std::max(b.S, int(s.size()));
    }
    b.src.assign(size_t(b.B) * b.S, Vocab::kPad);
    b.src_mask.assign(size_t(b.B) * b.S, 1);
    for (int i = 0; i < b.B; ++i) {
      std::copy(sources[size_t(i)].begin(), sources[size_t(i)].end(), b.src.begin() + int64_t(i) * b.S);
      std::fill_n(b.src_mask.begin() + int64_t(i) * b.S, sources[size_t(i)].size(), uint8_t(0));
      b.src_len.push_back(int32_t(sources[size_t(i)].size()));
    }
    NoGrad<float> no_grad(tape_);
    Ctx c = ctx();
    src_ = std::make_unique<HostSource>(model_.encode(c, b));
  }

  int vocab() const { return V_; }
  int active() const { return src_->B; }

  // log p(y_j = v | x, y_<j) for every live hypothesis: rows of an (N, V) buffer, N = active() · K.
  const float* step(const std::vector<int32_t>& prev_tokens, const std::vector<uint8_t>& live) {
    const int N = active() * K_;
    LAVA_CHECK(int(prev_tokens.size()) == N && int(live.size()) == N, "step over {} hypotheses", N);
    tape_.reset();
    NoGrad<float> no_grad(tape_);
    Ctx c = ctx();
    const EncodedSource enc = src_->on_tape(tape_);
    const DecoderState prev = first_ ? model_.initial_state(c, N) : state_.on_tape(tape_);
    const DecoderStep s = model_.decoder_step(c, enc, K_, prev, prev_tokens.data());
    logp_.resize(size_t(N) * size_t(V_));
    model_.next_word_log_probs(c, enc, K_, s, kmax_, live.data(), logp_.data());
    state_.take(s.state);
    first_ = false;
    return logp_.data();
  }

  // After a step: the new hypothesis k of active sentence i continues slot parent[i·K + k] of the same sentence;
  // then only the sentences with keep[i] stay.
  void advance(const std::vector<int32_t>& parent, const std::vector<uint8_t>& keep) {
    std::vector<int32_t> rows, from;
    for (int i = 0; i < active(); ++i) {
      if (!keep[size_t(i)]) continue;
      rows.push_back(i);
      for (int k = 0; k < K_; ++k) from.push_back(i * K_ + parent[size_t(i * K_ + k)]);
    }
    state_.gather(from);
    if (int(rows.size()) != active()) src_->keep(rows);
  }

 private:
  Ctx ctx() { return Ctx{tape_, model_.ps, false, CounterRng(0, stream_id("decode")), 0.f}; }

  Seq2Seq& model_;
  Tape<float> tape_;
  int K_, kmax_, V_;
  std::unique_ptr<HostSource> src_;
  HostState state_;
  bool first_ = true;
  std::vector<float> logp_;
};

// A word's value for the search: its log-probability, less the EOS penalty for </s>; −inf for words that may not
// come next (<pad>, <bos>, and everything but </s> once the hypothesis has max_words words).
struct StepRule {
  double eos_adjust;
  bool only_eos;
  double value(const float* logp, int v) const {
    if (v == Vocab::kPad || v == Vocab::kBos || (only_eos && v != Vocab::kEos)) return -INFINITY;
    return v == Vocab::kEos ? double(logp[v]) - eos_adjust : double(logp[v]);
  }
};

// The k best (value, word) of one row, best first; ties go to the lower word id. Non-finite values are skipped.
void top_words(const float* logp, int V, int k, const StepRule& rule, std::vector<std::pair<double, int>>& out) {
  out.clear();
  for (int v = 0; v < V; ++v) {
    const double x = rule.value(logp, v);
    if (!std::isfinite(x) || (int(out.size()) == k && !(x > out.back().first))) continue;
    auto at = std::find_if(out.begin(), out.end(), [&](const auto& o) { return x > o.first; });
    out.insert(at, {x, v});
    if (int(out.size()) > k) out.pop_back();
  }
}

struct Hyp {
  std::vector<int32_t> tokens;
  double score = 0, log_prob = 0;  // accumulated with and without the EOS penalty
};

struct SentenceBeam {
  int src_len = 0, max_words = 0;
  std::vector<Hyp> live;
  std::vector<Translation> finished;
};

Translation best_of(const SentenceBeam& sb, double alpha) {
  if (sb.finished.empty()) {  // no </s> had a finite probability: the best unfinished hypothesis
    const Hyp& h = sb.live.at(0);
    return Translation{h.tokens, h.log_prob, h.score / length_penalty(int(h.tokens.size()) + 1, alpha)};
  }
  size_t best = 0;
  for (size_t i = 1; i < sb.finished.size(); ++i)
    if (sb.finished[i].score > sb.finished[best].score) best = i;
  return sb.finished[best];
}

}  // namespace

std::vector<Translation> beam_search(Seq2Seq& model, const std::vector<std::vector<int32_t>>& sources,
                                     const DecodeOptions& opt) {
  LAVA_CHECK(opt.beam >= 1, "beam size {}", opt.beam);
  const int K = opt.beam;
  std::vector<Translation> result(sources.size());
  if (sources.empty()) return result;
  Stepper stepper(model, sources, K, opt.kmax);
  const int V = stepper.vocab();
  std::vector<SentenceBeam> beams(sources.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    beams[i].src_len = int(sources[i].size());
    beams[i].max_words = max_output_words(beams[i].src_len, opt);
    beams[i].live.push_back(Hyp{});
  }
  std::vector<int> active(sources.size());  // indices into beams, in stepper order
  std::iota(active.begin(), active.end(), 0);
  for (int j = 1; !active.empty(); ++j) {
    const int N = int(active.size()) * K;
    std::vector<int32_t> prev(size_t(N), Vocab::kEos), parent(size_t(N), 0);
    std::vector<uint8_t> live(size_t(N), 0), keep(active.size(), 1);
    for (size_t i = 0; i < active.size(); ++i)
      for (size_t k = 0; k < beams[size_t(active[i])].live.size(); ++k) {
        const Hyp& h = beams[size_t(active[i])].live[k];
        prev[i * K + k] = h.tokens.empty() ? Vocab::kBos : h.tokens.back();
        live[i * K + k] = 1;
      }
    const float* logp = stepper.step(prev, live);
#pragma omp parallel for schedule(static) if (int64_t(N) * V >= kParallelMin)
    for (size_t i = 0; i < active.size(); ++i) {
      SentenceBeam& sb = beams[size_t(active[i])];
      // Candidates (score, slot, word, log p): each live slot's K best words, then the K best overall.
      struct Cand {
        double score;
        int slot, word;
        double lp;
      };
      std::vector<Cand> cands;
      std::vector<std::pair<double, int>> top;
      for (int k = 0; k < int(sb.live.size()); ++k) {
        const Hyp& h = sb.live[size_t(k)];
        const float* row = logp + (int64_t(i) * K + k) * V;
        const StepRule rule{eos_penalty(opt.eos_norm, sb.src_len, j), int(h.tokens.size()) >= sb.max_words};
        top_words(row, V, K, rule, top);
        for (auto [value, v] : top) cands.push_back({h.score + value, k, v, double(row[v])});
      }
      const size_t n_keep = std::min(cands.size(), size_t(K));
      std::partial_sort(cands.begin(), cands.begin() + long(n_keep), cands.end(), [](const Cand& a, const Cand& b) {
        if (a.score != b.score) return a.score > b.score;
        return a.slot != b.slot ? a.slot < b.slot : a.word < b.word;
      });
      std::vector<Hyp> next;
      for (size_t c = 0; c < n_keep; ++c) {
        const Cand& cd = cands[c];
        const Hyp& h = sb.live[size_t(cd.slot)];
        if (cd.word == Vocab::kEos) {
          sb.finished.push_back(Translation{h.tokens, h.log_prob + cd.lp,
                                            cd.score / length_penalty(int(h.tokens.size()) + 1, opt.alpha)});
        } else {
          parent[i * K + next.size()] = cd.slot;
          Hyp n = h;
          n.tokens.push_back(int32_t(cd.word));
          n.score = cd.score, n.log_prob += cd.lp;
          next.push_back(std::move(n));
        }
      }
      // Done when the step's best candidate ended the sentence (the authors' rule) or nothing is left to expand.
      keep[i] = !(n_keep == 0 || cands[0].word == Vocab::kEos || next.empty());
      if (!next.empty()) sb.live = std::move(next);
    }
    std::vector<int> still;
    for (size_t i = 0; i < active.size(); ++i) {
      if (keep[i]) still.push_back(active[i]);
      else result[size_t(active[i])] = best_of(beams[size_t(active[i])], opt.alpha);
    }
    if (!still.empty()) stepper.advance(parent, keep);
    active.swap(still);
  }
  return result;
}

std::vector<Translation> translate_corpus(Seq2Seq& model, const std::vector<std::vector<int32_t>>& sources,
                                          const DecodeOptions& opt, const std::function<void(int64_t)>& on_batch) {
  LAVA_CHECK(opt.batch_size >= 1, "batch size {}", opt.batch_size);
  std::vector<Translation> result(sources.size());
  std::vector<int> order;
  for (size_t i = 0; i < sources.size(); ++i)
    if (!sources[i].empty()) order.push_back(int(i));
  // Similar lengths together, so that a batch's padding and its longest decode stay small.
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    const size_t la = sources[size_t(a)].size(), lb = sources[size_t(b)].size();
    return la != lb ? la < lb : a < b;
  });
  int64_t done = int64_t(sources.size() - order.size());
  for (size_t b0 = 0; b0 < order.size(); b0 += size_t(opt.batch_size)) {
    const size_t b1 = std::min(order.size(), b0 + size_t(opt.batch_size));
    std::vector<std::vector<int32_t>> batch;
    for (size_t k = b0; k < b1; ++k) batch.push_back(sources[size_t(order[k])]);
    std::vector<Translation> out = beam_search(model, batch, opt);
    for (size_t k = b0; k < b1; ++k) result[size_t(order[k])] = std::move(out[k - b0]);
    done += int64_t(b1 - b0);
    if (on_batch) on_batch(done);
  }
  return result;
}

std::string translation_text(const Translation& t, const Vocab& tgt_vocab) {
  std::string text;
  for (int32_t id : t.tokens) {
    if (!text.empty()) text += ' ';
    text += tgt_vocab.token(id);
  }
  return join_bpe(text);
}

}  // namespace lava
