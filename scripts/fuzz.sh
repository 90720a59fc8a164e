#!/usr/bin/env bash
# Runs every cargo-fuzz target for SECONDS each (default 20) with its seed
# corpus and dictionary. Needs the nightly toolchain and cargo-fuzz
# (`cargo install cargo-fuzz`); without them it says so and exits 0.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#
# Every input that once crashed a target (fuzz/regressions/<target>/) runs
# first, then the fuzzer mutates from the seeds. Exits non-zero when any
# target crashes, leaks past -rss_limit_mb or hangs past -timeout; the input
# is in fuzz/artifacts/<target>/. Each run's log is fuzz/logs/<target>.log.
# scripts/test-all.sh (and so CI) runs it with 8 s per target (CI time: docs/fuzzing.md).
#
# Targets run JOBS at a time (default: the number of cores): libFuzzer
# without -jobs uses one core, and -max_total_time is wall time, so each
# target still gets its SECONDS of one core.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-20}
shift || true

if ! cargo +nightly --version >/dev/null 2>&1 || ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "fuzz: skipped, cargo +nightly fuzz not available (install: rustup toolchain install nightly; cargo install cargo-fuzz)"
    exit 0
fi

cd "$root/fuzz" || exit 1
if [ $# -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo +nightly fuzz list)
fi
# Seeds are rewritten, what the fuzzer added is kept.
"$root/scripts/fuzz-corpus.sh" > /dev/null || exit 1

. "$root/scripts/lib/fuzz-dicts.sh"

cargo +nightly fuzz build || exit 1
mkdir -p logs
jobs=${JOBS:-$(nproc 2>/dev/null || echo 1)}
[ "$jobs" -ge 1 ] 2>/dev/null || jobs=1

# run_one TARGET: one fuzzing run; its exit code is the fuzzer's.
run_one() {
    local t=$1 regressions=() dict dict_arg=()
    mkdir -p "corpus/$t" "artifacts/$t"
    [ -d "regressions/$t" ] && regressions=("regressions/$t")
    dict="dicts/$(dict_for "$t").dict"
    [ -f "$dict" ] && dict_arg=("-dict=$dict")
    cargo +nightly fuzz run "$t" "corpus/$t" "${regressions[@]}" -- \
        -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 \
        -print_final_stats=1 "${dict_arg[@]}" > "logs/$t.log" 2>&1
}

# Up to $jobs at once; each exit code lands in logs/<target>.rc and the
# table is printed in target order once all have ended.
running=0
for t in "${targets[@]}"; do
    if [ "$running" -ge "$jobs" ]; then
        wait -n
        running=$((running - 1))
    fi
    rm -f "logs/$t.rc"
    ( run_one "$t"; echo $? > "logs/$t.rc" ) &
    running=$((running + 1))
done
wait

failed=()
printf '%-22s %12s %8s %s\n' target execs cov result
for t in "${targets[@]}"; do
    rc=$(cat "logs/$t.rc" 2>/dev/null || echo "?")
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "logs/$t.log" | grep -o '[0-9]*$' | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "logs/$t.log" | tail -1 | grep -o '[0-9]*')
    if [ "$rc" = 0 ]; then
        result=ok
    else
        result="FAILED (rc $rc, see fuzz/logs/$t.log and fuzz/artifacts/$t/)"
        failed+=("$t")
    fi
    printf '%-22s %12s %8s %s\n' "$t" "${execs:-?}" "${cov:-?}" "$result"
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: ${#failed[@]} target(s) failed: ${failed[*]}"
    exit 1
fi
echo "fuzz: ${#targets[@]} target(s), ${secs}s each, $jobs at a time, no crash"
