#!/usr/bin/env bash
# run-harnesses.sh DIR JOBS LIMIT NAME...: runs the libFuzzer harnesses DIR/fuzz_NAME, JOBS at a time, each with the
# libFuzzer option LIMIT (-max_total_time=S or -runs=N) from its seed corpus tests/fuzz/corpus/NAME. New inputs go
# to DIR/corpus/NAME, crashes to DIR/crashes/NAME, the log to DIR/NAME.log. Then one line a harness, in NAME order:
#   fuzz NAME: Done 1991 runs in 2 second(s) stat::number_of_executed_units: 1991
# and for a harness that crashed (sanitizer report, uncaught exception other than an input error, leak, timeout) the
# end of its log and `fuzz NAME: CRASH (log: ...)` on stderr; exits 1 if any crashed. Each harness is one process
# on one core, so JOBS of them at once take JOBS times less wall time; most of a harness's time is a fixed start-up.
set -uo pipefail
if [ $# -lt 4 ] || ! [[ $2 =~ ^[1-9][0-9]*$ ]]; then echo "usage: $0 DIR JOBS LIMIT NAME..." >&2; exit 2; fi
dir=$1 jobs=$2 limit=$3
shift 3
source "$(dirname "$0")/../support/job_pool.sh"
# run_harness NAME: one harness, its log and exit status kept in $dir.
run_harness() {
  mkdir -p "$dir/corpus/$1" "$dir/crashes/$1"
  ASAN_OPTIONS=detect_leaks=1 "$dir/fuzz_$1" "$limit" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
    -print_final_stats=1 -artifact_prefix="$dir/crashes/$1/" "$dir/corpus/$1" "tests/fuzz/corpus/$1" \
    >"$dir/$1.log" 2>&1
  echo $? >"$dir/$1.rc"
}
job_pool "$jobs" run_harness "$@"
rc=0
for name in "$@"; do
  if [ "$(cat "$dir/$name.rc")" != 0 ]; then
    tail -40 "$dir/$name.log"
    echo "fuzz $name: CRASH (log: $dir/$name.log)" >&2
    rc=1
    continue
  fi
  echo "fuzz $name: $(grep -E '^stat::number_of_executed_units|^Done' "$dir/$name.log" | tr '\n' ' ')"
done
exit $rc
