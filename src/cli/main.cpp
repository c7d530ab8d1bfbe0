// lava: latent alignment and variational attention.
// Dispatches `lava <command> [options]` and turns every error into one line on stderr and an exit code:
// 2 for a usage error, 1 for bad input or a runtime failure. Nothing escapes as an uncaught exception.
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "core/check.hpp"

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
    return argc < 2 ? 2 : 0;
  }
  const std::string name = argv[1];
  for (const lava::Command& c : lava::kCommands) {
    if (name != c.name) continue;
    try {
      return c.run(argc - 1, argv + 1);
    } catch (const lava::UsageError& e) {
      fmt::print(stderr, "{}\n", e.what());
      return 2;
    } catch (const lava::InputError& e) {
      fmt::print(stderr, "lava {}: {}\n", name, e.what());
      return 1;
    } catch (const std::bad_alloc&) {
      fmt::print(stderr, "lava {}: out of memory\n", name);
      return 1;
    } catch (const std::exception& e) {
      fmt::print(stderr, "lava {}: error: {}\n", name, e.what());
      return 1;
    }
  }
  fmt::print(stderr, "lava: unknown command '{}' (see `lava --help`)\n", name);
  return 2;
}
