#pragma once
// The options of the attention variants' objectives and hyperparameters, shared by `lava train --task nmt`,
// `--task vqa` and `--task caption` (attention/variant.hpp, attention/variant_params.hpp, ObjectiveOptions). Each
// variant reads some of them (AttnVariantInfo::options, declared in the variant's own file); a command given one
// that its variant does not read refuses it, since the option would have no effect.
#include <string>
#include <string_view>
#include <vector>

#include "attention/objective.hpp"
#include "cli/command_line.hpp"

namespace lava {

// The options, in a group of their own whose --help names, after each, the variants of `task` that read it.
void add_variant_options(po::options_description& options, std::string_view task);
// Reads them into the model's VariantConfig and the training objective's options: a UsageError on a bad value, or
// on an option given (on the command line or in --config) that `attn` does not read.
void read_variant_options(const CommandLine& cl, AttnVariant attn, VariantConfig& variant,
                          ObjectiveOptions& objective);

// Every variant option's name (without "--"), in --help's order.
std::vector<std::string> variant_option_names();

// A UsageError "--NAME is not read by VARIANT_WORDS V (it reads: --A, --B)" for the first of `names` given on the
// command line or in --config (not left at its default) that variant v does not read (reads_option).
void refuse_unread_options(const CommandLine& cl, AttnVariant v, const std::vector<std::string>& names,
                           const std::string& variant_words = "--attn");

}  // namespace lava
