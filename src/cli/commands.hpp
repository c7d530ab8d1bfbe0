#pragma once
// The subcommands of `lava`. Each lives in src/cli/cmd_<name>.cpp and returns the process exit code; errors are
// thrown (UsageError -> 2, InputError -> 1) and turned into one stderr line by main().
namespace lava {

class CommandLine;
struct DecodeOptions;

struct Command {
  const char* name;
  const char* summary;
  int (*run)(int argc, char** argv);  // argv[0] is the command name
};

int cmd_toy(int argc, char** argv);
int cmd_gradcheck(int argc, char** argv);
int cmd_data(int argc, char** argv);
int cmd_train(int argc, char** argv);
int cmd_eval(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_translate(int argc, char** argv);
int cmd_align(int argc, char** argv);
int cmd_sweep(int argc, char** argv);
int cmd_report(int argc, char** argv);
int cmd_plot(int argc, char** argv);
int cmd_crosscheck_dump(int argc, char** argv);

// The beam-search options shared by `translate` and `eval --bleu` (cmd_translate.cpp): --beam --alpha --eos-norm
// --max-len-ratio --max-len-extra. The caller sets kmax and batch_size from its own options.
void add_decode_options(CommandLine& cl);
DecodeOptions decode_options(const CommandLine& cl);

inline constexpr Command kCommands[] = {
    {"toy", "exact vs variational attention on one example: log p, ELBO, KL gap, identity check", cmd_toy},
    {"gradcheck", "check every op's backward against finite differences in double precision", cmd_gradcheck},
    {"data", "build a data set: gettext (German-English from Debian), synth (synthetic, gold alignments)", cmd_data},
    {"train", "train a model: --task TASK (lava train --help lists the tasks), --attn a variant of the task",
     cmd_train},
    {"eval", "exact per-token nll/ppl, ELBO, KL, KL gap and prior entropy of a trained model", cmd_eval},
    {"bench", "benchmarks: gemm (GFLOP/s vs FMA peak and OpenBLAS), train (tokens/s, GFLOP/s, memory)", cmd_bench},
    {"translate", "beam-search translation of a tokenised file with the exact marginal word distribution", cmd_translate},
    {"align", "word alignments (Pharaoh) from the prior/posterior/q argmax; AER against gold", cmd_align},
    {"sweep", "grids of training runs: plan, run (GNU parallel), slurm (job array), exec (one run)", cmd_sweep},
    {"report", "merge a sweep's runs into one table: mean ± sd over seeds per grid point", cmd_report},
    {"plot", "an SVG line plot of JSON-lines files, a series per file: learning curves, PPL against K", cmd_plot},
    {"crosscheck-dump", "a small model's init, batches, noise, gradients and training for tools/torch_reference.py",
     cmd_crosscheck_dump},
};

}  // namespace lava
