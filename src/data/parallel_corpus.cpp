#include "data/parallel_corpus.hpp"

#include <algorithm>
#include <climits>
#include <filesystem>
#include <stdexcept>

#include "core/check.hpp"
#include "core/read_file.hpp"
#include "data/tokenize.hpp"

namespace lava {

const char* split_name(CorpusSplit split) {
  switch (split) {
    case CorpusSplit::train: return "train";
    case CorpusSplit::valid: return "valid";
    case CorpusSplit::test: return "test";
  }
  return "?";
}

CorpusSplit corpus_split(const std::string& name) {
  for (CorpusSplit s : {CorpusSplit::train, CorpusSplit::valid, CorpusSplit::test})
    if (name == split_name(s)) return s;
  throw std::invalid_argument("no corpus split \"" + name + "\"");
}

std::string corpus_file(const CorpusOptions& options, CorpusSplit split, std::string_view lang) {
  return (std::filesystem::path(options.dir) / fmt::format("{}.{}", split_name(split), lang)).string();
}

namespace {

// The text of one file, its lines as (offset, length) into the bytes: offsets, not string_views, so that moving the
// struct (and with it a short string's inline buffer) cannot leave views dangling.
struct LineFile {
  std::string path, bytes;
  struct Line {
    size_t offset, size;
  };
  std::vector<Line> lines;
  std::string_view line(size_t k) const { return std::string_view(bytes).substr(lines[k].offset, lines[k].size); }
};

LineFile read_lines(const std::string& path) {
  LineFile f;
  f.path = path;
  f.bytes = read_file(path, kTextDataLimit);  // InputError "PATH: cannot open: ..." when missing
  size_t pos = 0, n = f.bytes.size();
  if (f.bytes.starts_with("\xEF\xBB\xBF")) pos = 3;  // byte-order mark
  while (pos < n) {
    size_t end = f.bytes.find('\n', pos);
    if (end == std::string::npos) end = n;
    f.lines.push_back({pos, end - pos});  // a CRLF line's '\r' is white space to the tokenizer
    pos = end + 1;
  }
  if (f.lines.size() > size_t(INT_MAX)) throw input_error(path, 0, "more than 2^31 lines");
  return f;
}

int64_t count_tokens(std::string_view line) {
  int64_t n = 0;
  bool in_token = false;
  for (char c : line) {
    bool sep = is_token_separator(c);
    n += (!sep && !in_token);
    in_token = !sep;
  }
  return n;
}

// Both files of a split, validated, with the line numbers of the pairs that survive skipping.
struct RawSplit {
  CorpusSplit split;
  LineFile src, tgt;
  std::vector<int> kept;  // 0-based line indices
  SplitStats stats;       // lines, empty_skipped, long_skipped
};

RawSplit read_raw_split(const CorpusOptions& options, CorpusSplit split) {
  if (options.max_tokens_hard < 1)
    throw UsageError(fmt::format("max_tokens_hard must be at least 1, got {}", options.max_tokens_hard));
  if (options.max_len < 0) throw UsageError(fmt::format("max_len must be >= 0, got {}", options.max_len));
  RawSplit raw;
  raw.split = split;
  raw.src = read_lines(corpus_file(options, split, options.src_lang));
  raw.tgt = read_lines(corpus_file(options, split, options.tgt_lang));
  size_t n = raw.src.lines.size();
  if (raw.tgt.lines.size() != n)
    throw input_error(raw.src.path, 0,
                      fmt::format("has {} lines but {} has {} lines; the two sides must pair up line by line", n,
                                  raw.tgt.path, raw.tgt.lines.size()));
  raw.stats.lines = int64_t(n);
  bool filter = options.max_len > 0 && split != CorpusSplit::test;
  for (size_t k = 0; k < n; ++k) {
    int64_t len[2];
    const LineFile* files[2] = {&raw.src, &raw.tgt};
    for (int side = 0; side < 2; ++side) {
      std::string_view text = files[side]->line(k);
      if (size_t bad = first_invalid_utf8(text); bad != std::string_view::npos)
        throw input_error(files[side]->path, long(k + 1), fmt::format("invalid UTF-8 at byte {} of the line", bad + 1));
      len[side] = count_tokens(text);
      if (len[side] > options.max_tokens_hard)
        throw input_error(files[side]->path, long(k + 1),
                          fmt::format("line has {} tokens, more than {}", len[side], options.max_tokens_hard));
    }
    if (len[0] == 0 || len[1] == 0) {
      ++raw.stats.empty_skipped;
    } else if (filter && (len[0] > options.max_len || len[1] > options.max_len)) {
      ++raw.stats.long_skipped;
    } else {
      raw.kept.push_back(int(k));
    }
  }
  if (raw.kept.empty()) {
    std::string why = fmt::format("no sentence pairs in {} lines", n);
    if (raw.stats.empty_skipped > 0 || raw.stats.long_skipped > 0)
      why += fmt::format(" after skipping {} with an empty side and {} longer than max_len {}", raw.stats.empty_skipped,
                         raw.stats.long_skipped, options.max_len);
    throw input_error(raw.src.path, 0, why);
  }
  return raw;
}

std::vector<std::string> token_strings(std::string_view line) {
  std::vector<std::string> out;
  for (auto t : split_tokens(line)) out.emplace_back(t);
  return out;
}

ParallelSplit encode_split(const RawSplit& raw, const CorpusOptions& options, const Vocab& src_vocab,
                           const Vocab& tgt_vocab) {
  ParallelSplit out;
  out.split = raw.split;
  out.src_path = raw.src.path;
  out.tgt_path = raw.tgt.path;
  out.stats = raw.stats;
  out.pairs.reserve(raw.kept.size());
  for (int k : raw.kept) {
    SentencePair p;
    p.line = k + 1;
    std::string_view s = raw.src.line(size_t(k)), t = raw.tgt.line(size_t(k));
    out.stats.src_unk += src_vocab.encode(s, p.src);
    out.stats.tgt_unk += tgt_vocab.encode(t, p.tgt);
    out.stats.src_tokens += int64_t(p.src.size());
    out.stats.tgt_tokens += int64_t(p.tgt.size());
    out.stats.src_max_len = std::max(out.stats.src_max_len, int(p.src.size()));
    out.stats.tgt_max_len = std::max(out.stats.tgt_max_len, int(p.tgt.size()));
    if (options.keep_source_tokens) out.src_tokens.push_back(token_strings(s));
    if (options.keep_target_tokens) out.tgt_tokens.push_back(token_strings(t));
    out.pairs.push_back(std::move(p));
  }
  out.stats.pairs = int64_t(out.pairs.size());
  return out;
}

}  // namespace

std::string describe(const ParallelSplit& split, const CorpusOptions& options) {
  const SplitStats& s = split.stats;
  double pairs = double(std::max<int64_t>(s.pairs, 1));
  auto pct = [](int64_t a, int64_t b) { return b > 0 ? 100.0 * double(a) / double(b) : 0.0; };
  std::string skipped = fmt::format("{} empty", s.empty_skipped);
  if (split.split != CorpusSplit::test && options.max_len > 0)
    skipped += fmt::format(", {} over max_len {}", s.long_skipped, options.max_len);
  return fmt::format("{}: {} pairs of {} lines ({} skipped); {:.1f}/{:.1f} tokens a side, <unk> {:.2f}%/{:.2f}%",
                     split_name(split.split), s.pairs, s.lines, skipped, double(s.src_tokens) / pairs,
                     double(s.tgt_tokens) / pairs, pct(s.src_unk, s.src_tokens), pct(s.tgt_unk, s.tgt_tokens));
}

ParallelSplit read_parallel_split(const CorpusOptions& options, CorpusSplit split, const Vocab& src_vocab,
                                  const Vocab& tgt_vocab) {
  return encode_split(read_raw_split(options, split), options, src_vocab, tgt_vocab);
}

SplitStats count_parallel_split(const CorpusOptions& options, CorpusSplit split) {
  const RawSplit raw = read_raw_split(options, split);
  SplitStats s = raw.stats;
  s.pairs = int64_t(raw.kept.size());
  return s;
}

ParallelCorpus load_parallel_corpus(const CorpusOptions& options, const VocabOptions& src_vocab_options,
                                    const VocabOptions& tgt_vocab_options) {
  ParallelCorpus corpus;
  {
    RawSplit train = read_raw_split(options, CorpusSplit::train);
    TokenCounter src_counts, tgt_counts;
    for (int k : train.kept) {
      src_counts.add_line(train.src.line(size_t(k)));
      tgt_counts.add_line(train.tgt.line(size_t(k)));
    }
    corpus.src_vocab = Vocab::build(src_counts, src_vocab_options);
    corpus.tgt_vocab = Vocab::build(tgt_counts, tgt_vocab_options);
    corpus.train = encode_split(train, options, corpus.src_vocab, corpus.tgt_vocab);
  }
  corpus.valid = read_parallel_split(options, CorpusSplit::valid, corpus.src_vocab, corpus.tgt_vocab);
  corpus.test = read_parallel_split(options, CorpusSplit::test, corpus.src_vocab, corpus.tgt_vocab);
  return corpus;
}

std::string join_bpe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0, n = text.size();
  while (i < n) {
    if (text.compare(i, 3, "@@ ") == 0) {
      i += 3;
    } else if (i + 2 == n && text.compare(i, 2, "@@") == 0) {
      i += 2;
    } else {
      out += text[i++];
    }
  }
  return out;
}

}  // namespace lava
