#include "train/loop_option_table.hpp"

namespace lava {

namespace {
constexpr double kAny = 9.3e18;  // no upper bound on an int64 option
}

const OptionTable<TrainLoopOptions>& loop_option_table() {
  using L = TrainLoopOptions;
  static const OptionTable<L> table = {
      {"epochs", &L::epochs, 1, 100000, "passes over the training set", false},
      {"max-steps", &L::max_steps, 0, kAny, "stop after this many updates (0 = no limit)", false},
      {"max-minutes", &L::max_minutes, 0, 1e7, "stop after this much training time over all sessions (0 = none)",
       false},
      {"lr", &L::lr, 1e-12, 10, "Adam learning rate"},
      {"lr-decay", &L::lr_decay, 1e-6, 1, "factor when validation stalls"},
      {"start-decay-at", &L::start_decay_at, 1, 100000, "first epoch that may decay"},
      {"patience", &L::patience, 0, 100000, "stop after N stalled epochs (0 = never)", false},
      {"clip", &L::clip, 0, 1e9,
       "gradient clipping: every gradient is scaled by min(1, clip / ||g||), g all of them; 0 = no clipping"},
      {"init", &L::init, 0, 10, "uniform init range [-a, a]"},
      {"valid-every", &L::valid_every, 0, kAny, "also validate every N updates inside an epoch (0 = at epoch ends)"},
      {"checkpoint-every", &L::checkpoint_every, 0, kAny,
       "also write the resume state every N updates (0 = at epoch ends, stops and signals only)", false},
  };
  return table;
}

}  // namespace lava
