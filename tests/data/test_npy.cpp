// .npy reading/writing, the questions TSV format, NpyRegionFeatures and the question-only baselines.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/check.hpp"
#include "data/npy_file.hpp"
#include "data/vqa_questions.hpp"
#include "support/check_input_error.hpp"
#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"

using namespace lava;

namespace {

// Raw .npy bytes with a hand-written header dict (version major.0), followed by `data_bytes` zero bytes.
std::string npy_bytes(int major, const std::string& dict, size_t data_bytes) {
  std::string h = "\x93NUMPY";
  h.push_back(char(major));
  h.push_back(0);
  std::string body = dict + "\n";
  size_t len = body.size();
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i) h.push_back(char((len >> (8 * i)) & 0xFF));
  return h + body + std::string(data_bytes, '\0');
}


}  // namespace

TEST_CASE("npy: write then read round-trips shape and bits") {
  TempDir dir("roundtrip");
  std::vector<std::vector<int64_t>> shapes = {{2, 3, 4}, {5}, {}, {0, 3}, {1, 1, 1, 7}};
  for (const auto& shape : shapes) {
    size_t n = 1;
    for (int64_t d : shape) n *= size_t(d);
    std::vector<float> data(n);
    for (size_t i = 0; i < n; ++i) data[i] = float(i) * 0.37f - 1.5f;
    if (n > 1) data[1] = -0.0f;
    std::string path = dir.file("a.npy");
    write_npy(path, shape, data.data());
    NpyArray a = read_npy(path);
    CHECK(a.shape == shape);
    REQUIRE(a.data.size() == n);
    if (n > 0) CHECK(std::memcmp(a.data.data(), data.data(), n * 4) == 0);
    NpyFile f = NpyFile::open(path);
    CHECK(f.shape() == shape);
    std::string bytes = read_file(path);  // core/atomic_file.hpp
    CHECK(bytes.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
    CHECK((bytes.size() - 4 * n) % 64 == 0);  // data starts 64-byte aligned, as numpy writes it
  }
  CHECK(npy_header_dict({2, 3}) == "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
  CHECK(npy_header_dict({5}) == "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }");
  CHECK(npy_header_dict({}) == "{'descr': '<f4', 'fortran_order': False, 'shape': (), }");
}

TEST_CASE("npy: versions 2 and 3, key order, quotes, Python 2 longs are accepted") {
  TempDir dir("versions");
  std::string path = dir.file("v.npy");
  write_text(path, npy_bytes(2, "{'shape': (2, 3), 'fortran_order': False, 'descr': '<f4'}", 24));
  CHECK(NpyFile::open(path).shape() == std::vector<int64_t>{2, 3});
  write_text(path, npy_bytes(3, "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (4,), }   ", 16));
  CHECK(NpyFile::open(path).shape() == std::vector<int64_t>{4});
  write_text(path, npy_bytes(1, "{'descr':'<f4','fortran_order':False,'shape':(3L,2L)}", 24));
  CHECK(NpyFile::open(path).shape() == std::vector<int64_t>{3, 2});
}

TEST_CASE("npy: malformed or unsupported files are InputErrors naming the file") {
  TempDir dir("reject");
  std::string path = dir.file("bad.npy");
  const std::string ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  struct Case {
    std::string bytes, needle;
  };
  std::vector<Case> cases = {
      {npy_bytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", 48), "'<f8'"},
      {npy_bytes(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", 24), "'>f4'"},
      {npy_bytes(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }", 24), "'<i4'"},
      {npy_bytes(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24), "fortran_order"},
      {npy_bytes(1, ok, 23), "truncated"},
      {npy_bytes(1, ok, 25), "trailing"},
      {npy_bytes(1, "{'descr': '<f4', 'shape': (2, 3), }", 24), "keys"},
      {npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}", 24), "'x'"},
      {npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (6), }", 24), "(n,)"},
      {npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", 0), "non-negative"},
      {npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } junk", 24), "after"},
      {npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)", 24), "header"},
      {npy_bytes(1, "{'descr': '<f4', 'fortran_order': maybe, 'shape': (2, 3), }", 24), "True or False"},
      {npy_bytes(4, ok, 24), "version 4.0"},
      {std::string("\x93NUMPY\x01\x00\xff\x00{'descr'", 17), "truncated"},
      {"\x93NUMPY", "magic"},
      {"", "magic"},
      {"PK\x03\x04 this is a zip, not an npy file", "magic"},
      {npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999, 99999999999), }", 0),
       "too"},
  };
  for (const Case& c : cases) {
    write_text(path, c.bytes);
    check_input_error([&] { NpyFile::open(path); }, path, c.needle);
  }
  check_input_error([&] { NpyFile::open(dir.file("missing.npy")); }, dir.file("missing.npy"), "cannot open");
  check_input_error([&] { NpyFile::open(dir.dir.string()); }, dir.dir.string(), "");
  write_npy(path, {2, 3}, std::vector<float>(6, 1.0f).data());
  check_input_error([&] { read_npy(path, 3); }, path, "rank 2");
  check_input_error([&] { NpyRegionFeatures features(path); }, path, "rank 2");
}

TEST_CASE("npy: NpyRegionFeatures reads one image's (regions, dim) block") {
  TempDir dir("features");
  std::string path = dir.file("features.npy");
  const int images = 4, regions = 3, dim = 5;
  std::vector<float> data(images * regions * dim);
  for (size_t i = 0; i < data.size(); ++i) data[i] = float(i);
  write_npy(path, {images, regions, dim}, data.data());
  std::unique_ptr<RegionFeatures> f = open_region_features(path, "ignored");
  CHECK(f->num_images() == images);
  CHECK(f->num_regions() == regions);
  CHECK(f->dim() == dim);
  std::vector<float> out(regions * dim);
  f->get(2, out.data());
  for (int j = 0; j < regions * dim; ++j) CHECK(out[size_t(j)] == float(2 * regions * dim + j));
  write_npy(path, {images, 0, dim}, data.data());
  check_input_error([&] { NpyRegionFeatures g(path); }, path, "dimension outside");
}

TEST_CASE("vqa questions: every column, comments, CRLF and optional columns") {
  TempDir dir("tsv");
  std::string path = dir.file("q.tsv");
  write_text(path,
              "# image\tquestion\tanswer\tanswer_counts\tqtype\tregions\n"
              "0\twhat color is the cat ?\tblack\tblack:8,dark grey:2\tcolor\t0,4\r\n"
              "\n"
              "2\tis there a dog ?\tno\n"
              "1\thow  many   dogs ?\t2\t\tcount\t\n"
              "# a comment in the middle\n"
              "1\twhere ?\tleft\t\t\t3\n");
  std::vector<VqaQuestion> qs = read_vqa_questions(path, 3, 5);
  REQUIRE(qs.size() == 4);
  CHECK(qs[0].image == 0);
  CHECK(qs[0].words == std::vector<std::string>{"what", "color", "is", "the", "cat", "?"});
  CHECK(qs[0].answer == "black");
  REQUIRE(qs[0].answer_counts.size() == 2);
  CHECK(qs[0].answer_counts[1] == std::pair<std::string, int>{"dark grey", 2});
  CHECK(qs[0].qtype == "color");
  CHECK(qs[0].regions == std::vector<int>{0, 4});
  CHECK(qs[1].answer_counts.empty());
  CHECK(qs[1].qtype.empty());
  CHECK(qs[1].regions.empty());
  CHECK(qs[2].words == std::vector<std::string>{"how", "many", "dogs", "?"});
  CHECK(qs[2].qtype == "count");
  CHECK(qs[3].regions == std::vector<int>{3});

  std::string out = dir.file("out.tsv");
  write_vqa_questions(out, qs);
  std::vector<VqaQuestion> back = read_vqa_questions(out, 3, 5);
  REQUIRE(back.size() == qs.size());
  for (size_t i = 0; i < qs.size(); ++i) {
    CHECK(back[i].image == qs[i].image);
    CHECK(back[i].words == qs[i].words);
    CHECK(back[i].answer == qs[i].answer);
    CHECK(back[i].answer_counts == qs[i].answer_counts);
    CHECK(back[i].qtype == qs[i].qtype);
    CHECK(back[i].regions == qs[i].regions);
  }
}

TEST_CASE("vqa questions: bad lines are InputErrors with file and line") {
  TempDir dir("tsvbad");
  std::string path = dir.file("q.tsv");
  struct Case {
    std::string line, needle;
  };
  std::vector<Case> cases = {
      {"3\twhat ?\tx", "out of range"},     {"-1\twhat ?\tx", "non-negative"},
      {"1a\twhat ?\tx", "image index '1a'"}, {"\twhat ?\tx", "image index ''"},
      {"1\twhat ?", "at least"},             {"1", "at least"},
      {"1\t \tx", "empty question"},         {"1\twhat ?\t", "empty answer"},
      {"1\twhat ?\tx\tx:1\tt\t0\textra", "at most 6"},
      {"1\twhat ?\tx\tx1", "answer:count"},  {"1\twhat ?\tx\tx:many", "answer count"},
      {"1\twhat ?\tx\t\t\t5", "region 5 out of range"},
      {"1\twhat ?\tx\t\t\t1,,2", "region ''"},
      {"99999999999999999999\twhat ?\tx", "image index"},
  };
  for (const Case& c : cases) {
    write_text(path, "# header\n0\tok ?\tyes\n" + c.line + "\n");
    check_input_error([&] { read_vqa_questions(path, 3, 5); }, path + ":3:", c.needle);
  }
  check_input_error([&] { read_vqa_questions(dir.file("none.tsv"), 3); }, dir.file("none.tsv"), "cannot open");
}

TEST_CASE("vqa questions: majority and question-only oracle baselines") {
  auto q = [](std::string text, std::string answer, std::string type) {
    VqaQuestion v;
    v.words = {text};
    v.answer = std::move(answer);
    v.qtype = std::move(type);
    return v;
  };
  std::vector<VqaQuestion> train = {q("a", "yes", "t1"), q("a", "yes", "t1"), q("a", "no", "t1"),
                                    q("b", "red", "t2"), q("b", "red", "t2"), q("c", "blue", "t2")};
  std::vector<VqaQuestion> test = {q("a", "yes", "t1"), q("a", "no", "t1"), q("b", "red", "t2"),
                                   q("c", "red", "t2"),  q("d", "red", "t2")};
  AnswerBaselines b = answer_baselines(train, test);
  // majority answer: "red" and "yes" tie at 2; the smaller string wins -> "red"
  CHECK(b.majority_answer == "red");
  CHECK(b.majority == doctest::Approx(3.0 / 5));
  // oracle: a->yes (hit, miss), b->red (hit), c->blue (miss), unseen d->majority red (hit)
  CHECK(b.oracle == doctest::Approx(3.0 / 5));
  REQUIRE(b.per_type.size() == 2);
  CHECK(b.per_type[0].qtype == "t1");
  CHECK(b.per_type[0].oracle == doctest::Approx(0.5));
  CHECK(b.per_type[1].count == 3);
  CHECK(b.per_type[1].oracle == doctest::Approx(2.0 / 3));
}

TEST_CASE("vqa questions: the reader rejects invalid UTF-8 with file:line") {
  TempDir dir("q_utf8");
  const std::string path = dir.file("train.questions.tsv");
  write_text(path, "0\twhat is here\tbag\n1\twhat is \xff there\tshoe\n");
  check_input_error([&] { (void)read_vqa_questions(path, 4, 2); }, path + ":2", "invalid UTF-8 at byte 11");
  write_text(path, "0\twhat is here\tb\xc3\n");  // truncated sequence in the answer
  check_input_error([&] { (void)read_vqa_questions(path, 4, 2); }, path + ":1", "invalid UTF-8");
  write_text(path, "0\twas ist hier\tT\xc3\xbcte\n");  // valid UTF-8 still reads
  CHECK(read_vqa_questions(path, 4, 2).at(0).answer == "T\xc3\xbcte");
}
