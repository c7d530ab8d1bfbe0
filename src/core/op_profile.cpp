#include "core/op_profile.hpp"

#if LAVA_PROFILE  // the product build has no profiler (core/op_profile.hpp)

#include <chrono>
#include <cstring>
#include <mutex>

#include "core/check.hpp"

namespace lava::op_profile {

namespace detail {
std::atomic<bool> g_enabled{false};
thread_local bool t_owner = false;
}  // namespace detail

namespace {
using Clock = std::chrono::steady_clock;

struct Frame {
  int kind;
  Phase phase;
};

// Everything below is touched only by the owner thread while profiling, except the kind names (mutex).
std::mutex g_names_mutex;
std::vector<std::string> g_names;  // kind id -> name
std::vector<KindTotals> g_totals;  // kind id -> totals (grown on demand by the owner thread)
std::vector<Frame> g_stack;
Clock::time_point g_mark;
int g_gemm_depth = 0;  // 1 while the owner thread is inside a timed gemm
Clock::time_point g_gemm_t0;
// The two kinds of fixed id, first in the table.
const bool g_fixed_kinds = [] {
  const bool ok = kind_id("outside ops (model code)") == kKindOutside && kind_id("tape") == kKindTape;
  return ok;
}();

PhaseTotals& top_totals() {
  const Frame& f = g_stack.back();
  if (size_t(f.kind) >= g_totals.size()) g_totals.resize(size_t(f.kind) + 1);
  return g_totals[size_t(f.kind)].phase[int(f.phase)];
}
// Charges the time since the last mark to the top of the stack and moves the mark to now.
void charge() {
  const Clock::time_point now = Clock::now();
  top_totals().seconds += std::chrono::duration<double>(now - g_mark).count();
  g_mark = now;
}
}  // namespace

int kind_id(const char* name) {
  std::lock_guard<std::mutex> lock(g_names_mutex);
  for (size_t i = 0; i < g_names.size(); ++i)
    if (g_names[i] == name) return int(i);
  g_names.emplace_back(name);
  return int(g_names.size() - 1);
}

int current_kind() { return active() && !g_stack.empty() ? g_stack.back().kind : 0; }

void enter(int kind, Phase phase) {
  charge();
  g_stack.push_back({kind, phase});
  ++top_totals().calls;
}
void enter(int kind) { enter(kind, g_stack.back().phase); }
void leave() {
  charge();
  LAVA_CHECK(g_stack.size() > 1, "op_profile: leave() without a scope");
  g_stack.pop_back();
}

void add_gemm(double seconds, double flops, bool splits) {
  PhaseTotals& t = top_totals();
  t.gemm_seconds += seconds;
  t.gemm_flops += flops;
  if (splits) t.omp_split_seconds += seconds;
}
bool in_gemm() { return active() && g_gemm_depth > 0; }
void add_omp_region(double overhead, double imbalance, bool splits, double wall) {
  PhaseTotals& t = top_totals();
  ++t.omp_regions;
  t.omp_overhead += overhead;
  t.omp_imbalance += imbalance;
  if (splits) ++t.omp_split_regions;
  if (splits && !in_gemm()) t.omp_split_seconds += wall;  // a gemm's own regions: its time is filed by add_gemm
}

bool GemmTimer::begin_gemm() {
  if (g_gemm_depth > 0) return false;
  g_gemm_depth = 1;
  g_gemm_t0 = Clock::now();
  return true;
}
void GemmTimer::end_gemm(double flops, bool splits) {
  add_gemm(std::chrono::duration<double>(Clock::now() - g_gemm_t0).count(), flops, splits);
  g_gemm_depth = 0;
}

void start() {
  LAVA_CHECK(g_fixed_kinds, "op_profile: the fixed kinds were not registered first");
  g_totals.clear();
  for (size_t i = 0; i < g_names.size(); ++i) g_totals.push_back(KindTotals{int(i), g_names[i], {}});
  g_stack.assign(1, Frame{kKindOutside, Phase::forward});
  g_gemm_depth = 0;
  detail::t_owner = true;
  g_mark = Clock::now();
  detail::g_enabled.store(true, std::memory_order_relaxed);
}

void stop() {
  if (!active()) return;
  charge();
  LAVA_CHECK(g_stack.size() == 1, "op_profile: stop() inside {} open scopes", g_stack.size() - 1);
  detail::g_enabled.store(false, std::memory_order_relaxed);
  detail::t_owner = false;
}

std::vector<KindTotals> totals() {
  std::vector<KindTotals> out;
  std::lock_guard<std::mutex> lock(g_names_mutex);
  for (size_t i = 0; i < g_totals.size(); ++i) {
    KindTotals k = g_totals[i];
    k.id = int(i);
    k.name = g_names[i];
    bool any = false;
    for (const PhaseTotals& p : k.phase) any = any || p.calls > 0 || p.seconds > 0;
    if (any) out.push_back(std::move(k));
  }
  return out;
}

}  // namespace lava::op_profile

#endif  // LAVA_PROFILE
