#pragma once
// A graceful stop on SIGINT (Ctrl-C) and SIGTERM (kill, job schedulers) for long loops such as training:
//
//   StopSignalGuard guard;                  // installs the handlers; the destructor puts the previous ones back
//   for (...) { step(); if (stop_signal_received()) { save(); return 128 + stop_signal_received(); } }
//
// The handler only records the signal in a volatile sig_atomic_t (async-signal-safe) and writes a one-line notice
// with write(2). A second SIGINT (Ctrl-C again) while the loop has not yet reached its check stops the process at
// once (default action: a long step need not be waited for), except while a SaveShield is alive: a file being
// written is finished first. SIGTERM never does: however many come, from however many senders, the update in
// progress finishes and the state is saved (SIGKILL is the way to stop at once). Writes are atomic anyway
// (core/atomic_file.hpp), so a kill at any moment leaves the old file or the new one, never half of one. One guard
// at a time; call from the main thread.
#include <string>

namespace lava {

class StopSignalGuard {
 public:
  StopSignalGuard();  // clears any earlier signal record
  ~StopSignalGuard();
  StopSignalGuard(const StopSignalGuard&) = delete;
  StopSignalGuard& operator=(const StopSignalGuard&) = delete;
};

// While alive, a second SIGINT is recorded but does not end the process (the save in progress completes).
class SaveShield {
 public:
  SaveShield();
  ~SaveShield();
  SaveShield(const SaveShield&) = delete;
  SaveShield& operator=(const SaveShield&) = delete;

 private:
  int previous_;
};

// The first SIGINT or SIGTERM received since the guard was installed, or 0.
int stop_signal_received();

// "SIGINT", "SIGTERM", or "signal N".
std::string signal_name(int sig);

}  // namespace lava
