#!/usr/bin/env bash
# motion-stream serve under load: a full rig (55 joints, 52 blendshapes,
# float32) to 10 WebSocket clients on loopback.
#
# 1. CPU at the real rate: VMC at 30 fps for 30 s, arrival-time resampling
#    (the default), serve's user+system time per second of wall time.
# 2. Throughput: with --sender-clock the VMC sender's T advances 1/30 s per
#    frame, so the input can run faster than real time; rising input rates
#    for 3 s each, every frame encoded once and queued to 10 clients. "kept"
#    is the share of frames every client received; on this 2-core machine the
#    load generator (10 reader threads and the sender) shares the cores with
#    the server, so the top rates also measure the generator.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -q --release -p motion-stream --example load
bin=target/release/motion-stream
load=target/release/examples/load
ws=127.0.0.1:42201 udp=127.0.0.1:42202
url=ws://$ws/api/v4/text_generate

cpu() { # seconds
  /usr/bin/time -f "%U %S %e" -o /tmp/motion-stream-time.$$ \
    "$bin" serve -q -l "$ws" --vmc "$udp" --duration "$(( $1 + 2 ))s" >/dev/null &
  local pid=$!
  sleep 0.5
  local res; res=$("$load" "$url" "$udp" 10 $(( $1 * 30 )) 30)
  wait "$pid"
  read -r user sys wall < /tmp/motion-stream-time.$$
  rm -f /tmp/motion-stream-time.$$
  python3 - "$res" "$user" "$sys" "$wall" <<'PY'
import json, sys
r = json.loads(sys.argv[1]); cpu = float(sys.argv[2]) + float(sys.argv[3]); wall = float(sys.argv[4])
print("30 fps x 10 clients for %.1f s: CPU %.2f %% of one core (user %s s, sys %s s); each client got %s frames"
      % (wall, 100 * cpu / wall, sys.argv[2], sys.argv[3], sorted(set(r["frames_received"]))))
PY
}

throughput() { # input fps
  "$bin" serve -q -l "$ws" --vmc "$udp" --sender-clock --queue 1000000 --format json \
    --duration 6s > /tmp/motion-stream-sum.$$ &
  local pid=$!
  sleep 0.5
  local res; res=$("$load" "$url" "$udp" 10 $(( $1 * 3 )) "$1")
  wait "$pid"
  python3 - "$res" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
got = min(r["frames_received"])
print("input %5d fps: slowest client %6d frames/s, kept %.1f %% (%d client-frames/s in all)"
      % (r["frames_sent"] / 3, r["slowest_client_fps"], 100.0 * got / r["frames_sent"],
         10 * min(r["slowest_client_fps"], r["frames_sent"] / 3)))
PY
  rm -f /tmp/motion-stream-sum.$$
}

cpu 30
for fps in 1000 2000 4000 6000 8000; do throughput "$fps"; done
