#include "core/stop_signal.hpp"

#include <signal.h>

#include <csignal>

#include "core/check.hpp"

namespace lava {

namespace {

// Written by the handler, read by the loop: the only state a handler may touch (async-signal-safe).
volatile std::sig_atomic_t g_signal = 0;  // first SIGINT / SIGTERM seen, 0 = none
volatile std::sig_atomic_t g_shield = 0;  // > 0 while a save is in progress

struct sigaction g_previous_int, g_previous_term;
bool g_installed = false;

extern "C" void on_stop_signal(int sig) {
  if (g_signal == 0) {
    g_signal = sig;
    return;
  }
  // SIGTERM asks for the graceful stop however often it comes: a scheduler, `pkill lava` (which reaches both a
  // sweep's `lava sweep run` and its jobs, and the former forwards one more) and GNU parallel may each send one.
  if (sig == SIGTERM) return;
  if (g_shield > 0) return;  // the save completes; the loop stops right after it anyway
  // A second Ctrl-C outside a save: stop at once, as if no handler were installed. The signal is blocked while
  // its handler runs, so raise() leaves it pending and it is delivered (default action) when the handler returns.
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

StopSignalGuard::StopSignalGuard() {
  LAVA_CHECK(!g_installed, "one StopSignalGuard at a time");
  g_signal = 0;
  g_shield = 0;
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // reads and writes in progress resume instead of failing with EINTR
  ::sigaction(SIGINT, &sa, &g_previous_int);
  ::sigaction(SIGTERM, &sa, &g_previous_term);
  g_installed = true;
}

StopSignalGuard::~StopSignalGuard() {
  ::sigaction(SIGINT, &g_previous_int, nullptr);
  ::sigaction(SIGTERM, &g_previous_term, nullptr);
  g_installed = false;
}

SaveShield::SaveShield() : previous_(int(g_shield)) { g_shield = previous_ + 1; }
SaveShield::~SaveShield() { g_shield = previous_; }

int stop_signal_received() { return int(g_signal); }

std::string signal_name(int sig) {
  if (sig == SIGINT) return "SIGINT";
  if (sig == SIGTERM) return "SIGTERM";
  return fmt::format("signal {}", sig);
}

}  // namespace lava
