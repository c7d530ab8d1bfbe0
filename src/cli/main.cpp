// lava: latent alignment and variational attention.
// Dispatches `lava <command> [options]` and turns every error into one line on stderr and an exit code:
// 2 for a usage error, 1 for bad input or a runtime failure. Nothing escapes as an uncaught exception. Standard
// output is flushed and checked before a command's exit code stands: a failed write (a full disk, /dev/full, a
// closed pipe) is an error like any other. Every message is made one line (core/quote_input.hpp).
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "core/atomic_file.hpp"
#include "core/check.hpp"
#include "core/quote_input.hpp"

namespace {

void print_usage(std::FILE* out) {
  fmt::print(out,
             "usage: lava <command> [options]\n\n"
             "LAVA reproduces \"Latent Alignment and Variational Attention\" (Deng et al., NeurIPS 2018) on a CPU.\n"
             "It reports exact log-likelihood, ELBO and the KL gap between them.\n\ncommands:\n");
  for (const lava::Command& c : lava::kCommands) fmt::print(out, "  {:<12} {}\n", c.name, c.summary);
  fmt::print(out, "\n`lava <command> --help` lists a command's options.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    print_usage(argc < 2 ? stderr : stdout);
    try {
      lava::check_stdout();
    } catch (const lava::InputError& e) {
      fmt::print(stderr, "lava: {}\n", e.what());
      return 1;
    }
    return argc < 2 ? 2 : 0;
  }
  const std::string name = argv[1];
  for (const lava::Command& c : lava::kCommands) {
    if (name != c.name) continue;
    try {
      const int code = c.run(argc - 1, argv + 1);
      lava::check_stdout();
      return code;
    } catch (const lava::UsageError& e) {
      // CommandLine::fail names the command; a UsageError thrown deeper (a data or model option checked where
      // it is used) gets the same "lava CMD: " prefix here.
      const std::string msg = lava::one_line(e.what());
      fmt::print(stderr, "{}{}\n", msg.starts_with("lava ") ? "" : "lava " + name + ": ", msg);
      return 2;
    } catch (const lava::InputError& e) {
      fmt::print(stderr, "lava {}: {}\n", name, lava::one_line(e.what()));
      return 1;
    } catch (const std::bad_alloc&) {
      fmt::print(stderr, "lava {}: out of memory\n", name);
      return 1;
    } catch (const std::exception& e) {
      fmt::print(stderr, "lava {}: error: {}\n", name, lava::one_line(e.what()));
      return 1;
    }
  }
  fmt::print(stderr, "lava: unknown command {} (see `lava --help`)\n", lava::quote_input(name));
  return 2;
}
