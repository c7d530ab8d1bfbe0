#pragma once
// Option tables (train/option_row.hpp) on a command line: each row becomes an option with the field's value in a
// default-made S as its default (each task's struct holds its own), and is read back checked against its range.
#include <cstdint>
#include <functional>
#include <string>

#include <fmt/format.h>

#include "cli/command_line.hpp"
#include "core/check.hpp"
#include "train/choice_row.hpp"
#include "train/option_row.hpp"

namespace lava {

// help_of, if given, makes each row's --help text from its name and help.
template <class S>
void add_option_table(po::options_description& options, const OptionTable<S>& table, const S& defaults,
                      const std::function<std::string(const char* name, const char* help)>& help_of = {}) {
  for (const OptionRow<S>& row : table) {
    const std::string value = std::visit([&](auto field) { return fmt::format("{}", defaults.*field); }, row.field);
    const std::string help = help_of ? help_of(row.name, row.help) : std::string(row.help);
    options.add_options()(row.name, po::value<std::string>()->default_value(value), help.c_str());
  }
}

template <class S>
void read_option_table(const CommandLine& cl, const OptionTable<S>& table, S& out) {
  for (const OptionRow<S>& row : table) {
    std::visit(
        [&](auto field) {
          using T = std::remove_reference_t<decltype(out.*field)>;
          if constexpr (std::is_same_v<T, std::string>)
            out.*field = cl.get_string(row.name);
          else if constexpr (std::is_integral_v<T>)
            out.*field = T(cl.get_int(row.name, int64_t(row.lo), row.hi >= 9.2e18 ? INT64_MAX : int64_t(row.hi)));
          else
            out.*field = T(cl.get_double(row.name, row.lo, row.hi));
        },
        row.field);
  }
}

template <class S>
void add_choice_table(po::options_description& options, const ChoiceTable<S>& table, const S& defaults) {
  for (const ChoiceRow<S>& row : table)
    options.add_options()(row.name, po::value<std::string>()->default_value(row.get(defaults)),
                          fmt::format(fmt::runtime(row.help), row.choices).c_str());
}

template <class S>
void read_choice_table(const CommandLine& cl, const ChoiceTable<S>& table, S& out) {
  for (const ChoiceRow<S>& row : table) {
    const std::string word = cl.get_string(row.name);
    bool known = false;
    try {
      known = row.set(out, word);
    } catch (const UsageError& e) {  // a row that says itself why the word is refused
      cl.fail(e.what());
    }
    if (!known) cl.fail(fmt::format("--{}: '{}' is not one of {}", row.name, word, row.choices));
  }
}

}  // namespace lava
