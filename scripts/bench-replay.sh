#!/usr/bin/env bash
# Replay timing and speed: pcap-replay against tcpreplay, in one run.
#
# A 12 s, 60 Hz mocopi capture (a skeleton every 3.5 s) is generated, then:
# 1. Tap timing (root): inside a private network namespace, tcpdump on `lo`
#    records while each tool replays the capture; the gaps between recorded
#    packets are compared with the original gaps, and each packet's time since
#    the first with the capture's (schedule error: drift), p50/p99/max µs,
#    RUNS times (default 5), the tools alternating (pcap-replay plain, with
#    --realtime and with --hedge, and tcpreplay). Under each pcap-replay
#    row: what it measured itself (due time to the send call) and the steal
#    time meanwhile; after each round, the machine floor
#    (scripts/lib/machine-floor.sh), to tell the tool's tail from the VM's. Both tools
#    are measured at the same point, the kernel's packet tap. (tcpreplay injects
#    frames below the IP stack, so a socket never receives them; the tap is the
#    only common vantage point.)
# 2. End to end: pcap-replay to a loopback socket that timestamps arrivals.
# 3. pcap-replay --topspeed datagrams/s, 20 loops of the capture.
# Reading speed (datagrams/s from pcapng) is the divan bench `pcap` in mocap-core.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/machine-floor.sh
work=$(mktemp -d)
ns="mocap-bench-$$"
cleanup() { ip netns del "$ns" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
cargo build -q --release -p pcap-replay
cargo build -q --release -p mocap-core -p mocap-cli --examples
ex=target/release/examples
# REPLAY=path compares another build (e.g. an older commit) under the same conditions.
replay=${REPLAY:-target/release/pcap-replay}
"$ex/make_captures" --long "$work/long.pcapng" 12 2>/dev/null
echo "capture: 12 s of 60 Hz mocopi frames (+ skeletons), $(du -h "$work/long.pcapng" | cut -f1)"

if [ "$(id -u)" = 0 ]; then
  for tool in tcpdump tcpreplay; do
    command -v $tool >/dev/null ||
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $tool >/dev/null 2>&1 || true
  done
fi
if [ "$(id -u)" = 0 ] && command -v tcpdump >/dev/null; then
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  tap() { # label, then the replay command (run inside the namespace)
    local label=$1; shift
    ip netns exec "$ns" tcpdump --immediate-mode -U -i lo -w "$work/$label.pcap" udp port 12351 2>"$work/$label.log" &
    local pid=$!
    # Start only once tcpdump says it is listening, so no packet is missed.
    for _ in $(seq 100); do grep -q listening "$work/$label.log" 2>/dev/null && break; sleep 0.1; done
    sleep 0.2
    local steal0; steal0=$(steal)
    ip netns exec "$ns" "$@" >"$work/$label.out" 2>/dev/null || echo "$label: replay failed"
    local stolen=$(( $(steal) - steal0 ))
    sleep 0.5
    kill -INT "$pid"; wait "$pid" 2>/dev/null || true
    printf '  %-12s %s\n' "$label" "$("$ex/replay_timing" compare "$work/long.pcapng" "$work/$label.pcap")"
    # What the tool measured itself (due time to the send call), and the CPU
    # time the hypervisor gave to others meanwhile: a tail at the tap that the
    # tool did not see, with steal time, is the VM, not the wait.
    local own; own=$(grep -o '"timing_error_us":{[^}]*}' "$work/$label.out" | sed 's/"timing_error_us"://' || true)
    printf '  %-12s %s\n' "" "${own:+self-measured $own, }steal $((stolen * 10)) ms over both vCPUs"
  }
  # Jiffies (1/100 s) of steal time on all CPUs (/proc/stat, 8th value).
  steal() { awk '/^cpu /{print $9}' /proc/stat; }
  # The first packets in a fresh namespace pay one-time kernel set-up (the
  # first send in every script run came 0.2-0.8 ms late at the tap, making
  # the rest look early): one untimed pass of a second first.
  tap warm-up "$replay" -q --format json -n 60 "$work/long.pcapng" >/dev/null
  echo "timing at the packet tap (tcpdump -i lo), ${RUNS:-5} runs, alternating:"
  # "realtime" is pcap-replay --realtime (SCHED_FIFO for the sending thread),
  # "hedge" pcap-replay --hedge (a second sending thread on another CPU).
  for _ in $(seq "${RUNS:-5}"); do
    tap pcap-replay "$replay" -q --format json "$work/long.pcapng"
    tap realtime "$replay" -q --format json --realtime "$work/long.pcapng"
    tap hedge "$replay" -q --format json --hedge "$work/long.pcapng"
    if command -v tcpreplay >/dev/null; then
      tap tcpreplay tcpreplay -q -i lo "$work/long.pcapng"
    else
      echo "  tcpreplay    skipped: the package is not installed"
    fi
    # The machine's own wake-up latency in the same period (scripts/lib/machine-floor.sh).
    printf '  %-12s %s\n' floor "$(floor 12)"
  done
else
  echo "tap timing skipped: needs root and tcpdump"
fi

echo "gap error end to end (loopback socket receiver):"
"$ex/replay_timing" recv 127.0.0.1:12351 "$work/long.pcapng" >"$work/e2e.json" 2>/dev/null &
rx=$!
sleep 0.5
"$replay" -q "$work/long.pcapng"
wait "$rx"
printf '  %-12s %s\n' pcap-replay "$(cat "$work/e2e.json")"

echo "pcap-replay --topspeed, 20 loops of the capture to a loopback socket:"
"$replay" "$work/long.pcapng" --topspeed --loop 20 --to 127.0.0.1:9 --format json |
  python3 -c 'import json,sys; s=json.loads(sys.stdin.read()); print("  sent %d datagrams in %.3f s = %.0f datagrams/s" % (s["sent"], s["elapsed_s"], s["sent"]/s["elapsed_s"]))'
