#include "report/paper_figures.hpp"

#include <algorithm>
#include <stdexcept>

namespace lava {

PaperRows::PaperRows(std::vector<PaperVariantRow> rows) {
  for (PaperVariantRow& r : rows)
    if (r.paper.rank > 0) rows_.push_back(std::move(r));
  std::stable_sort(rows_.begin(), rows_.end(),
                   [](const PaperVariantRow& a, const PaperVariantRow& b) { return a.paper.rank < b.paper.rank; });
  for (size_t i = 0; i < rows_.size(); ++i)
    for (size_t j = 0; j < i; ++j) {
      const PaperRow &a = rows_[j].paper, &b = rows_[i].paper;
      if (rows_[i].attn == rows_[j].attn)
        throw std::logic_error("paper rows: two rows for the variant " + rows_[i].attn);
      if (a.rank == b.rank || (a.inference_rank > 0 && a.inference_rank == b.inference_rank))
        throw std::logic_error("paper rows: " + rows_[j].attn + " and " + rows_[i].attn + " share a place in a table");
    }
}

const PaperRow* PaperRows::of(const std::string& attn) const {
  for (const PaperVariantRow& r : rows_)
    if (r.attn == attn) return &r.paper;
  return nullptr;
}

std::vector<const PaperVariantRow*> PaperRows::inference() const {
  std::vector<const PaperVariantRow*> out;
  for (const PaperVariantRow& r : rows_)
    if (r.paper.inference_rank > 0) out.push_back(&r);
  std::stable_sort(out.begin(), out.end(), [](const PaperVariantRow* a, const PaperVariantRow* b) {
    return a->paper.inference_rank < b->paper.inference_rank;
  });
  return out;
}

}  // namespace lava
