#pragma once
// The cost of a run's evaluations ([eval NAME] sections, `lava eval` after training) before it runs, for
// `lava sweep plan --estimate`. Each distinct evaluation of a model shape runs twice in a child process
// (sweep/timed_train.hpp), with --limit n₁ and --limit n₂ (n₁ = n₂/4) at one thread. In CPU time,
//
//   cpu(n) = load + n·e   ⇒   e = (cpu(n₂) − cpu(n₁)) / (n₂ − n₁)
//
// free of loading the model and the split, and the evaluation costs
//
//   core-seconds = N · e
//
// with N the examples it covers. When cpu(n₂) − cpu(n₁) < cpu(n₁), the difference is within the noise of the fixed
// cost (system time alone varies by tenths of a second on a loaded machine), so n₂ grows 4× at a time, up to N,
// until it is not: a cheap evaluation is timed on much of its split, an expensive one on n₂ examples.
//
// N is the number of examples of its split, counted the way its task's lava eval reads them (sentence pairs with no
// empty side for translation, whose test split is never length-filtered; questions; scenes; sentences), or its own
// limit when smaller. A split of fewer than two examples is timed once whole, load included (an upper bound).
//
// The model it runs on: a run of the shape that already has its model (RUN/model.safetensors) lends it, so a sweep
// estimated again after training is costed on trained models; else the model of the shape's training timing run,
// trained a few updates. The cost of scoring the split (teacher-forced likelihoods) does not depend on training, but
// decoding (BLEU's beam search, captions) does, through the hypotheses' lengths: a model that ends them later costs
// more. Neither way is bounded by the timing: a barely trained model has learnt roughly how long targets are and
// ends its hypotheses about as a trained one does (the small translation table: within 10 %), but one that never
// ended them would decode to the length limit (translation: 2 · source length + 10 words) at several times the cost.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sweep/sweep_file.hpp"
#include "sweep/sweep_plan.hpp"
#include "sweep/timed_train.hpp"

namespace lava {

// The examples `lava eval ARGS` evaluates (ARGS as eval_arguments writes them, read from the sweep file's
// directory): its split's, or its --limit when that is fewer. The task's own reader counts them (cli/).
using EvalExamplesOf = std::function<int64_t(const std::vector<std::string>& eval_args)>;
// The CPU seconds of `lava ARGS` (time_eval; a test passes a fake).
using EvalTimer = std::function<double(const std::vector<std::string>& eval_args)>;

// The two --limit sizes that time an evaluation of `examples` with timing size n: n₂ = min(n, examples) and
// n₁ = max(1, n₂/4); n₁ == n₂ when examples < 2 (one timing of the whole split).
struct EvalTimingSizes {
  int64_t n1 = 0, n2 = 0;
};
EvalTimingSizes eval_timing_sizes(int64_t examples, int64_t n);

// CPU seconds of one example from timings of n₁ < n₂ examples (floored at 0: noise on a loaded machine can make
// the difference negative); cpu(n₂) / n₂ when n₁ == n₂.
double seconds_per_example(int64_t n1, double cpu1, int64_t n2, double cpu2);

struct EvalCost {
  std::string name;      // the [eval NAME] section
  int64_t examples = 0;  // N
  double example_s = 0;  // e
  double core_seconds() const { return double(examples) * example_s; }
};

// The options the timing leaves out of an evaluation's section: limit (it sets its own). Every other option is
// timed, gold-align's alignment pass included (lava eval scores the first --limit pairs' lines).
bool eval_option_untimed(const std::string& key);

// How much n₂ grows when the difference is too small to tell from noise.
inline constexpr int64_t kEvalTimingGrowth = 4;

// Times evaluation `e` of run `r` on `model` with timing size n: writes its section's options into `scratch`,
// counts its examples, runs `timer` at n₁ and n₂ (nothing when it has no example). A progress line on stderr.
EvalCost time_evaluation(const TimedTrainSetup& setup, const SweepFile& f, const SweepRun& r, const SweepEval& e,
                         const std::string& model, int64_t n, const EvalExamplesOf& examples_of,
                         const EvalTimer& timer);

}  // namespace lava
