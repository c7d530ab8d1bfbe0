#include "cli/command_line.hpp"

#include <omp.h>

#include <cmath>
#include <iostream>

#include "autodiff/ops.hpp"
#include "cli/config_file.hpp"
#include "core/check.hpp"
#include "core/quote_input.hpp"
#include "report/progress.hpp"

namespace lava {

CommandLine::CommandLine(std::string command, std::string usage, std::string about)
    : command_(std::move(command)),
      usage_(std::move(usage)),
      about_(std::move(about)),
      own_("Options"),
      common_desc_("Common options") {
  common_desc_.add_options()                                                                  //
      ("help,h", "print this help and exit")                                                  //
      ("config", po::value<std::string>(), "read options from an ini-style FILE (key = value); the command line wins")  //
      ("seed", po::value<std::string>()->default_value("1"), "random seed (every random draw is a function of it)")     //
      ("threads", po::value<std::string>()->default_value("0"), "OpenMP threads (0 = all cores); results do not depend on it")  //
      ("logits-cache-mb", po::value<std::string>()->default_value(std::to_string(kDefaultLogitsCacheMb)),
       "memory the fused output layer may keep for its backward pass instead of recomputing the logits (one GEMM "
       "per kept chunk of 256 rows); results do not depend on it")  //
      ("format", po::value<std::string>()->default_value("table"), "output: table (people), json (one object per line), csv")  //
      ("quiet,q", po::bool_switch(), "no progress output on stderr");
}

std::vector<std::string> CommandLine::option_names() const {
  std::vector<std::string> names;
  for (const po::options_description* d : {&own_, &common_desc_})
    for (const auto& o : d->options()) names.push_back(o->long_name());
  return names;
}

std::string dashed_options(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "--" : ", --") + n;
  return out;
}

void CommandLine::fail(const std::string& what) const { throw UsageError("lava " + command_ + ": " + what); }

void CommandLine::parse_config_text(std::string_view text, const std::string& source) {
  po::options_description all;
  all.add(own_).add(common_desc_);
  try {
    store_config_text(text, source, all, vm_);
    po::notify(vm_);
  } catch (const po::error& e) {
    fail(e.what());
  }
}

bool CommandLine::parse(int argc, char** argv) {
  if (!read(argc, argv)) return false;
  apply_process_settings();
  return true;
}

void CommandLine::apply_process_settings() const {
  set_logits_cache_mb(common_.logits_cache_mb);
  Progress::set_quiet(common_.quiet);
  apply_thread_count(common_.threads);
}

bool CommandLine::read(int argc, char** argv) {
  po::options_description all;
  all.add(own_).add(common_desc_);
  try {
    const po::parsed_options parsed = po::command_line_parser(argc, argv).options(all).run();
    // Without a positional description Boost keeps a stray word as an option with no name; it is a usage error
    // (a typo such as `--model m extra` must not run as if it were not there).
    for (const po::option& o : parsed.options)
      if (o.string_key.empty() || o.position_key >= 0)
        fail("unexpected argument " + quote_input(o.original_tokens.empty() ? std::string() : o.original_tokens[0]) +
             " (every value belongs to an --option; see --help)");
    po::store(parsed, vm_);
    if (vm_.count("help")) {
      std::cout << "usage: " << usage_ << "\n\n" << about_ << "\n\n" << own_ << "\n" << common_desc_ << "\n";
      return false;
    }
    if (vm_.count("config")) {
      const std::string path = vm_["config"].as<std::string>();
      store_config_file(path, all, vm_);  // values already set on the command line are kept
    }
    po::notify(vm_);
  } catch (const po::error& e) {
    fail(e.what());
  }
  const uint64_t seed = uint64_t(get_int("seed", 0, INT64_MAX));
  common_.seed = seed;
  common_.threads = int(get_int("threads", 0, 1024));
  common_.logits_cache_mb = get_int("logits-cache-mb", 0, int64_t(1) << 30);
  try {
    common_.format = parse_output_format(get_string("format"));
  } catch (const UsageError& e) {
    fail(e.what());
  }
  common_.quiet = vm_["quiet"].as<bool>();
  return true;
}

std::string CommandLine::get_string(const std::string& name) const {
  if (!vm_.count(name)) fail("--" + name + " is required");
  return vm_[name].as<std::string>();
}

double CommandLine::get_double(const std::string& name, double lo, double hi) const {
  const std::string s = get_string(name);
  size_t used = 0;
  double x = 0;
  try {
    x = std::stod(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != s.size() || !std::isfinite(x))
    fail(fmt::format("--{}: {} is not a finite number", name, quote_input(s)));
  if (x < lo || x > hi) fail(fmt::format("--{}: {} is outside [{}, {}]", name, s, lo, hi));
  return x;
}

int64_t CommandLine::get_int(const std::string& name, int64_t lo, int64_t hi) const {
  const std::string s = get_string(name);
  size_t used = 0;
  long long x = 0;
  try {
    x = std::stoll(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != s.size()) fail(fmt::format("--{}: {} is not a whole number", name, quote_input(s)));
  if (x < lo || x > hi) fail(fmt::format("--{}: {} is outside [{}, {}]", name, s, lo, hi));
  return x;
}

std::string CommandLine::get_choice(const std::string& name, std::initializer_list<const char*> allowed) const {
  return get_choice(name, std::vector<std::string>(allowed.begin(), allowed.end()));
}

std::string CommandLine::get_choice(const std::string& name, const std::vector<std::string>& allowed) const {
  const std::string s = get_string(name);
  std::string list;
  for (const std::string& a : allowed) {
    if (s == a) return s;
    if (!list.empty()) list += '|';
    list += a;
  }
  fail(fmt::format("--{}: {} is not one of {}", name, quote_input(s), list));
}

void apply_thread_count(int threads) {
  if (threads > 0) omp_set_num_threads(threads);
}

std::string task_of(int argc, char** argv, const std::string& fallback) {
  std::string task = fallback;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--task" && i + 1 < argc) task = argv[++i];
    else if (a.starts_with("--task=")) task = std::string(a.substr(7));
  }
  return task;
}

}  // namespace lava
