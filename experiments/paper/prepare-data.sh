#!/usr/bin/env bash
# The data sets the sweep files of experiments/paper/ and experiments/studies/ read, under data/ (relative to the
# repository; the sweep files name them as ../../data/NAME). Each is built once; an existing one is kept.
#
#   experiments/paper/prepare-data.sh [NAME...]     (default: the small scale's: nmt-small vqa-small)
#
#   nmt-small   data/gettext-de-en-every5 from data/gettext-de-en (lava data gettext): every 5th training pair
#               (lines 1, 6, 11, ...: a stride and not a head, since the corpus is in package order and its first
#               40,000 pairs are 4 of the 100 packages) and the whole valid and test splits
#   nmt-bpe     data/gettext-de-en-bpe: the corpus in joint BPE units (lava data bpe, 14k types) for medium and paper
#   vqa-small   data/scenes-default-20k and data/scenes-vqa2-20k: 20,000/2,000/4,000 scenes, 5 questions each
#   vqa-50k     data/scenes-default-50k and data/scenes-vqa2-50k: 50,000/5,000/10,000 scenes (medium and paper)
# and the studies' (experiments/studies/*.ini say which they read):
#   nmt-demo        data/gettext-de-en-demo: the corpus with its validation split cut to its first 500 pairs
#   nmt-valid1000   data/gettext-de-en-valid1000: the same cut to 1,000 pairs
#   synth           data/synth: lava data synth's defaults (20,000/500/500 pairs, seed 1)
#   synth-10k       data/synth-10k: lava data synth, 10,000/300/500 pairs, seed 1
#   scenes-5k       data/scenes-5k: 5,000/500/1,000 scenes, seed 1
#   scenes-2k       data/scenes-2k: 2,000/200/200 scenes, seed 1
#   scenes-caption-20k  data/scenes-caption-20k: 20,000/2,000/2,000 scenes, seed 1
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
lava=${LAVA:-$repo/build/lava}
data=$repo/data

nmt_small() {
  local src=$data/gettext-de-en dst=$data/gettext-de-en-every5 f lang split
  [ -f "$dst/train.en" ] && return 0
  for f in train.de train.en valid.de valid.en test.de test.en; do
    [ -f "$src/$f" ] || { echo "prepare-data.sh: $src/$f: missing (build it with: lava data gettext)" >&2; exit 1; }
  done
  mkdir -p "$dst"
  for lang in de en; do
    for split in valid test; do cp "$src/$split.$lang" "$dst/$split.$lang"; done
    # train.en last: its presence says the folder is complete.
    awk 'NR % 5 == 1' "$src/train.$lang" >"$dst/train.$lang.tmp" && mv "$dst/train.$lang.tmp" "$dst/train.$lang"
  done
  echo "prepare-data.sh: $dst: $(wc -l <"$dst/train.de") training pairs (every 5th of $src)"
}

# gettext_view NAME VALID_PAIRS: data/NAME links to data/gettext-de-en's training and test files, with the first
# VALID_PAIRS pairs of its validation split, so that validation during a short run stays short.
gettext_view() {
  local src=$data/gettext-de-en dst=$data/$1 lang
  [ -f "$dst/valid.en" ] && return 0
  [ -f "$src/train.en" ] || { echo "prepare-data.sh: $src/train.en: missing (build it with: lava data gettext)" >&2; exit 1; }
  mkdir -p "$dst"
  for lang in de en; do
    ln -sfn "$src/train.$lang" "$dst/train.$lang"
    ln -sfn "$src/test.$lang" "$dst/test.$lang"
    # valid.en last: its presence says the folder is complete.
    head -n "$2" "$src/valid.$lang" >"$dst/valid.$lang.tmp" && mv "$dst/valid.$lang.tmp" "$dst/valid.$lang"
  done
}

synth() {  # synth NAME [lava data synth options]
  local name=$1
  shift
  [ -f "$data/$name/test.align" ] || "$lava" data synth --out "$data/$name" "$@" --seed 1 -q
}

scenes_of() {  # scenes_of NAME TRAIN VALID TEST
  [ -f "$data/$1/meta.tsv" ] || "$lava" data scenes --out "$data/$1" --train "$2" --valid "$3" --test "$4" --seed 1
}

nmt_bpe() {
  [ -f "$data/gettext-de-en-bpe/subword.model" ] && return 0
  "$lava" data bpe --data "$data/gettext-de-en" --out "$data/gettext-de-en-bpe" --types 14000
}

scenes() {  # scenes TRAIN VALID TEST SUFFIX
  local mix
  for mix in default vqa2; do
    [ -f "$data/scenes-$mix-$4/meta.tsv" ] && continue
    "$lava" data scenes --out "$data/scenes-$mix-$4" --train "$1" --valid "$2" --test "$3" --mix "$mix" --seed 1
  done
}

[ $# -gt 0 ] || set -- nmt-small vqa-small
for what in "$@"; do
  case $what in
    nmt-small) nmt_small ;;
    nmt-bpe) nmt_bpe ;;
    vqa-small) scenes 20000 2000 4000 20k ;;
    vqa-50k) scenes 50000 5000 10000 50k ;;
    nmt-demo) gettext_view gettext-de-en-demo 500 ;;
    nmt-valid1000) gettext_view gettext-de-en-valid1000 1000 ;;
    synth) synth synth ;;
    synth-10k) synth synth-10k --train 10000 --valid 300 --test 500 ;;
    scenes-5k) scenes_of scenes-5k 5000 500 1000 ;;
    scenes-2k) scenes_of scenes-2k 2000 200 200 ;;
    scenes-caption-20k) scenes_of scenes-caption-20k 20000 2000 2000 ;;
    *) echo "prepare-data.sh: unknown data set '$what' (nmt-small nmt-bpe vqa-small vqa-50k nmt-demo nmt-valid1000" \
      "synth synth-10k scenes-5k scenes-2k scenes-caption-20k)" >&2; exit 2 ;;
  esac
done
