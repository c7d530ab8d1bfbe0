#pragma once
// How the runs of `lava sweep run` learn that it is gone, however it ended (SIGKILL and a lost terminal included).
//
// lava sweep run holds the write end of a pipe (close-on-exec: no child holds a copy) and hands the read end to GNU
// parallel, whose jobs inherit it; the environment variable LAVA_SWEEP_LIFELINE names its descriptor. When lava
// sweep run ends, in whatever way, the kernel closes the write end and every reader sees end-of-file. `lava sweep
// exec` watches for that on a thread of its own and then sends itself SIGTERM: the trainer saves its resume state
// and stops, exactly as when the sweep is stopped with Ctrl-C, and the next `lava sweep run` resumes the run.
#include <string>

namespace lava {

inline constexpr const char* kLifelineEnv = "LAVA_SWEEP_LIFELINE";

struct Lifeline {
  int read_fd = -1;   // for the children (not close-on-exec)
  int write_fd = -1;  // held by this process only
};

// Throws InputError when no pipe can be made.
Lifeline make_lifeline();

// In `lava sweep exec`: when LAVA_SWEEP_LIFELINE names a pipe, false if the lava sweep run that started this process
// has already ended (the caller then starts nothing), and otherwise true with the watcher started. True, and no
// watcher, without a lifeline (the run was started some other way: by hand, by Slurm, by a plan's commands).
bool watch_lifeline();

}  // namespace lava
