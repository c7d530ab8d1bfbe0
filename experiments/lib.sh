# Shared helpers for the translation experiment scripts (sourced, not run).
# Every script that sources this has `set -euo pipefail` and defines SCRIPT (its name, for messages).

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LAVA=${LAVA:-$REPO/build/lava}
# GNU OpenMP spin-waits between parallel regions by default; on a shared 2-core machine a spinning thread
# steals the core another process (or our own second thread) needs, and runs get several times slower.
# A short spin (GOMP_SPINCOUNT) before sleeping still catches the next of a step's many small parallel regions
# (~575 a soft-attention step): about 10 % faster on two threads than sleeping at once (README, "Measuring speed").
export OMP_WAIT_POLICY=passive
export GOMP_SPINCOUNT=${GOMP_SPINCOUNT:-20000}

# shellcheck disable=SC2034  # used by the scripts that source this file
ALL_VARIANTS="none soft marginal hard-enum hard-sample var-enum var-sample var-gumbel var-rws"

die() {
  echo "$SCRIPT: error: $*" >&2
  exit 1
}

log() { echo "$SCRIPT: $*" >&2; }

usage_error() {
  echo "$SCRIPT: error: $*; see $0 --help" >&2
  exit 2
}

# ---- One command line for every script ----
# parse_args "$@" reads the options every experiment script takes:
#   --quick      the script's smoke-test size (minutes, not hours)
#   --out DIR    its output folder (each script has a default under runs/)
#   --threads N  OpenMP threads per lava run (0 = all cores; results do not depend on it)
#   --jobs N     lava runs at a time (the one job pool below)
#   --seed S     a seed, or a list for scripts that run several: "1 2 3", "1,2,3" or "1-3"
#   -h, --help   the script's usage(); -- ARGS: extra lava train options, in EXTRA_ARGS
# and the script's own, named in SCRIPT_OPTIONS as "data= variants= reuse" (a trailing = takes a value); each lands
# in OPT_<name> with dashes as underscores (--max-len 30 -> OPT_max_len=30). It sets QUICK (0/1), OUT, THREADS, JOBS
# and SEEDS ("" where not given: the script applies its own default) and exits 2 on a usage error.
parse_args() {
  QUICK=0 OUT="" THREADS="" JOBS="" SEEDS="" EXTRA_ARGS=()
  local name
  while (($#)); do
    case $1 in
      --quick) QUICK=1 ;;
      --out | --threads | --jobs | --seed)
        (($# >= 2)) || usage_error "$1 needs a value"
        case $1 in
          --out) OUT=$2 ;;
          --threads) is_count "$2" 0 || usage_error "--threads needs a number >= 0, not '$2'"; THREADS=$2 ;;
          --jobs) is_count "$2" 1 || usage_error "--jobs needs a number >= 1, not '$2'"; JOBS=$2 ;;
          --seed) SEEDS=$(expand_seeds "$2") || usage_error "--seed needs seeds such as 1, \"1 2 3\" or 1-3, not '$2'" ;;
        esac
        shift ;;
      -h | --help) usage; exit 0 ;;
      --) shift; EXTRA_ARGS=("$@"); break ;;
      --*)
        name=${1#--}
        if [[ " ${SCRIPT_OPTIONS:-} " == *" $name= "* ]]; then
          (($# >= 2)) || usage_error "$1 needs a value"
          printf -v "OPT_${name//-/_}" '%s' "$2"
          shift
        elif [[ " ${SCRIPT_OPTIONS:-} " == *" $name "* ]]; then
          printf -v "OPT_${name//-/_}" '%s' 1
        else
          usage_error "unknown option '$1'"
        fi ;;
      *) usage_error "unexpected argument '$1'" ;;
    esac
    shift
  done
}

# is_count VALUE MIN: VALUE is a whole number >= MIN.
is_count() { [[ $1 =~ ^[0-9]+$ ]] && (($1 >= $2)); }

# expand_seeds SPEC: "1-3", "1,2,3" or "1 2 3" as "1 2 3"; fails on anything else.
expand_seeds() {
  local word out=() lo hi
  for word in ${1//,/ }; do
    if [[ $word =~ ^([0-9]+)-([0-9]+)$ ]]; then
      lo=${BASH_REMATCH[1]} hi=${BASH_REMATCH[2]}
      ((lo <= hi)) || return 1
      out+=($(seq "$lo" "$hi"))
    elif [[ $word =~ ^[0-9]+$ ]]; then
      out+=("$word")
    else
      return 1
    fi
  done
  ((${#out[@]})) || return 1
  echo "${out[*]}"
}

# check_variants LIST KNOWN: every word of LIST is in KNOWN, else a usage error.
check_variants() {
  local v
  for v in $1; do
    [[ " $2 " == *" $v "* ]] || usage_error "unknown variant '$v' (known: $2)"
  done
}

# ---- The one job pool ----
# pool_run CMD...: runs CMD in the background once fewer than JOBS runs are going; pool_wait waits for them all and
# fails if any failed. A run is a shell function or command whose results go to files (a background job cannot set
# the script's variables), so each script builds its table from the files afterwards. Each job records a non-zero
# exit status in POOL_FAILURES from its EXIT trap: `wait -n` alone misses a job that ended while nobody waited (it is
# reaped, `jobs -r` no longer lists it, and its status is lost), and `CMD || record` would switch off `set -e`
# inside CMD.
POOL_FAILURES=""
pool_run() {
  [[ -n $POOL_FAILURES ]] || POOL_FAILURES=$(mktemp "${TMPDIR:-/tmp}/lava-pool.XXXXXX")
  while (($(jobs -rp | wc -l) >= ${JOBS:-1})); do wait -n || true; done
  (
    trap 'rc=$?; ((rc == 0)) || echo "exit $rc: $*" >>"$POOL_FAILURES"' EXIT
    "$@"
  ) &
}
pool_wait() {
  wait || true
  [[ -n $POOL_FAILURES ]] || return 0
  local failures
  failures=$(cat "$POOL_FAILURES")
  rm -f "$POOL_FAILURES"
  POOL_FAILURES=""
  [[ -z $failures ]]
}

require_lava() {
  [ -x "$LAVA" ] || die "$LAVA not found; build it first with: make -C $REPO build/lava"
}

# pin_lava DIR: copies the lava binary into DIR and uses the copy from then on, so that a rebuild of build/lava
# during a long run cannot break it, and DIR records the program that made its results.
pin_lava() {
  require_lava
  mkdir -p "$1"
  { cp "$LAVA" "$1/lava.tmp" && mv "$1/lava.tmp" "$1/lava"; } || die "cannot copy $LAVA into $1"
  "$1/lava" --help >/dev/null 2>&1 || die "$LAVA does not run (is it being rebuilt? try again)"
  LAVA=$1/lava
}

# Seconds since the script started, as m:ss.
elapsed() { printf '%d:%02d' $((SECONDS / 60)) $((SECONDS % 60)); }

# run_lava OUT_FILE ERR_FILE ARGS...: runs `lava ARGS...` with stdout to OUT_FILE and stderr to ERR_FILE (appended to
# both with RUN_LAVA_APPEND=1) and appends the command line to COMMANDS_LOG when set; on failure prints the command, the exit code and the end of its stderr, and exits.
run_lava() {
  local out=$1 err=$2 rc=0
  shift 2
  # COMMANDS_LOG: every command line run, as a shell would read it back (experiments/paper-tables.sh's commands.txt).
  [ -z "${COMMANDS_LOG:-}" ] || { printf '%q ' "$LAVA" "$@"; printf '\n'; } >>"$COMMANDS_LOG"
  local t0=$EPOCHREALTIME
  if [ "${RUN_LAVA_APPEND:-0}" = 1 ]; then
    "$LAVA" "$@" >>"$out" 2>>"$err" || rc=$?
  else
    "$LAVA" "$@" >"$out" 2>"$err" || rc=$?
  fi
  # COMMANDS_LOG.times: the wall seconds, exit status and subcommand of each finished run (the evaluations' time is
  # in no JSON line; paper-tables.sh sums it with the training runs' own "seconds").
  [ -z "${COMMANDS_LOG:-}" ] ||
    printf '%s\t%d\t%s\t%s\n' "$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')" "$rc" "$1" \
      "$out" >>"$COMMANDS_LOG.times"
  if [ "$rc" != 0 ]; then
    {
      echo "$SCRIPT: error: lava failed with exit code $rc:"
      echo "  $LAVA $*"
      echo "  last lines of $err:"
      tail -n 5 "$err" | tr '\r' '\n' | tail -n 5 | sed 's/^/    /'
    } >&2
    exit 1
  fi
}

# json_get LINE KEY: the value of KEY in one flat JSON object line (strings unquoted; null stays "null").
# lava's JSON lines are flat objects whose string values hold no commas or braces, so a regex is enough.
json_get() {
  local v
  v=$(printf '%s\n' "$1" | grep -o "\"$2\":[^,}]*" | head -n 1 | cut -d: -f2-) || true
  v=${v#\"}
  printf '%s' "${v%\"}"
}

# last_line_with FILE PATTERN: the last line of FILE containing PATTERN (fixed string), or nothing.
last_line_with() { grep -F -- "$2" "$1" 2>/dev/null | tail -n 1 || true; }

# The result row of `lava eval --format json`: the last line without an "event" key.
eval_row() { grep -v '"event"' "$1" 2>/dev/null | tail -n 1 || true; }

# seeds_finished PREFIX SEED...: "finished/planned" over the SEEDs; a seed is finished when PREFIX<seed>.eval.jsonl
# has its result row (eval_row).
seeds_finished() {
  local prefix=$1 seed ok=0 all=0
  shift
  for seed in "$@"; do
    all=$((all + 1))
    [[ -n $(eval_row "$prefix$seed.eval.jsonl") ]] && ok=$((ok + 1))
  done
  echo "$ok/$all"
}

# fmt_num VALUE PRINTF_FORMAT: formats a number; missing, null and NaN values print as "–", and a magnitude of 1e7
# or more in three significant figures (a diverged bound's PPL of 1e221 in %.2f is 224 digits).
fmt_num() {
  case "$1" in
    "" | null | nan | NaN | -nan) printf '–' ;;
    *) awk -v v="$1" -v f="$2" 'BEGIN { s = (v >= 1e7 || v <= -1e7) ? sprintf("%.3g", v) : sprintf(f, v)
                                        if (s ~ /^-[0.]*$/) s = substr(s, 2); printf "%s", s }' ;;
  esac
}

# mean_sd PRINTF_FORMAT VALUES...: "mean ± sd" (sample standard deviation) of the numeric VALUES, the mean alone for
# one value, "–" for none; missing, null and NaN values are left out. A mean that rounds to zero prints without a
# sign (marginal's KL(q‖p) is −1e−17 at q = p, not "-0.000"); so does fmt_num.
mean_sd() {
  local f=$1
  shift
  printf '%s\n' "$@" | awk -v f="$f" '$1 != "" && $1 != "null" && tolower($1) !~ /nan/ { x[n++] = $1; t += $1 }
    END { if (!n) { printf "–"; exit } m = t / n; s = sprintf(f, m); if (s ~ /^-[0.]*$/) s = substr(s, 2); printf "%s", s
          if (n > 1) { for (i = 0; i < n; i++) v += (x[i] - m) ^ 2; printf " ± " f, sqrt(v / (n - 1)) } }'
}

# seed_values PREFIX SUFFIX KEY SEED...: KEY of each seed's file PREFIX<SEED>.SUFFIX, one per line: from its
# evaluation row, or, for SUFFIX train.jsonl, from its training "done" line (empty where there is none).
seed_values() {
  local prefix=$1 suffix=$2 key=$3 seed line
  shift 3
  for seed in "$@"; do
    if [ "$suffix" = train.jsonl ]; then
      line=$(last_line_with "$prefix$seed.$suffix" '"event":"done"')
    else
      line=$(eval_row "$prefix$seed.$suffix")
    fi
    json_get "$line" "$key"
    echo
  done
}
# seed_cell FORMAT PREFIX SUFFIX KEY SEED...: mean ± sd (mean_sd FORMAT) of seed_values over the seeds.
seed_cell() {
  local format=$1 values
  shift
  mapfile -t values < <(seed_values "$@")
  mean_sd "$format" "${values[@]}"
}

# fmt_duration SECONDS: "42s", "3m05s" or "2h07m".
fmt_duration() {
  case "$1" in "" | null | –) printf '–'; return ;; esac
  awk -v s="$1" 'BEGIN { s = int(s + 0.5);
    if (s < 60) printf "%ds", s; else if (s < 3600) printf "%dm%02ds", s / 60, s % 60;
    else printf "%dh%02dm", s / 3600, (s % 3600) / 60 }'
}

# ensure_corpus DIR: makes sure DIR holds a parallel corpus; if it has no training files, builds the Debian gettext
# German-English corpus there (a no-op after the first time; the .deb files are cached in data/debian-cache).
ensure_corpus() {
  local dir=$1
  if [ -f "$dir/train.de" ] && [ -f "$dir/train.en" ]; then return 0; fi
  log "no corpus in $dir; building it with lava data gettext (downloads Debian packages once)"
  mkdir -p "$REPO/data"
  "$LAVA" data gettext --lang de --out "$dir" --cache "$REPO/data/debian-cache" ||
    die "lava data gettext --out $dir failed"
}

# quick_corpus_view SRC_DIR VIEW_DIR VALID_LINES [TRAIN_EVERY]: VIEW_DIR gets symlinks to SRC_DIR's test files, the
# first VALID_LINES lines of its valid files (0 = all of them, a symlink), so that validation during a short training
# run stays short, and its train files (symlinks), or every TRAIN_EVERY-th pair of them (lines 1, 1 + N, ...) when
# given: the converged table's training subset. A stride and not a head, since the corpus is in package order and
# its first 40,000 pairs are 4 of the 100 packages (the test split is drawn from all of them, by a hash).
quick_corpus_view() {
  local src dst=$2 n=$3 every=${4:-1} lang
  src=$(cd "$1" && pwd)
  mkdir -p "$dst"
  for lang in de en; do
    if [ "$every" = 1 ]; then
      ln -sfn "$src/train.$lang" "$dst/train.$lang"
    else
      rm -f "$dst/train.$lang"
      awk -v n="$every" 'NR % n == 1' "$src/train.$lang" >"$dst/train.$lang.tmp" &&
        mv "$dst/train.$lang.tmp" "$dst/train.$lang"
    fi
    ln -sfn "$src/test.$lang" "$dst/test.$lang"
    if [ "$n" = 0 ]; then
      ln -sfn "$src/valid.$lang" "$dst/valid.$lang"
    else
      rm -f "$dst/valid.$lang"
      head -n "$n" "$src/valid.$lang" >"$dst/valid.$lang.tmp" && mv "$dst/valid.$lang.tmp" "$dst/valid.$lang"
    fi
  done
}

# Model settings. QUICK: a small model, vocabulary capped at 4000 words per side (84 % of German and 92 % of
# English training tokens), pairs up to 30 tokens; a minute of training is a few hundred updates at most, so
# small batches, a larger learning rate and no dropout (nothing can overfit yet) get the furthest.
# FULL: the paper's appendix (src/method.md §6): 2-layer LSTMs,
# embeddings and attention 512, inference network 512, batch 6, Adam 3e-4, 30 epochs, halving from epoch 2;
# one --hidden-size knob stands for the paper's 1024-d memory and 768-d decoder. The corpus is words, not BPE,
# so words seen once are left out (33k German / 17.7k English types remain).
quick_train_args() {
  echo "--emb-size 64 --hidden-size 128 --attn-size 64 --inf-hidden 64 --layers 1 --batch-size 16 --lr 3e-3" \
    "--dropout 0 --max-vocab 4000 --max-len 30"
}
full_train_args() {
  echo "--emb-size 512 --hidden-size 768 --attn-size 512 --inf-hidden 512 --layers 2 --batch-size 6 --lr 3e-4" \
    "--epochs 30 --start-decay-at 2 --lr-decay 0.5 --dropout 0.3 --init 0.1 --clip 5 --min-freq 2 --max-len 50"
}
# CONVERGED: the paper's stopping rules (halve the learning rate at every epoch end from epoch 2 on that
# does not improve the validation bound, stop after 2 such epoch ends in a row, at most 30 epochs) on a model and
# corpus small enough that every row of the table converges overnight on 2 cores: every 5th training pair
# (CONVERGED_TRAIN_EVERY; 35,293 pairs from all 100 packages), pairs up to 20 tokens (1,061 updates an epoch at
# batch 32), vocabulary 4,000 a side, emb 64, hidden 128, attention and inference network 64, dropout 0.2, Adam 3e-3,
# parameters uniform in ±0.3 (README, "The var-enum question"); validation on the whole valid split. Sized by a
# probe on 40,000 pairs: soft stopped on patience at epoch 17, var-enum was still improving at epoch 14 (README,
# "Sizing a converged table").
CONVERGED_TRAIN_EVERY=5
CONVERGED_VALID_PAIRS=0
converged_train_args() {
  echo "--emb-size 64 --hidden-size 128 --attn-size 64 --inf-hidden 64 --layers 1 --batch-size 32 --lr 3e-3" \
    "--dropout 0.2 --max-vocab 4000 --max-len 20 --epochs 30 --start-decay-at 2 --lr-decay 0.5 --patience 2" \
    "--init 0.3 --clip 5 --checkpoint-every 500"
}
# variant_train_args VARIANT UPDATES_PER_EPOCH: the options a row of the paper's tables adds for its variant: the
# relaxed (Dirichlet) row first trains the Jensen bound under the prior for two epochs, the authors' warm start
# (src/method.md §2.3); Gumbel-softmax at τ = 0.1 and RWS with K = 5 samples, as the authors ran them (§2, §2.2).
variant_train_args() {
  case $1 in
    var-dirichlet) echo "--warm-start $((2 * $2))" ;;
    var-gumbel) echo "--temperature 0.1" ;;
    var-rws) echo "--samples 5" ;;
  esac
}

# with_overrides DEFAULTS_NAME USER_ARGS...: sets the array named DEFAULTS_NAME (pairs "--option value") to the
# defaults without the options USER_ARGS repeat, followed by USER_ARGS (lava refuses an option given twice).
with_overrides() {
  local -n defaults=$1
  shift
  local merged=() i user=" $* "
  for ((i = 0; i + 1 < ${#defaults[@]}; i += 2)); do
    case "$user" in *" ${defaults[i]} "*) ;; *) merged+=("${defaults[i]}" "${defaults[i + 1]}") ;; esac
  done
  defaults=("${merged[@]}" "$@")
}

# train_variant VARIANT CORPUS MODEL LOG_PREFIX MINUTES THREADS SEED REUSE TRAIN_ARGS...: trains one variant with
# --format json into MODEL; LOG_PREFIX.train.jsonl gets the epoch lines and the "done" line, LOG_PREFIX.train.log
# the progress. With REUSE=1 an existing MODEL whose log has a "done" line is kept, and a run that stopped before
# its end (a signal, a killed session) continues from MODEL.resume, appending to its logs: the same bits as one
# uninterrupted run. With REUSE=0 the run starts afresh.
train_variant() {
  local attn=$1 corpus=$2 model=$3 prefix=$4 minutes=$5 threads=$6 seed=$7 reuse=$8
  shift 8
  if [ "$reuse" = 1 ] && [ -f "$model" ] && [ -n "$(last_line_with "$prefix.train.jsonl" '"event":"done"')" ]; then
    return 0
  fi
  local extra=() append=0
  [ "$minutes" != 0 ] && extra+=(--max-minutes "$minutes")
  [ -n "$threads" ] && extra+=(--threads "$threads")
  if [ "$reuse" = 1 ] && [ -f "$model.resume" ]; then
    extra+=(--resume "$model.resume") append=1
    log "--attn $attn seed $seed: continuing from $model.resume"
  else
    rm -f "$model" "$model.resume" "$prefix.train.jsonl" "$prefix.train.log"
  fi
  RUN_LAVA_APPEND=$append run_lava "$prefix.train.jsonl" "$prefix.train.log" train --task nmt --data "$corpus" \
    --attn "$attn" --save "$model" --seed "$seed" --format json "${extra[@]}" "$@"
  [ -f "$model" ] || die "lava train --attn $attn exited 0 but wrote no model $model"
  local done_line
  done_line=$(last_line_with "$prefix.train.jsonl" '"event":"done"')
  [ -n "$done_line" ] || die "lava train --attn $attn printed no \"done\" line (see $prefix.train.jsonl)"
  [ "$(json_get "$done_line" nan)" != true ] || log "warning: --attn $attn hit a NaN during training"
}

# eval_variant MODEL CORPUS LOG_PREFIX LIMIT BEAM THREADS [EXTRA EVAL ARGS...]: exact figures and BLEU on test
# into LOG_PREFIX.eval.jsonl (stderr, with multi-bleu's line, into LOG_PREFIX.eval.log).
eval_variant() {
  local model=$1 corpus=$2 prefix=$3 limit=$4 beam=$5 threads=$6
  shift 6
  local extra=()
  [ -n "$threads" ] && extra+=(--threads "$threads")
  run_lava "$prefix.eval.jsonl" "$prefix.eval.log" eval --model "$model" --data "$corpus" --split test \
    --limit "$limit" --bleu --beam "$beam" --format json "${extra[@]}" "$@"
  [ -n "$(eval_row "$prefix.eval.jsonl")" ] || die "lava eval printed no result row (see $prefix.eval.jsonl)"
}

# finished_done_line FILE: the last "done" line of a training log if the run finished (stop: patience, epochs,
# max-steps or nan), else nothing; a run stopped by a signal or --max-minutes continues from MODEL.resume.
finished_done_line() {
  local line
  line=$(last_line_with "$1" '"event":"done"')
  case $(json_get "$line" stop) in patience | epochs | max-steps | nan) printf '%s' "$line" ;; esac
}

# vqa_eval_row FILE WHICH: a row of `lava eval --task vqa --format json`: WHICH = all (the totals), single_region
# (the subset row) or a question type (its "qtype" row).
vqa_eval_row() {
  case $2 in
    all) eval_row "$1" ;;
    single_region) last_line_with "$1" '"event":"subset"' ;;
    *) grep -F '"event":"qtype"' "$1" 2>/dev/null | grep -F "\"qtype\":\"$2\"" | tail -n 1 || true ;;
  esac
}
