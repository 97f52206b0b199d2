#!/usr/bin/env bash
# What a catch-up costs beside the full migration it catches up, on one generated store:
#   bench/resume.sh [RUNS] [WORKDIR] [SAMPLES] [TARGET]
# RUNS defaults to 100000; WORKDIR to /dev/shm/planrun-resume (in memory: the CPU). Pass a
# directory on disk to measure there with a warm page cache (the store and DST were just
# written, so both are cached). SAMPLES (default 3) full migrations go to as many DSTs, each of
# which is then resumed, so each pass is timed SAMPLES times; the host is shared and one sample
# can be a third off. TARGET is what DST becomes (`--to`): v2 (the default) or r6, a HEAD
# store, whose plans and end users are copied too. Prints each pass's median wall time (and every sample) and the ratio of
# the medians to the full migration's:
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
    printf '%.3f' "$(echo "$end - $start" | bc -l)"
}

SAMPLES=${3:-3}
TO=${4:-v2}

# The median of the numbers given.
median() {
    printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

# Times `migrate` (with the extra arguments given) once into each DST.
each_dst() {
    local i times=()
    for i in $(seq 1 "$SAMPLES"); do
        times+=("$(wall "$BIN" migrate "$WORK/src" --out "$WORK/dst$i" --to "$TO" --jobs 2 "$@")")
    done
    echo "${times[@]}"
}

read -ra fulls <<<"$(each_dst)"
sleep 1
read -ra noops <<<"$(each_dst --resume)"
# Save 1% of the runs again, as the SDK would on its next step: another state.
mapfile -t runs < <(find "$WORK/src" -maxdepth 1 \( -name 'prun-*.json' -o -name 'pr-*.json' -o -name 'wkfl-*.json' \) | sort | awk 'NR % 100 == 0')
for run in "${runs[@]}"; do
    sed -i 's/"state": "[A-Z_]*"/"state": "FAILED"/' "$run"
done
sleep 1
read -ra changeds <<<"$(each_dst --resume)"
full=$(median "${fulls[@]}")
noop=$(median "${noops[@]}")
changed=$(median "${changeds[@]}")

printf 'runs: %s in %s, --to %s, %s saved again; medians of %s samples (all samples)\n' "$RUNS" "$WORK" "$TO" "${#runs[@]}" "$SAMPLES"
printf 'full migration:            %8.3f s                               (%s)\n' "$full" "${fulls[*]}"
printf 'resume, nothing to do:     %8.3f s  ratio %.3f (goal <= 0.1)   (%s)\n' "$noop" "$(echo "$noop / $full" | bc -l)" "${noops[*]}"
printf 'resume, 1%% saved again:    %8.3f s  ratio %.3f (goal <= 0.11)  (%s)\n' "$changed" "$(echo "$changed / $full" | bc -l)" "${changeds[*]}"
rm -rf "$WORK"
