#!/usr/bin/env bash
# `mocopi-dump -r CAPTURE --bvh` conversion speed and memory, a one-minute
# and a one-hour 60 fps take (generated), each beside the same run without
# --bvh (decoding and JSON Lines to /dev/null: the baseline). Memory must not grow with length.
#
#   scripts/bench-bvh.sh            RUNS=3 by default
#   RUNS=5 LONG=3600 scripts/bench-bvh.sh
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${RUNS:-3}"
long="${LONG:-3600}"
command -v /usr/bin/time >/dev/null || { echo "bench-bvh: needs GNU time (/usr/bin/time)" >&2; exit 1; }
cargo build -q --release -p mocopi-dump
cargo build -q --release -p mocap-core --example make_captures
dump="$PWD/target/release/mocopi-dump"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for secs in 60 "$long"; do
  target/release/examples/make_captures --long "$work/$secs.pcapng" "$secs" 2>/dev/null
done
printf '%-6s %-4s %-9s %10s %12s %10s %10s\n' take run mode seconds frames/s maxrss_MB bvh_MB
for secs in 60 "$long"; do
  cap="$work/$secs.pcapng"
  frames=$((secs * 60))
  for run in $(seq 1 "$runs"); do
    for mode in decode bvh; do
      args=(-r "$cap" -q --format json)
      [ "$mode" = bvh ] && args+=(--bvh "$work/take.bvh" --force)
      /usr/bin/time -f '%e %M' -o "$work/time" "$dump" "${args[@]}" >/dev/null 2>&1
      read -r wall rss <"$work/time"
      size=-
      [ "$mode" = bvh ] && size=$(awk -v b="$(stat -c %s "$work/take.bvh")" 'BEGIN{printf "%.1f", b/1e6}')
      awk -v s="$secs" -v r="$run" -v m="$mode" -v w="$wall" -v f="$frames" -v k="$rss" -v z="$size" \
        'BEGIN{printf "%-6s %-4s %-9s %10.2f %12.0f %10.1f %10s\n", s "s", r, m, w, (w>0? f/w : 0), k/1024, z}'
    done
  done
done
