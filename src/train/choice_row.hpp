#pragma once
// Options that take one word of an enum's EnumName table (core/enum_names.hpp), as rows beside the numeric option
// rows (train/option_row.hpp): the command-line name, the field, its words and its help. The command line
// (cli/option_table.hpp: add_choice_table, read_choice_table) and the run's identity (choice_identity) both derive
// from the rows, so a choice option is named once. --attn is such a row too (attn_choice_row): its words are the
// attention variants the task runs.
#include <fmt/format.h>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "attention/variant.hpp"
#include "core/enum_names.hpp"
#include "train/run_identity.hpp"

namespace lava {

template <class S>
struct ChoiceRow {
  const char* name;
  std::function<const char*(const S&)> get;       // the field's word
  std::function<bool(S&, std::string_view)> set;  // sets the field; false for a word outside the table
  std::string choices;                            // "a|b|c"
  const char* help;                               // "{}" stands for the choices
};

template <class S>
using ChoiceTable = std::vector<ChoiceRow<S>>;

template <class S, class E, size_t N>
ChoiceRow<S> choice_row(const char* name, E S::*field, const EnumName<E> (&names)[N], const char* help) {
  return {name, [field, &names](const S& s) { return enum_name(names, s.*field); },
          [field, &names](S& s, std::string_view word) {
            const std::optional<E> e = enum_from_name(names, word);
            if (e) s.*field = *e;
            return e.has_value();
          },
          enum_choices(names), help};
}

// --attn: the registry's variants that run `task` (attention/variant.hpp); a word that is not one of them is the
// registry's UsageError, which says whether the variant is unknown or runs other tasks.
template <class S>
ChoiceRow<S> attn_choice_row(AttnVariant S::*field, const char* task) {
  return {"attn", [field](const S& s) { return variant_info(s.*field).name; },
          [field, task](S& s, std::string_view word) {
            s.*field = parse_attn_variant(word, task);
            return true;
          },
          attn_variant_list(task), "{}"};
}

// ("--name", word) of every row, in table order.
template <class S>
RunIdentity choice_identity(const ChoiceTable<S>& table, const S& values) {
  RunIdentity id;
  for (const ChoiceRow<S>& row : table) id.emplace_back(std::string("--") + row.name, row.get(values));
  return id;
}

}  // namespace lava
