#pragma once
// Reverse-mode autodiff on a tape (Stan's arena tape, micrograd's idea).
//
// A Var is {Tape*, node id}. Each node holds a value buffer, a gradient buffer (only when the node needs a gradient;
// zero when backward starts) and a shape. An op computes its output and, if any input needs a gradient, appends one
// backward record: a trivially-destructible closure placed in the tape's record arena. Records are appended in
// construction order, which is a topological order, so backward() seeds d(loss)=1 and runs the records in reverse.
// No DFS.
//
// Memory: values, gradients and records come from two arenas that reset() rewinds. After the first step of a given
// shape nothing is taken from the heap (the node and record vectors keep their capacity, the arenas consolidate).
// Parameters live outside the tape (nn/params.hpp); `external()` makes a node that points at their buffers.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include <omp.h>

#include "core/arena.hpp"
#include "core/op_profile.hpp"
#include "core/parallel.hpp"
#include "tensor/shape.hpp"

namespace lava {

template <class T>
class Tape;

template <class T>
struct Var {
  Tape<T>* tape = nullptr;
  uint32_t id = 0;

  // Note: shape() refers into the tape's node list, which grows with every new node: copy it before creating nodes.
  T* val() const { return tape->node(id).val; }
  T* grad() const { return tape->node(id).grad; }  // nullptr when !needs_grad()
  const Shape& shape() const { return tape->node(id).shape; }
  int64_t numel() const { return shape().numel(); }
  int rank() const { return shape().rank; }
  int64_t dim(int i) const { return shape()[i]; }
  bool needs_grad() const { return tape->node(id).grad != nullptr; }
  T item() const { return val()[0]; }
};

template <class T>
class Tape {
 public:
  struct Node {
    T* val;
    T* grad;
    Shape shape;
  };

  Tape() : values_(size_t(4) << 20), records_(size_t(256) << 10) {}
  Tape(const Tape&) = delete;
  Tape& operator=(const Tape&) = delete;

  const Node& node(uint32_t id) const { return nodes_[id]; }

  // A fresh node whose value the caller fills. Its gradient exists iff `needs_grad` and grad mode is on.
  Var<T> make(const Shape& s, bool needs_grad) {
    const op_profile::TapeScope profile;
    Node n{values_.alloc_array<T>(size_t(s.numel())), nullptr, s};
    if (needs_grad && grad_enabled_) {  // zeroed when backward starts (zero_new_grads), with the step's others
      n.grad = values_.alloc_array<T>(size_t(s.numel()));
      unzeroed_.push_back({n.grad, s.numel()});
    }
    nodes_.push_back(n);
    return {this, uint32_t(nodes_.size() - 1)};
  }
  // Output of an op: needs a gradient iff one of its inputs does.
  template <class... Vs>
  Var<T> make_output(const Shape& s, const Vs&... inputs) {
    return make(s, (inputs.needs_grad() || ...));
  }
  // A constant or a leaf filled from `data` (copied into the arena). `s` may be another node's shape (x.shape()),
  // which make() can move when the node list grows: its size is read before.
  Var<T> input(const Shape& s, const T* data, bool needs_grad = false) {
    const int64_t n = s.numel();
    Var<T> v = make(s, needs_grad);
    std::memcpy(v.val(), data, sizeof(T) * size_t(n));
    return v;
  }
  Var<T> full(const Shape& s, T value, bool needs_grad = false) {
    const int64_t n = s.numel();
    Var<T> v = make(s, needs_grad);
    T* p = v.val();
    for (int64_t i = 0; i < n; ++i) p[i] = value;
    return v;
  }
  // A node over memory the tape does not own (a parameter and its gradient accumulator, or a view of a node).
  Var<T> external(const Shape& s, T* val, T* grad) {
    const op_profile::TapeScope profile;
    nodes_.push_back(Node{val, grad_enabled_ ? grad : nullptr, s});
    return {this, uint32_t(nodes_.size() - 1)};
  }

  // Scratch memory that lives until reset(): caches an op's backward needs (softmax outputs, LSTM gates, masks).
  template <class U>
  U* scratch(int64_t n) {
    return values_.alloc_array<U>(size_t(n));
  }

  // Append a backward record. Captures must be trivially destructible (Var handles, pointers, scalars): the arena
  // never runs destructors, so a captured std::vector would leak.
  template <class F>
  void on_backward(F&& f) {
    using Fn = std::decay_t<F>;
    static_assert(std::is_trivially_destructible_v<Fn>, "backward closures must be trivially destructible");
    const int kind = op_profile::current_kind();  // the op making the record, for the profile's backward column
    const op_profile::TapeScope profile;
    void* mem = records_.alloc(sizeof(Fn), alignof(Fn) > 16 ? alignof(Fn) : 16);
    new (mem) Fn(std::forward<F>(f));
    records_list_.push_back({[](void* p) { (*static_cast<Fn*>(p))(); }, mem, kind});
  }

  // d(loss)/d(every node that needs a gradient), accumulated into the grad buffers. `loss` must be a scalar.
  void backward(Var<T> loss) {
    LAVA_CHECK(loss.numel() == 1, "backward from a non-scalar of shape {}", loss.shape().str());
    LAVA_CHECK(loss.needs_grad(), "backward from a node that needs no gradient");
    zero_new_grads();
    loss.grad()[0] += T(1);
    run_records();
  }
  // Backward from several outputs at once with given seeds dy_k (used by gradient checks to isolate one op).
  void backward_seeded(const Var<T>* ys, const T* const* dys, int count) {
    zero_new_grads();
    for (int k = 0; k < count; ++k) {
      LAVA_CHECK(ys[k].needs_grad(), "backward from a node that needs no gradient");
      for (int64_t i = 0; i < ys[k].numel(); ++i) ys[k].grad()[i] += dys[k][i];
    }
    run_records();
  }

  // Forget every node and record; parameter gradients (external buffers) are untouched.
  void reset() {
    const op_profile::TapeScope profile;
    nodes_.clear();
    records_list_.clear();
    unzeroed_.clear();
    values_.reset();
    records_.reset();
  }

  bool grad_enabled() const { return grad_enabled_; }
  void set_grad_enabled(bool on) { grad_enabled_ = on; }
  size_t node_count() const { return nodes_.size(); }
  size_t arena_bytes() const { return values_.capacity() + records_.capacity(); }

 private:
  // Zeroes the gradients of the nodes made since the last backward, in one pass split over the threads: a soft
  // attention step makes about 385 of them, 44 MB, which zeroing each as its node is made would write with one memset
  // after another on the tape's thread alone, the other thread idle. Zeros are zeros, so the bits are the same.
  // Nothing reads or writes a node's gradient before backward (views share the pointer; parameters' gradients live
  // outside the tape and are never in this list).
  void zero_new_grads() {
    const op_profile::TapeScope profile;
    int64_t total = 0;
    for (const Span& g : unzeroed_) total += g.n;
    // Elements [begin, end) of the spans laid end to end.
    const auto zero_range = [this](int64_t begin, int64_t end) {
      int64_t at = 0;
      for (const Span& g : unzeroed_) {
        const int64_t lo = std::max(begin, at), hi = std::min(end, at + g.n);
        if (lo < hi) std::memset(g.p + (lo - at), 0, sizeof(T) * size_t(hi - lo));
        at += g.n;
      }
    };
    const int64_t parts = total >= kParallelMin ? omp_get_max_threads() : 1;  // one part a thread
    for_each_split_if(parts, parts > 1,
                      [&](int64_t i) { zero_range(total * i / parts, total * (i + 1) / parts); });
    unzeroed_.clear();
  }
  void run_records() {
    if (op_profile::active()) return run_records_profiled();
    for (size_t i = records_list_.size(); i-- > 0;) records_list_[i].run(records_list_[i].closure);
  }
  // The same loop with each record timed under the op that made it (the loop itself is the tape's).
  void run_records_profiled() {
    const op_profile::Scope loop(op_profile::kKindTape, op_profile::Phase::backward);
    for (size_t i = records_list_.size(); i-- > 0;) {
      const op_profile::Scope record(records_list_[i].kind, op_profile::Phase::backward);
      records_list_[i].run(records_list_[i].closure);
    }
  }
  struct Record {
    void (*run)(void*);
    void* closure;
    int kind;  // op_profile kind of the op that made it (0 unless profiling)
  };
  struct Span {
    T* p;
    int64_t n;
  };
  Arena values_;
  Arena records_;
  std::vector<Span> unzeroed_;  // gradients made since the last backward, zeroed when the next one starts
  std::vector<Node> nodes_;
  std::vector<Record> records_list_;
  bool grad_enabled_ = true;
};

// Evaluation without records: RAII switch of a tape's grad mode.
template <class T>
class NoGrad {
 public:
  explicit NoGrad(Tape<T>& t) : tape_(t), was_(t.grad_enabled()) { t.set_grad_enabled(false); }
  ~NoGrad() { tape_.set_grad_enabled(was_); }
  NoGrad(const NoGrad&) = delete;
  NoGrad& operator=(const NoGrad&) = delete;

 private:
  Tape<T>& tape_;
  bool was_;
};

}  // namespace lava
