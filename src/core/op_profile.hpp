#pragma once
// The per-op profile of `lava bench train --profile`: where the wall time of a training step goes. It exists only in
// a profiling build (make PROFILE=1, which defines LAVA_PROFILE=1; make bench builds one): in the
// product build every hook below compiles to nothing, and no GEMM counter or OpenMP wrapper is linked in.
//
// Every autodiff op opens a scope (LAVA_PROFILE_OP("name")) and every backward record runs under its op's kind, so
// the main thread's wall time is cut into exclusive pieces: the time between two clock readings is charged to the
// scope on top of the stack (a nested op or the tape's own bookkeeping takes its time out of the enclosing op's).
// Within a piece, GEMM calls (gemm.cpp) and OpenMP regions (omp_region_profile.cpp) add their own time to the same
// kind and phase, so each row also says how much of it was GEMM and how much the OpenMP runtime added.
//
// In a profiling build with the profile off, every hook is one relaxed load and a branch: no clock is read, nothing
// is stored, and the arithmetic is untouched, so results are the same bits in either build, profiled or not. On, it
// assumes one thread runs the tape (the thread that called start()); GEMMs on other threads, inside a region, are
// part of that region.
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#ifndef LAVA_PROFILE
#define LAVA_PROFILE 0
#endif

namespace lava::op_profile {

// Whether this binary has the profiler (`lava bench train --profile` says so when it has not).
inline constexpr bool kBuilt = LAVA_PROFILE;

enum class Phase : uint8_t { forward, backward, update };
constexpr int kPhases = 3;

struct PhaseTotals {
  double seconds = 0;  // exclusive wall time
  int64_t calls = 0;   // scopes entered
  double gemm_seconds = 0, gemm_flops = 0;
  int64_t omp_regions = 0;
  double omp_overhead = 0, omp_imbalance = 0;
  int64_t omp_split_regions = 0;  // of omp_regions, those opened to split (add_omp_region)
  double omp_split_seconds = 0;   // their wall time, and that of gemm calls that split (add_gemm)
};
struct KindTotals {
  int id = 0;
  std::string name;
  PhaseTotals phase[kPhases];
};

// Kinds with their own meaning in the table (registered first: ids 0 and 1).
constexpr int kKindOutside = 0;  // the main thread between ops: model code, index arrays, the loss
constexpr int kKindTape = 1;     // nodes (values and zeroed gradients), records, reset, the backward dispatch loop

#if LAVA_PROFILE

namespace detail {
extern std::atomic<bool> g_enabled;  // written only by start()/stop(), between steps
extern thread_local bool t_owner;    // true on the thread that called start()
}  // namespace detail
// True on the profiled thread while profiling: the hooks' only test when off.
inline bool active() { return detail::g_enabled.load(std::memory_order_relaxed) && detail::t_owner; }

// A kind's id, interned by name (called once per op, from a function-local static).
int kind_id(const char* name);
// The kind on top of the stack (what a backward record made now is filed under); 0 = outside any op.
int current_kind();

void enter(int kind, Phase phase);
void enter(int kind);  // in the enclosing scope's phase
void leave();

// An exclusive scope of `kind`; inert unless active().
class Scope {
 public:
  explicit Scope(int kind) : on_(active()) {
    if (on_) enter(kind);
  }
  Scope(int kind, Phase phase) : on_(active()) {
    if (on_) enter(kind, phase);
  }
  ~Scope() {
    if (on_) leave();
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  bool on_;
};

// Added to the kind and phase on top of the stack; `splits`: a call that splits over threads when there are several
// (its time counts in omp_split_seconds, whatever the team size, and its regions' do not count again).
void add_gemm(double seconds, double flops, bool splits);
// True on the profiled thread inside a timed gemm call.
bool in_gemm();
// A parallel region seen from the thread that opened it: `overhead` = its wall time − the longest thread's time in
// the region's body (waking the team, the join barrier), `imbalance` = that longest time − the mean over the team.
// `splits`: the region was opened to split over the team (no false `if`, no num_threads(1)); its `wall` time then
// counts as work that more threads could share, whatever the team's size in this run (Amdahl's p, below).
void add_omp_region(double overhead, double imbalance, bool splits, double wall);

// The tape's own bookkeeping, charged to kKindTape in the enclosing phase.
class TapeScope {
 public:
  TapeScope() : on_(active()) {
    if (on_) enter(kKindTape);
  }
  ~TapeScope() {
    if (on_) leave();
  }
  TapeScope(const TapeScope&) = delete;
  TapeScope& operator=(const TapeScope&) = delete;

 private:
  bool on_;
};

// Times one gemm call (the outermost, when one gemm entry calls another) and adds it with its 2MNK to add_gemm.
class GemmTimer {
 public:
  GemmTimer(double flops, bool splits) : on_(active() && begin_gemm()), splits_(splits), flops_(flops) {}
  ~GemmTimer() {
    if (on_) end_gemm(flops_, splits_);
  }
  GemmTimer(const GemmTimer&) = delete;
  GemmTimer& operator=(const GemmTimer&) = delete;

 private:
  static bool begin_gemm();  // false inside another timed gemm
  static void end_gemm(double flops, bool splits);
  bool on_, splits_;
  double flops_;
};

// Zeroes the totals and starts charging the calling thread's time (to kind_outside() in the forward phase).
void start();
void stop();  // charges the last piece and stops; totals() stays readable
std::vector<KindTotals> totals();  // every kind that was charged, in order of first registration

#else  // the product build: the same names, doing nothing, so that no call site needs an #if

constexpr bool active() { return false; }
inline int kind_id(const char*) { return 0; }
inline int current_kind() { return 0; }
class Scope {
 public:
  explicit constexpr Scope(int) {}
  constexpr Scope(int, Phase) {}
};
class TapeScope {
 public:
  constexpr TapeScope() {}
};
class GemmTimer {
 public:
  constexpr GemmTimer(double, bool) {}
};

#endif

}  // namespace lava::op_profile

#if LAVA_PROFILE
// The profile scope of an autodiff op, named as the table shows it.
#define LAVA_PROFILE_OP(name)                                                     \
  static const int lava_profile_kind_ = ::lava::op_profile::kind_id(name);        \
  const ::lava::op_profile::Scope lava_profile_scope_(lava_profile_kind_)
#else
#define LAVA_PROFILE_OP(name) static_cast<void>(0)
#endif
