#pragma once
// What `lava sweep plan --estimate` scales an evaluation's cost by: the examples `lava eval` covers, counted by each
// task's TaskCommands::eval_examples (in its cmd_TASK.cpp, with the task's own readers, not a second copy of their
// rules), then --limit's when that is fewer:
//   nmt      sentence pairs with no empty side (the test split is never length-filtered; lava eval filters no split)
//   seqvae   sentences of SPLIT.LANG with tokens (LANG: --lang, else the model's)
//   vqa      questions of the split
//   caption  scenes of the split (--limit counts scenes; each is decoded once, its references scored)
#include <cstdint>
#include <string>
#include <vector>

namespace lava {

// ARGS: a lava eval command line without the program name (ARGS[0] "eval", --task T among them), as
// sweep/run_evals.hpp writes it; relative paths are read from the current directory. UsageError or InputError as
// lava eval would give for the same options and files; InputError for a task without a count.
int64_t eval_examples(const std::vector<std::string>& args);

}  // namespace lava
