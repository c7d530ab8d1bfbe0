#include "core/json_lines.hpp"

#include "core/check.hpp"

namespace lava {

void JsonLines::advance() {
  while (lines_.next(line_)) {
    if (line_.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string& path = lines_.path();
    const long line = lines_.line_number();
    try {
      current_ = parse_json(line_, path);
    } catch (const InputError& e) {  // parse_json counts lines within the one line: put the file's line in
      const std::string msg = e.what(), prefix = path + ":1: ";
      throw input_error(path, line, msg.starts_with(prefix) ? msg.substr(prefix.size()) : msg);
    }
    if (!current_.is_object()) throw input_error(path, line, "expected one JSON object per line");
    return;
  }
  done_ = true;
}

}  // namespace lava
