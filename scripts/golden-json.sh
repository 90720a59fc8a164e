#!/usr/bin/env bash
# Writes every tool's JSON Lines over every bundled capture into DIR, one
# file per (tool, capture), so two builds can be compared byte for byte:
#
#   scripts/golden-json.sh /tmp/before        # on the old commit
#   scripts/golden-json.sh /tmp/after         # on the new one
#   diff -r /tmp/before /tmp/after
#
# Refactors that promise "no behaviour change" (issue 59) are checked this
# way. What measures the machine is blanked: `elapsed_s` everywhere, and
# mocap-top (which plays a capture at its recorded timing and stamps
# arrivals with the wall clock) keeps only its summary, without rates,
# jitter and ages.
set -euo pipefail
out=${1:?usage: scripts/golden-json.sh DIR}
cd "$(dirname "$0")/.."
cargo build -q --bins
bin=target/debug
mkdir -p "$out"
run() { # name, command...
    local name=$1; shift
    "$@" >"$out/$name.jsonl" 2>"$out/$name.stderr" || echo "exit $?" >>"$out/$name.stderr"
}
for c in captures/mocopi/*.pcap* captures/mocopi/seed-frame-1575.bin \
         captures/mocopi/animu-sphere/*.mocopipackets captures/mocopi/t-34400/*.bin; do
    [ -f "$c" ] || continue
    run "mocopi-dump.$(basename "$c")" $bin/mocopi-dump -r "$c" --format json
done
for c in captures/livelink/*.pcapng; do
    run "livelink-dump.$(basename "$c")" $bin/livelink-dump -r "$c" --format json
done
for c in captures/ifacialmocap/*.pcapng captures/ifacialmocap/*.txt; do
    run "ifm-handshake.$(basename "$c")" $bin/ifm-handshake -r "$c" --format json
done
for c in captures/vmc/*.pcapng; do
    run "vmc-relay.$(basename "$c")" $bin/vmc-relay -r "$c" --dump --format json --topspeed
done
for c in captures/*/*.pcap*; do
    run "mocap-top.$(basename "$c")" $bin/mocap-top -r "$c" --format json
    f="$out/mocap-top.$(basename "$c").jsonl"
    tail -n 1 "$f" | sed -E 's/"(age_ms|jitter_ms|rate_hz|bytes_per_s|datagrams_per_s)":[^,}]*/"\1":_/g' >"$f.tmp"
    mv "$f.tmp" "$f"
done
sed -i -E 's/"elapsed_s":[^,}]*/"elapsed_s":_/g' "$out"/*.jsonl
# What was written, so an empty run is seen.
wc -l "$out"/*.jsonl | tail -1
