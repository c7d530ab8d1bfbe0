#pragma once
// Whole-file I/O with InputError messages that name the path. Every file LAVA writes goes through
// write_file_atomic, which decides where the bytes go:
//   "-"                          standard output (flushed and checked);
//   /dev/stdout, /dev/fd/N,      the process's own descriptor N, written in place (sharing its offset), so that
//   /proc/self/fd/N               `--output /dev/stdout` never replaces anything;
//   a symlink                    followed to its final target, which is then written as below (the link stays);
//   a FIFO, a character device,  written straight into (opened O_WRONLY, no rename): these are not files to
//   anything not a regular file  replace;
//   a regular file, or nothing   `target + ".tmp.<pid>"` is written, flushed, fsynced, given the old file's mode,
//                                and renamed over the target; the directory is fsynced after. Readers see the old
//                                file or the new one, never half of one; a failed write leaves the old file
//                                untouched and no temp file behind. Temp files that a killed process left for the
//                                same target (its pid no longer alive) are removed first.
// A directory as the target is an error.
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>

namespace lava {

void write_file_atomic(const std::string& path, std::string_view bytes);
// `write` streams the content into the temp file. If it throws, the temp file is removed and the
// exception propagates unchanged; stdio errors on the stream are reported as InputError.
void write_file_atomic(const std::string& path, const std::function<void(std::FILE*)>& write);

// The path a write to `path` renames onto: symlinks followed to their last target (which need not exist yet);
// "" for "-" and descriptor paths. Exposed for tests and for checks made before a long run.
std::string resolve_output_target(const std::string& path);

// The whole file as bytes, with no bound on its size: for files LAVA wrote itself. A user's input goes through
// core/read_file.hpp's read_file(path, limit). Throws InputError "PATH: cannot open: <strerror>" (or "cannot read",
// "is a directory, not a file", "is a device, not a file").
std::string read_file(const std::string& path);

// Flushes stdout and throws InputError "standard output: cannot write..." if this or any earlier write to it failed
// (main() calls it after every command, so a full disk or /dev/full is exit 1, never a silent success).
void check_stdout();

}  // namespace lava
