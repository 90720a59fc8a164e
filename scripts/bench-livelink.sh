#!/usr/bin/env bash
# What the face bridges cost a user: `livelink-dump --vmc` on the bundled Live
# Link Face capture and `ifm-handshake --vmc` on the bundled iFacialMocap
# capture, each listening while `pcap-replay --loop LOOPS` (default 5) plays
# its capture at the recorded 60 fps, bridging into a VMC receiver; side by
# side in one run, alternating, RUNS times (default 3). Reports each run's
# CPU (user + system) as a share of one core over the stream, and per frame.
# Decoding alone is `cargo bench -p mocap-core --bench livelink` (divan).
#
#   scripts/bench-livelink.sh
#   RUNS=5 scripts/bench-livelink.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -q --release -p livelink-dump -p ifm-handshake -p pcap-replay
bin=target/release
runs=${RUNS:-3}
sink_port=42211

# A VMC receiver that drains what it gets (a closed port would make every send an ICMP error).
python3 - "$sink_port" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", int(sys.argv[1])))
while True:
    s.recv(65536)
PY
sink=$!
trap 'kill $sink 2>/dev/null || true' EXIT
sleep 0.3

one() { # label frames-per-pass capture tool-args...
  local label=$1 frames=$2 capture=$3; shift 3
  local t; t=$(mktemp)
  # The tool listens; pcap-replay plays the capture LOOPS times at its recorded timing.
  /usr/bin/time -f "%U %S %e" -o "$t" "$@" -l 127.0.0.1:$in_port --vmc 127.0.0.1:$sink_port -q \
    --duration "$(( secs + 2 ))s" >/dev/null 2>&1 &
  local pid=$!
  sleep 0.5
  "$bin/pcap-replay" -q "$capture" --to 127.0.0.1:$in_port --loop "$loops" 2>/dev/null
  wait "$pid"
  read -r user sys wall < "$t"; rm -f "$t"
  python3 -c "
u, s, n, secs = $user, $sys, $frames * $loops, $(duration "$capture")
print(f'%-36s CPU %5.2f %% of one core over %.1f s of stream; %5.1f µs per frame' % ('$label', 100 * (u + s) / secs, secs, 1e6 * (u + s) / n))"
}

loops=${LOOPS:-5}
in_port=42210
# Seconds of stream a capture plays for, LOOPS times.
duration() { python3 -c "print(round($(case $1 in *livelink*) echo 4.0;; *) echo 3.367;; esac) * $loops, 3))"; }
secs=$(python3 -c "import math; print(math.ceil(4.0 * $loops))")

for r in $(seq "$runs"); do
  echo "run $r"
  # Per pass: 238 frames of one phone bridged (the capture's other device is decoded, not sent).
  one "livelink-dump --vmc (Live Link)" 238 captures/livelink/face-60fps.pcapng \
    "$bin/livelink-dump" --subject "Zoe's iPhone"
  one "ifm-handshake --vmc (iFacialMocap)" 203 captures/ifacialmocap/face-60fps.pcapng \
    "$bin/ifm-handshake"
done
