#!/usr/bin/env bash
# Regenerates the synthetic captures in captures/ from the real bytes there.
#
#   scripts/make-captures.sh          synthetic pcapng files (any machine)
#   scripts/make-captures.sh --real   also captures written by tcpdump on loopback
#                                     in a private network namespace (root, tcpdump, iproute2)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run -q -p mocap-core --example make_captures -- captures

[ "${1:-}" = "--real" ] || exit 0

cargo build -q --release -p pcap-replay -p mocopi-dump
replay="$PWD/target/release/pcap-replay"
dump="$PWD/target/release/mocopi-dump"
out="$PWD/captures/mocopi"

# Recorded by our own -w: mocopi-dump receives a replay on loopback.
"$dump" -l 127.0.0.1:22351 -q -n 8 --format json -w "$out/recorded-by-mocopi-dump.pcapng" >/dev/null &
dump_pid=$!
sleep 0.5
"$replay" -q "$out/mocopi-frame-loss.pcapng" --to 127.0.0.1:22351
wait "$dump_pid"
echo "wrote recorded-by-mocopi-dump.pcapng"

ns="mocap-captures-$$"
ip netns add "$ns"
trap 'ip netns del "$ns" 2>/dev/null || true' EXIT
ip -n "$ns" link set lo up

# tcpdump on loopback while pcap-replay plays; -U writes each packet at once.
# The filter keeps later fragments too: only the first one carries the UDP header.
capture() { # FILE IFACE
  ip netns exec "$ns" tcpdump --immediate-mode -U -i "$2" -w "$1" \
    'udp port 12351 or (ip[6:2] & 0x1fff != 0)' 2>"$1.log" &
  local pid=$!
  sleep 2
  ip netns exec "$ns" "$replay" -q "$out/mocopi-sizes.pcapng"
  sleep 1
  kill -INT "$pid"; wait "$pid" 2>/dev/null || true
  tail -n 3 "$1.log"; rm -f "$1.log"
  echo "wrote $(basename "$1")"
}
capture "$out/tcpdump-lo-ethernet.pcap" lo
capture "$out/tcpdump-any-sll2.pcap" any
# A 1500-byte MTU on loopback makes the kernel fragment the 1575-1821-byte datagrams.
ip -n "$ns" link set lo mtu 1500
capture "$out/tcpdump-lo-mtu1500-fragmented.pcap" lo
