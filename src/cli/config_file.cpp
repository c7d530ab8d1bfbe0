#include "cli/config_file.hpp"

#include <algorithm>
#include <sstream>

#include "core/check.hpp"
#include "core/read_file.hpp"

namespace lava {

void store_config_text(std::string_view text, const std::string& source,
                       const boost::program_options::options_description& options,
                       boost::program_options::variables_map& vm) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a byte-order mark, as some editors write
  // A NUL would end every message that quotes the value at the NUL ("lava train: syn"): no text file holds one.
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos)
    throw input_error(source, long(std::count(text.begin(), text.begin() + long(nul), '\n') + 1),
                      "NUL byte (a binary file, not an ini-style config file)");
  std::istringstream in{std::string(text)};
  boost::program_options::store(boost::program_options::parse_config_file(in, options), vm);
}

void store_config_file(const std::string& path, const boost::program_options::options_description& options,
                       boost::program_options::variables_map& vm) {
  store_config_text(read_file(path, kSettingsLimit), path, options, vm);
}

}  // namespace lava
