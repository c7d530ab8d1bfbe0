#pragma once
// Whole-file I/O with InputError messages that name the path.
// write_file_atomic writes `path + ".tmp.<pid>"`, flushes and fsyncs it, then renames it over `path`:
// readers see the old file or the new one, never half of one, and a failed write leaves the old file
// untouched and no temp file behind.
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>

namespace lava {

void write_file_atomic(const std::string& path, std::string_view bytes);
// `write` streams the content into the temp file. If it throws, the temp file is removed and the
// exception propagates unchanged; stdio errors on the stream are reported as InputError.
void write_file_atomic(const std::string& path, const std::function<void(std::FILE*)>& write);

// The whole file as bytes. Throws InputError "PATH: cannot open: <strerror>" (or "cannot read").
std::string read_file(const std::string& path);

}  // namespace lava
