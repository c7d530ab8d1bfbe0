#include "tasks/nmt/train_state.hpp"

#include <charconv>
#include <cstring>
#include <string_view>

#include "core/check.hpp"
#include "nn/safetensors.hpp"

namespace lava {

namespace {

constexpr const char* kFormat = "lava-train-state-1";

// FNV-1a over bytes, continued from h (the data fingerprint; collisions need not be guarded against here).
uint64_t fnv1a(uint64_t h, const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

uint64_t hash_pairs(uint64_t h, const std::vector<SentencePair>& pairs) {
  for (const SentencePair& p : pairs) {
    const int32_t lens[2] = {int32_t(p.src.size()), int32_t(p.tgt.size())};
    h = fnv1a(h, lens, sizeof lens);
    h = fnv1a(h, p.src.data(), p.src.size() * sizeof(int32_t));
    h = fnv1a(h, p.tgt.data(), p.tgt.size() * sizeof(int32_t));
  }
  return h;
}

// Numbers as text that reads back to the same bits: fmt's shortest round-trip form, parsed by from_chars (which,
// unlike strtod, ignores the locale). inf, -inf and nan round-trip too.
template <class T>
std::string exact(T x) {
  return fmt::format("{}", x);
}

template <class T>
bool parse_exact(std::string_view text, T& out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end && !text.empty();
}

class MetadataReader {
 public:
  MetadataReader(const std::map<std::string, std::string>& meta, const std::string& path) : meta_(meta), path_(path) {}

  const std::string& text(const std::string& key) const {
    auto it = meta_.find(key);
    if (it == meta_.end()) throw input_error(path_, 0, fmt::format("resume state lacks \"{}\"", key));
    return it->second;
  }
  template <class T>
  T number(const std::string& key) const {
    T x{};
    if (!parse_exact(text(key), x))
      throw input_error(path_, 0, fmt::format("resume state \"{}\" is not a number: \"{}\"", key, text(key)));
    return x;
  }

 private:
  const std::map<std::string, std::string>& meta_;
  const std::string& path_;
};

std::string history_text(const std::vector<EpochRecord>& history) {
  std::string out;
  for (const EpochRecord& r : history)
    out += fmt::format("{} {} {} {} {} {} {} {} {}\n", r.epoch, r.steps, r.lr, r.train_objective, r.train_kl,
                       r.valid_nll, r.valid_elbo, r.valid_kl, r.valid_kl_gap);
  return out;
}

std::vector<EpochRecord> parse_history(std::string_view text, const std::string& path) {
  std::vector<EpochRecord> out;
  size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    std::vector<std::string_view> fields;
    for (size_t at = 0; at <= line.size();) {
      const size_t sp = std::min(line.find(' ', at), line.size());
      fields.push_back(line.substr(at, sp - at));
      at = sp + 1;
    }
    EpochRecord r;
    bool ok = fields.size() == 9 && parse_exact(fields[0], r.epoch) && parse_exact(fields[1], r.steps);
    double* rest[] = {&r.lr, &r.train_objective, &r.train_kl, &r.valid_nll, &r.valid_elbo, &r.valid_kl, &r.valid_kl_gap};
    for (size_t i = 0; ok && i < 7; ++i) ok = parse_exact(fields[i + 2], *rest[i]);
    if (!ok) throw input_error(path, 0, fmt::format("resume state history line {} is not 9 numbers", line_no));
    out.push_back(r);
  }
  return out;
}

// The figures of NmtEvalFigures, by name, for the metadata.
std::vector<std::pair<const char*, double*>> figure_fields(NmtEvalFigures& f) {
  return {{"tokens", &f.tokens}, {"nll", &f.nll},           {"ppl", &f.ppl},
          {"elbo", &f.elbo},     {"kl", &f.kl},             {"kl_gap", &f.kl_gap},
          {"kl_posterior", &f.kl_posterior}, {"identity_error", &f.identity_error},
          {"entropy", &f.entropy}, {"accuracy", &f.accuracy}};
}

NamedTensor param_tensor(const std::string& name, const Shape& shape, const float* data) {
  NamedTensor t;
  t.name = name;
  for (int i = 0; i < shape.rank; ++i) t.shape.push_back(shape[i]);
  t.data.assign(data, data + shape.numel());
  return t;
}

}  // namespace

bool all_finite(const float* x, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(x[i])) return false;
  return true;
}

std::string resume_state_path(const std::string& model_path) { return model_path + ".resume"; }

RunIdentity nmt_run_identity(const NmtTrainOptions& opt, const ParallelCorpus& corpus) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const Vocab* v : {&corpus.src_vocab, &corpus.tgt_vocab}) {
    const std::string text = v->to_text();
    h = fnv1a(h, text.data(), text.size());
  }
  h = hash_pairs(hash_pairs(h, corpus.train.pairs), corpus.valid.pairs);
  const Seq2SeqConfig& m = opt.model;
  RunIdentity id{{"--attn", variant_info(m.attn).name},
          {"--score", m.score},
          {"--emb-size", exact(m.emb)},
          {"--hidden-size", exact(m.hidden)},
          {"--encoder", m.encoder},
          {"--attn-size", exact(m.attn_size)},
          {"--inf-hidden", exact(m.inf_hidden)},
          {"--layers", exact(m.layers)},
          {"--dropout", exact(m.dropout)},
          {"--samples", exact(opt.objective.samples)},
          {"--temperature", exact(opt.objective.temperature)},
          {"--warm-start", exact(opt.objective.warm_start)},
          {"--att-kl", exact(opt.objective.att_kl)},
          {"--att-kl-anneal", exact(opt.objective.kl_anneal)},
          {"--crf-l2", exact(opt.objective.crf_l2)},
          {"--batch-size", exact(opt.batch_size)},
          {"--lr", exact(opt.lr)},
          {"--lr-decay", exact(opt.lr_decay)},
          {"--start-decay-at", exact(opt.start_decay_at)},
          {"--clip", exact(opt.clip)},
          {"--init", exact(opt.init)},
          {"--seed", exact(opt.seed)},
          {"--src", opt.corpus.src_lang},
          {"--tgt", opt.corpus.tgt_lang},
          {"--max-len", exact(opt.corpus.max_len)},
          {"--min-freq", exact(opt.src_vocab.min_freq)},
          {"--max-vocab", exact(opt.src_vocab.max_vocab)},
          {"data", fmt::format("{} train and {} valid pairs, vocabularies {} and {}, hash {:016x}",
                               corpus.train.pairs.size(), corpus.valid.pairs.size(), corpus.src_vocab.size(),
                               corpus.tgt_vocab.size(), h)}};
  std::map<std::string, std::string> variant;  // the wider family's hyperparameters, when the variant has any
  m.variant.to_metadata(m.attn, variant);
  for (const auto& [key, value] : variant) id.push_back({key, value});
  return id;
}

void save_train_state(const std::string& path, const NmtTrainState& state, const RunIdentity& run,
                      const ParamStore<float>& params, const Adam<float>& adam) {
  const size_t n = params.size();
  const std::vector<float> zeros(adam.m.empty() ? n : 0, 0.f);  // before the first step Adam has no moments yet
  const float* m = adam.m.empty() ? zeros.data() : adam.m.data();
  const float* v = adam.v.empty() ? zeros.data() : adam.v.data();
  LAVA_CHECK(adam.m.empty() || (adam.m.size() == n && adam.v.size() == n), "Adam moments do not match the store");
  LAVA_CHECK(all_finite(params.values(), n) && all_finite(m, n) && all_finite(v, n),
             "refusing to write a resume state with non-finite parameters or moments");
  std::vector<NamedTensor> tensors;
  for (const auto& p : params.params()) {
    tensors.push_back(param_tensor("param." + p.name, p.shape, params.values() + p.offset));
    tensors.push_back(param_tensor("adam.m." + p.name, p.shape, m + p.offset));
    tensors.push_back(param_tensor("adam.v." + p.name, p.shape, v + p.offset));
  }
  std::map<std::string, std::string> meta = {{"format", kFormat}};
  for (const auto& [option, value] : run) meta["run." + option] = value;
  meta["state.epoch"] = exact(state.epoch);
  meta["state.batch"] = exact(state.batch);
  meta["state.step"] = exact(state.step);
  meta["state.adam_t"] = exact(adam.t);
  meta["state.lr"] = exact(state.lr);
  meta["state.stale_epochs"] = exact(state.stale_epochs);
  meta["state.obj_sum"] = exact(state.obj_sum);
  meta["state.kl_sum"] = exact(state.kl_sum);
  meta["state.tok_sum"] = exact(state.tok_sum);
  meta["state.tokens_seen"] = exact(state.tokens_seen);
  meta["state.seconds"] = exact(state.seconds);
  NmtEvalFigures best = state.best_valid;
  for (const auto& [name, value] : figure_fields(best)) meta[std::string("best_valid.") + name] = exact(*value);
  meta["history"] = history_text(state.history);
  meta["best_model.present"] = state.best_model ? "1" : "0";
  if (state.best_model) {
    LAVA_CHECK(state.best_model->params.size() == n, "best-model backup does not match the store");
    for (const auto& p : params.params())
      tensors.push_back(param_tensor("best." + p.name, p.shape, state.best_model->params.data() + p.offset));
    for (const auto& [k, value] : state.best_model->extra) meta["best_model.extra." + k] = value;
  }
  save_safetensors(path, tensors, meta);
}

NmtTrainState load_train_state(const std::string& path, const RunIdentity& run, ParamStore<float>& params,
                               Adam<float>& adam) {
  const SafetensorsFile file = load_safetensors(path);
  const MetadataReader meta(file.metadata, path);
  auto format = file.metadata.find("format");
  if (format == file.metadata.end() || format->second != kFormat)
    throw input_error(path, 0, "not a LAVA resume state (format tag is not lava-train-state-1)");
  for (const auto& [option, value] : run) {
    const std::string& saved = meta.text("run." + option);
    if (saved == value) continue;
    if (option == "data")
      throw UsageError(fmt::format("lava train: cannot resume from {}: it trained on other data ({}; here {})", path,
                                   saved, value));
    throw UsageError(fmt::format("lava train: cannot resume from {}: it was trained with {} {}, this command has {} {} "
                                 "(resume with the same options)",
                                 path, option, saved, option, value));
  }

  NmtTrainState s;
  s.epoch = meta.number<int>("state.epoch");
  s.batch = meta.number<int64_t>("state.batch");
  s.step = meta.number<int64_t>("state.step");
  s.lr = meta.number<float>("state.lr");
  s.stale_epochs = meta.number<int>("state.stale_epochs");
  s.obj_sum = meta.number<double>("state.obj_sum");
  s.kl_sum = meta.number<double>("state.kl_sum");
  s.tok_sum = meta.number<double>("state.tok_sum");
  s.tokens_seen = meta.number<int64_t>("state.tokens_seen");
  s.seconds = meta.number<double>("state.seconds");
  for (const auto& [name, value] : figure_fields(s.best_valid)) *value = meta.number<double>(std::string("best_valid.") + name);
  s.history = parse_history(meta.text("history"), path);
  const int64_t adam_t = meta.number<int64_t>("state.adam_t");
  if (s.epoch < 1 || s.batch < 0 || s.step < 0 || adam_t < 0 || s.stale_epochs < 0 || !(s.lr > 0) ||
      !std::isfinite(s.lr))
    throw input_error(path, 0, "resume state counters out of range");
  const bool with_best = meta.text("best_model.present") == "1";

  // Tensors: exactly param.*, adam.m.*, adam.v.* (and best.* with a backup) for every parameter, shapes matching.
  const size_t n = params.size();
  std::vector<float> values(n), m(n), v(n), best(with_best ? n : 0);
  struct Slot {
    std::vector<float>* dst;
    const char* prefix;
  };
  std::vector<Slot> slots = {{&values, "param."}, {&m, "adam.m."}, {&v, "adam.v."}};
  if (with_best) slots.push_back({&best, "best."});
  std::map<std::string, const NamedTensor*> by_name;
  for (const NamedTensor& t : file.tensors) by_name[t.name] = &t;
  size_t used = 0;
  for (const auto& p : params.params()) {
    for (const Slot& slot : slots) {
      const std::string name = slot.prefix + p.name;
      auto it = by_name.find(name);
      if (it == by_name.end()) throw input_error(path, 0, "resume state lacks tensor \"" + name + "\"");
      const NamedTensor& t = *it->second;
      bool same = int(t.shape.size()) == p.shape.rank;
      for (int i = 0; same && i < p.shape.rank; ++i) same = t.shape[size_t(i)] == p.shape[i];
      if (!same) throw input_error(path, 0, fmt::format("tensor \"{}\" does not have the model's shape {}", name, p.shape.str()));
      std::memcpy(slot.dst->data() + p.offset, t.data.data(), t.data.size() * sizeof(float));
      ++used;
    }
  }
  if (used != file.tensors.size())
    throw input_error(path, 0, fmt::format("resume state holds {} tensors that are not of this model",
                                           file.tensors.size() - used));
  if (!all_finite(values.data(), n) || !all_finite(m.data(), n) || !all_finite(v.data(), n))
    throw input_error(path, 0, "resume state holds non-finite parameters or moments");

  std::memcpy(params.values(), values.data(), n * sizeof(float));
  adam.m = std::move(m);
  adam.v = std::move(v);
  adam.t = adam_t;
  adam.lr = s.lr;
  if (with_best) {
    BestModelBackup b;
    b.params = std::move(best);
    const std::string prefix = "best_model.extra.";
    for (const auto& [k, value] : file.metadata)
      if (k.compare(0, prefix.size(), prefix) == 0) b.extra[k.substr(prefix.size())] = value;
    s.best_model = std::move(b);
  }
  return s;
}

}  // namespace lava
