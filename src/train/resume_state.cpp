#include "train/resume_state.hpp"

#include <cmath>
#include <cstring>
#include <map>
#include <string_view>

#include "core/check.hpp"
#include "core/word_list.hpp"
#include "nn/safetensors.hpp"

namespace lava {

namespace {

constexpr const char* kFormat = "lava-train-state-2";

// A validation as "criterion name=value name=value ..." (the task's order kept).
std::string validation_text(const Validation& v) {
  std::string out = exact(v.criterion);
  for (const auto& [name, value] : v.figures) out += fmt::format(" {}={}", name, exact(value));
  return out;
}

bool parse_validation(const std::vector<std::string>& fields, size_t from, Validation& v) {
  if (fields.size() <= from || !parse_exact(fields[from], v.criterion)) return false;
  v.figures.clear();
  for (size_t i = from + 1; i < fields.size(); ++i) {
    const size_t eq = fields[i].find('=');
    double x = 0;
    if (eq == std::string::npos || eq == 0 || !parse_exact(fields[i].substr(eq + 1), x)) return false;
    v.figures.emplace_back(fields[i].substr(0, eq), x);
  }
  return true;
}

// A history line: epoch position steps seconds lr best partial n_sums sums... criterion figures...
std::string history_text(const std::vector<ValidationRecord>& history) {
  std::string out;
  for (const ValidationRecord& r : history) {
    out += fmt::format("{} {} {} {} {} {} {} {}", r.epoch, exact(r.position), r.steps, exact(r.seconds), exact(r.lr),
                       int(r.best), int(r.partial), r.train.size());
    for (double s : r.train) out += fmt::format(" {}", exact(s));
    out += fmt::format(" {}\n", validation_text(r.valid));
  }
  return out;
}

std::vector<ValidationRecord> parse_history(std::string_view text, const std::string& path) {
  std::vector<ValidationRecord> out;
  size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const size_t nl = text.find('\n');
    const std::vector<std::string> f = words_of(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ValidationRecord r;
    int best = 0, partial = 0;
    int64_t n_sums = -1;
    bool ok = f.size() >= 9 && parse_exact(f[0], r.epoch) && parse_exact(f[1], r.position) &&
              parse_exact(f[2], r.steps) && parse_exact(f[3], r.seconds) && parse_exact(f[4], r.lr) &&
              parse_exact(f[5], best) && parse_exact(f[6], partial) && parse_exact(f[7], n_sums) && n_sums >= 0 &&
              f.size() >= 9 + size_t(n_sums);
    for (size_t i = 0; ok && i < size_t(n_sums); ++i) {
      double s = 0;
      ok = parse_exact(f[8 + i], s);
      r.train.push_back(s);
    }
    ok = ok && parse_validation(f, 8 + size_t(n_sums), r.valid);
    if (!ok) throw input_error(path, 0, fmt::format("resume state history line {} is malformed", line_no));
    r.best = best != 0, r.partial = partial != 0;
    out.push_back(std::move(r));
  }
  return out;
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
  Validation validation(const std::string& key) const {
    Validation v;
    if (!parse_validation(words_of(text(key)), 0, v))
      throw input_error(path_, 0, fmt::format("resume state \"{}\" is not a validation", key));
    return v;
  }

 private:
  const std::map<std::string, std::string>& meta_;
  const std::string& path_;
};

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

void save_train_state(const std::string& path, const std::string& task, const TrainState& state,
                      const RunIdentity& run, const ParamStore<float>& params, const Adam<float>& adam) {
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
  std::map<std::string, std::string> meta = {{"format", kFormat}, {"task", task}};
  for (const auto& [option, value] : run) meta["run." + option] = value;
  meta["state.epoch"] = exact(state.epoch);
  meta["state.batch"] = exact(state.batch);
  meta["state.step"] = exact(state.step);
  meta["state.adam_t"] = exact(adam.t);
  meta["state.lr"] = exact(state.lr);
  meta["state.stale_epochs"] = exact(state.stale_epochs);
  meta["state.validated_at"] = exact(state.validated_at);
  meta["state.units"] = exact(state.units);
  meta["state.seconds"] = exact(state.seconds);
  if (!std::isnan(state.cpu_seconds)) meta["state.cpu_seconds"] = exact(state.cpu_seconds);
  std::string sums;
  for (double s : state.sums) sums += fmt::format("{}{}", sums.empty() ? "" : " ", exact(s));
  meta["state.sums"] = sums;
  meta["best_valid"] = validation_text(state.best);
  meta["kept_valid"] = validation_text(state.kept);
  meta["kept_at"] = fmt::format("{} {}", state.kept_epoch, exact(state.kept_position));
  meta["history"] = history_text(state.history);
  save_safetensors(path, tensors, meta);
}

TrainState load_train_state(const std::string& path, const std::string& task, const RunIdentity& run,
                            size_t num_sums, ParamStore<float>& params, Adam<float>& adam) {
  const SafetensorsFile file = load_safetensors(path);
  const MetadataReader meta(file.metadata, path);
  auto format = file.metadata.find("format");
  if (format == file.metadata.end() || format->second != kFormat)
    throw input_error(path, 0, fmt::format("not a LAVA resume state (format tag is not {})", kFormat));
  if (meta.text("task") != task)
    throw UsageError(fmt::format("lava train: cannot resume from {}: it is the state of a --task {} run, this is "
                                 "--task {}", path, meta.text("task"), task));
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

  TrainState s;
  s.epoch = meta.number<int>("state.epoch");
  s.batch = meta.number<int64_t>("state.batch");
  s.step = meta.number<int64_t>("state.step");
  s.lr = meta.number<float>("state.lr");
  s.stale_epochs = meta.number<int>("state.stale_epochs");
  s.validated_at = meta.number<int64_t>("state.validated_at");
  s.units = meta.number<double>("state.units");
  s.seconds = meta.number<double>("state.seconds");
  // Absent from states written before LAVA counted CPU time: that run's total stays unknown.
  s.cpu_seconds = file.metadata.count("state.cpu_seconds") ? meta.number<double>("state.cpu_seconds") : NAN;
  for (const std::string& f : words_of(meta.text("state.sums"))) {
    double x = 0;
    if (!parse_exact(f, x)) throw input_error(path, 0, "resume state \"state.sums\" is not a list of numbers");
    s.sums.push_back(x);
  }
  if (s.sums.size() != num_sums)
    throw input_error(path, 0, fmt::format("resume state holds {} training sums, the task has {}", s.sums.size(),
                                           num_sums));
  s.best = meta.validation("best_valid");
  s.kept = meta.validation("kept_valid");
  const std::vector<std::string> kept_at = words_of(meta.text("kept_at"));
  if (kept_at.size() != 2 || !parse_exact(kept_at[0], s.kept_epoch) || !parse_exact(kept_at[1], s.kept_position))
    throw input_error(path, 0, "resume state \"kept_at\" is not an epoch and a position");
  s.history = parse_history(meta.text("history"), path);
  const int64_t adam_t = meta.number<int64_t>("state.adam_t");
  if (s.epoch < 1 || s.batch < 0 || s.step < 0 || adam_t < 0 || s.stale_epochs < 0 || !(s.lr > 0) ||
      !std::isfinite(s.lr) || s.validated_at < 0 || s.validated_at > s.step)
    throw input_error(path, 0, "resume state counters out of range");

  // Tensors: exactly param.*, adam.m.*, adam.v.* for every parameter, shapes matching.
  const size_t n = params.size();
  std::vector<float> values(n), m(n), v(n);
  struct Slot {
    std::vector<float>* dst;
    const char* prefix;
  };
  const Slot slots[] = {{&values, "param."}, {&m, "adam.m."}, {&v, "adam.v."}};
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
  return s;
}

}  // namespace lava
