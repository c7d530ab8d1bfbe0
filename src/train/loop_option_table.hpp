#pragma once
// The training loop's options as rows (train/option_row.hpp): `lava train --task T` adds them with T's defaults, and
// those a resumed run must repeat (lr, lr-decay, start-decay-at, clip, init, valid-every) are part of its identity;
// the stopping bounds, patience and checkpoint-every may change between sessions.
#include "train/loop_options.hpp"
#include "train/option_row.hpp"

namespace lava {

const OptionTable<TrainLoopOptions>& loop_option_table();

}  // namespace lava
