#include "cli/paper_rows.hpp"

#include "attention/variant.hpp"

namespace lava {

PaperRows paper_rows_of_variants() {
  std::vector<PaperVariantRow> rows;
  for (AttnVariant v : attn_registry().all())
    if (variant_info(v).paper.rank > 0) rows.push_back({variant_info(v).name, variant_info(v).paper});
  return PaperRows(std::move(rows));
}

}  // namespace lava
