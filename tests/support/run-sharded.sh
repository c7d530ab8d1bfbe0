#!/usr/bin/env bash
# run-sharded.sh N TESTS [ARGS...]: runs the doctest binary TESTS as N processes at once, the I-th with --shard=I/N
# (tests/support/main.cpp: every case that passes ARGS' filters runs in exactly one of them), prints their outputs
# one after another, then one closing line summed over them:
#   tests: P passed, F failed, K skipped
# and exits 1 if any process failed. A process that ends without its closing line (a crash, a sanitizer report)
# counts as one failed case.
set -uo pipefail
if [ $# -lt 2 ] || ! [[ $1 =~ ^[1-9][0-9]*$ ]]; then echo "usage: $0 N TESTS [ARGS...]" >&2; exit 2; fi
n=$1
shift
logs=$(mktemp -d "${TMPDIR:-/tmp}/lava-shards.XXXXXX")
trap 'rm -rf "$logs"' EXIT
pids=()
for i in $(seq 1 "$n"); do
  "$@" --shard="$i/$n" >"$logs/$i.log" 2>&1 &
  pids+=($!)
done
rc=0 passed=0 failed=0 skipped=0
for i in $(seq 1 "$n"); do
  wait "${pids[$((i - 1))]}" || rc=1
  echo "== shard $i/$n"
  grep -vE '^tests: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$logs/$i.log"
  line=$(grep -E '^tests: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$logs/$i.log" | tail -n 1)
  if [ -z "$line" ]; then
    echo "shard $i/$n: ended without its closing line"
    failed=$((failed + 1)) rc=1
    continue
  fi
  read -r p f k < <(sed -E 's/^tests: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped$/\1 \2 \3/' <<<"$line")
  passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + k))
done
echo "tests: $passed passed, $failed failed, $skipped skipped"
exit $rc
