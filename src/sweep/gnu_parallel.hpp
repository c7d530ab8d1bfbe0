#pragma once
// Runs shell commands through GNU parallel (Debian's `parallel`), `jobs` at a time, feeding them on its stdin.
//
// parallel and its jobs get a process group of their own, so Ctrl-C reaches only this process, which then sends
// one SIGTERM to the whole group: parallel starts no new job and passes the TERM on to each running `lava sweep
// exec` (its jobs have process groups of their own), which saves its resume state and stops. A second SIGTERM, say
// from `pkill lava`, changes nothing: lava train takes repeated SIGTERMs as one. SIGHUP (the terminal closed) is
// taken the same way. The next `lava sweep run` resumes those runs. --termseq gives the jobs a minute before
// parallel itself would kill them.
//
// When this process dies without a chance to forward anything (SIGKILL), parallel gets SIGHUP from the kernel
// (its parent-death signal) and starts no further job, and each running `lava sweep exec` sees its lifeline close
// (sweep/lifeline.hpp) and stops with its resume state saved. The commands go to parallel NUL-separated (--null),
// so a newline inside a quoted path cannot split one.
#include <string>
#include <vector>

namespace lava {

struct GnuParallelOptions {
  int jobs = 1;
  std::string sshlogin;  // passed as --sshlogin when not empty (spreads the jobs over machines)
  std::string joblog;    // passed as --joblog when not empty
};

// Returns parallel's exit code: 0 when every job succeeded, the number of failed jobs (at most 100) otherwise;
// 128 + N when this process was stopped by signal N. Throws InputError when parallel cannot be started.
int run_with_gnu_parallel(const std::vector<std::string>& commands, const GnuParallelOptions& o);

}  // namespace lava
