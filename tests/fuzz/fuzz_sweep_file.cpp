// libFuzzer harness: the sweep file reader (sweep/sweep_file.hpp), its sections included, and what every verb does
// next with a file it accepted: expand it under a run limit, write each run's config.ini and run.json and each
// evaluation's config, and write the Slurm script.
#include "fuzz_input.hpp"
#include "sweep/run_evals.hpp"
#include "sweep/slurm_script.hpp"
#include "sweep/sweep_file.hpp"
#include "sweep/sweep_plan.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A fixed option list in place of `lava train --help` (the harness runs no process).
  const lava::TrainOptionNames options = [](const std::string&) {
    return std::set<std::string>{"data", "attn", "lr", "epochs", "threads", "logits-cache-mb", "batch-size"};
  };
  const lava::EvalOptionNames eval_options = [](const std::string&) {
    return std::set<std::string>{"split", "kmax", "bleu", "beam", "data", "model"};
  };
  lava_fuzz::expect_clean([&] {
    // The file's own default scale (scale = NAME), as a verb without --scale reads it.
    const lava::SweepFile f =
        lava::parse_sweep_file("/fuzz/sweep.ini", std::string(lava_fuzz::bytes(data, size)), options, "", eval_options);
    for (const lava::SweepEval& e : f.evals) (void)lava::eval_config_text(e);
    const std::vector<lava::SweepRun> runs = lava::expand_sweep(f, 1000);
    for (const lava::SweepRun& r : runs) {
      (void)lava::run_config_identity(lava::run_config_text(r));
      (void)lava::run_info_json(f, r);
    }
    lava::SlurmOptions o;
    o.lava = "/usr/bin/lava";
    (void)lava::slurm_array_script(f, runs, o);
  });
  return 0;
}
