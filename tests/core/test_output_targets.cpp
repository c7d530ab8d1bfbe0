// Where written bytes go (core/atomic_file.hpp) and that a failed write is never a silent success: a symlink is
// followed and its target replaced, a FIFO or device is written into, "-" and /dev/stdout are standard output,
// a dead process's temp file is cleared, and every command whose standard output cannot be written (/dev/full)
// says so in one line and exits 1.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "core/atomic_file.hpp"
#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"
#include "support/tiny_nmt.hpp"

using namespace lava;
namespace fs = std::filesystem;

namespace {

bool is_symlink(const std::string& p) { return fs::is_symlink(fs::symlink_status(p)); }

// A pid that is certainly not alive: a child that has exited and been reaped.
long dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return long(child);
}

// Runs lava with stdout sent to `stdout_target` (e.g. /dev/full); stderr captured.
CliResult run_lava_stdout_to(const std::string& args, const std::string& stdout_target) {
  const std::string err = temp_path("stderr_full");
  const std::string cmd = lava_bin() + " " + args + " >" + stdout_target + " 2>" + err + " </dev/null";
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = slurp(err);
  std::remove(err.c_str());
  return r;
}

}  // namespace

TEST_CASE("output targets: a symlink is followed and its target replaced; the link stays a link") {
  TempDir dir("out_link");
  fs::create_directories(dir.dir / "real");
  const std::string target = dir.file("real/t.txt"), link = dir.file("link.txt");
  write_text(target, "old\n");
  fs::create_symlink("real/t.txt", link);  // relative, resolved against the link's directory
  write_file_atomic(link, "new\n");
  CHECK(is_symlink(link));
  CHECK(slurp(target) == "new\n");
  // A chain of two links, and a dangling link whose target does not exist yet.
  const std::string link2 = dir.file("link2.txt");
  fs::create_symlink(link, link2);
  write_file_atomic(link2, "newer\n");
  CHECK(is_symlink(link2));
  CHECK(is_symlink(link));
  CHECK(slurp(target) == "newer\n");
  const std::string dangling = dir.file("dangling.txt");
  fs::create_symlink("real/fresh.txt", dangling);
  write_file_atomic(dangling, "fresh\n");
  CHECK(is_symlink(dangling));
  CHECK(slurp(dir.file("real/fresh.txt")) == "fresh\n");
  CHECK(resolve_output_target(link2) == dir.file("real/t.txt"));
  // No temp file is left beside the link or the target.
  for (const auto& e : fs::recursive_directory_iterator(dir.dir))
    CHECK_MESSAGE(e.path().string().find(".tmp.") == std::string::npos, e.path().string());
}

TEST_CASE("output targets: a FIFO and a character device are written into, not replaced") {
  TempDir dir("out_fifo");
  const std::string fifo = dir.file("pipe");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // The reader opens first (non-blocking), so the writer's open does not wait and the test cannot hang.
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  REQUIRE(reader >= 0);
  write_file_atomic(fifo, "through the pipe\n");
  char buf[64] = {};
  const ssize_t n = ::read(reader, buf, sizeof buf);
  ::close(reader);
  CHECK(std::string(buf, size_t(std::max<ssize_t>(n, 0))) == "through the pipe\n");
  struct stat st {};
  REQUIRE(::stat(fifo.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
  CHECK(dir.entries() == 1);

  // A private copy of /dev/null (needs root and a filesystem that allows device nodes; skipped otherwise).
  const std::string null = dir.file("null");
  if (::mknod(null.c_str(), S_IFCHR | 0600, makedev(1, 3)) == 0 && ::access(null.c_str(), W_OK) == 0) {
    const int probe = ::open(null.c_str(), O_WRONLY);
    if (probe >= 0) {
      ::close(probe);
      write_file_atomic(null, "discarded\n");
      REQUIRE(::stat(null.c_str(), &st) == 0);
      CHECK(S_ISCHR(st.st_mode));
    } else {
      MESSAGE("device nodes cannot be opened here; the character-device check is skipped");
    }
  }
  // A directory is an error, never replaced.
  fs::create_directories(dir.dir / "sub");
  CHECK_THROWS_AS(write_file_atomic(dir.file("sub"), "x"), InputError);
  CHECK(fs::is_directory(dir.dir / "sub"));
}

TEST_CASE("output targets: a dead process's temp file for the same path is cleared at the next write") {
  TempDir dir("out_stale");
  const std::string out = dir.file("m.st");
  const std::string stale = fmt::format("{}.tmp.{}", out, dead_pid());
  const std::string live = fmt::format("{}.tmp.{}", out, long(::getppid()));  // a live process's write in flight
  const std::string other = fmt::format("{}.tmp.{}", dir.file("other.st"), dead_pid());  // another target's
  const std::string not_ours = out + ".tmp.12x";                                         // not a pid
  for (const std::string& p : {stale, live, other, not_ours}) write_text(p, "half a file");
  write_file_atomic(out, "whole\n");
  CHECK(slurp(out) == "whole\n");
  CHECK_FALSE(fs::exists(stale));
  CHECK(fs::exists(live));
  CHECK(fs::exists(other));
  CHECK(fs::exists(not_ours));
}

TEST_CASE("output targets: the replaced file keeps its permissions") {
  TempDir dir("out_mode");
  const std::string out = dir.file("f.txt");
  write_text(out, "old");
  fs::permissions(out, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  write_file_atomic(out, "new");
  CHECK(fs::status(out).permissions() == (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read));
}

TEST_CASE("output targets cli: translate --output into a symlink, '-' and a FIFO") {
  TinyNmt f;
  const std::string input = f.corpus_dir + "/test.de";
  const std::string base = "translate -q --model " + f.model_path + " --input " + input + " --beam 2";
  const CliResult plain = run_lava(base);
  REQUIRE(plain.code == 0);
  REQUIRE_FALSE(plain.out.empty());

  const CliResult dash = run_lava(base + " --output -");
  CHECK(dash.code == 0);
  CHECK(dash.out == plain.out);

  const std::string target = f.tmp.file("t.txt"), link = f.tmp.file("link.txt");
  write_text(target, "old\n");
  fs::create_symlink(target, link);
  const CliResult via_link = run_lava(base + " --output " + link);
  CHECK(via_link.code == 0);
  CHECK(is_symlink(link));
  CHECK(slurp(target) == plain.out);

  const std::string fifo = f.tmp.file("pipe");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  REQUIRE(reader >= 0);
  const CliResult via_fifo = run_lava(base + " --output " + fifo);
  std::string got(plain.out.size() + 16, '\0');
  const ssize_t n = ::read(reader, got.data(), got.size());
  ::close(reader);
  CHECK(via_fifo.code == 0);
  CHECK(got.substr(0, size_t(std::max<ssize_t>(n, 0))) == plain.out);
}

// Kept apart: run against a build without the fix, as root, it would replace the system's /dev/stdout.
TEST_CASE("output targets cli: --output /dev/stdout and /dev/fd/1 write into standard output in place") {
  TinyNmt f;
  const std::string base = "translate -q --model " + f.model_path + " --input " + f.corpus_dir + "/test.de";
  const CliResult plain = run_lava(base);
  REQUIRE(plain.code == 0);
  for (const char* target : {"/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"}) {
    CAPTURE(target);
    const CliResult r = run_lava(base + " --output " + target);
    CHECK(r.code == 0);
    CHECK(r.out == plain.out);
  }
  CHECK(is_symlink("/dev/stdout"));
}

TEST_CASE("output targets cli: a full standard output is one line and exit 1 for every command that prints") {
  TinyNmt f;
  const std::string model = " --model " + f.model_path + " --data " + f.corpus_dir;
  const std::string synth_dir = f.tmp.file("synth2");
  for (const std::string& args :
       {std::string("toy"), std::string("toy --format json"), std::string("gradcheck --op add"),
        "eval -q --split test" + model, "eval -q --format json --split test" + model,
        "translate -q --model " + f.model_path + " --input " + f.corpus_dir + "/test.de",
        "align -q --split test" + model, "data synth --train 20 --valid 5 --test 5 --out " + synth_dir,
        std::string("--help"), std::string("toy --help")}) {
    CAPTURE(args);
    const CliResult r = run_lava_stdout_to(args, "/dev/full");
    CHECK(r.code == 1);
    CHECK(r.err_lines() >= 1);
    CHECK(r.err.find("standard output: cannot write") != std::string::npos);
  }
  // The same commands into a file that can be written still succeed.
  CHECK(run_lava_stdout_to("eval -q --split test" + model, "/dev/null").code == 0);
}
