#include "sweep/slurm_script.hpp"

#include <cctype>
#include <filesystem>

#include <fmt/format.h>

#include "core/check.hpp"
#include "core/quote_input.hpp"
#include "sweep/self_executable.hpp"

namespace lava {

namespace {

// sbatch reads the #SBATCH lines itself, not through a shell: a value there cannot be quoted, and a newline would
// end the line (bash would then run the rest as a command, and sbatch stop reading #SBATCH lines).
std::string sbatch_value(const char* what, const std::string& value, bool percent_allowed = false) {
  if (!sbatch_safe(value, percent_allowed))
    throw InputError(fmt::format("{} {} cannot go into an #SBATCH line (it is empty or has a space, "
                                 "a control character, a quote, a backslash, $, ` or %)",
                                 what, quote_input(value)));
  return value;
}

// A file name pattern for --output: every '%' of the path itself doubled (%A, %a, %j... are Slurm's patterns).
std::string slurm_literal(const std::string& path) {
  std::string out;
  for (char c : path) out += c == '%' ? std::string("%%") : std::string(1, c);
  return out;
}

// The default job name: the sweep file's name without .ini, every character other than [A-Za-z0-9._-] made '_'.
std::string default_job_name(const SweepFile& f) {
  std::string name = std::filesystem::path(f.path).filename().replace_extension("").string();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
  return name.empty() ? "lava-sweep" : name;
}

// `s` quoted for bash: shell_quote's '...' unless it holds a control character, then $'...' with escapes, so that
// no value puts a line break into the script (sbatch and anything else reading it line by line see whole lines).
std::string bash_quote(const std::string& s) {
  bool control = false;
  for (char c : s) control = control || static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  if (!control) return shell_quote(s);
  std::string out = "$'";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\\' || c == '\'') out += std::string("\\") + c;
    else if (c == '\n') out += "\\n";
    else if (u < 0x20 || u == 0x7f) out += fmt::format("\\x{:02x}", u);
    else out += c;
  }
  return out + "'";
}

}  // namespace

bool sbatch_safe(const std::string& value, bool percent_allowed) {
  if (value.empty()) return false;
  for (char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= ' ' || u == 0x7f || std::string_view("'\"\\$`").find(c) != std::string_view::npos) return false;
    if (c == '%' && !percent_allowed) return false;
  }
  return true;
}

std::string slurm_log_dir(const SweepFile& f) { return (std::filesystem::path(f.out) / "slurm").string(); }

std::string slurm_array_script(const SweepFile& f, const std::vector<SweepRun>& runs, const SlurmOptions& o) {
  LAVA_CHECK(!runs.empty(), "a sweep has at least one run");
  std::string s = "#!/bin/bash\n";
  s += fmt::format("# lava sweep: {} runs of {}\n", runs.size(), quote_input(f.path));
  s += "# Written by `lava sweep slurm`; submit with sbatch. Finished runs are skipped, stopped ones resume.\n";
  s += fmt::format("#SBATCH --job-name={}\n", sbatch_value("the job name", o.job_name.empty() ? default_job_name(f) : o.job_name));
  s += fmt::format("#SBATCH --array=0-{}{}\n", runs.size() - 1, o.max_running > 0 ? fmt::format("%{}", o.max_running) : "");
  s += fmt::format("#SBATCH --output={}/%A_%a.out\n",
                   slurm_literal(sbatch_value("the log directory", slurm_log_dir(f), /*percent_allowed=*/true)));
  s += "#SBATCH --open-mode=append\n";
  s += "#SBATCH --requeue\n";
  s += "#SBATCH --signal=B:TERM@60\n";
  s += "#SBATCH --nodes=1\n#SBATCH --ntasks=1\n";
  s += fmt::format("#SBATCH --cpus-per-task={}\n", o.cpus);
  if (!o.mem.empty()) s += fmt::format("#SBATCH --mem={}\n", sbatch_value("--mem", o.mem));
  if (!o.time.empty()) s += fmt::format("#SBATCH --time={}\n", sbatch_value("--time", o.time));
  if (!o.partition.empty()) s += fmt::format("#SBATCH --partition={}\n", sbatch_value("--partition", o.partition));
  s += "\n# Task i runs the run with index i (lava sweep plan lists them); ids are hashes of the runs' options.\n";
  s += "runs=(";
  for (const SweepRun& r : runs) s += (r.index ? " " : "") + r.id;
  s += ")\n";
  s += "run=${runs[$SLURM_ARRAY_TASK_ID]}\n";
  s += "# exec: lava becomes the batch shell, so every SIGTERM (time limit, preemption, requeue) reaches it once.\n";
  std::string set;
  for (const SweepOption& kv : f.set) set += " --set " + bash_quote(kv.key + "=" + kv.value);
  s += fmt::format("exec {} sweep exec {}{}{} --run \"$run\" --threads \"${{SLURM_CPUS_PER_TASK:-{}}}\"{}\n",
                   bash_quote(o.lava), bash_quote(f.path), f.scale.empty() ? "" : " --scale " + bash_quote(f.scale), set,
                   o.cpus, o.max_runs == kDefaultMaxRuns ? "" : fmt::format(" --max-runs {}", o.max_runs));
  return s;
}

}  // namespace lava
