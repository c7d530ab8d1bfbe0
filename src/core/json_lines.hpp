#pragma once
// JSON lines: one JSON object per line, as lava's --format json prints them and as training logs collect them over
// the sessions of a run (lava report's metrics.jsonl, the experiment scripts' *.train.jsonl, lava plot's inputs).
#include <string>
#include <vector>

#include "core/json.hpp"

namespace lava {

// The objects of a JSON-lines file, in order; blank lines are skipped. A line that is not one JSON object throws
// input_error(path, line, what), with the file's own line number.
std::vector<JsonValue> read_json_lines(const std::string& path);

}  // namespace lava
