#pragma once
// Words for the values of an enum, for options and model metadata: parsed once where they enter (the command line
// or a file), compared as enums everywhere else.
//
//   enum class Score { mlp, general, dot };
//   inline constexpr EnumName<Score> kScoreNames[] = {{Score::mlp, "mlp"}, {Score::general, "general"}, ...};
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace lava {

template <class E>
struct EnumName {
  E value;
  const char* name;
};

template <class E, size_t N>
std::optional<E> enum_from_name(const EnumName<E> (&names)[N], std::string_view text) {
  for (const EnumName<E>& n : names)
    if (text == n.name) return n.value;
  return std::nullopt;
}

template <class E, size_t N>
const char* enum_name(const EnumName<E> (&names)[N], E value) {
  for (const EnumName<E>& n : names)
    if (n.value == value) return n.name;
  return "?";
}

// "a|b|c"
template <class E, size_t N>
std::string enum_choices(const EnumName<E> (&names)[N]) {
  std::string out;
  for (const EnumName<E>& n : names) {
    if (!out.empty()) out += '|';
    out += n.name;
  }
  return out;
}

}  // namespace lava
