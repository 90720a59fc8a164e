#!/usr/bin/env bash
# A long fuzzing campaign measured in CPU time, not wall time: each target
# runs until its fuzzer process has used CPU_SECONDS of CPU (user + system),
# restarted on its growing corpus when a run ends early because the machine
# was busy with other work. Meant to run niced beside other work:
#
#   nice -n 19 scripts/fuzz-campaign.sh 1800 textcap pcap ...
#
# Appends one line per target to fuzz/logs/campaign.tsv:
#   target  cpu_s  wall_s  runs  execs  cov  ft  corpus  result
# and stops at the first crash, leak or hang (the input is in
# fuzz/artifacts/<target>/). Needs the targets built first:
# `cd fuzz && cargo +nightly fuzz build` (scripts/fuzz.sh does that).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 2 ] || { echo "usage: scripts/fuzz-campaign.sh CPU_SECONDS TARGET..." >&2; exit 2; }
budget=$1
shift
bin_dir="$root/fuzz/target/x86_64-unknown-linux-gnu/release"
cd "$root/fuzz" || exit 1
mkdir -p logs
[ -f logs/campaign.tsv ] || printf 'target\tcpu_s\twall_s\truns\texecs\tcov\tft\tcorpus\tresult\n' > logs/campaign.tsv

. "$root/scripts/lib/fuzz-dicts.sh"

for t in "$@"; do
    [ -x "$bin_dir/$t" ] || { echo "fuzz-campaign: $t not built in $bin_dir" >&2; exit 1; }
    mkdir -p "corpus/$t" "artifacts/$t"
    regressions=()
    [ -d "regressions/$t" ] && regressions=("regressions/$t")
    dict="dicts/$(dict_for "$t").dict"
    dict_arg=()
    [ -f "$dict" ] && dict_arg=("-dict=$dict")
    cpu=0 wall=0 runs=0 execs=0 result=ok
    log="logs/campaign-$t.log"
    : > "$log"
    while [ "$cpu" -lt "$budget" ]; do
        left=$((budget - cpu))
        start=$(date +%s)
        /usr/bin/time -f 'cpu %U %S' -a -o "$log" "$bin_dir/$t" "corpus/$t" "${regressions[@]}" \
            -max_total_time="$left" -rss_limit_mb=2048 -timeout=10 \
            -print_final_stats=1 -artifact_prefix="artifacts/$t/" "${dict_arg[@]}" >> "$log" 2>&1
        rc=$?
        wall=$((wall + $(date +%s) - start))
        runs=$((runs + 1))
        used=$(grep '^cpu ' "$log" | tail -1 | awk '{printf "%d", $2 + $3}')
        cpu=$((cpu + used))
        n=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$')
        execs=$((execs + ${n:-0}))
        if [ $rc -ne 0 ]; then
            result="FAILED rc=$rc"
            break
        fi
        # A run that used almost no CPU means the machine gave it none; wait
        # rather than spin through restarts.
        [ "$used" -lt 5 ] && sleep 30
    done
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*')
    ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*')
    files=$(find "corpus/$t" -type f | wc -l)
    printf '%s\t%d\t%d\t%d\t%d\t%s\t%s\t%d\t%s\n' "$t" "$cpu" "$wall" "$runs" "$execs" "${cov:-?}" "${ft:-?}" "$files" "$result" >> logs/campaign.tsv
    echo "fuzz-campaign: $t cpu=${cpu}s wall=${wall}s execs=$execs cov=${cov:-?} $result"
    [ "$result" = ok ] || exit 1
done
