#!/usr/bin/env bash
# make test-slurm: a throwaway single-node Slurm cluster runs a sweep of 4 tiny translation runs as a job array.
#
# Everything lives in one temporary directory: a munge key and munged on its own socket, a generated slurm.conf
# (free ports, ProctrackType=proctrack/linuxproc, TaskPlugin=task/none, no accounting), slurmctld and slurmd in the
# foreground as root. The test submits the array that `lava sweep slurm` writes, requeues task 1 while it trains
# (`scontrol requeue`), waits for the array, and checks that every run finished, that the requeued run stopped on
# the SIGTERM and resumed from its resume state (its train.log and Slurm log say so), and that `lava report` gives
# the same table, bit for bit, as the same sweep run here with `lava sweep run`. It stops only the daemons it
# started, by their PIDs. Prints `test-slurm: passed` or the first failed check, and exits 0 or 1.
set -euo pipefail

LAVA=${LAVA_BIN:-$(pwd)/build/lava}
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

# ---------------------------------------------------------------- the sweep: 4 tiny runs, ~1-2 s each
"$LAVA" data synth --out "$T/synth" --train 800 --valid 40 --test 10 --vocab 40 -q
sweep() {  # sweep FILE OUT
  cat >"$1" <<EOF
data = synth
epochs = 10
batch-size = 16
emb-size = 16
hidden-size = 16
attn-size = 16
inf-hidden = 16
grid.attn = soft, var-enum
seeds = 1-2
out = $2
EOF
}
sweep "$T/cluster.ini" cluster
sweep "$T/local.ini" local

"$LAVA" sweep slurm "$T/cluster.ini" --cpus 1 --mem 200M --time 00:10:00 --partition lavatest >/dev/null
SCRIPT=$T/cluster/sweep.sbatch
grep -q -- '--requeue' "$SCRIPT" && grep -q -- '--signal=B:TERM@60' "$SCRIPT" || fail "the script lacks --requeue/--signal"
JOB=$(sbatch --parsable "$SCRIPT") || fail "sbatch refused the script"
RUN1=$("$LAVA" sweep plan "$T/cluster.ini" | sed -n 2p | awk '{print $NF}')

# Requeue task 1 once it has finished an epoch (it is training, with a resume state on disk).
for _ in $(seq 600); do grep -q '"event":"epoch"' "$T/cluster/$RUN1/metrics.jsonl" 2>/dev/null && break; sleep 0.05; done
grep -q '"event":"epoch"' "$T/cluster/$RUN1/metrics.jsonl" || fail "task 1 never trained: $(cat "$T"/cluster/slurm/*_1.out)"
scontrol requeue "${JOB}_1" || fail "scontrol requeue ${JOB}_1 failed"
# Slurm holds a requeued job back for two minutes; once it is pending again, let it start now.
for _ in $(seq 300); do
  state=$(squeue -h -j "${JOB}_1" -o %t 2>/dev/null || true)
  [ "$state" = PD ] && scontrol update jobid="${JOB}_1" StartTime=now 2>/dev/null && break
  sleep 0.1
done

for _ in $(seq 1200); do [ -z "$(squeue -h -j "$JOB" 2>/dev/null)" ] && break; sleep 0.1; done
[ -z "$(squeue -h -j "$JOB")" ] || fail "the array did not finish in 2 minutes: $(squeue -j "$JOB")"

# ---------------------------------------------------------------- checks
for dir in "$T"/cluster/*/; do
  [ -f "$dir/run.json" ] || continue
  grep -q '"state":"finished"' "$dir/status.json" || fail "run $dir did not finish: $(cat "$dir/status.json")"
done
[ "$(ls "$T"/cluster/*/run.json | wc -l)" = 4 ] || fail "expected 4 runs"
LOG=$T/cluster/$RUN1/train.log
grep -q 'stopped by SIGTERM' "$LOG" || fail "the requeued run did not stop on SIGTERM: $(cat "$LOG")"
grep -q 'session 2 on .*: resuming from .*model.safetensors.resume' "$LOG" || fail "the requeued run did not resume: $(cat "$LOG")"
grep -q 'resuming from' "$T/cluster/slurm/${JOB}_1.out" || fail "the Slurm log of task 1 does not say it resumed"
grep -q 'DUE TO JOB REQUEUE' "$T/cluster/slurm/${JOB}_1.out" || fail "the Slurm log of task 1 shows no requeue"

"$LAVA" sweep run "$T/local.ini" --jobs 2 2>"$T/log/local.err" >/dev/null || fail "lava sweep run failed: $(cat "$T/log/local.err")"
for format in table csv json; do
  "$LAVA" report "$T/cluster" --metrics ppl,elbo,kl,kl_gap --format $format >"$T/cluster.$format"
  "$LAVA" report "$T/local" --metrics ppl,elbo,kl,kl_gap --format $format >"$T/local.$format"
  cmp -s "$T/cluster.$format" "$T/local.$format" || fail "lava report --format $format differs: $(diff "$T/cluster.$format" "$T/local.$format")"
done
cat "$T/cluster.table"
echo "test-slurm: passed (4-task array on a throwaway cluster, task 1 requeued while training and resumed; lava report equal to lava sweep run's, bit for bit)"
