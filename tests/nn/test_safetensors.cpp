// safetensors save/load (bit-exact round trip, every corruption rejected naming the file) and the atomic file writer.
#include <doctest/doctest.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/check.hpp"
#include "nn/safetensors.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;

namespace {


// A safetensors file from a raw header and data, padded like the real writer.
std::string make_file(std::string header, const std::string& data, bool pad = true) {
  if (pad) header.resize((header.size() + 7) / 8 * 8, ' ');
  uint64_t n = header.size();
  std::string out(8, '\0');
  std::memcpy(out.data(), &n, 8);
  return out + header + data;
}

// The InputError message loading `bytes` gives, or "" if it loaded.
std::string load_error(const TempDir& tmp, const std::string& bytes, const std::string& name = "bad.safetensors") {
  const std::string path = tmp.file(name);
  lava::write_file_atomic(path, bytes);
  try {
    lava::load_safetensors(path);
  } catch (const lava::InputError& e) {
    return e.what();
  }
  return "";
}

std::vector<lava::NamedTensor> sample_tensors() {
  std::vector<lava::NamedTensor> ts;
  ts.push_back({"encoder.weight", {2, 3}, {1.f, -2.5f, 0.1f, -0.0f, 1e-45f, std::numeric_limits<float>::max()}});
  ts.push_back({"scalar", {}, {std::numeric_limits<float>::infinity()}});
  ts.push_back({"empty", {4, 0}, {}});
  ts.push_back({"nan \"bits\"", {3}, {std::bit_cast<float>(0x7fc00001u), std::bit_cast<float>(0xffa00000u), 3.f}});
  return ts;
}

}  // namespace

TEST_CASE("safetensors: save then load is bit-exact, with metadata and an 8-byte aligned header") {
  TempDir tmp;
  const std::string path = tmp.file("m.safetensors");
  const auto ts = sample_tensors();
  lava::save_safetensors(path, ts, {{"format", "pt"}, {"lava", "seed=1"}});
  CHECK(tmp.names() == std::vector<std::string>{"m.safetensors"});

  const std::string bytes = lava::read_file(path);
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  CHECK(n % 8 == 0);
  CHECK(bytes[8] == '{');
  CHECK(bytes.size() == 8 + n + 4 * (6 + 1 + 0 + 3));

  const lava::SafetensorsFile f = lava::load_safetensors(path);
  CHECK(f.metadata == std::map<std::string, std::string>{{"format", "pt"}, {"lava", "seed=1"}});
  REQUIRE(f.tensors.size() == ts.size());
  for (size_t i = 0; i < ts.size(); ++i) {
    CAPTURE(ts[i].name);
    CHECK(f.tensors[i].name == ts[i].name);
    CHECK(f.tensors[i].shape == ts[i].shape);
    REQUIRE(f.tensors[i].data.size() == ts[i].data.size());
    if (!ts[i].data.empty()) CHECK(std::memcmp(f.tensors[i].data.data(), ts[i].data.data(), 4 * ts[i].data.size()) == 0);
  }
  lava::save_safetensors(path, {}, {});  // an empty file is valid too
  CHECK(lava::load_safetensors(path).tensors.empty());
}

TEST_CASE("safetensors: every corruption is one InputError naming the file") {
  TempDir tmp;
  const std::string f4(16, '\0');  // 4 float zeros
  struct Bad {
    std::string bytes;
    const char* says;
  };
  const std::string ok_entry = R"("w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]})";
  std::string huge_len = make_file("{}", "");
  huge_len[5] = 1;  // header length ~2^40
  const std::vector<Bad> cases = {
      {"", "8-byte header length is missing"},
      {"abc", "8-byte header length is missing"},
      {huge_len, "header length"},
      {make_file("{" + ok_entry + "}", f4).substr(0, 20), "header length"},          // truncated in the header
      {make_file("{" + ok_entry + "}", f4.substr(0, 10)), "out of range"},           // truncated in the data
      {make_file("{" + ok_entry, f4), "end of input"},                                // bad JSON
      {make_file("[1, 2]", ""), "not a JSON object"},
      {make_file(R"({"w": {"dtype": "F16", "shape": [2], "data_offsets": [0, 4]}})", "abcd"), "only F32 is supported"},
      {make_file(R"({"w": {"dtype": "F32", "shape": [3, 2], "data_offsets": [0, 16]}})", f4), "does not match"},
      {make_file(R"({"w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 32]}})", f4), "out of range"},
      {make_file(R"({"w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [8, 0]}})", f4), "out of range"},
      {make_file(R"({"w": {"dtype": "F32", "shape": [-2, -2], "data_offsets": [0, 16]}})", f4), "negative"},
      {make_file(R"({"w": {"dtype": "F32", "shape": [2.5], "data_offsets": [0, 16]}})", f4), "expected an integer"},
      {make_file(R"({"w": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 16]}})", f4),
       "does not match"},
      {make_file(R"({"w": {"dtype": "F32", "shape": [2, 2]}})", f4), "missing key \"data_offsets\""},
      {make_file(R"({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16, 4]}})", f4), "[begin, end]"},
      {make_file(R"({"w": {"shape": [4], "data_offsets": [0, 16]}})", f4), "missing key \"dtype\" (in key \"w\") (in tensor \"w\")"},
      {make_file(R"({"w": [1]})", f4), "expected an object"},
      {make_file(R"({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 12]},
                     "b": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}})", f4),
       "overlap"},
      {make_file(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}})", f4), "hole"},
      {make_file(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})", f4), "trailing bytes"},
      {make_file("{" + ok_entry + ",\n" + ok_entry + "}", f4), "duplicate key \"w\""},
      {make_file(R"({"__metadata__": {"k": 1}})", ""), "expected a string"},
      {make_file("{}", "", /*pad=*/false) + "x", "trailing bytes"},
  };
  for (const Bad& b : cases) {
    std::string msg = load_error(tmp, b.bytes);
    INFO("message: ", msg);
    CHECK(msg.starts_with(tmp.file("bad.safetensors") + ":"));
    CHECK(msg.find(b.says) != std::string::npos);
  }
  std::string missing;
  try {
    lava::load_safetensors(tmp.file("nope.safetensors"));
  } catch (const lava::InputError& e) {
    missing = e.what();
  }
  CHECK(missing == tmp.file("nope.safetensors") + ": cannot open: No such file or directory");
}

TEST_CASE("safetensors: every truncation and random byte flips are rejected or loaded, never a crash") {
  TempDir tmp;
  const std::string path = tmp.file("m.safetensors");
  lava::save_safetensors(path, sample_tensors(), {{"k", "v"}});
  const std::string good = lava::read_file(path);
  auto rejects = [](std::string_view bytes) {  // in memory: hundreds of fsync'ed files would be slow
    try {
      lava::parse_safetensors(bytes, "mem.safetensors");
    } catch (const lava::InputError& e) {
      return std::string(e.what()).starts_with("mem.safetensors:");
    }
    return false;
  };
  for (size_t len = 0; len < good.size(); ++len) {
    CAPTURE(len);
    CHECK(rejects(std::string_view(good).substr(0, len)));
  }
  uint64_t s = 3;
  int loaded = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::string bytes = good;
    for (int k = 0; k < 3; ++k) {
      s = s * 6364136223846793005ULL + 1442695040888963407ULL;
      bytes[(s >> 33) % bytes.size()] = char(s >> 13);
    }
    loaded += !rejects(bytes);  // a flip inside the float data is still a valid file
  }
  CHECK(loaded > 0);
}

TEST_CASE("atomic_file: writes replace whole files; failures leave the old file and no temp file") {
  TempDir tmp;
  const std::string path = tmp.file("out.txt");
  lava::write_file_atomic(path, "old");
  CHECK(lava::read_file(path) == "old");
  lava::write_file_atomic(path, std::string(100000, 'x'));
  CHECK(lava::read_file(path) == std::string(100000, 'x'));
  lava::write_file_atomic(path, "old");

  // The writer callback fails half-way: its exception propagates, the old file stays, no temp file.
  CHECK_THROWS_AS(lava::write_file_atomic(path,
                                          [](std::FILE* f) {
                                            std::fputs("half", f);
                                            throw std::runtime_error("disk on fire");
                                          }),
                  std::runtime_error);
  CHECK(lava::read_file(path) == "old");
  CHECK(tmp.names() == std::vector<std::string>{"out.txt"});

  // Missing directory: InputError naming the path.
  const std::string nowhere = tmp.file("no/such/dir/out.txt");
  std::string msg;
  try {
    lava::save_safetensors(nowhere, sample_tensors());
  } catch (const lava::InputError& e) {
    msg = e.what();
  }
  CHECK(msg == nowhere + ": cannot create file: No such file or directory");

  // A directory as the target: InputError before any temp file is made, and the directory stays.
  fs::create_directories(tmp.dir / "blocker" / "inside");
  msg.clear();
  try {
    lava::write_file_atomic(tmp.file("blocker"), "x");
  } catch (const lava::InputError& e) {
    msg = e.what();
  }
  CHECK(msg == tmp.file("blocker") + ": is a directory, not a file");
  CHECK(tmp.names().size() == 2);  // out.txt and blocker, no blocker.tmp.<pid>
  CHECK(fs::is_directory(tmp.dir / "blocker" / "inside"));

  // read_file on a directory: "is a directory".
  msg.clear();
  try {
    lava::read_file(tmp.file("blocker"));
  } catch (const lava::InputError& e) {
    msg = e.what();
  }
  CHECK(msg.find("is a directory") != std::string::npos);
}
