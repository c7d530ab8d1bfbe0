#include "cli/loop_options.hpp"

#include <string_view>

#include "cli/option_table.hpp"
#include "train/loop_option_table.hpp"

namespace lava {

const char* const kResumeHelp =
    "Stopping and resuming: with --save MODEL the state of the run (parameters, Adam's moments,\n"
    "counters) goes to MODEL.resume at every epoch end, every --checkpoint-every updates, when\n"
    "--max-steps/--max-minutes stop the run, and on SIGINT or SIGTERM, which finish the update in\n"
    "progress, save, and exit with 130 or 143 (a second Ctrl-C stops at once, but never while a file\n"
    "is being written; further SIGTERMs change nothing). The same command plus --resume\n"
    "MODEL.resume continues the run exactly as if it had never stopped (same parameters and figures,\n"
    "bit for bit); --epochs, --max-steps, --max-minutes (training time over all sessions), --patience,\n"
    "--checkpoint-every, --plot, --format and --threads may change, every other training option must\n"
    "be the same. A run that --max-steps/--max-minutes stops inside an epoch validates the model it\n"
    "stopped with (a \"partial\" line); MODEL is only ever replaced by a model with a better\n"
    "validation figure than the one it holds. MODEL is locked (MODEL.lock) while a run uses it: a\n"
    "second run on it fails at once.";

void add_loop_options(po::options_description& options, const TrainLoopOptions& defaults, const char* unit) {
  options.add_options()                                                                               //
      ("save", po::value<std::string>(), "write the best model here (safetensors), the resume state to MODEL.resume")  //
      ("resume", po::value<std::string>(), "continue the run saved in this resume state (--save defaults to it minus .resume)")  //
      ("batch-size", po::value<std::string>()->default_value(std::to_string(defaults.batch_size)),
       (std::string(unit) + " per batch").c_str());
  add_option_table(options, loop_option_table(), defaults);
}

void read_loop_options(const CommandLine& cl, TrainLoopOptions& o) {
  read_option_table(cl, loop_option_table(), o);
  o.batch_size = int(cl.get_int("batch-size", 1, 100000));
  if (cl.has("save")) o.save = cl.get_string("save");
  if (cl.has("resume")) {
    o.resume = cl.get_string("resume");
    constexpr std::string_view kSuffix = ".resume";
    if (o.save.empty()) {
      if (o.resume.size() <= kSuffix.size() || !o.resume.ends_with(kSuffix))
        cl.fail("--resume " + o.resume + " does not end in .resume: name the best-model file with --save");
      o.save = o.resume.substr(0, o.resume.size() - kSuffix.size());
    }
  }
  if (o.checkpoint_every > 0 && o.save.empty()) cl.fail("--checkpoint-every needs --save (the state goes to MODEL.resume)");
  o.seed = cl.common().seed;
  o.format = cl.common().format;
  o.quiet = cl.common().quiet;
}

}  // namespace lava
