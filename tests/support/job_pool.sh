# Sourced by the test scripts that run many processes on a few cores (tests/support/run-sharded.sh,
# tests/fuzz/run-harnesses.sh).
# job_pool N FN ARG...: runs `FN ARG` in the background for each ARG, at most N at once (each next one starts as soon
# as any running one ends), and returns when all have ended. FN records its own outcome: wait -n does not say which
# job ended.
job_pool() {
  local n=$1 fn=$2 running=0 arg
  shift 2
  for arg in "$@"; do
    if ((running == n)); then
      wait -n
      running=$((running - 1))
    fi
    "$fn" "$arg" &
    running=$((running + 1))
  done
  wait
}
