#!/usr/bin/env bash
# What a catch-up costs beside the full migration it catches up, on one generated store:
#   bench/resume.sh [RUNS] [WORKDIR]
# RUNS defaults to 100000; WORKDIR to /dev/shm/planrun-resume (in memory: the CPU). Pass a
# directory on disk to measure there with a warm page cache (the store and DST were just
# written, so both are cached). Prints each pass's wall time and its ratio to the full
# migration's:
#   * a resume with nothing to do (goal <= 0.1);
#   * a resume after 1% of the runs were saved again with another state (goal <= 0.1 + 1%,
#     i.e. 0.11).
# Each pass runs after the store has settled for a second, so no file is racily clean.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-100000}
WORK=${2:-/dev/shm/planrun-resume}
TARGET=${CARGO_TARGET_DIR:-target}
cargo build --release -p planrun >&2
BIN="$TARGET/release/planrun"
rm -rf "$WORK"
mkdir -p "$WORK"
"$BIN" gen --runs "$RUNS" --seed 1 --out "$WORK/src" >/dev/null
sleep 1

# Wall seconds of one command, its output discarded.
wall() {
    local start end
    start=$(date +%s.%N)
    "$@" >/dev/null
    end=$(date +%s.%N)
    echo "$end - $start" | bc -l
}

full=$(wall "$BIN" migrate "$WORK/src" --out "$WORK/dst" --jobs 2)
sleep 1
noop=$(wall "$BIN" migrate "$WORK/src" --out "$WORK/dst" --jobs 2 --resume)
# Save 1% of the runs again, as the SDK would on its next step: another state.
mapfile -t runs < <(find "$WORK/src" -maxdepth 1 \( -name 'prun-*.json' -o -name 'pr-*.json' -o -name 'wkfl-*.json' \) | sort | awk 'NR % 100 == 0')
for run in "${runs[@]}"; do
    sed -i 's/"state": "[A-Z_]*"/"state": "FAILED"/' "$run"
done
sleep 1
changed=$(wall "$BIN" migrate "$WORK/src" --out "$WORK/dst" --jobs 2 --resume)

printf 'runs: %s in %s, %s saved again\n' "$RUNS" "$WORK" "${#runs[@]}"
printf 'full migration:            %8.3f s\n' "$full"
printf 'resume, nothing to do:     %8.3f s  ratio %.3f (goal <= 0.1)\n' "$noop" "$(echo "$noop / $full" | bc -l)"
printf 'resume, 1%% saved again:    %8.3f s  ratio %.3f (goal <= 0.11)\n' "$changed" "$(echo "$changed / $full" | bc -l)"
rm -rf "$WORK"
