#pragma once
// The paper's rows for `lava report --tables paper`, from the attention variants that declare one
// (AttnVariantInfo::paper): the report layer reads no variant, so the command hands it this list.
#include "report/paper_figures.hpp"

namespace lava {

PaperRows paper_rows_of_variants();

}  // namespace lava
