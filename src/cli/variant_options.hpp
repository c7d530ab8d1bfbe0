#pragma once
// The options of the attention variants' objectives and hyperparameters, shared by `lava train --task nmt` and
// `lava train --task vqa` (attention/variant.hpp, attention/variant_params.hpp, ObjectiveOptions).
#include "attention/objective.hpp"
#include "cli/command_line.hpp"

namespace lava {

void add_variant_options(po::options_description& options);
// Reads them into the model's VariantConfig and the training objective's options (UsageError on a bad value).
void read_variant_options(const CommandLine& cl, VariantConfig& variant, ObjectiveOptions& objective);

}  // namespace lava
