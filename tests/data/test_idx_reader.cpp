// IDX files (data/idx_reader.hpp), the format of Fashion-MNIST: gzipped and plain files round-trip; a truncated,
// corrupt or mismatched file is one InputError naming it; and a header's declared size is checked against the bytes
// the file holds before anything is allocated for it.
#include <doctest/doctest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/read_file.hpp"
#include "data/idx_reader.hpp"
#include "support/check_input_error.hpp"
#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"

using namespace lava;

TEST_CASE("idx: gzipped images and labels round-trip") {
  TempDir dir("idx");
  std::vector<uint8_t> pixels(3 * 4 * 5), labels = {7, 0, 9};
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = uint8_t(i * 13);
  write_idx_gz(dir.file("img.gz"), {3, 4, 5}, pixels);
  write_idx_gz(dir.file("lab.gz"), {3}, labels);
  IdxImages im = read_idx_images(dir.file("img.gz"));
  CHECK(im.count == 3);
  CHECK(im.rows == 4);
  CHECK(im.cols == 5);
  CHECK(im.pixels == pixels);
  CHECK(im.image(2)[0] == pixels[40]);
  CHECK(read_idx_labels(dir.file("lab.gz")) == labels);
  // zlib reads uncompressed IDX files too
  std::string raw = {0, 0, 8, 1, 0, 0, 0, 2, 4, 5};
  write_file_atomic(dir.file("plain"), raw);
  CHECK(read_idx_labels(dir.file("plain")) == std::vector<uint8_t>{4, 5});
}

TEST_CASE("idx: truncated, corrupt and mismatched files are InputErrors naming the file") {
  TempDir dir("idxbad");
  std::vector<uint8_t> pixels(50 * 28 * 28);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = uint8_t((i * 7919) >> 3);  // poorly compressible
  const std::string good = dir.file("good.gz");
  write_idx_gz(good, {50, 28, 28}, pixels);
  std::string gz = read_file(good);
  const std::string bad = dir.file("bad.gz");
  auto put = [&](const std::string& bytes) { write_file_atomic(bad, bytes); };

  for (size_t keep : {gz.size() - 1, gz.size() - 9, gz.size() / 2, size_t(30), size_t(12), size_t(5), size_t(0)}) {
    put(gz.substr(0, keep));  // cut inside the trailer, the deflate stream and the gzip header
    CAPTURE(keep);
    check_input_error([&] { read_idx_images(bad); }, bad);
  }
  std::string flipped = gz;
  flipped[gz.size() / 2] = char(flipped[gz.size() / 2] ^ 0x5A);  // corrupt deflate data or its CRC
  put(flipped);
  check_input_error([&] { read_idx_images(bad); }, bad);

  std::string plain = {0, 0, 8, 1, 0, 0, 0, 10, 1, 2, 3};  // 10 labels declared, 3 present
  put(plain);
  check_input_error([&] { read_idx_labels(bad); }, bad, "truncated");
  put(std::string{0, 0, 8, 1, 0, 0, 0, 2, 1, 2, 3});  // one byte too many
  check_input_error([&] { read_idx_labels(bad); }, bad, "trailing");
  put(std::string{0, 0, 8, 1, 0, 0, 0, 0});  // zero items
  check_input_error([&] { read_idx_labels(bad); }, bad, "dimension");
  put(std::string{0, 0, 8, 3, 0x7f, 0, 0, 0, 0x7f, 0, 0, 0, 0x7f, 0, 0, 0});  // absurd size, no data
  check_input_error([&] { read_idx_images(bad); }, bad, "4 GiB");
  check_input_error([&] { read_idx_labels(good); }, good, "magic");  // images read as labels
  put(std::string{0, 0, 0x0D, 3, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0});  // float IDX
  check_input_error([&] { read_idx_images(bad); }, bad, "magic");
  check_input_error([&] { read_idx_images(dir.file("none.gz")); }, dir.file("none.gz"), "cannot open");
}

TEST_CASE("idx: a header declaring 1 GiB in a 9-byte file fails as truncated without allocating it") {
  TempDir dir("idx_big");
  const std::string path = dir.file("labels");
  write_text(path, std::string("\x00\x00\x08\x01\x40\x00\x00\x00\x07", 9));  // 2^30 labels, one byte of data
  // In a child process, so that its peak memory is its own.
  const pid_t child = ::fork();
  if (child == 0) {
    struct rusage before {}, after {};
    ::getrusage(RUSAGE_SELF, &before);
    int code = 3;
    try {
      (void)read_idx_labels(path);
    } catch (const InputError& e) {
      code = std::string(e.what()).find("truncated") != std::string::npos ? 0 : 4;
    } catch (...) {
      code = 5;
    }
    ::getrusage(RUSAGE_SELF, &after);
    if (code == 0 && after.ru_maxrss - before.ru_maxrss > 256 * 1024) code = 6;  // KiB: it allocated the 1 GiB
    ::_exit(code);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);  // 6: the declared size was allocated; 4/5: another error
}
