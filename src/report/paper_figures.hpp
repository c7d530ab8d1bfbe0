#pragma once
// The paper's rows (Deng et al. 2018, Tables 1, 2 and 3; src/method.md §6) that `lava report --tables paper` prints
// beside LAVA's figures: one per --attn variant that reproduces a row of the paper. The variants declare them
// (core/paper_row.hpp); the command that prints the tables hands them over as this list, so that the report knows
// no variant by name.
#include <string>
#include <vector>

#include "core/paper_row.hpp"

namespace lava {

struct PaperVariantRow {
  std::string attn;  // the --attn variant that implements the row
  PaperRow paper;
};

class PaperRows {
 public:
  PaperRows() = default;  // no paper rows: every variant is a row by its name
  // Rows with rank 0 are left out. std::logic_error when two rows name one variant or share a rank or an
  // inference rank.
  explicit PaperRows(std::vector<PaperVariantRow> rows);
  const std::vector<PaperVariantRow>& all() const { return rows_; }  // in the paper's order (rank)
  // The row of `attn`, or nullptr when the paper has none.
  const PaperRow* of(const std::string& attn) const;
  // Table 3's inference alternatives, in its order (inference rank).
  std::vector<const PaperVariantRow*> inference() const;

 private:
  std::vector<PaperVariantRow> rows_;
};

}  // namespace lava
