#pragma once
// The --config file: ini style (key = value, # comments, [section] prefixes), read by Boost.Program_options.
// Read with read_file, so a directory, a missing file or a read error is one InputError naming the path (an
// ifstream opens a directory and reads nothing, which ran a command as if no option had been set).
#include <boost/program_options.hpp>
#include <string>
#include <string_view>

namespace lava {

// Stores the file's options into vm; values already there (from the command line) are kept. Syntax errors and
// unknown options throw boost::program_options::error, which CommandLine turns into a usage error.
void store_config_file(const std::string& path, const boost::program_options::options_description& options,
                       boost::program_options::variables_map& vm);

// The same from text already read (the fuzz harness's entry point); `source` names it in errors. A leading UTF-8
// byte-order mark is skipped; a NUL byte is an InputError naming its line.
void store_config_text(std::string_view text, const std::string& source,
                       const boost::program_options::options_description& options,
                       boost::program_options::variables_map& vm);

}  // namespace lava
