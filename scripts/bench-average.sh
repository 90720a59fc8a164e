#!/usr/bin/env bash
# vmc-average under load: 4 senders x 60 fps x 55 bones (one bundle per frame,
# as VSeeFace sends) for 30 s into one port, tick mode at 60 Hz.
# Reports vmc-average's CPU time per second of stream, the age of each mixed
# frame's T when it reaches the receiver (send -> mix -> receive, including the
# wait for the next tick, up to 16.7 ms at 60 Hz, whose share depends on the
# senders' phase against the tick), the same at 4 x 240 fps, and at a 1 kHz
# tick (see below).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -q --release -p vmc-average
cargo build -q --release -p mocap-core --examples
ex=target/release/examples
run() { # senders fps seconds [tick rate]
  local in=42100 out=42101 rate=${4:-60}
  /usr/bin/time -f "%U %S" -o /tmp/vmc-average-time.$$ \
    target/release/vmc-average -q -l 127.0.0.1:$in --to 127.0.0.1:$out --rate "$rate" --duration "$(( $3 + 1 ))s" &
  local pid=$!
  sleep 0.5
  local res; res=$("$ex/vmc_load" 127.0.0.1:$in "$1" "$2" "$3" 127.0.0.1:$out)
  wait "$pid"
  read -r user sys < /tmp/vmc-average-time.$$
  rm -f /tmp/vmc-average-time.$$
  python3 - "$res" "$user" "$sys" "$3" "$rate" <<'PY'
import json, sys
r = json.loads(sys.argv[1]); cpu = float(sys.argv[2]) + float(sys.argv[3]); secs = float(sys.argv[4]) + 1
print("%d senders x %g fps, tick %s Hz: CPU %.2f %% of one core; %d mixed frames; T age p50 %.2f ms, p99 %.2f ms"
      % (r["senders"], r["fps"], sys.argv[5], 100 * cpu / secs, r["mixed_frames_received"],
         r["latency_us"]["p50"] / 1000, r["latency_us"]["p99"] / 1000))
PY
}
run 4 60 30
run 4 240 10
# A 1 kHz tick waits at most 1 ms, so T's age here bounds what mixing itself
# adds: receive, decode, mix, encode, send.
run 4 60 10 1000

# The highest sender rate it keeps up with: 4 senders at rising rates for 3 s
# each; "kept" is the share of sent frames vmc-average completed (the kernel
# drops what it cannot read in time). A source's first frame can count up to
# three times while the mixer learns which message ends its frames, so a rate
# kept in full reads a hair over 100 %. On a 2-core machine the four sender
# threads share the cores with the mixer, so the top rates also measure them.
keepup() { # fps
  local in=42102 out=42103
  target/release/vmc-average -l 127.0.0.1:$in --to 127.0.0.1:$out --rate 60 --duration 4s \
    2> /tmp/vmc-average-log.$$ &
  local pid=$!
  sleep 0.5
  local res; res=$("$ex/vmc_load" 127.0.0.1:$in 4 "$1" 3 127.0.0.1:$out)
  wait "$pid"
  python3 - "$res" /tmp/vmc-average-log.$$ <<'PY'
import json, re, sys
r = json.loads(sys.argv[1])
log = open(sys.argv[2]).read().splitlines()
done = [l for l in log if "done" in l]
got = sum(int(n) for n in re.findall(r" (\d+) frames,", done[-1] if done else ""))
sent = r["senders"] * r["frames_per_sender"]
print("4 senders x %g fps (%d frames/s in): kept %.1f %% of frames" % (r["fps"], 4 * r["fps"], 100.0 * got / sent))
PY
  rm -f /tmp/vmc-average-log.$$
}
for fps in 250 500 1000 2000 4000; do keepup "$fps"; done
