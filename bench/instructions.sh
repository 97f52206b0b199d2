#!/usr/bin/env bash
# Instruction counts of `planrun migrate --jobs 1` and of the Python peer of ../shared/peer
# (`--jobs 1`) on one generated store in memory, under callgrind: the user-CPU goal of the
# store-scale benchmark as a figure that does not move with a shared host's load (user seconds
# there varied by half from one round to the next). Counts are of instructions, not time: they
# leave out the time spent waiting for memory, so they compare builds that hold about the same
# memory, and the time ratio stays the goal (a build holding 45 MB more of cached plans did
# fewer instructions than one holding 16 plans, and took more user time).
#
#   bench/instructions.sh [RUNS]        e.g. bench/instructions.sh 10000  (about 3 minutes)
#
# Prints each program's instructions, per run, and their ratio. The peer runs under
# PEER_PYTHON, or under a venv made in a temporary directory with the pinned pydantic of
# ../shared/peer/requirements.txt (PyPI). Needs valgrind (apt-get install valgrind); callgrind
# runs a program about fifty times slower, so 100,000 runs take the peer some twenty minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10000}
command -v valgrind > /dev/null || { echo "needs valgrind: apt-get install valgrind" >&2; exit 2; }
cargo build --release -q -p planrun
bin=${CARGO_TARGET_DIR:-$PWD/target}/release/planrun
peer_dir=$PWD/../shared/peer
mem=$(mktemp -d "${MEMDIR:-/dev/shm}/planrun-instructions.XXXXXX")
trap 'rm -rf "$mem"' EXIT
peer_python=${PEER_PYTHON:-}
if [ -z "$peer_python" ]; then
    python3 -m venv "$mem/peer-venv"
    "$mem/peer-venv/bin/pip" install -q -r "$peer_dir/requirements.txt"
    peer_python=$mem/peer-venv/bin/python
fi
"$bin" gen --runs "$runs" --seed 1 --out "$mem/store" --quiet

# count NAME CMD…: runs CMD under callgrind and prints "NAME instructions". Both programs exit 1
# when they reject some runs (the generated stores hold a few on purpose), so success is judged
# by their outputs below.
count() {
    local name=$1; shift
    valgrind --tool=callgrind --callgrind-out-file="$mem/$name.out" "$@" > /dev/null 2> "$mem/$name.log" || true
    [ -s "$mem/$name.out" ] || { cat "$mem/$name.log" >&2; exit 1; }
    echo "$name $(awk '/^summary:/ {print $2}' "$mem/$name.out")"
}

planrun=$(count planrun "$bin" migrate "$mem/store" --out "$mem/out-planrun" --jobs 1 --quiet)
[ -f "$mem/out-planrun/.planrun/report.json" ] || { echo "migrate failed" >&2; exit 1; }
peer=$(count peer "$peer_python" "$peer_dir/migrate.py" "$mem/store" "$mem/out-peer" --jobs 1)
[ -d "$mem/out-peer" ] || { echo "the peer wrote nothing" >&2; exit 1; }
printf '%s\n%s\n' "$planrun" "$peer" | awk -v runs="$runs" '
    {n[$1] = $2}
    END {
        printf "%-8s %16s %14s\n", "what", "instructions", "per run"
        printf "%-8s %16.0f %14.0f\n", "planrun", n["planrun"], n["planrun"] / runs
        printf "%-8s %16.0f %14.0f\n", "peer", n["peer"], n["peer"] / runs
        printf "planrun / peer instructions, %d runs, --jobs 1: %.3f  (the CPU goal: <= 0.25)\n", runs, n["planrun"] / n["peer"]
    }'
