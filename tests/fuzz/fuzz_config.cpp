// libFuzzer harness: the --config reader (cli/config_file.hpp) with options of the kinds the commands declare
// (strings with and without defaults, a switch). Boost's own errors for a bad file are the expected outcome too.
#include <boost/program_options.hpp>

#include "cli/config_file.hpp"
#include "fuzz_input.hpp"

namespace po = boost::program_options;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  po::options_description options;
  options.add_options()                                              //
      ("seed", po::value<std::string>()->default_value("1"), "")  //
      ("lr", po::value<std::string>(), "")                         //
      ("attn", po::value<std::string>()->default_value("soft"), "")  //
      ("quiet,q", po::bool_switch(), "");
  po::variables_map vm;
  try {
    lava_fuzz::expect_clean([&] { lava::store_config_text(lava_fuzz::bytes(data, size), "config", options, vm); });
    po::notify(vm);
  } catch (const po::error&) {
  }
  return 0;
}
