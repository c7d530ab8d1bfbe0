#pragma once
// Command-line parsing shared by every subcommand (Boost.Program_options).
//
// Every command gets the common options --help, --config FILE (ini style, key = value, the command line wins),
// --seed, --threads, --format table|json|csv and --quiet. Boost's errors become UsageError (exit 2) with one line
// naming the command and the option; the typed getters below reject NaN, infinities and out-of-range values.
#include <boost/program_options.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "core/enum_names.hpp"
#include "report/table.hpp"

namespace lava {

namespace po = boost::program_options;

struct CommonOptions {
  uint64_t seed = 1;
  int threads = 0;  // 0: all cores
  OutputFormat format = OutputFormat::table;
  bool quiet = false;
  int64_t logits_cache_mb = 0;  // read() sets it from --logits-cache-mb (default: the autodiff's own)
};

class CommandLine {
 public:
  // usage: e.g. "lava toy [options]"; about: a paragraph shown under it by --help.
  CommandLine(std::string command, std::string usage, std::string about);

  po::options_description& options() { return own_; }
  // Parses argv (argv[0] is the command name) and applies the process-wide settings (apply_process_settings).
  // Returns false when --help was printed (the caller exits 0).
  bool parse(int argc, char** argv);
  // The same without the process-wide settings: for reading another command's line inside this process (the sweep
  // estimate counts an evaluation's examples from its lava eval line, cli/eval_examples.cpp).
  bool read(int argc, char** argv);
  // --threads to OpenMP, --quiet to the progress bars, --logits-cache-mb to the logits cache.
  void apply_process_settings() const;
  // Stores the options of a --config file's text (named `source` in errors) and nothing else: no --help, no common
  // options read, none of parse's process-wide settings (threads, progress, caches). For checking a command line
  // before it runs, e.g. each run of a sweep (cli/cmd_sweep.cpp). Errors are UsageErrors, as parse's.
  void parse_config_text(std::string_view text, const std::string& source);

  const po::variables_map& vm() const { return vm_; }
  bool has(const std::string& name) const { return vm_.count(name) > 0 && !vm_[name].defaulted(); }
  const CommonOptions& common() const { return common_; }

  // Typed, validated getters; errors name "--name".
  double get_double(const std::string& name, double lo, double hi) const;
  int64_t get_int(const std::string& name, int64_t lo, int64_t hi) const;
  std::string get_string(const std::string& name) const;
  // One of a fixed set of words, e.g. --attn soft|marginal|...
  std::string get_choice(const std::string& name, std::initializer_list<const char*> allowed) const;
  std::string get_choice(const std::string& name, const std::vector<std::string>& allowed) const;
  // The same for an enum with a table of names (core/enum_names.hpp).
  template <class E, size_t N>
  E get_enum(const std::string& name, const EnumName<E> (&names)[N]) const {
    const std::string s = get_string(name);
    if (const std::optional<E> e = enum_from_name(names, s)) return *e;
    fail(fmt::format("--{}: '{}' is not one of {}", name, s, enum_choices(names)));
  }

  [[noreturn]] void fail(const std::string& what) const;  // throws UsageError "lava CMD: what"

  // Every long option name (without "--") the command accepts, its own and the common ones.
  std::vector<std::string> option_names() const;

 private:
  std::string command_, usage_, about_;
  po::options_description own_, common_desc_;
  po::variables_map vm_;
  CommonOptions common_;
};

// "--a, --b" for option names given without their dashes ("" for none): how a message lists the options a thing reads.
std::string dashed_options(const std::vector<std::string>& names);

// Applies --threads to OpenMP (0 keeps the OpenMP default, which is every core).
void apply_thread_count(int threads);

// The value of --task on a raw command line ("--task X" or "--task=X"; the last one wins), or `fallback`. Commands
// that serve several tasks (train, eval) look at it first and hand the whole command line to that task's parser.
std::string task_of(int argc, char** argv, const std::string& fallback);

}  // namespace lava
