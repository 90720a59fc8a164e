#!/usr/bin/env bash
# Replay timing and speed, pcap-replay against tcpreplay, measured in one run.
#
# 1. A 12 s, 60 Hz mocopi capture (plus a skeleton every 3.5 s) is generated.
# 2. It is replayed to a loopback receiver that timestamps every arrival; the
#    receiver reports how far each inter-arrival gap is from the capture's gap
#    (p50/p99/max µs). First pcap-replay, then tcpreplay on `lo` (root; the
#    Debian package is installed if missing).
# 3. pcap-replay --topspeed datagrams/s over 20 loops of the capture.
# Reading speed (packets/s from pcapng) is the divan bench `pcap` in mocap-core.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cargo build -q --release -p pcap-replay -p mocap-core --examples
ex=target/release/examples
"$ex/make_captures" --long "$work/long.pcapng" 12

receive() { # label, then the replay command
  local label=$1; shift
  "$ex/recv_timing" 127.0.0.1:12351 "$work/long.pcapng" >"$work/$label.json" 2>/dev/null &
  local rx=$!
  sleep 0.5
  "$@" >/dev/null 2>&1
  wait "$rx"
  printf '%-12s %s\n' "$label" "$(cat "$work/$label.json")"
}

echo "inter-packet gap error on loopback, 12 s at 60 Hz:"
receive pcap-replay target/release/pcap-replay -q "$work/long.pcapng"
if ! command -v tcpreplay >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tcpreplay >/dev/null 2>&1 || true
fi
if command -v tcpreplay >/dev/null && [ "$(id -u)" = 0 ]; then
  receive tcpreplay tcpreplay -q -i lo "$work/long.pcapng"
else
  echo "tcpreplay    skipped: needs root and the tcpreplay package"
fi

echo
echo "pcap-replay --topspeed, 20 loops of the capture to a loopback socket:"
python3 - "$work" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
s.bind(("127.0.0.1", 22351))
s.settimeout(5)
try:
    while True:
        s.recv(65535)
except socket.timeout:
    pass
PY
sink=$!
sleep 0.3
target/release/pcap-replay "$work/long.pcapng" --topspeed --loop 20 --to 127.0.0.1:22351 --format json \
  | python3 -c 'import json,sys; s=json.loads(sys.stdin.read()); print("sent %d datagrams in %.3f s = %.0f datagrams/s" % (s["sent"], s["elapsed_s"], s["sent"]/s["elapsed_s"]))'
kill "$sink" 2>/dev/null || true
