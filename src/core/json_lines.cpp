#include "core/json_lines.hpp"

#include "core/atomic_file.hpp"
#include "core/check.hpp"

namespace lava {

std::vector<JsonValue> read_json_lines(const std::string& path) {
  const std::string text = read_file(path);
  std::vector<JsonValue> out;
  size_t start = 0;
  for (long line = 1; start < text.size(); ++line) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string_view one(text.data() + start, end - start);
    start = end + 1;
    if (one.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    JsonValue j;
    try {
      j = parse_json(one, path);
    } catch (const InputError& e) {  // parse_json counts lines within the one line: put the file's line in
      const std::string msg = e.what(), prefix = path + ":1: ";
      throw input_error(path, line, msg.starts_with(prefix) ? msg.substr(prefix.size()) : msg);
    }
    if (!j.is_object()) throw input_error(path, line, "expected one JSON object per line");
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace lava
