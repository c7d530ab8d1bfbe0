#!/usr/bin/env bash
# `make bench`: LAVA against PyTorch on the same training step, measured in the same run.
# For each variant, runs `lava bench train` and tools/bench-torch.py alternately, round by round (ROUNDS rounds, every
# thread count in each), and prints a markdown table of the rounds' medians per variant and thread count: tokens/s,
# peak memory and their ratios, and LAVA's GFLOP/s as a fraction of the FMA peak measured in the same process, for the
# whole step and for the output layer alone (the enumerated layer of marginal and var-enum). PyTorch is optional:
# without it the PyTorch columns say n/a. Every row names the BLAS the PyTorch peer actually ran (tools/bench-torch.py
# reads it off the process's mapped libraries) and the threads its products ran on. Against the reference BLAS (no
# libopenblas0-pthread: a product some 40 times slower), a peer whose 512^3 product runs below MIN_PEER_GFLOPS (5), or
# a peer whose BLAS ran on another thread count than the row's (OpenBLAS keeps one thread per core whatever
# torch.set_num_threads says, unless told otherwise) the ratio columns say "refused" and the script exits 1 at the
# end: a ratio against a crippled peer, or one that used more cores than LAVA, means nothing. "Ratio by round" is the
# lowest and highest of the rounds' own ratios (LAVA's and PyTorch's figure of the same round): how far one run's
# ratio can move on this machine. In even rounds the thread counts run in order and LAVA before the peer, in odd
# rounds the reverse of both, so a steady drift of the machine's speed favours neither side and neither thread count.
# "Target" is LAVA's goal speed ratio for the row (soft 1.5x on one thread, 2x otherwise), and "target needs" the
# fraction of the FMA peak LAVA's
# whole step would have to sustain to reach it against this run's peer (median over rounds of target x PyTorch tok/s x
# LAVA's GFLOP per token / the peak measured in that round): next to "of FMA peak", what LAVA sustains, it says how
# far off a target is, and above 1.00 that no implementation of this step's arithmetic can reach it on this machine.
# "Of kernel loop" is the same fraction of a tighter ceiling: LAVA's GEMM micro-kernel alone on operands hot in L1,
# measured in the same round (lava bench train's kernel_loop_gflops). No GEMM built on that kernel runs faster, so
# above 1.00 the target is out of this kernel's reach; `lava bench gemm` (the second half of `make bench`) says
# whether OpenBLAS's kernels run faster on this machine. "GEMMs would need" is the same question with LAVA's other
# work counted: LAVA runs under its per-op profile (--profile, --steps more steps), and with the non-GEMM share of its
# step as profiled (1 - s) left as it is, the target leaves its GEMMs (1/(target x PyTorch tok/s) - (1 - s)/(LAVA
# tok/s)) seconds a token for their GFLOP per token; the rate that takes, over the round's kernel loop (median over
# rounds; "∞" where the other work alone overruns the target's time). "GEMMs run at" is what they run at now (LAVA
# GFLOP/s / s, over the kernel loop): the gap between the two is what faster GEMMs would have to close. The last
# column is the 1-minute load average (/proc/loadavg) before each round, lowest to highest: on a shared machine it
# says what the ratios were measured under.
# With threads 1 and 2 a second table gives the scaling from 1 to 2 threads of LAVA and PyTorch and of the FMA peak
# and the kernel loop measured in the same processes (the machine's own ceiling for compute-bound work, and the
# ceiling of a step that is all GEMM; on two threads each is the sum of the threads' own rates, see
# src/gemm/team_rate.hpp): each the median over rounds of the round's two-thread figure over its one-thread figure,
# measured minutes apart at most instead of a whole row apart. Its last six columns say which part of LAVA's step
# holds its scaling back, from the per-op profile of the same runs (ms a profiled step: n, of which GEMMs g): the
# profiled step's scaling n1/n2 (next to LAVA's timed one), the GEMMs' share of the one-thread step g1/n1, the
# scaling of the GEMMs g1/g2 and of the rest (n1−g1)/(n2−g2), and what the step's scaling would be if either part
# scaled by 2 and the other as measured, n1/(g1/2 + n2−g2) and n1/(g2 + (n1−g1)/2): a target above the first is
# out of reach of faster GEMMs alone, above the second out of reach of faster other work alone.
#   tools/bench-train.sh [--variants "soft marginal var-enum"] [--threads "1 2"] [--steps N] [--rounds R] [--lava BIN]
#                        [--lava-args "ARGS"]   (extra options for lava bench train, e.g. "--logits-cache-mb 1024")
# BENCH_TORCH=CMD replaces the peer (tools/bench-torch.py); a failing peer or lava run stops the script, naming it.
set -euo pipefail
export OMP_WAIT_POLICY=passive  # GNU OpenMP spin-waiting is ruinous when another process holds a core
# LAVA's threads spin briefly before they sleep (GOMP_SPINCOUNT, as experiments/demo-nmt.sh sets it): a soft-attention step
# opens ~575 small parallel regions that split, and waking a sleeping thread for each cost ~10 % of a two-thread step.
# PyTorch keeps the plain passive policy: with the same spin its two-thread step was slower
# (experiments/results/speed/measurements.md).
lava_spin=${LAVA_SPINCOUNT:-20000}
here=$(cd "$(dirname "$0")/.." && pwd)
lava=$here/build/prof/lava  # the profiling build (make PROFILE=1): the rounds read its --profile tables
variants="soft marginal var-enum"
threads="1 2"
steps=8
rounds=3
lava_args=""
while [ $# -gt 0 ]; do
  case $1 in
    --variants) variants=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --lava) lava=$2; shift 2 ;;
    --lava-args) lava_args=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;  # the comment above
    *) echo "bench-train.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -x "$lava" ] || { echo "bench-train.sh: $lava not found (run make PROFILE=1 build/prof/lava first)" >&2; exit 1; }
# The peer: tools/bench-torch.py, or the command in BENCH_TORCH (tests put a fixed-output stand-in there).
have_torch=0
peer=(/usr/bin/python3 "$here/tools/bench-torch.py")
# The peer at its strongest: OpenBLAS on its own kernel choice for this CPU (this environment's OPENBLAS_CORETYPE and
# OPENBLAS_L2_SIZE unset for the peer alone; bench-torch.py checks that kernel's products against float64 first and
# falls back to Haswell's if they fail), and jemalloc with its decay off, which keeps freed memory mapped, where
# glibc's malloc unmaps every block over 32 MiB on free and the next step faults it in again page by page
# (libjemalloc2, installed by make torch-deps; without it the peer runs on glibc malloc and its BLAS cell says so).
peer_env=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE)
jemalloc=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
[ -e $jemalloc ] && peer_env+=(LD_PRELOAD=$jemalloc MALLOC_CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1)
if [ -n "${BENCH_TORCH:-}" ]; then
  peer=("$BENCH_TORCH") have_torch=1
else
  /usr/bin/python3 -c 'import torch' 2>/dev/null && have_torch=1
fi
[ $have_torch = 1 ] || echo "bench-train.sh: python3-torch is not installed; PyTorch columns will be n/a" >&2

# The value of "key" in a one-line JSON object (numbers only).
json_num() { grep -o "\"$1\": *[-0-9.eE+]*" | head -1 | sed 's/.*: *//'; }
json_str() { grep -o "\"$1\": *\"[^\"]*\"" | head -1 | sed 's/.*: *"//; s/"$//'; }
min_peer_gflops=${MIN_PEER_GFLOPS:-5}
refused=0
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# The lowest and highest of the numbers on stdin, one per line: "lo–hi", or one number when they are equal.
range_of() { sort -g | sed -n '1p;$p' | paste -sd' ' | awk '{print ($2 == "" || $1 == $2) ? $1 : $1 "–" $2}'; }
# The median of the per-round figures on stdin (blank lines ignored) to two decimals, "∞" from 1e9 up (a round that
# no rate can meet), or n/a when there are none.
median_of_rounds() {
  local figures
  figures=$(grep . || true)
  if [ -n "$figures" ]; then median <<<"$figures" | awk '{ if ($1 >= 1e9) print "∞"; else printf "%.2f", $1 }'
  else echo n/a; fi
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "n/a"; else printf "%.2f", a / b }'; }

echo "LAVA: OMP_WAIT_POLICY=passive GOMP_SPINCOUNT=$lava_spin; PyTorch: OMP_WAIT_POLICY=passive, OpenBLAS on its own kernel choice (OPENBLAS_CORETYPE unset), $([ -e $jemalloc ] && echo "jemalloc with decay off" || echo "glibc malloc (libjemalloc2 not installed)")"
echo
# The target speed ratio for a variant and thread count ("" where there is none).
target_of() { case $1/$2 in soft/1) echo 1.5 ;; soft/2|marginal/[12]|var-enum/[12]) echo 2 ;; *) echo "" ;; esac; }
# The median over rounds (median_of_rounds) of what the awk statement $1 prints for each round, run with that round's
# figures of the row being printed: x (the target, $2), l and p (LAVA's and PyTorch's tok/s), g (LAVA's GEMM GFLOP/s
# over its whole step), peak (the FMA peak), k (the kernel loop) and s (the GEMM share of LAVA's profiled step).
over_rounds() {
  local r
  for ((r = 0; r < rounds; r++)); do
    awk -v x="${2:-}" -v l="${lt[r]}" -v p="${pt[r]:-}" -v g="${lg[r]}" -v peak="${lk[r]:-}" -v k="${lkl[r]:-}" \
      -v s="${gs[r]:-}" "BEGIN { $1 }"
  done | median_of_rounds
}
# The fraction of a ceiling (peak: the FMA peak, k: the kernel loop) the target needs: target × PyTorch tok/s × LAVA
# GFLOP per token (GFLOP/s over tok/s) over the round's ceiling.
target_needs() {
  over_rounds "if (l > 0 && $2 > 0) printf \"%.3f\\n\", x * p * g / l / $2" "$1"
}
# What the target asks of LAVA's GEMMs with its other work as profiled (see the header), as a fraction of the kernel
# loop: g / (k · (l / (x · p) − (1 − s))). A round whose other work alone overruns the target's time counts as 1e9,
# printed "∞".
gemm_needs() {
  over_rounds 'if (l > 0 && p > 0 && k > 0 && s != "") {
                 d = l / (x * p) - (1 - s); print (d > 0 ? g / (k * d) : 1e9) }' "$1"
}
# What LAVA's GEMMs run at now, as a fraction of the kernel loop: g / (s · k).
gemm_runs_at() { over_rounds 'if (k > 0 && s > 0) print g / (s * k)'; }
declare -A torch_med  # "variant/threads" -> the peer's median tok/s, where its ratios were not refused

# One round r of each side for variant $v on $t threads: got[FIGURE/t/r] (the peer's only with PyTorch).
declare -A got
lava_round() {
  local out k=$t/$r
  # shellcheck disable=SC2086  # lava_args is a list of options
  out=$(GOMP_SPINCOUNT=$lava_spin "$lava" bench train --attn "$v" --threads "$t" --steps "$steps" --profile $lava_args \
    --format json -q) || { echo "bench-train.sh: $lava bench train --attn $v --threads $t failed" >&2; exit 1; }
  # The GEMM share of the profiled step (its "GEMM (all ops)" total), then the main row (the timed steps).
  got[gs/$k]=$(grep -F '"GEMM (all ops)"' <<<"$out" | json_num share || true)
  # The profiled step and its GEMM time, in ms (the scaling table splits the step's scaling into the two parts).
  got[pn/$k]=$(grep -F '"step (sum of the rows)"' <<<"$out" | json_num ms || true)
  got[pg/$k]=$(grep -F '"GEMM (all ops)"' <<<"$out" | json_num ms || true)
  out=$(grep -m1 -F '"tokens_per_s"' <<<"$out")
  got[lt/$k]=$(json_num tokens_per_s <<<"$out") got[lg/$k]=$(json_num gflops <<<"$out")
  got[lp/$k]=$(json_num peak_ratio <<<"$out") got[lk/$k]=$(json_num peak_gflops <<<"$out")
  got[lkl/$k]=$(json_num kernel_loop_gflops <<<"$out") got[lm/$k]=$(json_num peak_rss_mb <<<"$out")
  got[og/$k]=$(json_num output_gflops <<<"$out") got[op/$k]=$(json_num output_peak_ratio <<<"$out")
}
peer_round() {
  local out k=$t/$r
  [ $have_torch = 1 ] || return 0
  out=$("${peer_env[@]}" "${peer[@]}" --attn "$v" --threads "$t" --steps "$steps") ||
    { echo "bench-train.sh: the peer failed: ${peer[*]} --attn $v --threads $t --steps $steps" >&2; exit 1; }
  got[pt/$k]=$(json_num tokens_per_s <<<"$out") got[pm/$k]=$(json_num peak_rss_mb <<<"$out")
  got[pb/$k]=$(json_num blas_gflops <<<"$out") got[blas/$k]=$(json_str blas <<<"$out")
  got[pbt/$k]=$(json_num blas_threads <<<"$out")
  got[core/$k]=$(json_str blas_core <<<"$out" || true) got[alloc/$k]=$(json_str allocator <<<"$out" || true)
}
# FIGURE on $2 threads in each round, one per line (empty where a side did not report it).
by_round() { local r; for ((r = 0; r < rounds; r++)); do echo "${got[$1/$2/$r]:-}"; done; }
# The median over rounds of FIGURE on two threads over one, each ratio within one round (1 and 2 threads run next
# to each other); n/a when no round has both.
round_scaling() {
  local per_round
  per_round=$(for ((r = 0; r < rounds; r++)); do ratio "${got[$1/2/$r]:-}" "${got[$1/1/$r]:-}"; echo; done |
    grep -v n/a)
  median_of_rounds <<<"$per_round"
}
# The median over rounds of what the awk statement $1 prints for each round with both thread counts profiled, given
# n1, g1 (one thread's profiled step and its GEMM time, ms) and n2, g2 (two threads'); n/a when no round has both.
profile_split() {
  local r
  for ((r = 0; r < rounds; r++)); do
    awk -v n1="${got[pn/1/$r]:-}" -v g1="${got[pg/1/$r]:-}" -v n2="${got[pn/2/$r]:-}" -v g2="${got[pg/2/$r]:-}" \
      "BEGIN { if (n1 > 0 && n2 > 0 && g1 != \"\" && g2 != \"\" && g2 > 0 && n2 > g2) { $1 } }"
  done | median_of_rounds
}
# The scaling table's profile columns: the profiled step's scaling, its GEMMs' share (one thread) and scaling, the
# scaling of the rest, and the step's scaling if either part scaled by 2 with the other as measured.
profile_cells() {
  echo "$(profile_split 'print n1 / n2') | $(profile_split 'print g1 / n1') | $(profile_split 'print g1 / g2') |" \
    "$(profile_split 'print (n1 - g1) / (n2 - g2)') | $(profile_split 'print n1 / (g1 / 2 + n2 - g2)') |" \
    "$(profile_split 'print n1 / (g2 + (n1 - g1) / 2)')"
}
echo "| attn | threads | LAVA tok/s | PyTorch tok/s | speed ratio | ratio by round | target | target needs (of FMA peak) | (of kernel loop) | GEMMs would need (of kernel loop) | GEMMs run at (of kernel loop) | PyTorch BLAS, its threads (512³ GFLOP/s), allocator | LAVA GFLOP/s | of FMA peak | output layer GFLOP/s | of FMA peak | LAVA MB | PyTorch MB | memory ratio | load (1 min) | PyTorch of FMA peak |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
reversed_threads=$(tr ' ' '\n' <<<"$threads" | grep . | tac | paste -sd' ')
declare -A scaling_row  # variant -> the scaling table's cells
for v in $variants; do
  got=()
  # Round by round, every thread count in turn; in even rounds the thread counts in order and LAVA before the peer,
  # in odd rounds the reverse of both (A B, B A, ...): a machine that speeds up or slows down steadily during a
  # variant's rounds then favours neither side, nor either thread count.
  for ((r = 0; r < rounds; r++)); do
    order=$threads
    ((r % 2 == 0)) || order=$reversed_threads
    for t in $order; do
      got[la/$t/$r]=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo n/a)
      if ((r % 2 == 0)); then lava_round; peer_round; else peer_round; lava_round; fi
    done
  done
  for t in $threads; do
    for a in lt lg lp lk lkl lm og op pt pm pb la gs; do mapfile -t "$a" < <(by_round "$a" "$t"); done
    blas=${got[blas/$t/$((rounds - 1))]:-}
    # The threads the peer's BLAS reported over the rounds ("1", or e.g. "1/2" if they differed; "?" if unreported).
    blas_threads=$(by_round pbt "$t" | sort -u | sed 's/^$/?/' | paste -sd/)
    L=$(printf '%s\n' "${lt[@]}" | median); G=$(printf '%s\n' "${lg[@]}" | median)
    P=$(printf '%s\n' "${lp[@]}" | median); LM=$(printf '%s\n' "${lm[@]}" | median)
    OG=$(printf '%s\n' "${og[@]}" | median); OP=$(printf '%s\n' "${op[@]}" | median)
    target=$(target_of "$v" "$t")
    speed_ratio=n/a memory_ratio=n/a peer_blas=n/a round_ratios=n/a needs=n/a needs_loop=n/a gemm_need=n/a
    if [ $have_torch = 1 ]; then
      T=$(printf '%s\n' "${pt[@]}" | median | xargs printf '%.0f'); TM=$(printf '%s\n' "${pm[@]}" | median | xargs printf '%.0f')
      PB=$(printf '%s\n' "${pb[@]}" | median)
      core=${got[core/$t/$((rounds - 1))]:-} alloc=${got[alloc/$t/$((rounds - 1))]:-}
      peer_blas="$blas${core:+ ($core kernel)}, $blas_threads thread$([ "$blas_threads" = 1 ] || echo s) ($(printf '%.1f' "$PB"))${alloc:+, $alloc}"
      if [ "$blas" = "reference BLAS" ] || [ "$blas_threads" != "$t" ] ||
        awk -v g="$PB" -v m="$min_peer_gflops" 'BEGIN { exit !(g < m) }'; then
        speed_ratio=refused memory_ratio=refused round_ratios=refused refused=1
      else
        speed_ratio=$(ratio "$L" "$T") memory_ratio=$(ratio "$LM" "$TM")
        round_ratios=$(for ((r = 0; r < rounds; r++)); do ratio "${lt[r]}" "${pt[r]}"; echo; done | range_of)
        torch_med[$v/$t]=$T
        if [ -n "$target" ]; then
          needs=$(target_needs "$target" peak) needs_loop=$(target_needs "$target" k) gemm_need=$(gemm_needs "$target")
        fi
      fi
    else
      T=""; TM=""
    fi
    load=$(printf '%s\n' "${la[@]}" | range_of)
    # The peer does the same arithmetic per token as LAVA, so its fraction of the FMA peak is LAVA's GFLOP per token
    # at the peer's tokens/s over the round's peak (median over rounds).
    peer_peak=n/a
    [ -n "$T" ] && peer_peak=$(for ((r = 0; r < rounds; r++)); do
      awk -v pt="${pt[r]:-}" -v lg="${lg[r]:-}" -v lt="${lt[r]:-}" -v lk="${lk[r]:-}" \
        'BEGIN { if (pt > 0 && lt > 0 && lk > 0 && lg != "") printf "%.4f\n", pt * lg / lt / lk }'
    done | median_of_rounds)
    printf "| %s | %s | %.0f | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.1f | %.2f | %.1f | %.2f | %.0f | %s | %s | %s | %s |\n" \
      "$v" "$t" "$L" "${T:-n/a}" "$speed_ratio" "$round_ratios" "${target:-none}" "$needs" "$needs_loop" "$gemm_need" \
      "$(gemm_runs_at)" "$peer_blas" \
      "$G" "$P" "$OG" "$OP" "$LM" "${TM:-n/a}" "$memory_ratio" "$load" "$peer_peak"
  done
  torch_scaling=n/a
  [ -n "${torch_med[$v/1]:-}" ] && [ -n "${torch_med[$v/2]:-}" ] && torch_scaling=$(round_scaling pt)
  scaling_row[$v]="$(round_scaling lt) | $torch_scaling | $(round_scaling lk) | $(round_scaling lkl) | $(profile_cells)"
done
if grep -qw 1 <<<"$threads" && grep -qw 2 <<<"$threads"; then
  echo
  echo "| attn | LAVA scaling, 1 → 2 threads | PyTorch scaling | FMA peak scaling (the machine's ceiling) |" \
    "kernel loop scaling | profiled step scaling | GEMM share (1 thread) | GEMM scaling | rest scaling |" \
    "step scaling if GEMMs scaled 2× | if the rest scaled 2× |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  for v in $variants; do echo "| $v | ${scaling_row[$v]} |"; done
fi
if [ $refused = 1 ]; then
  echo "bench-train.sh: error: PyTorch ran on the reference BLAS, below $min_peer_gflops GFLOP/s, or with its BLAS on" \
    "another thread count than the row's (see the BLAS column); ratios refused. Install libopenblas0-pthread (make" \
    "bench does), run tools/bench-torch.py as the peer, and run again." >&2
  exit 1
fi
