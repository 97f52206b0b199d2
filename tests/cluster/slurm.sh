#!/usr/bin/env bash
# Runs the Slurm array example of docs/migration.md ("## Sharding") on a throwaway one-node Slurm
# cluster on this machine, and checks what the guide promises of it:
#   1. the array (8 tasks, one shard each, sharing one DST), merged with `planrun report merge`,
#      leaves a DST tree byte-identical to one single-process `planrun migrate` (`.planrun/` aside);
#   2. the same into a fresh DST while two tasks are killed hard (`scancel --signal=KILL` on one
#      array task, SIGKILL to another task's `planrun`) and requeued (`scontrol requeue`): the
#      requeued tasks resume (`--resume` is in the script), and the final tree is the same, with
#      no temp file left and every shard's journal complete.
# Its last line is `slurm: N passed, M failed`; it exits non-zero on any failure.
#
# Needs root (it installs slurm-wlm and munge with apt-get when they are missing, and runs the
# daemons as root). Everything else lives in a temp dir: a fresh munge key, slurm.conf, the
# state, spool and log dirs, the store. It starts munged, slurmctld and slurmd, and stops exactly
# those processes, by pid, on exit, whatever happens. Every wait has a timeout.
#
# Environment: PLANRUN_BIN (the binary; default: cargo's debug build, built if missing),
# SLURM_TEST_RUNS (store size, default 8000), SLURM_TEST_KEEP=1 (keep the temp dir).
# No `set -e`: every step's failure is checked where it happens, and counted.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RUNS=${SLURM_TEST_RUNS:-8000}
SHARDS=8
START=$SECONDS
PASSED=0
FAILED=0

say() { echo "slurm.sh: $*"; }
pass() {
    PASSED=$((PASSED + 1))
    say "ok: $*"
}
fail() {
    FAILED=$((FAILED + 1))
    say "FAILED: $*"
}

# --- the daemons, and stopping them whatever happens -------------------------------------------
TMP=""
DAEMONS=() # "name:pid", in start order
JOBS=()    # job ids submitted, cancelled on exit

stop_pid() { # name pid: SIGTERM, up to 10 s, then SIGKILL
    local name=$1 pid=$2 i
    kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    say "$name (pid $pid) ignored SIGTERM for 10 s: SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
}

# The pids of the processes of this cluster other than the daemons: the job step daemons
# (slurmstepd) and the jobs' processes. They inherit SLURM_CONF from slurmd or sbatch, or run in
# or name the temp dir.
cluster_pids() {
    local dir pid
    local -a words
    for dir in /proc/[0-9]*; do
        pid=${dir#/proc/}
        [ "$pid" = $$ ] || [ "$pid" = "$BASHPID" ] && continue
        words=()
        { mapfile -d '' -t words; } 2>/dev/null <"$dir/environ"
        if [[ " ${words[*]-} " == *" SLURM_CONF=$TMP/etc/slurm.conf "* ]]; then
            echo "$pid"
            continue
        fi
        words=()
        { mapfile -d '' -t words; } 2>/dev/null <"$dir/cmdline"
        if [[ "${words[*]-}" == *"$TMP/"* ]]; then
            echo "$pid"
        fi
    done
}

# Cancels the jobs, stops the daemons (by pid, newest first), checks that no process of the
# cluster is left, and removes the temp dir (kept on failure or with SLURM_TEST_KEEP=1).
# Returns 1 if it had to kill processes left behind.
TORN_DOWN=0
teardown() { # keep(0/1)
    local keep=$1 i entry pid left="" status=0
    [ "$TORN_DOWN" = 1 ] && return 0
    TORN_DOWN=1
    [ -n "$TMP" ] || return 0
    for job in "${JOBS[@]}"; do
        timeout 10 scancel "$job" 2>/dev/null
    done
    for ((i = ${#DAEMONS[@]} - 1; i >= 0; i--)); do
        entry=${DAEMONS[i]}
        stop_pid "${entry%%:*}" "${entry#*:}"
    done
    # Job processes (slurmstepd, the tasks) are not slurmd's children: wait for them to end,
    # then kill any left, by pid, and fail.
    for ((i = 0; i < 50; i++)); do
        left=$(cluster_pids)
        [ -z "$left" ] && break
        sleep 0.2
    done
    if [ -n "$left" ]; then
        say "processes of the test cluster left after its daemons stopped: $(echo $left); SIGKILL"
        for pid in $left; do kill -KILL "$pid" 2>/dev/null; done
        status=1
        keep=1
    fi
    if [ "${SLURM_TEST_KEEP:-}" = 1 ] || [ "$keep" = 1 ]; then
        say "kept $TMP (logs in $TMP/log)"
    else
        rm -rf "$TMP"
    fi
    return "$status"
}
on_exit() {
    local status=$?
    trap - EXIT INT TERM
    [ "$status" = 0 ] || say "stopped early (exit $status)"
    teardown 1
    exit "$status"
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Tears down, then prints the summary as the last line.
finish() {
    local keep=0
    [ "$FAILED" -gt 0 ] && keep=1
    teardown "$keep" || fail "processes were left behind"
    say "took $((SECONDS - START)) s"
    echo "slurm: $PASSED passed, $FAILED failed"
    trap - EXIT
    if [ "$FAILED" -gt 0 ] || [ "$PASSED" -eq 0 ]; then exit 1; fi
    exit 0
}
abort() { # a setup step failed: nothing after it can run
    fail "$*"
    finish
}

# waits for `cond` (a command) for up to `seconds`; polls every 0.1 s
wait_for() {
    local seconds=$1 deadline
    shift
    deadline=$((SECONDS + seconds))
    until "$@"; do
        [ "$SECONDS" -ge "$deadline" ] && return 1
        sleep 0.1
    done
}

# --- slurm and munge ----------------------------------------------------------------------------
if [ "$(id -u)" != 0 ]; then
    echo "tests/cluster/slurm.sh: must run as root (it runs a throwaway Slurm cluster)" >&2
    echo "slurm: 0 passed, 1 failed"
    exit 1
fi
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null ||
    ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
    say "installing slurm-wlm and munge"
    export DEBIAN_FRONTEND=noninteractive
    timeout 300 apt-get update -qq >/dev/null || abort "apt-get update failed"
    timeout 600 apt-get install -y -qq slurm-wlm munge >/dev/null || abort "apt-get install slurm-wlm munge failed"
fi

# --- the binary -----------------------------------------------------------------------------------
if [ -z "${PLANRUN_BIN:-}" ]; then
    (cd "$ROOT" && cargo build -q -p planrun --bin planrun --locked) || abort "cargo build failed"
    PLANRUN_BIN=${CARGO_TARGET_DIR:-$ROOT/target}/debug/planrun
fi
[ -x "$PLANRUN_BIN" ] || abort "no planrun binary at $PLANRUN_BIN"
BIN_DIR=$(cd "$(dirname "$PLANRUN_BIN")" && pwd)
# The guide's script runs `planrun` from PATH, as written; sbatch passes PATH on to the tasks.
export PATH="$BIN_DIR:$PATH"
[ "$(command -v planrun)" = "$BIN_DIR/planrun" ] || abort "planrun on PATH is not $PLANRUN_BIN"

TMP=$(mktemp -d /tmp/planrun-slurm.XXXXXX)
chmod 700 "$TMP"
mkdir -p "$TMP"/{etc,munge,log,state,spool,out}
HOST=$(hostname -s)

# A throwaway munge key, its own socket.
head -c 1024 /dev/urandom >"$TMP/munge/munge.key"
chmod 600 "$TMP/munge/munge.key"
MUNGE_SOCKET=$TMP/munge/munge.socket
munged -F --force --key-file="$TMP/munge/munge.key" --socket="$MUNGE_SOCKET" \
    --pid-file="$TMP/munge/munged.pid" --seed-file="$TMP/munge/munged.seed" \
    --log-file="$TMP/log/munged.log" >"$TMP/log/munged.out" 2>&1 &
DAEMONS+=("munged:$!")
wait_for 10 test -S "$MUNGE_SOCKET" || abort "munged did not start: $(tail -3 "$TMP/log/munged.log" 2>/dev/null)"

# The node as slurmd sees it (CPUs, sockets, memory), so the node is not drained for a mismatch.
NODE=$(slurmd -C | head -1 | sed "s/^NodeName=[^ ]*/NodeName=$HOST NodeAddr=127.0.0.1/")
CPUS=$(echo "$NODE" | sed -n 's/.* CPUs=\([0-9]*\).*/\1/p')
export SLURM_CONF=$TMP/etc/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=planrun-test
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# cred_expire is also how long a requeued job waits before it may start again (default 120 s).
AuthInfo=socket=$MUNGE_SOCKET,cred_expire=5
StateSaveLocation=$TMP/state
SlurmdSpoolDir=$TMP/spool
SlurmctldPidFile=$TMP/state/slurmctld.pid
SlurmdPidFile=$TMP/spool/slurmd.pid
SlurmctldLogFile=$TMP/log/slurmctld.log
SlurmdLogFile=$TMP/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
JobRequeue=1
MinJobAge=600
KillWait=5
InactiveLimit=0
$NODE State=UNKNOWN
PartitionName=test Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF

slurmctld -D -i -f "$SLURM_CONF" >"$TMP/log/slurmctld.out" 2>&1 &
DAEMONS+=("slurmctld:$!")
slurmd -D -f "$SLURM_CONF" >"$TMP/log/slurmd.out" 2>&1 &
DAEMONS+=("slurmd:$!")

node_idle() { timeout 10 sinfo -h -n "$HOST" -o %t 2>/dev/null | grep -qx 'idle'; }
if ! wait_for 60 node_idle; then
    tail -5 "$TMP/log/slurmctld.log" "$TMP/log/slurmd.log" 2>/dev/null || true
    abort "the one-node cluster did not come up (node state: $(timeout 10 sinfo -h -o %t 2>&1))"
fi
say "cluster up on $HOST ($CPUS CPUs) after $((SECONDS - START)) s"

# --- the store and the reference -----------------------------------------------------------------
STORE=$TMP/store
planrun gen --runs "$RUNS" --seed 15 --out "$STORE" -q || abort "planrun gen failed"
# A single-process migration of the same store; exit 1 (rejected or blocked runs) is a result.
# `planrun gen` stores hold none, so it must be 0 here.
planrun migrate "$STORE" --out "$TMP/reference" -q || abort "the reference migrate failed (exit $?)"
REF_RUNS=$(grep -o '"runs": [0-9]*' "$TMP/reference/.planrun/report.json" | head -1 | grep -o '[0-9]*')
[ "$REF_RUNS" = "$RUNS" ] || abort "the reference report counts $REF_RUNS runs, not $RUNS"
say "store of $RUNS runs and its reference migration ready after $((SECONDS - START)) s"

# --- the guide's script ---------------------------------------------------------------------------
# The guide's Slurm array script, as written: the ```sh block (marked `sh no-run`, since the
# guides' snippet check cannot run it) that starts with #!/bin/bash.
GUIDE_SCRIPT=$(awk '
    /^```sh( no-run)?$/ { inblock = 1; body = ""; next }
    /^```$/ { if (inblock && body ~ /^#!\/bin\/bash\n/ && body ~ /#SBATCH --array/) { printf "%s", body; exit } inblock = 0; next }
    inblock { body = body $0 "\n" }
' "$ROOT/docs/migration.md")
echo "$GUIDE_SCRIPT" | grep -q -- '--shard "${SLURM_ARRAY_TASK_ID}/${SLURM_ARRAY_TASK_COUNT}"' ||
    abort "docs/migration.md has no Slurm array script with --shard \"\${SLURM_ARRAY_TASK_ID}/\${SLURM_ARRAY_TASK_COUNT}\""
grep -q -- "--array=0-$((SHARDS - 1))\$" <<<"$GUIDE_SCRIPT" || abort "the guide's array is not 0-$((SHARDS - 1))"

# Only the paths are substituted.
script_for() { # dst -> the batch script's path
    local dst=$1 file=$TMP/$(basename "$1").sbatch
    printf '%s\n' "$GUIDE_SCRIPT" | sed -e "s#/shared/portia-v2#$dst#g" -e "s#/shared/portia#$STORE#g" >"$file"
    echo "$file"
}

# Submits the guide's script. `--cpus-per-task=1` on the command line overrides the script's
# `#SBATCH --cpus-per-task=4`, which a 2-CPU node cannot schedule; the script itself runs as
# written (so `--jobs "$SLURM_CPUS_PER_TASK"` is `--jobs 1`). The rest is the script's own.
submit() { # script name -> job id
    timeout 30 sbatch --parsable --cpus-per-task=1 --chdir="$TMP" \
        --output="$TMP/out/$2-%A_%a.out" "$1" | cut -d';' -f1
}

# `scontrol show job` for every task of an array, one line each.
tasks() { timeout 10 scontrol -o show job "$1" 2>/dev/null; }
task_field() { # job task field
    tasks "$1" | grep -E " ArrayTaskId=$2 " | grep -o " $3=[^ ]*" | head -1 | cut -d= -f2
}
all_tasks_finished() { # job: no task pending, running or completing
    local out
    out=$(tasks "$1") || return 1
    [ "$(echo "$out" | grep -c ' ArrayTaskId=[0-9]* ')" -eq "$SHARDS" ] || return 1
    ! echo "$out" | grep -qE 'JobState=(PENDING|RUNNING|COMPLETING|CONFIGURING|REQUEUED|REQUEUE_HOLD|RESIZING|SUSPENDED)'
}
# Every task COMPLETED with exit 0 (the script maps planrun's exit 1 to 0).
check_tasks_completed() { # job what
    local bad
    bad=$(tasks "$1" | grep -v 'JobState=COMPLETED .*ExitCode=0:0' | grep -o ' ArrayTaskId=[0-9]* \| JobState=[^ ]*\| ExitCode=[^ ]*' | tr -d '\n')
    if [ -z "$bad" ] && [ "$(tasks "$1" | grep -c 'JobState=COMPLETED')" -eq "$SHARDS" ]; then
        pass "$2: all $SHARDS array tasks completed with exit 0"
    else
        fail "$2: array tasks not all completed:$bad"
        tail -n 3 "$TMP"/out/*.out 2>/dev/null | tail -n 40
    fi
}

# Merges the shard reports as the guide says, then checks the tree, temp files and journals.
check_result() { # dst what
    local dst=$1 what=$2 merged=$TMP/$(basename "$1")-report.json out problems=""
    if out=$(planrun report merge "$dst"/.planrun/report-*-of-$SHARDS.json --out "$merged" 2>&1); then
        if grep -q "\"runs\": $RUNS," "$merged"; then
            pass "$what: planrun report merge of the $SHARDS shard reports counts all $RUNS runs"
        else
            fail "$what: the merged report does not count $RUNS runs"
        fi
    else
        fail "$what: planrun report merge failed: $out"
    fi
    if out=$(diff -r -q --no-dereference --exclude=.planrun "$TMP/reference" "$dst" 2>&1); then
        pass "$what: DST equals the single-process migration byte for byte (.planrun/ aside)"
    else
        fail "$what: DST differs from the single-process migration: $(echo "$out" | head -5)"
    fi
    out=$(find "$dst" -name '.tmp-*' | head -5)
    if [ -z "$out" ]; then pass "$what: no temp files left"; else fail "$what: temp files left: $out"; fi
    # Each shard's journal gives every run of its shard a final line; together, every run of SRC.
    local i journal finals total=0 reported
    for ((i = 0; i < SHARDS; i++)); do
        journal=$dst/.planrun/journal-$i-of-$SHARDS.jsonl
        finals=$(grep -E '"event":"(completed|failed)"' "$journal" 2>/dev/null | grep -o '"run":"[^"]*"' | sort -u | wc -l)
        reported=$(grep -o '"runs": [0-9]*' "$dst/.planrun/report-$i-of-$SHARDS.json" 2>/dev/null | head -1 | grep -o '[0-9]*$')
        total=$((total + finals))
        if [ "$finals" -eq 0 ] || [ "$finals" != "$reported" ]; then
            problems+=" shard $i: $finals runs with a final line, ${reported:-no} in its report;"
        fi
    done
    [ "$total" -eq "$RUNS" ] || problems+=" the journals settle $total runs, not $RUNS;"
    if [ -z "$problems" ]; then
        pass "$what: each of the $SHARDS journals is complete ($total runs in all)"
    else
        fail "$what: journals incomplete:$problems"
    fi
}

# --- 1. the array as written ------------------------------------------------------------------
DST1=$TMP/dst-array
SCRIPT1=$(script_for "$DST1")
JOB1=$(submit "$SCRIPT1" array) || abort "sbatch failed"
JOBS+=("$JOB1")
say "1. submitted the guide's array as job $JOB1"
if wait_for 90 all_tasks_finished "$JOB1"; then
    say "1. job $JOB1 finished after $((SECONDS - START)) s"
    check_tasks_completed "$JOB1" "1. array"
    check_result "$DST1" "1. array"
else
    fail "1. job $JOB1 did not finish within 90 s"
    tasks "$JOB1" | grep -o ' ArrayTaskId=[0-9]* \| JobState=[^ ]*' | tr -d '\n'
    echo
fi

# --- 2. the array again, two tasks killed hard and requeued ------------------------------------
# The tasks' shard sizes (from run 1's journals), to kill a task while it still has work to do.
shard_runs() { grep -c '"event":"started"' "$DST1/.planrun/journal-$1-of-$SHARDS.jsonl" 2>/dev/null || echo 0; }
completed_lines() { grep -c '"event":"completed"' "$1" 2>/dev/null || true; }
# The pid of the `planrun migrate` process of shard `i` of `dst` (the task's child).
planrun_pid() { # dst i
    local pid
    for pid in $(pgrep -x planrun); do
        if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "--out $1 --shard $2/$SHARDS "; then
            echo "$pid"
            return 0
        fi
    done
    return 1
}
# Waits until some task is running and has journaled at least one committed chunk, but has not
# finished its shard; prints that task id. Tasks listed in $3 are not chosen.
KILL_AT=256
killable_task() { # job dst exclude
    local t journal done_lines
    for t in $(tasks "$1" | grep 'JobState=RUNNING' | grep -o ' ArrayTaskId=[0-9]*' | cut -d= -f2); do
        [[ " $3 " == *" $t "* ]] && continue
        journal=$2/.planrun/journal-$t-of-$SHARDS.jsonl
        done_lines=$(completed_lines "$journal")
        if [ "${done_lines:-0}" -ge "$KILL_AT" ] && [ "$done_lines" -lt "$(shard_runs "$t")" ] &&
            planrun_pid "$2" "$t" >/dev/null; then
            echo "$t"
            return 0
        fi
    done
    return 1
}
await_killable() { # job dst exclude -> task id, within 60 s
    local deadline=$((SECONDS + 60)) t
    while [ "$SECONDS" -lt "$deadline" ]; do
        if t=$(killable_task "$@"); then
            echo "$t"
            return 0
        fi
        sleep 0.02
    done
    return 1
}
task_done() { # job task: the task has ended (any final state)
    local state
    state=$(task_field "$1" "$2" JobState)
    [ -n "$state" ] && ! [[ "$state" =~ ^(PENDING|RUNNING|COMPLETING|CONFIGURING|REQUEUED)$ ]]
}

DST2=$TMP/dst-killed
SCRIPT2=$(script_for "$DST2")
JOB2=$(submit "$SCRIPT2" killed) || abort "sbatch failed"
JOBS+=("$JOB2")
say "2. submitted the guide's array again as job $JOB2"
KILLED=()
# One task killed through Slurm: SIGKILL to the whole batch step (the script and planrun).
if A=$(await_killable "$JOB2" "$DST2" ""); then
    lines=$(completed_lines "$DST2/.planrun/journal-$A-of-$SHARDS.jsonl")
    timeout 10 scancel --signal=KILL "${JOB2}_$A"
    say "2. scancel --signal=KILL ${JOB2}_$A: shard $A/$SHARDS at $lines of $(shard_runs "$A") runs journaled completed"
    KILLED+=("$A")
else
    fail "2. no task could be caught running with >= $KILL_AT runs journaled and work left"
fi
# Another task's planrun process killed directly: the batch script sees exit 137 and fails.
if B=$(await_killable "$JOB2" "$DST2" "${KILLED[*]}") && PID=$(planrun_pid "$DST2" "$B"); then
    lines=$(completed_lines "$DST2/.planrun/journal-$B-of-$SHARDS.jsonl")
    kill -KILL "$PID"
    say "2. kill -KILL $PID (planrun of task ${JOB2}_$B): shard $B/$SHARDS at $lines of $(shard_runs "$B") runs journaled completed"
    KILLED+=("$B")
else
    fail "2. no second task could be caught running with >= $KILL_AT runs journaled and work left"
fi
for t in "${KILLED[@]}"; do
    if wait_for 30 task_done "$JOB2" "$t"; then
        state=$(task_field "$JOB2" "$t" JobState)
        if [ "$state" = COMPLETED ]; then
            fail "2. task ${JOB2}_$t completed although it was killed"
        else
            pass "2. killed task ${JOB2}_$t ended $state (exit $(task_field "$JOB2" "$t" ExitCode))"
        fi
        if out=$(timeout 10 scontrol requeue "${JOB2}_$t" 2>&1); then
            say "2. scontrol requeue ${JOB2}_$t"
        else
            fail "2. scontrol requeue ${JOB2}_$t failed: $out"
        fi
    else
        fail "2. killed task ${JOB2}_$t did not end within 30 s"
    fi
done
if wait_for 120 all_tasks_finished "$JOB2"; then
    say "2. job $JOB2 finished after $((SECONDS - START)) s"
    check_tasks_completed "$JOB2" "2. killed and requeued"
    check_result "$DST2" "2. killed and requeued"
    # A requeued task resumed: its journal has a second session, a resume.
    for t in "${KILLED[@]}"; do
        journal=$DST2/.planrun/journal-$t-of-$SHARDS.jsonl
        if grep -q '"event":"session","resume":true' "$journal"; then
            pass "2. requeued task ${JOB2}_$t resumed its shard ($(grep -c '"event":"session"' "$journal") sessions in its journal)"
        else
            fail "2. requeued task ${JOB2}_$t did not resume (no resumed session in $journal)"
        fi
    done
else
    fail "2. job $JOB2 did not finish within 120 s of the requeue"
    tasks "$JOB2" | grep -o ' ArrayTaskId=[0-9]* \| JobState=[^ ]*' | tr -d '\n'
    echo
fi

finish
