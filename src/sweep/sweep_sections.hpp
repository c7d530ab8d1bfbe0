#pragma once
// A sweep file read into its sections, before any scale is chosen (sweep_file.hpp has the syntax): the lines above
// the first section, then each [header] with its lines. What a key may be is checked here (grid. only above the
// sections or in a [scale] one, only. only in an [eval] one, ...), and so are duplicate keys within a section,
// repeated sections, names, grids and seeds; which options exist is checked by parse_sweep_file.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sweep/sweep_file.hpp"

namespace lava {

enum class SweepSectionKind { top, scale, row, eval };

struct SweepSection {
  SweepSectionKind kind = SweepSectionKind::top;
  long line = 0;                       // the header's line (0 for the top)
  std::string header;                  // "[scale medium, attn var-enum]" as the file wrote it, for messages
  std::string scale;                   // [scale S ...]: S
  std::string key, value;              // [KEY VALUE]: a grid key and one of its values
  std::string eval;                    // [eval NAME]: NAME
  std::vector<SweepOption> options;    // lava train options (lava eval's in an [eval] section), in file order
  std::vector<SweepGrid> grid;         // grid.K lines (top, scale) or only.K lines (eval)
  std::optional<std::vector<int64_t>> seeds;
  long seeds_line = 0;
  std::string out, task, default_scale;  // out (top, scale); task and scale (top only)
  long out_line = 0, task_line = 0, default_scale_line = 0;
};

// The sections in file order; the first is the top (kind top, possibly empty). Throws InputError "FILE:LINE: what".
std::vector<SweepSection> read_sweep_sections(const std::string& path, const std::string& text);

// Splits "a, b ,c" at commas and trims each part (an empty part stays, as "").
std::vector<std::string> split_sweep_list(const std::string& value);

}  // namespace lava
