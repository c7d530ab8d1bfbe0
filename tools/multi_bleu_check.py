#!/usr/bin/env python3
"""Independent checker for LAVA's corpus BLEU (src/eval/bleu.cpp): the multi-bleu.perl formula in plain Python 3.

    tools/multi_bleu_check.py HYP_FILE REF_FILE [--lc] [--score-only]

Both files hold one tokenised sentence per line (tokens split on whitespace), line i of HYP translating the
same source as line i of REF; one reference per sentence. Output is multi-bleu.perl's line:

    BLEU = 48.77, 90.0/75.0/50.0/25.0 (BP=0.905, ratio=0.909, hyp_len=10, ref_len=11)

or, with --score-only, just the BLEU with 2 decimals. Formula (Moses multi-bleu.perl):
    p_n  = sum over sentences of clipped n-gram matches / sum over sentences of hypothesis n-grams, n = 1..4
    BP   = exp(1 - r/c) if c < r else 1, with c, r the total hypothesis and reference lengths
    BLEU = 100 * BP * exp(mean_n log p_n), and 0 if any p_n is 0.
LAVA does not run this at run time; it exists to check the C++ against a second implementation.
"""
import argparse
import math
import sys
from collections import Counter


def ngram_counts(tokens, n):
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def corpus_stats(hyp_lines, ref_lines, lowercase=False):
    matches = [0] * 4
    totals = [0] * 4
    hyp_len = ref_len = 0
    for hyp_line, ref_line in zip(hyp_lines, ref_lines):
        if lowercase:
            hyp_line, ref_line = hyp_line.lower(), ref_line.lower()
        hyp, ref = hyp_line.split(), ref_line.split()
        hyp_len += len(hyp)
        ref_len += len(ref)
        for n in range(1, 5):
            h, r = ngram_counts(hyp, n), ngram_counts(ref, n)
            totals[n - 1] += sum(h.values())
            matches[n - 1] += sum(min(count, r[g]) for g, count in h.items())
    return matches, totals, hyp_len, ref_len


def bleu_line(matches, totals, hyp_len, ref_len):
    if ref_len == 0:
        return 0.0, "BLEU = 0.00, 0.0/0.0/0.0/0.0 (BP=0.000, ratio=0.000, hyp_len=%d, ref_len=0)" % hyp_len
    precisions = [m / t if t else 0.0 for m, t in zip(matches, totals)]
    if hyp_len >= ref_len:
        bp = 1.0
    elif hyp_len == 0:
        bp = 0.0  # multi-bleu.perl dies dividing by zero here; the limit of exp(1 - r/c) as c -> 0 is 0
    else:
        bp = math.exp(1 - ref_len / hyp_len)
    if min(precisions) == 0:
        bleu = 0.0
    else:
        bleu = 100 * (bp * math.exp(sum(math.log(p) for p in precisions) / 4))  # multi-bleu's operation order
    line = "BLEU = %.2f, %.1f/%.1f/%.1f/%.1f (BP=%.3f, ratio=%.3f, hyp_len=%d, ref_len=%d)" % (
        bleu, *(100 * p for p in precisions), bp, hyp_len / ref_len, hyp_len, ref_len)
    return bleu, line


def read_lines(path):
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        return f.read().splitlines()


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("hyp")
    ap.add_argument("ref")
    ap.add_argument("--lc", action="store_true", help="lowercase both sides first (multi-bleu.perl -lc)")
    ap.add_argument("--score-only", action="store_true", help="print only the BLEU score")
    args = ap.parse_args(argv)
    hyps, refs = read_lines(args.hyp), read_lines(args.ref)
    if len(hyps) != len(refs):
        print("%s: %d lines but %s has %d" % (args.hyp, len(hyps), args.ref, len(refs)), file=sys.stderr)
        return 1
    bleu, line = bleu_line(*corpus_stats(hyps, refs, args.lc))
    print("%.2f" % bleu if args.score_only else line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
