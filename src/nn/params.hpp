#pragma once
// All parameters of a model in one store (llm.c): one contiguous buffer of values and one of gradients, so zeroing
// the gradients is one memset and the optimizer state (nn/optim.hpp) is two more buffers of the same size.
// Parameters are declared by name while the model is built; var() hands the tape a node over a parameter's slice.
// Declaring after the first var() is a bug (the buffers would move under live nodes), and is checked.
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "autodiff/tape.hpp"
#include "core/rng.hpp"

namespace lava {

template <class T>
class ParamStore {
 public:
  struct Param {
    std::string name;
    Shape shape;
    size_t offset;
  };

  // Declares a parameter initialised to zero; returns its id.
  int add(const std::string& name, const Shape& shape) {
    LAVA_CHECK(!frozen_, "parameter {} declared after use", name);
    LAVA_CHECK(index_.count(name) == 0, "parameter {} declared twice", name);
    params_.push_back({name, shape, values_.size()});
    values_.resize(values_.size() + size_t(shape.numel()), T(0));
    grads_.resize(values_.size(), T(0));
    index_[name] = int(params_.size() - 1);
    return int(params_.size() - 1);
  }

  Var<T> var(Tape<T>& tape, int id) {
    frozen_ = true;
    const Param& p = params_[size_t(id)];
    return tape.external(p.shape, values_.data() + p.offset, grads_.data() + p.offset);
  }

  // Every element uniform in [−a, a]; element i of parameter `name` is draw i of stream (seed, name), so the values
  // do not depend on the order of declaration or on the thread count.
  void init_uniform(T a, uint64_t seed) {
    for (const Param& p : params_) {
      CounterRng rng(seed, stream_id(p.name));
      for (int64_t i = 0; i < p.shape.numel(); ++i) values_[p.offset + size_t(i)] = T((2 * rng.uniform(i) - 1) * a);
    }
  }

  void zero_grad() { std::memset(grads_.data(), 0, sizeof(T) * grads_.size()); }

  size_t size() const { return values_.size(); }
  T* values() { return values_.data(); }
  T* grads() { return grads_.data(); }
  const T* values() const { return values_.data(); }
  T* val(int id) { return values_.data() + params_[size_t(id)].offset; }
  T* grad(int id) { return grads_.data() + params_[size_t(id)].offset; }
  const std::vector<Param>& params() const { return params_; }
  int find(const std::string& name) const {
    auto it = index_.find(name);
    return it == index_.end() ? -1 : it->second;
  }

 private:
  std::vector<Param> params_;
  std::map<std::string, int> index_;
  std::vector<T> values_, grads_;
  bool frozen_ = false;
};

}  // namespace lava
