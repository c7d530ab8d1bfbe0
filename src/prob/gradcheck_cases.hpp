#pragma once
// The whole gradient-check catalogue: every op of autodiff/ops.hpp (op_grad_cases) and the distribution ops of
// src/prob, which sit a layer above autodiff and so add their cases here.
#include <vector>

#include "autodiff/gradcheck.hpp"

namespace lava {

std::vector<GradCase> all_grad_cases();

}  // namespace lava
