// The synthetic translation task: determinism, alignment validity, reordering, file consistency.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>

#include "core/atomic_file.hpp"
#include "core/check.hpp"
#include "data/synth_task.hpp"

using namespace lava;
namespace fs = std::filesystem;

namespace {

SynthOptions small_options(uint64_t seed) {
  SynthOptions o;
  o.seed = seed;
  o.train = 600, o.valid = 50, o.test = 50;
  o.vocab = 60;
  o.quiet = true;
  return o;
}

size_t lines(const std::string& text) { return size_t(std::count(text.begin(), text.end(), '\n')); }

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += w + ' ';
  return out;
}

}  // namespace

TEST_CASE("synth: the same seed gives the same pairs, another seed others") {
  auto a = generate_synth_pairs(small_options(3)), b = generate_synth_pairs(small_options(3));
  auto c = generate_synth_pairs(small_options(4));
  REQUIRE(a.size() == 700);
  REQUIRE(b.size() == 700);
  int differ = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    CHECK(a[k].src == b[k].src);
    CHECK(a[k].tgt == b[k].tgt);
    CHECK(a[k].align == b[k].align);
    differ += (a[k].src != c[k].src);
  }
  CHECK(differ > 600);
}

TEST_CASE("synth: alignments are in range, every target word is aligned, lengths respected") {
  auto pairs = generate_synth_pairs(small_options(5));
  std::set<std::string> sources;
  int unaligned_source = 0, many_to_one = 0, one_to_many = 0;
  for (const auto& p : pairs) {
    CHECK(int(p.src.size()) >= 4);
    CHECK(int(p.src.size()) <= 14);
    CHECK(sources.insert(joined(p.src)).second);  // no duplicate source sentences
    std::vector<int> tgt_links(p.tgt.size(), 0), src_links(p.src.size(), 0);
    for (auto [i, j] : p.align) {
      REQUIRE(i >= 0);
      REQUIRE(i < int(p.src.size()));
      REQUIRE(j >= 0);
      REQUIRE(j < int(p.tgt.size()));
      ++tgt_links[j], ++src_links[i];
    }
    for (int n : tgt_links) CHECK(n >= 1);
    for (int n : tgt_links) many_to_one += (n == 2);
    for (int n : src_links) unaligned_source += (n == 0), one_to_many += (n == 2);
    CHECK(p.src.back() == ".");
    CHECK(p.tgt.back() == ".");
  }
  CHECK(unaligned_source > 0);  // dropped determiners and particles
  CHECK(one_to_many > 0);       // compounds, auxiliaries
  CHECK(many_to_one > 0);       // preposition + determiner contractions
}

TEST_CASE("synth: the alignment is non-monotone") {
  auto pairs = generate_synth_pairs(small_options(6));
  int crossing_pairs = 0;
  for (const auto& p : pairs) {
    bool crossing = false;
    for (auto [i1, j1] : p.align)
      for (auto [i2, j2] : p.align) crossing |= (i1 < i2 && j1 > j2);
    crossing_pairs += crossing;
  }
  CHECK(crossing_pairs > int(pairs.size()) / 2);
  CHECK(pharaoh_line({{0, 0}, {2, 1}, {1, 2}}) == "0-0 2-1 1-2");
}

TEST_CASE("synth: files are line-consistent and identical across runs; bad options are usage errors") {
  fs::path dir = fs::temp_directory_path() / fmt::format("lava-test-synth-{}", ::getpid());
  fs::remove_all(dir);
  SynthOptions o = small_options(9);
  o.out_dir = (dir / "a").string();
  build_synth_task(o);
  o.out_dir = (dir / "b").string();
  build_synth_task(o);
  for (auto [split, count] : {std::pair{"train", 600}, {"valid", 50}, {"test", 50}}) {
    for (const char* ext : {"de", "en", "align"}) {
      std::string a = read_file(fmt::format("{}/a/{}.{}", dir.string(), split, ext));
      CHECK(lines(a) == size_t(count));
      CHECK(a == read_file(fmt::format("{}/b/{}.{}", dir.string(), split, ext)));
    }
  }
  fs::remove_all(dir);
  SynthOptions bad = small_options(1);
  bad.min_len = 10, bad.max_len = 5;
  CHECK_THROWS_AS(generate_synth_pairs(bad), UsageError);
  bad = small_options(1);
  bad.vocab = 3;
  CHECK_THROWS_AS(generate_synth_pairs(bad), UsageError);
  bad = small_options(1);
  bad.min_len = bad.max_len = 40;  // longer than the grammar can make
  CHECK_THROWS_AS(generate_synth_pairs(bad), UsageError);
}
