#!/usr/bin/env bash
# Store-scale benchmark of `planrun migrate`: generates a store of N runs (default 100,000) and,
# in one run, measures `cp -r` of the store (the file-layer floor), `migrate --jobs 1` and
# `migrate --jobs 2` (wall, user and system CPU, peak RSS via /usr/bin/time -v), plus the peak RSS
# of a 10,000-run migration for the memory-scaling ratio. Prints a table and writes JSON.
#
#   bench/store-scale.sh [RUNS] [WORKDIR]        e.g. bench/store-scale.sh 100000 /tmp/planrun-bench
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-100000}
work=${2:-$(mktemp -d /tmp/planrun-bench.XXXXXX)}
[ -x /usr/bin/time ] || { echo "needs GNU time: apt-get install time" >&2; exit 2; }
cargo build --release -q -p planrun-converter
bin=target/release/planrun
mkdir -p "$work"
rm -rf "$work/store" "$work/small" "$work/out" "$work/copy"
"$bin" gen --runs "$runs" --seed 1 --out "$work/store" --quiet
"$bin" gen --runs 10000 --seed 1 --out "$work/small" --quiet
input_bytes=$(du -sb "$work/store" | cut -f1)

# measure NAME CMD…: runs CMD under /usr/bin/time -v and prints "NAME wall user sys rss_kb".
measure() {
    local name=$1; shift
    sync
    /usr/bin/time -v -o "$work/$name.time" "$@" > /dev/null 2>&1 || true
    local wall user sys rss
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,t,":"); s=0; for(i=1;i<=n;i++) s=s*60+t[i]; print s}' "$work/$name.time")
    user=$(awk -F': ' '/User time/ {print $2}' "$work/$name.time")
    sys=$(awk -F': ' '/System time/ {print $2}' "$work/$name.time")
    rss=$(awk -F': ' '/Maximum resident/ {print $2}' "$work/$name.time")
    echo "$name $wall $user $sys $rss"
}

results=()
results+=("$(measure cp cp -r "$work/store" "$work/copy")"); rm -rf "$work/copy"
results+=("$(measure jobs1 "$bin" migrate "$work/store" --out "$work/out" --jobs 1 --quiet)"); rm -rf "$work/out"
results+=("$(measure jobs2 "$bin" migrate "$work/store" --out "$work/out" --jobs 2 --quiet)"); rm -rf "$work/out"
results+=("$(measure small "$bin" migrate "$work/small" --out "$work/out" --jobs 2 --quiet)"); rm -rf "$work/out"

printf '%-8s %9s %9s %9s %10s %10s %9s\n' what wall_s user_s sys_s runs/s MB/s rss_MB
json="{\"runs\": $runs, \"input_bytes\": $input_bytes, \"results\": ["
sep=""
for line in "${results[@]}"; do
    read -r name wall user sys rss <<< "$line"
    n=$runs; [ "$name" = small ] && n=10000
    rate=$(awk -v n="$n" -v w="$wall" 'BEGIN {printf "%.0f", n / w}')
    mbs=$(awk -v b="$input_bytes" -v w="$wall" -v s="$name" 'BEGIN {if (s == "small") print "-"; else printf "%.1f", b / 1e6 / w}')
    rss_mb=$(awk -v r="$rss" 'BEGIN {printf "%.1f", r / 1024}')
    printf '%-8s %9s %9s %9s %10s %10s %9s\n' "$name" "$wall" "$user" "$sys" "$rate" "$mbs" "$rss_mb"
    json+="$sep{\"name\": \"$name\", \"wall_s\": $wall, \"user_s\": $user, \"sys_s\": $sys, \"max_rss_kb\": $rss}"
    sep=", "
done
json+="]}"
echo "$json" > "$work/store-scale.json"
# The goals of the store-scale issue, as ratios measured in this one run.
printf '%s\n' "${results[@]}" | awk -v runs="$runs" '
    {wall[$1] = $2; user[$1] = $3; rss[$1] = $5}
    END {
        printf "jobs2 wall / cp wall        %.2f  (goal <= 1.2)\n", wall["jobs2"] / wall["cp"]
        printf "jobs1 wall / jobs2 wall     %.2f  (goal >= 1.7)\n", wall["jobs1"] / wall["jobs2"]
        printf "peak RSS %d / 10000 runs   %.2f  (goal <= 1.5)\n", runs, rss["jobs2"] / rss["small"]
        printf "user CPU per 100000 runs    %.1f s (goal <= 6)\n", user["jobs2"] * 100000 / runs
    }'
echo "JSON: $work/store-scale.json"
