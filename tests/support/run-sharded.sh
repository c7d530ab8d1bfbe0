#!/usr/bin/env bash
# run-sharded.sh N TESTS [ARGS...]: runs the doctest binary TESTS on N cores at once. The cases that pass ARGS'
# filters are cut into 16 N parts, the I-th run by `TESTS ARGS --shard=I/16N` (tests/support/main.cpp: every case
# runs in exactly one part), and N processes at a time take the next part as each finishes. Many small parts keep
# both cores busy to the end: with one part a core, a part that drew the slow cases ran alone for the last minute
# (the sanitizer suite's two parts took 287 s and 234 s). Then it prints the parts' outputs in order and one closing
# line summed over them:
#   tests: P passed, F failed, K skipped
# and exits 1 if any part failed. A part that ends without its closing line (a crash, a sanitizer report) counts as
# one failed case.
set -uo pipefail
if [ $# -lt 2 ] || ! [[ $1 =~ ^[1-9][0-9]*$ ]]; then echo "usage: $0 N TESTS [ARGS...]" >&2; exit 2; fi
n=$1
shift
# N processes share N cores, so an OpenMP thread that spins while it waits for work takes a core from another part:
# passive waiting ran the sanitizer suite in 183 s instead of about 195 (user time 226 s instead of 262).
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
parts=$((16 * n))
logs=$(mktemp -d "${TMPDIR:-/tmp}/lava-shards.XXXXXX")
trap 'rm -rf "$logs"' EXIT
source "$(dirname "$0")/job_pool.sh"
tests=("$@")
# run_part I: part I of the cases, its output and exit status kept in $logs.
run_part() {
  "${tests[@]}" --shard="$1/$parts" >"$logs/$1.log" 2>&1
  echo $? >"$logs/$1.rc"
}
job_pool "$n" run_part $(seq 1 "$parts")
rc=0 passed=0 failed=0 skipped=0
for i in $(seq 1 "$parts"); do
  [ "$(cat "$logs/$i.rc")" = 0 ] || rc=1
  echo "== part $i/$parts"
  grep -vE '^tests: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$logs/$i.log"
  line=$(grep -E '^tests: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$logs/$i.log" | tail -n 1)
  if [ -z "$line" ]; then
    echo "part $i/$parts: ended without its closing line"
    failed=$((failed + 1)) rc=1
    continue
  fi
  read -r p f k < <(sed -E 's/^tests: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped$/\1 \2 \3/' <<<"$line")
  passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + k))
done
echo "tests: $passed passed, $failed failed, $skipped skipped"
exit $rc
