#pragma once
// Base64 (RFC 4648, standard alphabet, '=' padding): binary data inside text formats that hold only UTF-8, such as
// the string metadata of a model file (a subword model's serialized bytes).
#include <optional>
#include <string>
#include <string_view>

namespace lava {

std::string base64_encode(std::string_view bytes);
// The bytes, or nothing when `text` is not canonical base64 (a length that is not a multiple of 4, a character
// outside the alphabet, padding anywhere but the end, or non-zero bits in the padding).
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace lava
