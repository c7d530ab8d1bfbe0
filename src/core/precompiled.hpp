// The standard and fmt headers most translation units include, precompiled once per set of compiler flags and
// force-included into every file by the Makefile (-include; see "Precompiled headers" there). Parsing them was about
// a third of the compile time of a typical file at -O0 (8 files: 45.6 s → 31.5 s), and CI compiles everything twice.
// Files still include what they use themselves: this list changes build time only, never meaning.
#ifndef LAVA_CORE_PRECOMPILED_HPP
#define LAVA_CORE_PRECOMPILED_HPP
// (a guard, not #pragma once: GCC warns about #pragma once in the header it precompiles)

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#endif  // LAVA_CORE_PRECOMPILED_HPP
