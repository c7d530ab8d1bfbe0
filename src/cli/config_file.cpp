#include "cli/config_file.hpp"

#include <sstream>

#include "core/atomic_file.hpp"
#include "core/read_file.hpp"

namespace lava {

void store_config_text(const std::string& text, const boost::program_options::options_description& options,
                       boost::program_options::variables_map& vm) {
  std::istringstream in(text);
  boost::program_options::store(boost::program_options::parse_config_file(in, options), vm);
}

void store_config_file(const std::string& path, const boost::program_options::options_description& options,
                       boost::program_options::variables_map& vm) {
  store_config_text(read_file(path, kSettingsLimit), options, vm);
}

}  // namespace lava
