#!/usr/bin/env bash
# vmc-average under load: 4 senders x 60 fps x 55 bones + 17 expressions (one
# bundle per frame, as VSeeFace sends) into one port.
# Reports vmc-average's CPU time per second of stream and the age of each
# mixed frame's T when it reaches the receiver (send -> mix -> receive). In
# frame mode (the default) a mixed frame goes out as soon as the primary
# source's frame is complete, so T's age is what receiving, mixing and sending
# add; in tick mode it also holds the wait for the next tick (up to 16.7 ms at
# 60 Hz, depending on the senders' phase against the tick).
#
#   scripts/bench-average.sh           every row, once
#   RUNS=3 scripts/bench-average.sh    the 4 x 60 fps frame-mode rows three times each
#
# Each round also runs the senders straight to the receiver ("direct", what
# the mixer's rows are read against: the issue's "T age minus network") and
# the machine's own wake-up latency (scripts/lib/machine-floor.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/machine-floor.sh
cargo build -q --release -p vmc-average
cargo build -q --release -p mocap-core -p mocap-cli --examples
ex=target/release/examples
# VMC_AVERAGE=path compares another build (e.g. an older commit) under the same conditions.
bin=${VMC_AVERAGE:-target/release/vmc-average}
run() { # senders fps seconds label [vmc-average flags...]
  local in=42100 out=42101 senders=$1 fps=$2 secs=$3 label=$4
  shift 4
  /usr/bin/time -f "%U %S" -o /tmp/vmc-average-time.$$ \
    "$bin" -q -l 127.0.0.1:$in --to 127.0.0.1:$out "$@" --duration "$(( secs + 1 ))s" &
  local pid=$!
  sleep 0.5
  local res; res=$("$ex/vmc_load" 127.0.0.1:$in "$senders" "$fps" "$secs" 127.0.0.1:$out)
  wait "$pid"
  read -r user sys < /tmp/vmc-average-time.$$
  rm -f /tmp/vmc-average-time.$$
  python3 - "$res" "$user" "$sys" "$secs" "$label" <<'PY'
import json, sys
r = json.loads(sys.argv[1]); cpu = float(sys.argv[2]) + float(sys.argv[3]); secs = float(sys.argv[4]) + 1
print("%d senders x %g fps, %-14s CPU %.2f %% of one core; %d mixed frames; T age p50 %.2f ms, p99 %.2f ms"
      % (r["senders"], r["fps"], sys.argv[5] + ":", 100 * cpu / secs, r["mixed_frames_received"],
         r["latency_us"]["p50"] / 1000, r["latency_us"]["p99"] / 1000))
PY
}
# The same senders straight to the receiver, no mixer: the T age that
# sending, the kernel and the receiver's wake-up make by themselves (the
# "network" part), to read the mixer rows against.
direct() { # senders fps seconds
  local out=42101
  local res; res=$("$ex/vmc_load" 127.0.0.1:$out "$1" "$2" "$3" 127.0.0.1:$out)
  python3 - "$res" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
print("%d senders x %g fps, %-14s %d frames received; T age p50 %.2f ms, p99 %.2f ms"
      % (r["senders"], r["fps"], "direct:", r["mixed_frames_received"],
         r["latency_us"]["p50"] / 1000, r["latency_us"]["p99"] / 1000))
PY
}
for _ in $(seq "${RUNS:-1}"); do
  run 4 60 30 "frame mode"
  run 4 60 30 "--realtime" --realtime
  direct 4 60 30
  # The machine's own wake-up latency in the same period (scripts/lib/machine-floor.sh).
  echo "machine floor, 12 s: $(floor 12)"
done
run 4 60 30 "tick 60 Hz" --mode tick --rate 60
run 4 240 10 "frame mode"
# A 1 kHz tick waits at most 1 ms: another bound on what mixing itself adds.
run 4 60 10 "tick 1 kHz" --mode tick --rate 1000

# The highest sender rate it keeps up with: 4 senders at rising rates for 3 s
# each; "kept" is the share of sent frames vmc-average completed (the kernel
# drops what it cannot read in time). A source's first frame can count up to
# three times while the mixer learns which message ends its frames, so a rate
# kept in full reads a hair over 100 %. On a 2-core machine the four sender
# threads share the cores with the mixer, so the top rates also measure them.
keepup() { # fps
  local in=42102 out=42103
  "$bin" -l 127.0.0.1:$in --to 127.0.0.1:$out --rate 60 --duration 4s \
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
