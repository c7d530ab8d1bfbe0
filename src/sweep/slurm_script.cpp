#include "sweep/slurm_script.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "core/check.hpp"
#include "sweep/self_executable.hpp"

namespace lava {

std::string slurm_log_dir(const SweepFile& f) { return (std::filesystem::path(f.out) / "slurm").string(); }

std::string slurm_array_script(const SweepFile& f, const std::vector<SweepRun>& runs, const SlurmOptions& o) {
  LAVA_CHECK(!runs.empty(), "a sweep has at least one run");
  const std::string name =
      o.job_name.empty() ? std::filesystem::path(f.path).filename().replace_extension("").string() : o.job_name;
  std::string s = "#!/bin/bash\n";
  s += fmt::format("# lava sweep: {} runs of {}\n", runs.size(), f.path);
  s += "# Written by `lava sweep slurm`; submit with sbatch. Finished runs are skipped, stopped ones resume.\n";
  s += fmt::format("#SBATCH --job-name={}\n", name);
  s += fmt::format("#SBATCH --array=0-{}{}\n", runs.size() - 1, o.max_running > 0 ? fmt::format("%{}", o.max_running) : "");
  s += fmt::format("#SBATCH --output={}/%A_%a.out\n", slurm_log_dir(f));
  s += "#SBATCH --open-mode=append\n";
  s += "#SBATCH --requeue\n";
  s += "#SBATCH --signal=B:TERM@60\n";
  s += "#SBATCH --nodes=1\n#SBATCH --ntasks=1\n";
  s += fmt::format("#SBATCH --cpus-per-task={}\n", o.cpus);
  if (!o.mem.empty()) s += fmt::format("#SBATCH --mem={}\n", o.mem);
  if (!o.time.empty()) s += fmt::format("#SBATCH --time={}\n", o.time);
  if (!o.partition.empty()) s += fmt::format("#SBATCH --partition={}\n", o.partition);
  s += "\n# Task i runs the run with index i (lava sweep plan lists them); ids are hashes of the runs' options.\n";
  s += "runs=(";
  for (const SweepRun& r : runs) s += (r.index ? " " : "") + r.id;
  s += ")\n";
  s += "run=${runs[$SLURM_ARRAY_TASK_ID]}\n";
  s += "# exec: lava becomes the batch shell, so every SIGTERM (time limit, preemption, requeue) reaches it once.\n";
  s += fmt::format("exec {} sweep exec {} --run \"$run\" --threads \"${{SLURM_CPUS_PER_TASK:-{}}}\"\n",
                   shell_quote(o.lava), shell_quote(f.path), o.cpus);
  return s;
}

}  // namespace lava
