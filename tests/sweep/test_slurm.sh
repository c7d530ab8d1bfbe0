#!/usr/bin/env bash
# make test-slurm: the translation table (experiments/paper/nmt.ini at its quick scale: every row, its [attn X]
# options and its [eval] sections, a few hundred updates a row) as a job array on a throwaway single-node cluster.
#
# Everything lives in one temporary directory: a munge key and munged on its own socket, a generated slurm.conf
# (free ports, ProctrackType=proctrack/linuxproc, TaskPlugin=task/none, no accounting), slurmctld and slurmd in the
# foreground as root, the synthetic corpus the table trains on and both copies of its runs (--set data=, --set out=).
# The test submits the array that `lava sweep slurm` writes, requeues task 1 while it trains (`scontrol requeue`),
# waits for the array, and checks that every run finished and was evaluated, that the requeued run stopped on the
# SIGTERM and resumed from its resume state (its train.log and Slurm log say so), and that `lava report --tables
# paper` (markdown, JSON and its pictures) is the same, byte for byte, as for the same table run here with `lava
# sweep run`, but for the wall-clock times, which are masked (mask_times below). It stops only the daemons it started, by their
# PIDs. Prints `test-slurm: passed` or the first failed check, and exits 0 or 1.
set -euo pipefail

LAVA=${LAVA_BIN:-$(pwd)/build/lava}
TABLE=$(cd "$(dirname "$0")/../.." && pwd)/experiments/paper/nmt.ini
fail() { echo "test-slurm: FAILED: $*" >&2; exit 1; }
for tool in munged mungekey slurmctld slurmd sbatch scontrol squeue sinfo parallel ss; do
  command -v "$tool" >/dev/null || fail "$tool not found (make deps installs slurm-wlm, munge and parallel)"
done
[ "$(id -u)" = 0 ] || fail "needs root: slurmctld and slurmd run as root here"
[ -x "$LAVA" ] || fail "no lava binary at $LAVA"

T=$(mktemp -d -t lava-slurm.XXXXXX)
PIDS=()
cleanup() {
  local rc=$?
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do kill "${PIDS[i]}" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do
    for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  done
  if [ $rc = 0 ] && [ -z "${KEEP:-}" ]; then rm -rf "$T"; else echo "test-slurm: files kept in $T" >&2; fi
}
trap cleanup EXIT

# A TCP port nobody listens on.
free_port() {
  local p
  while :; do
    p=$((20000 + RANDOM % 30000))
    [ -z "$(ss -Htln "sport = :$p")" ] && [ "$p" != "${1:-}" ] && { echo $p; return; }
  done
}

# ---------------------------------------------------------------- munge on its own socket
mkdir -p "$T/munge" "$T/state" "$T/spool" "$T/log"
chmod 700 "$T/munge"
mungekey --create --keyfile="$T/munge/munge.key" >/dev/null 2>&1 || fail "mungekey could not make a key"
munged --foreground --force --socket="$T/munge/socket" --key-file="$T/munge/munge.key" --pid-file="$T/munge/pid" \
  --log-file="$T/munge/log" --seed-file="$T/munge/seed" >"$T/log/munged.out" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do [ -S "$T/munge/socket" ] && break; sleep 0.1; done
[ -S "$T/munge/socket" ] || fail "munged did not start: $(tail -3 "$T/log/munged.out")"

# ---------------------------------------------------------------- slurm.conf, slurmctld, slurmd
HOST=$(hostname -s)
CTLD_PORT=$(free_port)
SLURMD_PORT=$(free_port "$CTLD_PORT")
cat >"$T/slurm.conf" <<EOF
ClusterName=lavatest
SlurmctldHost=$HOST
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
AuthType=auth/munge
AuthInfo=socket=$T/munge/socket
CredType=cred/munge
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
KillWait=30
MinJobAge=600
NodeName=$HOST CPUs=$(nproc) RealMemory=1000 State=UNKNOWN
PartitionName=lavatest Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$T/slurm.conf
slurmctld -D -f "$SLURM_CONF" >"$T/log/slurmctld.out" 2>&1 &
PIDS+=($!)
slurmd -D -f "$SLURM_CONF" >"$T/log/slurmd.out" 2>&1 &
PIDS+=($!)
for _ in $(seq 300); do [ "$(sinfo -h -o %T 2>/dev/null)" = idle ] && break; sleep 0.1; done
[ "$(sinfo -h -o %T 2>/dev/null)" = idle ] || fail "the node did not come up: $(tail -3 "$T/log/slurmctld.log")"

# ---------------------------------------------------------------- the table at its quick scale, ~2-6 s a run
"$LAVA" data synth --out "$T/synth" --train 800 --valid 40 --test 20 --vocab 40 -q
quick=(--scale quick --set "data=$T/synth")
"$LAVA" sweep slurm "$TABLE" "${quick[@]}" --set "out=$T/cluster" --cpus 1 --mem 200M --time 00:10:00 \
  --partition lavatest >/dev/null
SCRIPT=$T/cluster/sweep.sbatch
grep -q -- '--requeue' "$SCRIPT" && grep -q -- '--signal=B:TERM@60' "$SCRIPT" || fail "the script lacks --requeue/--signal"
JOB=$(sbatch --parsable "$SCRIPT") || fail "sbatch refused the script"
RUNS=$("$LAVA" sweep plan "$TABLE" "${quick[@]}" | wc -l)
RUN1=$("$LAVA" sweep plan "$TABLE" "${quick[@]}" | sed -n 2p | sed -E 's/.* --run ([0-9a-f]+).*/\1/')

# Requeue task 1 once it has finished an epoch (it is training, with a resume state on disk).
for _ in $(seq 1200); do grep -q '"event":"epoch"' "$T/cluster/$RUN1/metrics.jsonl" 2>/dev/null && break; sleep 0.05; done
grep -q '"event":"epoch"' "$T/cluster/$RUN1/metrics.jsonl" || fail "task 1 never trained: $(cat "$T"/cluster/slurm/*_1.out)"
scontrol requeue "${JOB}_1" || fail "scontrol requeue ${JOB}_1 failed"
# Slurm holds a requeued job back for two minutes; once it is pending again, let it start now.
for _ in $(seq 300); do
  state=$(squeue -h -j "${JOB}_1" -o %t 2>/dev/null || true)
  [ "$state" = PD ] && scontrol update jobid="${JOB}_1" StartTime=now 2>/dev/null && break
  sleep 0.1
done

for _ in $(seq 3000); do [ -z "$(squeue -h -j "$JOB" 2>/dev/null)" ] && break; sleep 0.1; done
[ -z "$(squeue -h -j "$JOB")" ] || fail "the array did not finish in 5 minutes: $(squeue -j "$JOB")"

# ---------------------------------------------------------------- checks
for dir in "$T"/cluster/*/; do
  [ -f "$dir/run.json" ] || continue
  grep -q '"state":"finished"' "$dir/status.json" || fail "run $dir did not finish: $(cat "$dir/status.json")"
done
[ "$(ls "$T"/cluster/*/run.json | wc -l)" = "$RUNS" ] || fail "expected $RUNS runs"
LOG=$T/cluster/$RUN1/train.log
grep -q 'stopped by SIGTERM' "$LOG" || fail "the requeued run did not stop on SIGTERM: $(cat "$LOG")"
grep -q 'session 2 on .*: resuming from .*model.safetensors.resume' "$LOG" || fail "the requeued run did not resume: $(cat "$LOG")"
grep -q 'resuming from' "$T/cluster/slurm/${JOB}_1.out" || fail "the Slurm log of task 1 does not say it resumed"
grep -q 'DUE TO JOB REQUEUE' "$T/cluster/slurm/${JOB}_1.out" || fail "the Slurm log of task 1 shows no requeue"

"$LAVA" sweep run "$TABLE" "${quick[@]}" --set "out=$T/local" --jobs 2 2>"$T/log/local.err" >/dev/null ||
  fail "lava sweep run failed: $(tail -5 "$T/log/local.err")"
evals() { (cd "$1" && ls -- */eval/*.jsonl); }
[ "$(evals "$T/cluster")" = "$(evals "$T/local")" ] || fail "the evaluations differ: $(diff <(evals "$T/cluster") <(evals "$T/local"))"

# The report's times differ from run to run, and only they may: the `Train time` column of Table 1, the `train
# time` column of the table of stops and the compute table's `(run-hours)` and `(core-hours)` columns in markdown;
# their train_seconds, train_hours, train_core_hours and eval_hours in JSON. Each becomes `masked`.
mask_times() {  # mask_times markdown|json < report
  if [ "$1" = json ]; then
    sed -E 's/"(train_seconds|train_hours|train_core_hours|eval_hours)":[^,}]*/"\1":"masked"/g'
  else
    awk -F'|' -v OFS='|' '
      { gsub(/\\\|/, "\001") }  # an escaped | inside a cell is no column border
      /^\|/ && !table {         # a table header: the columns to mask
        table = 1; delete timed
        for (i = 2; i < NF; i++) if ($i ~ /[Tt]rain time|run-hours|core-hours/) timed[i] = 1
      }
      !/^\|/ { table = 0 }
      table && prev_in_table && !/^\|[-:|]*$/ { for (i in timed) $i = " masked " }
      { prev_in_table = table; gsub(/\001/, "\\|"); print }'
  fi
}
for format in markdown json; do
  for side in cluster local; do
    "$LAVA" report "$T/$side" --tables paper --format "$([ $format = json ] && echo json || echo table)" \
      --plots "$T/plots-$side" >"$T/$side.$format" 2>"$T/log/report-$side.err" ||
      fail "lava report $T/$side --tables paper --format $format failed: $(cat "$T/log/report-$side.err")"
    mask_times $format <"$T/$side.$format" >"$T/$side.masked.$format"
  done
  grep -q masked "$T/local.masked.$format" || fail "no time masked in the $format report: has its form changed?"
  cmp -s "$T/cluster.masked.$format" "$T/local.masked.$format" ||
    fail "lava report --tables paper ($format) differs: $(diff "$T/cluster.masked.$format" "$T/local.masked.$format")"
done
# The pictures (learning curves; PPL against K, the only place the K = 1..10 evaluations show) hold no times.
for svg in nmt-curves.svg kmax.svg; do
  cmp -s "$T/plots-cluster/$svg" "$T/plots-local/$svg" || fail "lava report --plots: $svg differs"
done
sed -n '/^## Table 1/,/^Where/p' "$T/cluster.markdown"
echo "test-slurm: passed (the translation table's $RUNS runs at quick scale as an array on a throwaway cluster, task 1" \
  "requeued while training and resumed; lava report --tables paper and its pictures equal to lava sweep run's, byte" \
  "for byte but the times)"
