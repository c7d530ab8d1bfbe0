#pragma once
// The options of the training loop (train/loop.hpp), the same for every task; each task's options hold one of these
// with the task's own defaults (e.g. VQA trains with lr 2e-3 and init 0.3), and `lava train` reads them from one
// option table (train/loop_option_table.hpp).
#include <cstdint>
#include <string>

#include "report/table.hpp"

namespace lava {

struct TrainLoopOptions {
  int epochs = 10;               // passes over the training set
  int64_t max_steps = 0;         // stop after this many updates (0 = no limit)
  double max_minutes = 0;        // stop after this much training time over all sessions (0 = no limit)
  int batch_size = 32;           // examples per update (the task makes the batches)
  double lr = 1e-3;              // Adam's learning rate
  double lr_decay = 0.5;         // factor on it when a validation at an epoch end does not improve
  int start_decay_at = 2;        // first epoch whose end may decay it
  int patience = 0;              // stop after this many epoch ends without improvement (0 = never)
  double clip = 5;               // max global gradient norm (0 = no clipping)
  double init = 0.1;             // parameters start uniform in [-init, init]
  int64_t valid_every = 0;       // also validate every this many updates inside an epoch (0 = at epoch ends only)
  int64_t checkpoint_every = 0;  // also write the resume state every this many updates (0 = not between epochs)
  std::string save;              // best-model path ("" = none); the resume state goes to save + ".resume"
  std::string resume;            // continue the run whose resume state is in this file ("" = start afresh)
  uint64_t seed = 1;
  OutputFormat format = OutputFormat::table;  // json: one line per validation on stdout; else a line on stderr
  bool quiet = false;            // no epoch lines on stderr (JSON lines on stdout stay)
};

}  // namespace lava
