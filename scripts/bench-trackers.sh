#!/usr/bin/env bash
# vmc-relay's tracker outputs under load: 4 senders x 60 fps x 55 bones + 17
# expressions (one bundle per frame, as VSeeFace sends) into one port, relayed
# `--as vmc` (the stream as it came: the raw fast path), `--as vrchat` and
# `--as vmt` (each sender's body solved into trackers), and `--as vmc --drop
# /none` (decoded and re-encoded, nothing dropped), side by side in one
# run, alternating, RUNS times (default 3). Reports the relay's CPU (user +
# system) per second of stream. The solver alone is
# `cargo bench -p mocap-core --bench trackers` (divan).
#
#   scripts/bench-trackers.sh
#   RUNS=5 SECS=20 scripts/bench-trackers.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -q --release -p vmc-relay
cargo build -q --release -p mocap-core -p mocap-cli --examples
bin=target/release/vmc-relay
load=target/release/examples/vmc_load
runs=${RUNS:-3} secs=${SECS:-10}
in=42300 out=42301

row() { # label vmc-relay flags...
  local label=$1; shift
  local t; t=$(mktemp)
  /usr/bin/time -f "%U %S" -o "$t" "$bin" -q -l 127.0.0.1:$in --to 127.0.0.1:$out "$@" \
    --duration "$(( secs + 1 ))s" >/dev/null 2>&1 &
  local pid=$!
  sleep 0.5
  # vmc_load also drains what reaches 127.0.0.1:$out.
  "$load" 127.0.0.1:$in 4 60 "$secs" 127.0.0.1:$out >/dev/null
  wait "$pid" 2>/dev/null
  read -r user sys < "$t"; rm -f "$t"
  python3 -c "print('%-24s CPU %5.2f %% of one core (4 x 60 fps x 55 bones, %d s)' % ('$label', 100 * ($user + $sys) / ($secs + 1), $secs))"
}

for r in $(seq "$runs"); do
  echo "run $r"
  row "--as vmc (raw)" --as vmc
  # Decoded and re-encoded, nothing dropped: what decoding costs on its own.
  row "--as vmc --drop /none" --as vmc --drop /none
  row "--as vrchat" --as vrchat
  row "--as vmt" --as vmt
done
