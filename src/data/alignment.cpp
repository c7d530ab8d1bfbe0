#include "data/alignment.hpp"

#include <algorithm>
#include <charconv>

#include "core/atomic_file.hpp"
#include "core/check.hpp"
#include "core/quote_input.hpp"
#include "core/read_file.hpp"
#include "data/vocab.hpp"

namespace lava {

void normalize_alignment(SentenceAlignment& links) {
  // Sure before possible for equal positions, so the first of each run is the one to keep.
  std::sort(links.begin(), links.end(), [](const AlignmentLink& a, const AlignmentLink& b) {
    if (a.src != b.src) return a.src < b.src;
    if (a.tgt != b.tgt) return a.tgt < b.tgt;
    return a.sure > b.sure;
  });
  auto same_place = [](const AlignmentLink& a, const AlignmentLink& b) { return a.src == b.src && a.tgt == b.tgt; };
  links.erase(std::unique(links.begin(), links.end(), same_place), links.end());
}

namespace {

// A non-negative decimal index without sign, at most INT_MAX.
bool parse_index(std::string_view text, int& value) {
  if (text.empty() || text.size() > 10) return false;
  for (char c : text)
    if (c < '0' || c > '9') return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size();
}

// "i-j" (sure), "i?j" or "ipj" (possible).
bool parse_link(std::string_view token, AlignmentLink& link) {
  size_t sep = token.find_first_of("-?p");
  if (sep == std::string_view::npos) return false;
  link.sure = token[sep] == '-';
  return parse_index(token.substr(0, sep), link.src) && parse_index(token.substr(sep + 1), link.tgt);
}

}  // namespace

std::vector<SentenceAlignment> read_alignments(const std::string& path, std::span<const SentenceLengths> lengths) {
  std::string bytes = read_file(path, kTextDataLimit);
  std::vector<SentenceAlignment> out;
  size_t pos = 0, n = bytes.size();
  while (pos < n) {
    size_t end = bytes.find('\n', pos);
    if (end == std::string::npos) end = n;
    std::string_view line = std::string_view(bytes).substr(pos, end - pos);
    pos = end + 1;
    long line_no = long(out.size()) + 1;
    if (!lengths.empty() && out.size() == lengths.size())
      throw input_error(path, line_no, fmt::format("more lines than the {} sentence pairs", lengths.size()));
    SentenceAlignment links;
    for (std::string_view token : split_tokens(line)) {
      AlignmentLink link;
      if (!parse_link(token, link)) {
        throw input_error(path, line_no,
                          fmt::format("bad link {}: expected i-j (or i?j / ipj for a possible link) with 0-based "
                                      "indices, source first",
                                      quote_input(token, '"')));
      }
      if (!lengths.empty()) {
        const SentenceLengths& len = lengths[out.size()];
        if (link.src >= len.src)
          throw input_error(path, line_no,
                            fmt::format("link {}: source index {} out of range for a source sentence of {} tokens",
                                        quote_input(token, '"'), link.src, len.src));
        if (link.tgt >= len.tgt)
          throw input_error(path, line_no,
                            fmt::format("link {}: target index {} out of range for a target sentence of {} tokens",
                                        quote_input(token, '"'), link.tgt, len.tgt));
      }
      links.push_back(link);
    }
    normalize_alignment(links);
    out.push_back(std::move(links));
  }
  if (!lengths.empty() && out.size() != lengths.size())
    throw input_error(path, 0, fmt::format("has {} lines but there are {} sentence pairs", out.size(), lengths.size()));
  return out;
}

void write_alignments(const std::string& path, const std::vector<SentenceAlignment>& alignments) {
  std::string text;
  for (const auto& links : alignments) {
    for (size_t k = 0; k < links.size(); ++k) {
      LAVA_CHECK(links[k].src >= 0 && links[k].tgt >= 0, "negative alignment index {}-{}", links[k].src, links[k].tgt);
      if (k > 0) text += ' ';
      text += fmt::format("{}{}{}", links[k].src, links[k].sure ? '-' : '?', links[k].tgt);
    }
    text += '\n';
  }
  write_file_atomic(path, text);
}

double AlignmentScore::aer() const {
  if (hyp + sure == 0) return 0.0;
  return 1.0 - double(hyp_sure + hyp_possible) / double(hyp + sure);
}
double AlignmentScore::precision() const { return hyp == 0 ? 1.0 : double(hyp_possible) / double(hyp); }
double AlignmentScore::recall() const { return sure == 0 ? 1.0 : double(hyp_sure) / double(sure); }

AlignmentScore score_alignments(const std::vector<SentenceAlignment>& hypothesis,
                                const std::vector<SentenceAlignment>& gold) {
  LAVA_CHECK(hypothesis.size() == gold.size(), "{} hypothesis alignments against {} gold alignments",
             hypothesis.size(), gold.size());
  AlignmentScore s;
  for (size_t k = 0; k < gold.size(); ++k) {
    SentenceAlignment a = hypothesis[k], g = gold[k];
    for (auto& link : a) link.sure = true;  // A is a set of positions
    normalize_alignment(a);
    normalize_alignment(g);
    s.hyp += int64_t(a.size());
    s.possible += int64_t(g.size());
    for (const auto& link : g) s.sure += link.sure;
    // Both sorted by (src, tgt): a merge finds the intersection in linear time.
    size_t i = 0, j = 0;
    while (i < a.size() && j < g.size()) {
      if (a[i].src == g[j].src && a[i].tgt == g[j].tgt) {
        ++s.hyp_possible;
        s.hyp_sure += g[j].sure;
        ++i, ++j;
      } else if (a[i].src < g[j].src || (a[i].src == g[j].src && a[i].tgt < g[j].tgt)) {
        ++i;
      } else {
        ++j;
      }
    }
  }
  return s;
}

}  // namespace lava
