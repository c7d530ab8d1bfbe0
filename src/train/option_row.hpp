#pragma once
// Options as rows, one per option of an options struct S: its command-line name (its key in the run's identity is
// "--name" too), the field it sets, its accepted range, its help, and whether a resumed run must repeat it. The
// default is the field's value in a default-made S, so it is written once, in the struct. The command line
// (cli/option_table.hpp), the run's identity (option_identity) and a model file's metadata (option_metadata, read
// back by ModelMetadata::get_options) all derive from the rows, so an option has one name everywhere.
#include <fmt/format.h>

#include <map>
#include <string>
#include <variant>
#include <vector>

#include "train/run_identity.hpp"

namespace lava {

template <class S>
struct OptionRow {
  const char* name;
  std::variant<int S::*, int64_t S::*, double S::*, float S::*, std::string S::*> field;
  double lo, hi;  // the accepted range, inclusive (a text option's are not read)
  const char* help;
  bool identity = true;  // a resumed run must repeat it (false: it may change between sessions)
};

template <class S>
using OptionTable = std::vector<OptionRow<S>>;

// ("--name", exact value) of every row that belongs to the run's identity, in table order.
template <class S>
RunIdentity option_identity(const OptionTable<S>& table, const S& values) {
  RunIdentity id;
  for (const OptionRow<S>& row : table)
    if (row.identity)
      std::visit([&](auto field) { id.emplace_back(std::string("--") + row.name, exact(values.*field)); }, row.field);
  return id;
}

// Every row's value under its command-line name, as a model file's metadata keeps it ("emb-size" -> "64").
template <class S>
void option_metadata(const OptionTable<S>& table, const S& values, std::map<std::string, std::string>& meta) {
  for (const OptionRow<S>& row : table)
    std::visit([&](auto field) { meta[row.name] = fmt::format("{}", values.*field); }, row.field);
}

}  // namespace lava
