#pragma once
// Finite-difference gradient checks in double precision (the ggml test-backend-ops / Stan finite_diff pattern).
//
// A case builds one op from leaf inputs. Its outputs y_k are contracted with fixed random weights w_k,
// L = Σ_k Σ_i w_k[i]·y_k[i], and the backward pass is seeded with dL/dy_k = w_k directly, so the check exercises
// only the op under test. The numeric gradient is the 4-point central stencil
//   dL/dx ≈ (8(L(x+h) − L(x−h)) − (L(x+2h) − L(x−2h))) / 12h,   truncation O(h⁴),
// and an element's relative error is |analytic − numeric| / max(|analytic|, |numeric|, 1e-3).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "autodiff/tape.hpp"

namespace lava {

struct GradCase {
  std::string op;
  std::string shape;           // human description, e.g. "(3,4) + (4)"
  std::vector<Shape> inputs;   // one leaf per shape; all need gradients
  double lo = -1.5, hi = 1.5;  // leaves drawn uniformly from [lo, hi]
  double min_abs = 0;          // and pushed away from 0 to at least this magnitude (kinks, poles)
  std::function<std::vector<Var<double>>(const std::vector<Var<double>>&)> build;
};

struct GradCheckOptions {
  double h = 1e-4;
  double rel_tol = 1e-6;
  int64_t max_elems = 256;  // per input; larger inputs are checked on a seeded sample of coordinates
  uint64_t seed = 1;
};

struct GradCheckResult {
  std::string op, shape;
  double max_abs_err = 0, max_rel_err = 0;
  int64_t checked = 0;
  bool pass = false;
};

GradCheckResult gradcheck(const GradCase& c, const GradCheckOptions& opt);

// Every op of autodiff/ops.hpp at several shapes (gradcheck_cases.cpp); prob/gradcheck_cases.hpp adds the
// distributions of src/prob to make the whole catalogue.
std::vector<GradCase> op_grad_cases();

}  // namespace lava
